"""Class-balanced selection, and the baselines' scores.

Every method keeps exactly ``class_budget(labels, prune_fraction)[c]`` samples of class ``c``;
only the choice *within* a class differs. Labels are used for that balance (as the paper's
class-balanced selection does) and by the supervised baselines; TopoPrune's *scores* never see
them (:func:`explorables.topoprune.persistence.persistence_scores` takes only the features).
"""

from __future__ import annotations

import numpy as np

from ..core.arguments import Array, checked
from ..core.params import Choice, Float, Int, Probability
from ..core.validation import check_int

SELECTIONS: tuple[str, ...] = ("coverage", "easy", "hard")

#: the rules shared by the selections: labels alone, and labels with one entry per score or feature row (``n``)
_LABELS = Array("m", integer=True)
_LABELS_N = Array("n", integer=True)
_RATE = Probability(open_low=True, open_high=True)


@checked(labels=_LABELS, prune_fraction=_RATE)
def class_budget(labels: np.ndarray, prune_fraction: float) -> dict[int, int]:
    """Samples kept per class: ``round((1 - prune_fraction) * n_c)``, at least one, eq. (topoprune-budget)."""
    classes, counts = np.unique(np.asarray(labels), return_counts=True)
    return {int(c): int(max(1, round((1.0 - prune_fraction) * n))) for c, n in zip(classes, counts, strict=True)}


@checked(scores=Array("n"), labels=_LABELS_N, prune_fraction=_RATE, mode=Choice(SELECTIONS),
         offset=Float(0.0, 1.0, high_inclusive=False))  # fmt: skip
def select_by_score(
    scores: np.ndarray, labels: np.ndarray, prune_fraction: float, mode: str = "coverage", offset: float = 0.5
) -> np.ndarray:
    """Kept pool indices (sorted), class-balanced, chosen by ``scores`` within each class.

    ``easy``: the lowest scores; ``hard``: the highest; ``coverage``: evenly spaced ranks of the
    class's sorted scores, ``ranked[floor((i + offset) n / m)]`` for ``i < m`` (the kept set spans the
    whole score range, deterministic stratification; ``offset`` in [0, 1) places the grid inside each
    stratum, ½ its centre, the method's own kept set). ``offset`` is read by ``coverage`` only.
    """
    s, y = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    kept = []
    for c, m in class_budget(y, prune_fraction).items():
        members = np.flatnonzero(y == c)
        ranked = members[np.argsort(s[members], kind="stable")]
        if mode == "easy":
            kept.append(ranked[:m])
        elif mode == "hard":
            kept.append(ranked[len(ranked) - m :])
        else:
            kept.append(ranked[((np.arange(m) + offset) * len(ranked) / m).astype(int)])
    return np.sort(np.concatenate(kept))


def coverage_offsets(n_offsets: int) -> tuple[float, ...]:
    """The ``n_offsets`` grid offsets ``(j + ½) / n_offsets`` of the evenly spaced rule, spread evenly over
    a stratum. With an odd count the centre offset ½ is among them, and the offsets of ``K`` are among
    those of ``3K`` (1 ⊂ 3 ⊂ 9)."""
    n_offsets = check_int("n_offsets", n_offsets, 1)
    return tuple((j + 0.5) / n_offsets for j in range(n_offsets))


