"""Plan of ucca's ``paper`` preset: the QAP step's entropic relaxation (torch, on the device), and the CPU work
around it at 5,000 samples: the linear assignments, the Gromov–Wasserstein baseline and the truth-basin diagnosis.

One entropic restart at the preset's 5,000 samples takes minutes on a CPU, so the synthetic parts are measured
at :data:`MEASURED_POINTS` samples and scaled by the cost's order in ``n``, read from the code:

* :func:`~explorables.ucca.method.entropic_pairing`: each of its ``n_outer`` mirror steps forms
  ``X̃ (X̃ᵀ T Ỹ) Ỹᵀ`` (``O(n² d)``) and runs ``n_sinkhorn`` log-domain Sinkhorn iterations, each a
  ``logsumexp`` over the ``n x n`` coupling (``O(n²)``); the loop lengths do not depend on ``n``. FLOPs,
  memory traffic and the couplings' memory scale as ``n²``, the kernel count not at all.
* :func:`scipy.optimize.linear_sum_assignment` (shortest augmenting paths, Crouse 2016) on a dense ``n x n``
  score: ``O(n³)``.
* POT's entropic Gromov–Wasserstein: every outer iteration forms the tensor product ``C₁ T C₂ᵀ`` of dense
  ``n x n`` matrices (``O(n³)``); scipy's FAQ (the diagnosis) forms ``A P Bᵀ`` with a dense doubly stochastic
  ``P`` in every iteration (``O(n³)``). Their iteration counts are taken as measured at the smaller ``n``.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
from threadpoolctl import threadpool_limits

from ..core.plan import Part, dry_note
from ..ucca.baselines import gromov_wasserstein_pairing
from ..ucca.cca import whiten
from ..ucca.data import unpaired
from ..ucca.experiment import load_split, truth_basin_objective
from ..ucca.method import entropic_pairing, rotation_start

#: samples of the measured synthetic problem (the preset's 5,000 take minutes per restart on a CPU)
MEASURED_POINTS = 1_000
SYNTHETIC = ("clustered", "gaussian")
REAL = ("breast_cancer", "digits", "wine")


def _views(cfg, dataset: str):
    """``(X, Y shuffled, X̃, Ỹ, truth)`` of ``dataset`` as a trial draws them (seed 0)."""
    rng = np.random.default_rng([cfg.seed, 0, 0])
    train, _ = load_split(cfg, dataset, rng)
    X, Y, shuffle = unpaired(train, rng)
    return X, Y, whiten(X, cfg.d_reduced, name="X"), whiten(Y, cfg.d_reduced, name="Y"), np.argsort(shuffle)


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    n = cfg.n_train
    n0 = min(n, 200 if dry else MEASURED_POINTS)
    here = dataclasses.replace(cfg, n_train=n0, n_test=min(cfg.n_test, n0))
    ratio = n / n0
    defaults = inspect.signature(entropic_pairing).parameters
    n_outer, n_sinkhorn = defaults["n_outer"].default, defaults["n_sinkhorn"].default
    loop = dict(n_outer=2, n_sinkhorn=5) if dry else {}  # dry: a few iterations (the kernel count is then smaller)
    seeds, restarts = len(cfg.seeds), cfg.n_restarts
    synthetic = [d for d in cfg.datasets if d in SYNTHETIC]
    real = [d for d in cfg.datasets if d in REAL]
    full_trials = len(synthetic) * seeds  # every method, the baselines and the diagnosis
    sweep_trials = len(cfg.non_gaussianity_grid)  # UCCA, the oracle and random pairings (first seed)
    X, Y, Xw, Yw, truth = _views(here, "clustered")
    flips = 2**cfg.d_reduced - 1

    def restart(Xw=Xw, Yw=Yw):
        with threadpool_limits(1, user_api="blas"):  # as ucca() runs it
            return entropic_pairing(Xw, Yw, n_restarts=1, reflect=False, device="cpu",
                                    rng=np.random.default_rng(1), **loop)

    what = (f"one entropic restart: {n_outer} mirror steps x {n_sinkhorn} Sinkhorn iterations on {n:,} x {n:,} "
            "couplings")
    found = [
        Part("QAP relaxation, synthetic", what, restart, steps=restarts * (full_trials + sweep_trials),
             precision="fp64", repeat=1, scale=ratio**2, memory_scale=ratio**2,
             note=f"measured at n = {n0:,}; FLOPs, memory traffic and memory scaled by (n ratio)^2 (every iteration "
             f"is O(n^2)); {restarts} restarts x ({full_trials} benchmark trials + {sweep_trials} sweep trials); the "
             "measured CPU time includes the restart's two assignments (counted in 'assignments')"),
    ]
    for table in real:  # each bundled table the preset runs, measured whole
        Xr, _, Xrw, Yrw, _ = _views(cfg, table)
        found.append(Part(
            f"QAP relaxation, {table}", f"one entropic restart on the {table} table ({Xr.shape[0]:,} samples)",
            lambda Xrw=Xrw, Yrw=Yrw: restart(Xrw, Yrw), steps=restarts * seeds, precision="fp64", repeat=1,
            note=f"measured on the whole {table} training view ({Xr.shape[0]:,} samples), as the preset runs it"))
    assignments_full = 2 * restarts + flips + cfg.n_alternations + 6 * restarts + 1
    assignments_sweep = 2 * restarts + flips + cfg.n_alternations
    # the FAQ-off ablation (ucca with solver="none") on the ablation data sets: the same starts, rounds and alternation
    ablation_trials = len([d for d in cfg.ablation_datasets if d in synthetic]) * seeds
    assignments_ablation = 6 * restarts + flips + cfg.n_alternations
    rng = np.random.default_rng(2)
    found += [
        Part("assignments", f"one linear assignment (scipy) of a dense {n:,} x {n:,} score",
             lambda: rotation_start(Xw, Yw, rng), steps=full_trials * assignments_full + sweep_trials
             * assignments_sweep + ablation_trials * assignments_ablation, runs_on="cpu", repeat=1, scale=ratio**3,
             memory_scale=ratio**2,
             note=f"measured at n = {n0:,}, time scaled by (n ratio)^3 (shortest augmenting paths, O(n^3)); per "
             f"benchmark trial {assignments_full}: a start and a rounding per restart, {flips} sign flips (one "
             f"round), {cfg.n_alternations} alternations, Wasserstein–Procrustes' start and 5 rounds per restart, "
             f"the Gromov–Wasserstein rounding; per sweep trial {assignments_sweep}; per FAQ-off ablation trial "
             f"({ablation_trials}) up to {assignments_ablation}; counted at every round's most, an upper bound; "
             "the real tables' assignments (n <= 899) are under 1% of these"),
        Part("Gromov–Wasserstein", f"POT's entropic Gromov–Wasserstein on {n:,} x {n:,} distance matrices",
             lambda: gromov_wasserstein_pairing(X, Y, entropic=True), steps=full_trials, runs_on="cpu", repeat=1,
             scale=ratio**3, memory_scale=ratio**2,
             note=f"measured at n = {n0:,}, time scaled by (n ratio)^3 (a dense n x n tensor product per "
             "iteration; iterations as measured); numpy, one BLAS thread"),
        Part("truth-basin diagnosis", f"scipy's FAQ from the true pairing on {n:,} x {n:,} Gram matrices",
             lambda: truth_basin_objective(Xw, Yw, truth), steps=full_trials, runs_on="cpu", repeat=1,
             scale=ratio**3, memory_scale=ratio**2,
             note=f"measured at n = {n0:,}, time scaled by (n ratio)^3 (dense A P B^T per FAQ iteration; "
             "iterations as measured); a diagnosis for the page's text, not a method"),
    ]
    if dry:
        dry_note(found, dry, f"n = {n0}, and {loop['n_outer']} x {loop['n_sinkhorn']} entropic iterations")
    paper_scale = ("partly: 5,000 unpaired samples per synthetic view with d = 5 and 64 restarts, and two small "
                   "bundled tables used whole; the abstract names no sample size, and the paper's real multimodal "
                   "data (and its QAP solver) are not reproduced: the QAP step is our entropic relaxation")
    return found, paper_scale, ("the entropic relaxation follows the config's device; the assignments, POT and FAQ "
                                "run on the CPU (one BLAS thread); cheap steps (whitening, CCA, scoring) are not in "
                                "the plan")
