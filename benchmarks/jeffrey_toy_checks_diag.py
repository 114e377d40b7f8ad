"""Diagnosis of chapter 15's two failing toy checks (noisy-classifier prediction; Jeffrey vs classifier guidance).

For one tuning base seed and three guidance seeds (book preset), every combination of the toy's learned or exact
score (``toy.ExactNoisePredictor``) and learned or exact classifier (``toy.ExactCellClassifier``; Bayes classifier
of the flipped labels for the noisy case) is sampled with both guidances; it prints one JSON line per guidance seed
with each combination's TV to q, to the t = 0 prediction of eq. (jeffrey-confusion), and MMD² to the exact target.
The numbers in ``jeffrey_toy_checks_rule.md`` were made by the first version of this script (the same formulas
written inline, before the package had them).

Run: ``PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/jeffrey_toy_checks_diag.py learned|exact BASE ...``
(``exact``: the exact score; ``learned``: the toy's trained denoiser).
"""

from __future__ import annotations

import json
import sys

import numpy as np
import torch

from explorables.core.checkpoint import Checkpointer
from explorables.jeffrey import diffusion as D
from explorables.jeffrey import toy as Y
from explorables.jeffrey.experiment import (
    JeffreyConfig,
    _log_w,
    _toy_model,
    classifier_potential,
    flip_labels,
    jeffrey_potential,
    seeded_generator,
    soft_confusion,
    supported_target,
    toy_denoiser,
    train_toy_classifier,
)
from explorables.jeffrey.metrics import cell_frequencies, mmd2
from explorables.jeffrey.rule import (
    classifier_guidance_marginal_with,
    flip_confusion,
    independent_target,
    jeffrey_marginal_with,
    tv_distance,
)

torch.set_num_threads(1)
CPU = torch.device("cpu")


def main(base: int, exact_score: bool, inner: tuple[int, ...] = (0, 1, 2), n: int = 800) -> None:
    cfg = JeffreyConfig(seed=base, use_images=False)
    sch = D.NoiseSchedule.cosine(cfg.n_diffusion_steps)
    if exact_score:
        den = Y.ExactNoisePredictor(sch.alpha_bars)
    else:
        torch.manual_seed(base)
        _, st = _toy_model(cfg, Checkpointer(None), False)
        den = toy_denoiser(cfg, st["denoiser"], CPU)
    flip = flip_confusion(4, cfg.toy_label_noise)
    for seed in inner:
        run_seed, gen = seeded_generator(cfg, seed)
        data = Y.sample_toy(cfg.n_toy_train, gen)
        clf = train_toy_classifier(cfg, data, sch, gen, CPU)

        def noise(run_seed: int = run_seed) -> torch.Generator:
            return torch.Generator().manual_seed(run_seed + 5000)

        ung = D.sample(den, sch, n, (2,), generator=noise())
        p = cell_frequencies(Y.toy_cells(ung), 4)
        q = supported_target(independent_target(p.reshape(2, 2)).ravel(), p)
        exact = Y.sample_jeffrey_target(n, supported_target(q, Y.cell_marginal()), gen)
        log_w = _log_w(q, p, CPU)
        labels = torch.multinomial(torch.as_tensor(q), n, replacement=True, generator=gen)
        noisy = train_toy_classifier(
            cfg, data, sch, gen, CPU, flip_labels(Y.toy_cells(data), cfg.toy_label_noise, 4, gen)
        )
        bayes, bayes_noisy = (
            Y.ExactCellClassifier(sch.alpha_bars),
            Y.ExactCellClassifier(sch.alpha_bars, confusion=flip),
        )
        out = {"base": base, "seed": seed, "exact_score": exact_score, "p": p.round(3).tolist()}
        # how sharp each noisy classifier is along the way: mean top probability on forward-noised unguided samples
        sharp = {}
        for t in (0, 5, 10, 20, 30, 40):
            xt = sch.noise(
                ung, torch.full((n,), t), torch.randn(ung.shape, generator=torch.Generator().manual_seed(1))
            )
            with torch.no_grad():
                tt = torch.full((n,), t)
                sharp[t] = [
                    round(float(torch.softmax(c(xt, tt), -1).max(1).values.mean()), 3) for c in (noisy, bayes_noisy)
                ]
        out["noisy_top_probability_learned_vs_bayes"] = sharp
        for name, c_clean, c_noisy in (("learned", clf, noisy), ("exact", bayes, bayes_noisy)):
            res = {}
            m_noisy = soft_confusion(c_noisy, ung, Y.toy_cells(ung), 4)
            for tag, cc, m in (("clean", c_clean, np.eye(4)), ("noisy", c_noisy, m_noisy)):
                xj = D.sample(den, sch, n, (2,), generator=noise(), potential=jeffrey_potential(cc, log_w), scale=1.0)
                xc = D.sample(
                    den, sch, n, (2,), generator=noise(), potential=classifier_potential(cc, labels), scale=1.0
                )
                jj, jc = cell_frequencies(Y.toy_cells(xj), 4), cell_frequencies(Y.toy_cells(xc), 4)
                pj, pc = jeffrey_marginal_with(p, q, m), classifier_guidance_marginal_with(p, q, m)
                res[tag] = {
                    "J_tvq": round(tv_distance(jj, q), 3),
                    "J_pred_tvq": round(tv_distance(pj, q), 3),
                    "J_tv_pred": round(tv_distance(jj, pj), 3),
                    "C_tvq": round(tv_distance(jc, q), 3),
                    "C_pred_tvq": round(tv_distance(pc, q), 3),
                    "C_tv_pred": round(tv_distance(jc, pc), 3),
                    "U_tv_predJ": round(tv_distance(p, pj), 3),
                }
                if tag == "clean":
                    res[tag].update(
                        J_mmd=round(mmd2(xj, exact), 4),
                        C_mmd=round(mmd2(xc, exact), 4),
                        U_mmd=round(mmd2(ung, exact), 4),
                    )
            out[name + "_classifier"] = res
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    for b in map(int, sys.argv[2:]):
        main(b, exact_score=sys.argv[1] == "exact")
