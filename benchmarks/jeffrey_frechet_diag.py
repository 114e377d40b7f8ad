"""Diagnosis and candidates of chapter 15's two varying Fréchet rows (``benchmarks/jeffrey_frechet_rule.md``).

For one tuning base seed (book preset): the image model is trained as the package does; then for each guidance
seed the Fréchet arm of ``experiment._images`` is rebuilt (pool, density ratio, log h_t network, the 10-class
classifier; the 20-cell fairness classifier is skipped) and every arm (unguided, Jeffrey, classifier guidance) is
sampled twice with ``N`` samples:

* ``ind``: one generator for all arms in turn (as the package draws them today);
* ``crn``: common random numbers, each arm from a fresh generator with the same seed (same x_T and step noise).

It prints one JSON line per guidance seed with the Fréchet distances (target embedding ``metric``, pixel PCA
``control``) of each arm on the first 500 and on all ``N`` samples, and of three disjoint 500-sample blocks of the
``ind`` draws (the sample-only noise at a fixed fit), then one line of the two rows' verdicts per variant.

Run: ``PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/jeffrey_frechet_diag.py BASE [N] [ind]`` (``ind``: skip
the common-random-numbers draws).
"""

from __future__ import annotations

import json
import math
import sys
import time

import numpy as np
import torch

from explorables.core.checkpoint import Checkpointer
from explorables.core.verdicts import interval
from explorables.jeffrey import claims as C
from explorables.jeffrey import diffusion as D
from explorables.jeffrey import images as I
from explorables.jeffrey.experiment import (
    JeffreyConfig,
    _image_model,
    _restore_embedders,
    classifier_potential,
    image_denoiser,
    seeded_generator,
)
from explorables.jeffrey.metrics import frechet_distance

torch.set_num_threads(1)
CPU = torch.device("cpu")


def main(base: int, n: int = 1500, crn: bool = True) -> None:
    t0 = time.time()
    cfg = JeffreyConfig(seed=base)
    _, models = _image_model(cfg, Checkpointer(None), False)
    data = I.load_images(cfg.dataset, cfg.data_root, seed=cfg.seed, n_test=cfg.n_test, image_size=cfg.image_size)
    shape = tuple(models["shape"])
    n_classes = models["n_classes"]
    schedule = D.NoiseSchedule.cosine(cfg.n_diffusion_steps, CPU)
    emb, emb2 = _restore_embedders(cfg, models, math.prod(shape), CPU)
    den = image_denoiser(cfg, shape, CPU)
    den.load_state_dict(models["denoiser"])
    den.eval()
    real_emb = I.embed(emb, data.train)
    test_emb, test_emb2 = I.embed(emb, data.test), emb2(data.test)
    class_marginal = np.bincount(data.train_labels.numpy(), minlength=n_classes) / len(data.train_labels)
    print(json.dumps({"base": base, "model_s": round(time.time() - t0, 1)}), flush=True)

    def fd(x: torch.Tensor) -> dict[str, float]:
        return {"metric": frechet_distance(I.embed(emb, x), test_emb), "control": frechet_distance(emb2(x), test_emb2)}

    rows = []
    for seed in cfg.seeds:
        t1 = time.time()
        run_seed, gen = seeded_generator(cfg, seed)

        def draw(k: int, g: torch.Generator, potential=None) -> torch.Tensor:
            return D.sample(
                den,
                schedule,
                k,
                shape,
                generator=g,
                potential=potential,
                scale=cfg.guidance_scale if potential is not None else 0.0,
                clip=1.0,
            )

        pool = draw(cfg.n_ratio_samples, gen)
        ratio = I.fit_density_ratio(real_emb, I.embed(emb, pool), c=cfg.ratio_c, seed=run_seed)
        w = I.normalised_weights(ratio.log_w(I.embed(emb, pool)), cfg.weight_clip)
        h_net = D.TimeMLP(math.prod(shape), 1, cfg.n_diffusion_steps, 128, n_layers=2)
        D.fit(
            h_net,
            D.log_h_loss(pool, torch.as_tensor(w, dtype=torch.float32), schedule, cfg.image_batch_size),
            n_steps=cfg.n_h_steps,
            lr=cfg.lr,
            generator=gen,
        )
        pool_classes = I.image_cells(emb, pool, float(I.ink(pool).median())) // 2
        cc = D.TimeMLP(math.prod(shape), n_classes, cfg.n_diffusion_steps, 128, n_layers=2)
        D.fit(
            cc,
            D.classifier_loss(pool, pool_classes, schedule, cfg.image_batch_size),
            n_steps=cfg.n_class_classifier_steps,
            lr=cfg.lr,
            generator=gen,
        )
        cc.eval()
        labels = torch.multinomial(torch.as_tensor(class_marginal), n, replacement=True, generator=gen)
        pj = D.time_potential(h_net, lambda f: f[:, 0])
        pc = classifier_potential(cc, labels)
        arms = {
            "ind": {"unguided": draw(n, gen), "jeffrey": draw(n, gen, pj), "classifier": draw(n, gen, pc)},
        }
        if crn:
            arms["crn"] = {
                m: draw(n, torch.Generator().manual_seed(run_seed + 7000), p)
                for m, p in (("unguided", None), ("jeffrey", pj), ("classifier", pc))
            }
        row = {"seed": seed}
        for v, xs in arms.items():
            row[f"{v}500"] = {m: fd(x[:500]) for m, x in xs.items()}
            row[f"{v}{n}"] = {m: fd(x) for m, x in xs.items()}
        row["blocks"] = {m: [fd(x[i : i + 500]) for i in range(0, n - 499, 500)] for m, x in arms["ind"].items()}
        row["s"] = round(time.time() - t1, 1)
        print(json.dumps(row), flush=True)
        rows.append(row)

    def get(v: str, m: str, k: str) -> list[float]:
        return [r[v][m][k] for r in rows]

    out = {"base": base}
    for v in ("ind500", f"ind{n}", "crn500", f"crn{n}")[: 4 if crn else 2]:
        fr = C.frechet_verdict(
            get(v, "unguided", "metric"),
            get(v, "jeffrey", "metric"),
            get(v, "unguided", "control"),
            get(v, "jeffrey", "control"),
        )
        be = C.better_verdict(
            {"target embedding": get(v, "jeffrey", "metric"), "pixel PCA": get(v, "jeffrey", "control")},
            {"target embedding": get(v, "classifier", "metric"), "pixel PCA": get(v, "classifier", "control")},
        )
        ivs = {}
        for k in ("metric", "control"):
            cut = 1 - C.FD_CUT if k == "metric" else 1 - C.FD_CUT / 2
            a = interval(np.asarray(get(v, "jeffrey", k)) - cut * np.asarray(get(v, "unguided", k)))
            b = interval(np.asarray(get(v, "classifier", k)) - np.asarray(get(v, "jeffrey", k)))
            ivs[k] = {
                "fid_row": [round(a.mean, 3), round(a.low, 3), round(a.high, 3)],
                "beyond_row": [round(b.mean, 3), round(b.low, 3), round(b.high, 3)],
            }
        out[v] = {"frechet": fr, "better": be, "intervals": ivs}
    out["s"] = round(time.time() - t0, 1)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), *(int(a) for a in sys.argv[2:3]), *(a != "ind" for a in sys.argv[3:4]))
