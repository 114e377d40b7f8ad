"""Jeffrey's rule of conditioning on a finite table, eq. (jeffrey-rule), and the checks around it.

A joint table ``joint[x, s]`` holds ``p(x, s)``, with ``s`` the statistic whose marginal we want to
move to a target ``q(s)``. Jeffrey's rule keeps every conditional ``p(x | s)`` and swaps the marginal:

    p'(x, s) = p(x | s) q(s) = p(x, s) w(s),    w(s) = q(s) / p(s)        (jeffrey-rule)

Among all joints whose ``s``-marginal is ``q``, it is the one closest to ``p`` in KL divergence
(either direction), eq. (jeffrey-kl); :func:`kl_divergence` lets the tests check that numerically.
"""

from __future__ import annotations

import numpy as np

from ..core.arguments import checked
from ..core.params import Text

_ATOL = 1e-6


def _as_array(name: str, value: object) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from None
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers (no NaN or inf)")
    return arr


def check_distribution_table(name: str, value: object) -> np.ndarray:
    """A probability table: finite, entries ``>= 0``, summing to 1 (within 1e-6); returned renormalised."""
    arr = _as_array(name, value)
    if np.any(arr < 0):
        raise ValueError(f"{name} must have entries >= 0 (a probability distribution), got min {arr.min():.3g}")
    total = arr.sum()
    if abs(total - 1.0) > _ATOL:
        raise ValueError(f"{name} must sum to 1 (a probability distribution), got sum {total:.6g}")
    return arr / total


@checked(name=Text(nonempty=True))
def check_target(target: object, marginal: object, name: str = "target") -> np.ndarray:
    """Check that ``target`` can be reached from ``marginal`` by Jeffrey's rule.

    ``target`` must be a distribution of the same length as ``marginal``, and must put no mass on
    a value of the statistic that ``marginal`` never takes (reweighting cannot create mass there:
    ``w = q / p`` would be infinite).
    """
    p = check_distribution_table("marginal", marginal)
    q = check_distribution_table(name, target)
    if q.shape != p.shape:
        raise ValueError(
            f"{name} must have the shape of marginal {p.shape} (one entry per value of the statistic), got {q.shape}"
        )
    bad = np.flatnonzero((q > 0) & (p <= 0))
    if bad.size:
        raise ValueError(
            f"{name} puts mass on value(s) {bad.tolist()} of the statistic where the model's marginal is 0; "
            "Jeffrey's rule can only reweight, so the target must be 0 there"
        )
    return q


def jeffrey_weights(target: object, marginal: object) -> np.ndarray:
    """The likelihood ratio ``w(s) = q(s) / p(s)`` of eq. (jeffrey-rule); 0 where ``p(s) = q(s) = 0``."""
    p = check_distribution_table("marginal", marginal)
    q = check_target(target, p)
    w = np.zeros_like(p)
    np.divide(q, p, out=w, where=p > 0)
    return w


def jeffrey_update(joint: object, target: object) -> np.ndarray:
    """Jeffrey's rule, eq. (jeffrey-rule): ``joint[x, s] * q(s) / p(s)``.

    ``joint`` is a 2-D table ``p(x, s)`` (the statistic is the last axis); ``target`` is ``q(s)``.
    The result keeps ``p(x | s)`` for every ``s`` with ``p(s) > 0`` and has ``s``-marginal ``q``.
    """
    p = check_distribution_table("joint", joint)
    if p.ndim != 2:
        raise ValueError(f"joint must be a 2-D table p(x, s), got shape {p.shape}")
    w = jeffrey_weights(target, p.sum(axis=0))
    return p * w[None, :]


def kl_divergence(p: object, q: object) -> float:
    """``KL(p || q) = sum p log(p / q)`` over the entries of two tables (inf if ``p`` has mass where ``q`` has none)."""
    p = check_distribution_table("p", p)
    q = check_distribution_table("q", q)
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape, got {p.shape} and {q.shape}")
    mask = p > 0
    if np.any(q[mask] <= 0):
        return float("inf")
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


def tv_distance(p: object, q: object) -> float:
    """Total variation ``(1/2) sum |p - q|`` between two distributions of the same shape."""
    p = check_distribution_table("p", p)
    q = check_distribution_table("q", q)
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape, got {p.shape} and {q.shape}")
    return float(0.5 * np.abs(p - q).sum())


def independent_target(joint: object) -> np.ndarray:
    """The fairness target ``q(a, b) = p(a) p(b)`` of a 2-D attribute table ``p(a, b)``: same marginals, independent."""
    p = check_distribution_table("joint", joint)
    if p.ndim != 2:
        raise ValueError(f"joint must be a 2-D table p(a, b), got shape {p.shape}")
    return np.outer(p.sum(axis=1), p.sum(axis=0))


# --- what an imperfect classifier does to the rule ---------------------------------------------------
def _confusion(name: str, value: object, n: int) -> np.ndarray:
    m = _as_array(name, value)
    if m.shape != (n, n):
        raise ValueError(f"{name} must be an ({n}, {n}) table M[s, s'] (one row per value of the statistic)")
    if np.any(m < 0) or np.any(np.abs(m.sum(1) - 1) > _ATOL):
        raise ValueError(f"{name} must have rows that are distributions (entries >= 0, each row summing to 1)")
    return m


def flip_confusion(n_cells: int, rate: float) -> np.ndarray:
    """``M[s, s']``: a label kept with probability ``1 - rate``, else moved to one of the other cells uniformly."""
    if not (isinstance(n_cells, int) and n_cells >= 2):
        raise ValueError(f"n_cells must be an integer >= 2, got {n_cells!r}")
    if not 0 <= rate <= 1:
        raise ValueError(f"rate must lie in [0, 1] (a probability of flipping a label), got {rate}")
    m = np.full((n_cells, n_cells), rate / (n_cells - 1))
    np.fill_diagonal(m, 1 - rate)
    return m


def jeffrey_marginal_with(marginal: object, target: object, confusion: object) -> np.ndarray:
    """The cell marginal Jeffrey guidance reaches when its classifier confuses cells as ``M[s, s'] = E[c(s' | x) | s]``.

    With ``h_0(x) = sum_s' c(s' | x) w(s')`` the guided law is ``p(x) h_0(x) / Z``, whose marginal is
    ``p(s) (M w)(s) / Z``: the weights are smoothed to ``M w`` (``M = I`` gives back ``q``).
    """
    p = check_distribution_table("marginal", marginal)
    w = jeffrey_weights(target, p)
    m = _confusion("confusion", confusion, len(p))
    out = p * (m @ w)
    return out / out.sum()


def classifier_guidance_marginal_with(marginal: object, target: object, confusion: object) -> np.ndarray:
    """The cell marginal plain classifier guidance (``y ~ q``, then ``p(x | y)``) reaches with a classifier whose
    label is ``s'`` with probability ``M[s, s']`` in cell ``s``: ``sum_y q(y) p(s) M[s, y] / sum_s p(s) M[s, y]``."""
    p = check_distribution_table("marginal", marginal)
    q = check_target(target, p)
    m = _confusion("confusion", confusion, len(p))
    joint = p[:, None] * m  # p(s, y)
    col = joint.sum(0)
    cond = np.divide(joint, col[None, :], out=np.zeros_like(joint), where=col[None, :] > 0)  # p(s | y)
    out = cond @ q
    return out / out.sum()
