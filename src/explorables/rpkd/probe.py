"""The mechanism, measured apart from student training: how much a distillation target says about the fine label.

A linear probe (scikit-learn's ``LogisticRegression``) reads one kind of target the teacher
hands the student, on half of the transfer set, and predicts the *fine* digit (10 classes);
its accuracy on the other half measures the fine-label information in that target:

* ``logits``: the teacher's ``C``-way softened class distribution (what KD and OFA transfer);
* ``prototypes``: RPKD's ``K``-way global prototype distribution, eq. (rpkd-global);
* ``maps``: RPKD's per-prototype activation maps, eq. (rpkd-map), flattened.

The fine labels are the probe's own targets only; the distillation targets never see them.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from ..core.arguments import Array, checked
from ..core.params import Int
from .losses import TAU, TEMPERATURE, _activation_maps, _global_distribution, require_tensors

TARGETS: tuple[str, ...] = ("logits", "prototypes", "maps")


@checked(teacher_logits=Array("n c"), z_teacher=Array("n l d"), prototypes=Array("k d"), temperature=TEMPERATURE,
         tau=TAU)
def distillation_targets(
    teacher_logits: torch.Tensor, z_teacher: torch.Tensor, prototypes: torch.Tensor, *, temperature: float, tau: float
) -> dict[str, np.ndarray]:
    """Each target as features ``(N, dim)``: log-probabilities of the logit, prototype and map targets."""
    require_tensors(teacher_logits=teacher_logits, z_teacher=z_teacher, prototypes=prototypes)
    with torch.no_grad():
        logits = torch.log_softmax(teacher_logits / temperature, dim=-1)
        protos = _global_distribution(z_teacher, prototypes, tau)
        maps = _activation_maps(z_teacher, prototypes, tau).flatten(start_dim=-2)
    return {"logits": logits.cpu().numpy(), "prototypes": protos.cpu().numpy(), "maps": maps.cpu().numpy()}


@checked(features=Array("n dim"), fine=Array("n"), n_probe=Int(4), max_iter=Int(1, 100_000))
def probe_accuracy(
    features: np.ndarray | torch.Tensor, fine: np.ndarray | torch.Tensor, seed: int, n_probe: int | None = None,
    max_iter: int = 200,
) -> float:
    """Held-out accuracy of a linear probe from ``features`` to ``fine`` labels: a seeded half/half split of
    ``n_probe`` images (all if ``None``, or if there are fewer)."""
    features = np.asarray(features, dtype=np.float64)
    fine = np.asarray(fine)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(fine))[: n_probe or len(fine)]
    half = len(order) // 2
    fit, held = order[:half], order[half:]
    if len(fit) < 2 or len(held) < 1 or len(np.unique(fine[fit])) < 2:
        raise ValueError(f"fine must hold at least two classes among the probe's fit half ({len(fit)} of "
                         f"n_probe = {len(order)} images), got {np.unique(fine[fit]).tolist()}")
    scaler = StandardScaler().fit(features[fit])
    probe = LogisticRegression(max_iter=max_iter, C=1.0)
    # one BLAS thread: these matrices are small, and waiting for a second thread on a busy CPU costs ~50x
    with warnings.catch_warnings(), threadpool_limits(limits=1):  # a probe stopped at max_iter is still a valid
        warnings.simplefilter("ignore", ConvergenceWarning)  # (lower) bound on the information
        probe.fit(scaler.transform(features[fit]), fine[fit])
        return float(probe.score(scaler.transform(features[held]), fine[held]))