@checked(labels=_LABELS, prune_fraction=_RATE)
def random_selection(labels: np.ndarray, prune_fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Class-balanced uniform random subset."""
    y = np.asarray(labels)
    return np.sort(np.concatenate([
        rng.choice(np.flatnonzero(y == c), size=m, replace=False) for c, m in class_budget(y, prune_fraction).items()
    ]))  # fmt: skip


@checked(features=Array("n d"), labels=_LABELS_N)
def centre_distance(features: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Distance of each sample to its class's mean feature vector (an extrinsic, Euclidean score)."""
    f, y = np.asarray(features, dtype=np.float64), np.asarray(labels)
    out = np.empty(len(y))
    for c in np.unique(y):
        members = y == c
        out[members] = np.linalg.norm(f[members] - f[members].mean(0), axis=1)
    return out


@checked(scores=Array("n"), labels=_LABELS_N, prune_fraction=_RATE, n_strata=Int(1, 10**6),
         hard_cutoff=Float(0.0, 1.0, high_inclusive=False))  # fmt: skip
def ccs_selection(
    scores: np.ndarray, labels: np.ndarray, prune_fraction: float, rng: np.random.Generator,
    *, n_strata: int = 10, hard_cutoff: float = 0.1,
) -> np.ndarray:
    """Coverage-centric coreset selection (Zheng et al., ICLR 2023), per class.

    Drop the ``hard_cutoff`` fraction of hardest samples (highest ``scores``), split the score range
    into ``n_strata`` equal-width strata, and share the class budget over the strata, smallest
    stratum first (a stratum gives what it has, the rest goes on); sample uniformly inside each.
    """
    s, y = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    kept = []
    for c, m in class_budget(y, prune_fraction).items():
        members = np.flatnonzero(y == c)
        ranked = members[np.argsort(s[members], kind="stable")]
        pool = ranked[: max(m, round((1.0 - hard_cutoff) * len(ranked)))]
        edges = np.linspace(s[pool].min(), s[pool].max(), n_strata + 1)
        which = np.clip(np.searchsorted(edges, s[pool], side="right") - 1, 0, n_strata - 1)
        strata = [pool[which == b] for b in range(n_strata) if np.any(which == b)]
        budget, chosen = m, []
        for j, stratum in enumerate(sorted(strata, key=len)):
            take = min(len(stratum), budget // (len(strata) - j))
            chosen.append(rng.choice(stratum, size=take, replace=False))
            budget -= take
        kept.append(np.concatenate(chosen))
    return np.sort(np.concatenate(kept))


@checked(skip_nested=True, features=Array("n d"), labels=_LABELS_N, prune_fraction=_RATE, n_neighbours=Int(1, 10**6),
         gamma=Float(0.0))  # fmt: skip
def d2_selection(
    features: np.ndarray, labels: np.ndarray, prune_fraction: float, *, n_neighbours: int = 10, gamma: float = 1.0,
) -> np.ndarray:
    """D2-pruning-style graph selection (after Maharana et al., ICLR 2024), per class.

    A kNN graph over the class's features carries a difficulty score (distance to the class mean,
    scaled to [0, 1]); forward message passing adds each node's neighbours' scores weighted by
    ``exp(-gamma d²)``; nodes are then picked greedily by score, and each pick lowers its
    neighbours' scores by the same weights times the pick's score (reverse message passing), so
    the selection spreads over the graph.
    """
    from .persistence import exact_knn

    f = np.asarray(features, dtype=np.float64)
    difficulty = centre_distance(f, labels)  # centre_distance and class_budget run bare: checked by the rules above
    y = np.asarray(labels)
    kept = []
    for c, m in class_budget(y, prune_fraction).items():
        members = np.flatnonzero(y == c)
        k = min(n_neighbours, len(members) - 1)
        s = difficulty[members] / max(difficulty[members].max(), 1e-12)
        if k < 1:
            kept.append(members[:m])
            continue
        dist, idx = exact_knn(f[members], k + 1)  # one thread: the same neighbours, far less CPU
        dist, idx = dist[:, 1:], idx[:, 1:]
        weight = np.exp(-gamma * (dist / max(np.median(dist), 1e-12)) ** 2)
        score = s + (weight * s[idx]).sum(1)  # forward message passing
        alive = np.ones(len(members), dtype=bool)
        picks = []
        for _ in range(m):
            i = int(np.argmax(np.where(alive, score, -np.inf)))
            picks.append(i)
            alive[i] = False
            score[idx[i]] -= weight[i] * score[i]  # reverse message passing
        kept.append(members[picks])
    return np.sort(np.concatenate(kept))
