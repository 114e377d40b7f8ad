"""The chapter's claims table (Claims kit 3): one check, four gates, the paper's claims.

Every verdict follows the book-wide rules of :mod:`explorables.core.verdicts` on per-seed values,
paired by seed (same split and networks): 95% t-interval: mean ± t·se against a threshold
declared once below and in :data:`CRITERIA`.

* **check** (ours): persistence read off torch distances at gudhi's pairs equals gudhi's diagram;
* **gate** ``stable``: the abstract's argument is pruning *through the stability of topology*, so
  before any comparison the score must keep its ranking under the feature noise of the robustness
  claim (Spearman clean vs noisy, interval ≥ :data:`STABLE`, fixed by the chapter issue before the
  comparisons); every claim depends on it (the first version's score failed it; the score is now
  the neighbourhoods' total persistence in the features, unchanged level). It reads the Spearman pooled
  over every sample (the rule fixed before the comparisons); the mean over classes, the ranking that a
  class-balanced selection reads, stands beside it in the measured text and is not read by the gate;
* **gate** ``extractors``: the same for the MLP's against the CNN's features (the transfer claim);
* **gate** ``fragile``: the robustness claim's positive control: the centre distance's kept set (its own
  rule, the lowest distances) loses part of itself under the noise and sits above the random floor
  (:data:`FRAGILE_JACCARD`, :data:`RANDOM_JACCARD`, written before the gate was first run);
* **gate** ``room``: the D2-style graph beats random selection at the highest rate by the accuracy
  margin (paired), or no accuracy comparison can say more than "our toy cannot tell";
* **claims**: accuracy at the highest pruning rate (per baseline; random selection is the primary
  baseline: its part must read yes before the claim reads yes or partly), robustness to feature
  noise (kept-set overlap, clean vs noisy features; the primary part: TopoPrune and the centre distance
  both keeping their lowest scores, where the ranking alone decides the kept set; then TopoPrune's evenly
  spaced ranks against the centre distance by the same rule, D2 and CCS), transfer
  across architectures, and our control (persistence against the same pipeline without it). Keeping
  one end of the score is our own variant of a selection rule the abstract does not name: the page
  shows it (:func:`ends_table`) without a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from ..core.tables import Claim, markdown_table
from ..core.tables import claims_table as claims_markdown  # noqa: F401 - what the notebook imports
from ..core.validation import check_int, check_positive
from ..core.verdicts import Criterion, Interval, compare, fmt_mean_sd, gate, interval, scope_verdict, t_multiplier
from .experiment import (
    BASELINES,
    END_MODES,
    END_SCORED,
    METHOD_NAMES,
    METHODS,
    PERTURBATION_NAMES,
    PERTURBATIONS,
    SCORED,
    VARIANT_NAMES,
    VARIANTS,
    TopoPruneResults,
)

GEOMETRIC: tuple[str, ...] = ("centre", "d2", "ccs")  # the extrinsic-geometry baselines the paper contrasts
#: gates: the score's rank correlation with itself (clean vs noisy features; MLP vs CNN features)
STABLE = 0.7
#: an accuracy gain counts when its paired per-seed interval clears half a point
ACC_MARGIN = 0.005
#: the check: largest gap to gudhi's diagram
PERSISTENCE_TOL = 1e-9
#: the room gate: the accuracy claims can read yes only if the D2-style graph (the paper's strongest
#: geometric baseline) beats random selection at the highest rate by the same margin, MLP features,
#: paired interval. Baseline and margin were fixed before D2's paired gain over random was computed,
#: but earlier versions' accuracy tables had already listed both accuracies side by side
ROOM_BASELINE = "d2"
#: page wording (:func:`stability_phrase`): "close to random" within this much of two random draws'
#: kept-set overlap
RANDOM_JACCARD = 0.05
#: the gate ``fragile`` (written before it was first run; review of the second pass): the robustness claim
#: is testable only if the geometric baseline's kept set (centre distance, its own rule: the lowest
#: distances) (a) degrades under the noise, its clean-vs-noisy Jaccard interval at most FRAGILE_JACCARD
#: (at least about a tenth of the kept set replaced), and (b) sits above the random floor, its paired
#: Jaccard minus random selection's at least RANDOM_JACCARD (the rule lets a score's stability show:
#: a kept set on the floor says nothing about its score)
FRAGILE_JACCARD = 0.8
#: a kept-set stability gain (Jaccard, TopoPrune minus a geometric baseline, paired) counts when its interval
#: clears the book's smallest kept-set difference, RANDOM_JACCARD (the fragile gate's distance from the random
#: floor), and reads no when the whole interval lies below it (TopoPrune's kept set is not more stable by as
#: much as that). Until the third version this margin was 0, and the verdict flipped between no and unclear
#: over base seeds on an effect near 0 (TopoPrune slightly *less* stable than the centre distance): the margin
#: was raised to RANDOM_JACCARD after that seed study and before this version's tuning (base seeds 100-102)
#: and seed study were run (disclosed on the page)
RANK_MARGIN = RANDOM_JACCARD


def _iv(values: Sequence[float]) -> str:
    return interval(values).format(digits=3, signed=True)


def _ms(d: Mapping) -> str:
    """``mean ± sd`` (sample sd) of a summary entry's per-seed values."""
    return fmt_mean_sd(d["values"], 3)


def _cell(per_rate: Mapping, rate: str) -> str:
    """:func:`_ms` at ``rate``, or "not trained" where the run trained nothing at that rate (only the MLP
    view trains below the highest rate: no verdict reads those)."""
    return _ms(per_rate[rate]) if rate in per_rate else "not trained"


# --- verdict functions (pure, driven by CRITERIA with synthetic numbers) ---------------------------


def persistence_verdict(max_gap: float, tol: float = PERSISTENCE_TOL) -> str:
    """pass when persistence read off torch distances at gudhi's pairs equals gudhi's diagram within ``tol``."""
    word = "pass" if max_gap <= tol else "fail"
    return f"{word}: largest gap {max_gap:.1e} vs {tol:.0e}"


def stability_gate(rho: Sequence[float], level: float = STABLE) -> str:
    """pass when the per-seed rank correlations' interval clears ``level``."""
    return f"{gate(rho, level)}: Spearman {_iv(rho)} vs {level}"


def fragile_gate(jaccard: Sequence[float], jaccard_random: Sequence[float], most: float = FRAGILE_JACCARD,
                 floor: float = RANDOM_JACCARD) -> str:
    """pass when the geometric baseline's per-seed kept-set Jaccard (clean vs noisy) has its interval at
    most ``most`` (the noise degrades it) and its paired excess over random selection's has its interval
    at least ``floor`` (its rule is off the random floor, so stability can show)."""
    j, extra = np.asarray(jaccard, dtype=float), np.asarray(jaccard, dtype=float) - np.asarray(jaccard_random)
    degrades, off_floor = gate(j, most, "below"), gate(extra, floor)
    word = "pass" if degrades == "pass" and off_floor == "pass" else "fail"
    return (f"{word}: centre distance's Jaccard {_iv(j)} vs ≤ {most} ({degrades}); minus random's "
            f"{_iv(extra)} (paired) vs ≥ {floor} ({off_floor})")


def room_gate(gain: Sequence[float], margin: float = ACC_MARGIN) -> str:
    """pass when the paired accuracy gain of :data:`ROOM_BASELINE` over random selection clears ``margin``:
    the reduced run has room for a selection method to beat random at all."""
    return f"{gate(gain, margin)}: D2 − random {_iv(gain)} (paired) vs {margin}"


def primary_verdict(parts: Mapping[str, str], primary: str, what: str) -> str:
    """A claim with a primary part: ``yes`` or ``partly`` (:func:`~explorables.core.verdicts.combine`
    over every part) only when the primary part reads yes; otherwise the primary part's own word
    (no or unclear), whatever the other parts say."""
    if primary not in parts:
        raise ValueError(f"parts must include the primary part {primary!r}, got {sorted(parts)!r}")
    if parts[primary] != "yes":
        others = "; ".join(f"{k}: {v}" for k, v in parts.items() if k != primary)
        return (f"{parts[primary]}: {what} — the primary part ({primary}) reads {parts[primary]}"
                + (f" (others: {others})" if others else ""))
    return scope_verdict(parts, what)


def accuracy_verdict(gains: Mapping[str, Sequence[float]], margin: float = ACC_MARGIN) -> str:
    """Per baseline, TopoPrune's paired accuracy gain (per seed) against ``margin``. Random selection is
    the primary baseline: the claim reads yes or partly (combined over the baselines) only when the
    part against random reads yes; otherwise it takes that part's word (no, or unclear when tied)."""
    parts = {name: compare(g, margin) for name, g in gains.items()}
    return primary_verdict(parts, "random", f"paired accuracy gain ≥ {margin}")


#: the primary part of the robustness claim: the kept set's stability against the one geometric score,
#: both keeping their lowest scores per class (the centre distance's own rule), where the kept set is
#: decided by the ranking alone (the paper's claim is about the selected set)
PRIMARY_ROBUSTNESS = "kept sets vs centre distance, both keeping their lowest scores"


def robustness_verdict(gains: Mapping[str, Sequence[float]], margin: float = RANK_MARGIN) -> str:
    """Per comparison (kept sets against the centre distance, both keeping their lowest scores; then, with
    TopoPrune's evenly spaced ranks, against the centre distance by the same rule and each geometric
    baseline as it selects), TopoPrune's paired Jaccard gain against ``margin``. The lowest-scores
    comparison is the primary part: yes or partly (combined) only when it reads yes, otherwise its word.
    The ranks' stability is a property of the score (the ``stable`` gate). A steady accuracy is not
    counted: random selection's accuracy is just as steady under feature noise (it ignores the
    features)."""
    parts = {name: compare(g, margin) for name, g in gains.items()}
    return primary_verdict(parts, PRIMARY_ROBUSTNESS, f"paired kept-set stability gain ≥ {margin} (interval)")


def control_verdict(gain: Sequence[float], margin: float = ACC_MARGIN) -> str:
    """The persistence is what helps (our control): TopoPrune's paired gain over the same pipeline with
    the membership-averaged kNN radius as score (no persistence) against ``margin``. The run gives both
    accuracies as means over ``n_control_offsets`` offsets of the evenly spaced rule's rank grid
    (``benchmarks/topoprune_control_power_rule.md``). With 9 offsets at 90 % pruning the offsets together use
    most of every class once each, so two scores' offset means differ only in how they split those samples into
    placements and in which samples they leave out. On the committed seed study both scores land close to random
    selection (:func:`control_room`, in words :func:`room_phrase`); a density-like score may well do the same, one
    that orders the samples otherwise (along the manifold, say) need not. Where the room is little, a *no* whose
    interval lies within ± the margin says the two give the same accuracy within the margin under a rule that
    leaves little room, not that persistence adds nothing in general (:func:`control_reading`)."""
    return f"{compare(gain, margin)}: persistence adds {_iv(gain)} (paired) vs {margin}"


END_NAMES: dict[str, str] = {"easy": "lowest scores", "hard": "highest scores"}


_UP, _MID, _DOWN = [0.03, 0.031, 0.029], [-0.01, 0.02, 0.005], [-0.02, -0.021, -0.019]
_J_UP, _J_MID = [0.1, 0.11, 0.09], [0.0, 0.1, 0.05]  # Jaccard gains around RANK_MARGIN
CRITERIA: tuple[Criterion, ...] = (
    Criterion("persistence equals gudhi's", "check", persistence_verdict, PERSISTENCE_TOL, "largest gap ≤ tol",
              {"pass": ((1e-12,), {}), "fail": ((1e-3,), {})}),
    Criterion("score is stable (stable, extractors)", "gate", stability_gate, STABLE,
              "interval of per-seed Spearman ≥ level",
              {"pass": (([0.8, 0.82, 0.81],), {}), "fail": (([0.05, 0.1, 0.02],), {})}),
    Criterion("accuracy at the highest rate (and transfer)", "claim", accuracy_verdict, ACC_MARGIN,
              "per baseline, interval of the paired gain vs margin; yes / partly (combined) only when the part "
              "against random reads yes, otherwise that part's word",
              {"yes": (({"random": _UP, "centre": _UP},), {}), "partly": (({"random": _UP, "ccs": _DOWN},), {}),
               "no": (({"random": _DOWN, "centre": _UP},), {}), "unclear": (({"random": _MID, "centre": _UP},), {})},
              scoped=True),
    Criterion("robust to feature noise", "claim", robustness_verdict, RANK_MARGIN,
              "per comparison, interval of the paired kept-set Jaccard gain vs margin; yes / partly (combined) "
              "only when the part against the centre distance kept by the same rule reads yes, otherwise its word",
              {"yes": (({PRIMARY_ROBUSTNESS: _J_UP, "kept sets": _J_UP},), {}),
               "partly": (({PRIMARY_ROBUSTNESS: _J_UP, "kept": _DOWN},), {}),
               "no": (({PRIMARY_ROBUSTNESS: _DOWN, "kept": _J_UP},), {}),
               "unclear": (({PRIMARY_ROBUSTNESS: _J_MID, "kept": _J_UP},), {})},
              scoped=True),
    Criterion("fragile: the geometric baseline degrades, off the random floor (gate of robustness)", "gate",
              fragile_gate, f"{FRAGILE_JACCARD} / {RANDOM_JACCARD}",
              "interval of the centre distance's kept-set Jaccard ≤ most, and of its paired excess over random's "
              "≥ floor",
              {"pass": (([0.3, 0.32, 0.28], [0.05, 0.06, 0.05]), {}),
               "fail": (([0.95, 0.97, 0.96], [0.05, 0.06, 0.05]), {})}),
    Criterion("room: D2 beats random (gate of the accuracy claims)", "gate", room_gate, ACC_MARGIN,
              "interval of the paired gain of D2 over random ≥ margin",
              {"pass": ((_UP,), {}), "fail": ((_MID,), {})}),
    Criterion("control: persistence adds accuracy", "claim", control_verdict, ACC_MARGIN,
              "interval of the paired gain over the control vs margin",
              {"yes": ((_UP,), {}), "no": ((_DOWN,), {}), "unclear": ((_MID,), {})}),
)


# --- the rows -------------------------------------------------------------------------------------


def _values(d: Mapping) -> np.ndarray:
    return np.asarray(d["values"], dtype=float)


def control_room(results: TopoPruneResults) -> dict[str, np.ndarray]:
    """The room the control row's selection rule leaves: per seed, the control row's accuracy (the mean over
    the ``n_control_offsets`` offsets of the evenly spaced grid) of TopoPrune and of the control, minus random
    selection's accuracy (MLP features, highest rate, same seed; random does not use the grid, so it is not
    averaged over offsets). Keyed ``topoprune``, ``radius``."""
    m, top = results.summary["methods"], str(max(results.config.prune_grid))
    random = _values(m["accuracy"]["mlp"]["random"][top])
    return {k: _values(m["control_accuracy"][k][top]) - random for k in ("topoprune", "radius")}


#: page wording only (no verdict reads it): the control row's rule "leaves little room" when both offset means
#: minus random selection (:func:`control_room`, means over seeds) are at most this many accuracy margins in size
ROOM_LITTLE = 2.0


def room_is_little(room: Mapping[str, Sequence[float]], margin: float = ACC_MARGIN) -> bool:
    """Whether both of :func:`control_room`'s per-seed differences (keyed ``topoprune``, ``radius``) have a mean
    over seeds at most :data:`ROOM_LITTLE` × ``margin`` in size."""
    margin = check_positive("margin", margin)
    if set(room) != {"topoprune", "radius"}:
        raise ValueError(f"room must be keyed 'topoprune' and 'radius', got {sorted(room)!r}")
    return all(abs(float(np.mean(room[k]))) <= ROOM_LITTLE * margin for k in room)


def room_phrase(room: Mapping[str, Sequence[float]], margin: float = ACC_MARGIN) -> str:
    """Where the control row's two offset means land against random selection, in words for the page, from
    :func:`control_room`: "within about the margin" when :func:`room_is_little`, which leaves the comparison
    between the two scores little room; otherwise each mean over seeds, and which exceeds the bound."""
    if room_is_little(room, margin):
        return ("both scores measured here land within about the margin of random selection, so the rule leaves "
                "the comparison between them little room")
    means = {k: float(np.mean(room[k])) for k in ("topoprune", "radius")}
    names = {"topoprune": "TopoPrune", "radius": "the control"}
    far = " and ".join(names[k] for k, v in means.items() if abs(v) > ROOM_LITTLE * margin)
    return (f"the scores measured here do not both land near random selection: each offset mean minus random "
            f"selection (mean over seeds) is {means['topoprune']:+.3f} for TopoPrune and {means['radius']:+.3f} "
            f"for the control, more than {ROOM_LITTLE:g} × the margin in size for {far}, so the rule leaves the "
            "comparison between them room")  # fmt: skip


def control_reading(gain: Sequence[float], room: Mapping[str, Sequence[float]], margin: float = ACC_MARGIN) -> str:
    """What the control row's word means, in words for the page, from the row's own paired gain (TopoPrune −
    control, per seed: the row's word is :func:`~explorables.core.verdicts.compare` of it against ``margin``)
    and the room the rule leaves (:func:`control_room`, :func:`room_is_little`). A *no* whose interval lies
    within ± ``margin`` is an equivalence; a *no* reaching below −``margin`` says only that TopoPrune is not
    ahead (the control ahead when the whole interval lies below zero); *unclear* and *yes* as they read."""
    word, iv = compare(gain, margin), interval(gain)
    little = room_is_little(room, margin)
    rule = (" under a selection rule that leaves little room" if little
            else " under a selection rule that leaves room (at least one offset mean lands away from random)")
    general = ". It is not evidence that persistence adds nothing in general"
    if word == "yes":
        return ("the control row's *yes* means that TopoPrune beats the control by the margin"
                + (", even under a selection rule that leaves little room" if little else rule)
                + ". It is a gain of this score over this control at this rule, not a test of persistence in general")
    if word == "unclear":
        return ("the control row's *unclear* means that the interval reaches the margin without clearing it: the run "
                "cannot tell whether TopoPrune beats the control by the margin" + rule + general)  # fmt: skip
    if iv.low > -margin:
        said = "TopoPrune and the control give the same accuracy within the margin"
    elif iv.high < 0:
        said = "the control beats TopoPrune (the whole interval lies below zero)"
    else:
        said = "TopoPrune is not shown ahead of the control by the margin"
    return f"the control row's *no* means that {said}{rule}{general}"


def control_reading_sentence(results: TopoPruneResults) -> str:
    """:func:`control_reading` on a run: the control row's gain and :func:`control_room`."""
    room = control_room(results)
    return control_reading(room["topoprune"] - room["radius"], room)


def grid_placements(labels: np.ndarray, prune_fraction: float, n_offsets: int) -> list[np.ndarray]:
    """The kept pool indices of each of the ``n_offsets`` placements of the evenly spaced grid
    (:func:`~explorables.topoprune.selection.coverage_offsets`) at ``prune_fraction``. Only ranks matter, so the
    pool's index serves as the score: every score's placements take the same rank positions."""
    from .selection import coverage_offsets, select_by_score

    y = np.asarray(labels)
    return [select_by_score(np.arange(len(y), dtype=float), y, prune_fraction, "coverage", offset=u)
            for u in coverage_offsets(n_offsets)]  # fmt: skip


def offsets_reading(placed: Sequence[np.ndarray], n_pool: int) -> str:
    """How the grid's placements (:func:`grid_placements`) share the pool, in words for the page, and what that
    leaves two scores' offset means to differ in: with each sample in one placement at most, only how they split
    the used samples into placements (and, when the placements leave part of the pool out, which samples they
    leave out); with some sample in several, also which samples they use more than once."""
    n_pool = check_int("n_pool", n_pool, 1)
    if not placed:
        raise ValueError("placed must hold at least one placement")
    union = np.unique(np.concatenate([np.asarray(p) for p in placed]))
    left = " and in which samples they leave out" if union.size < n_pool else ""
    if union.size == sum(np.asarray(p).size for p in placed):
        return (f"each of them in exactly one placement, so two scores' offset means differ only in how they split "
                f"those samples into placements{left}")  # fmt: skip
    return (f"some of them in more than one placement, so two scores' offset means differ in how they split the "
            f"samples into placements{left}, and in which samples they use more than once")  # fmt: skip


def within_plain(within: Mapping[str, tuple[float, float]], gates: Mapping[str, str]) -> str:
    """The within-class reversal in one plain sentence for the page: ``within[where]`` is (TopoPrune's, the
    centre distance's) within-class Spearman, means over seeds (``where`` as in :data:`STABILITY_WHERE`'s
    values); ``gates`` the outcomes (pass / fail) of the gates ``stable`` and ``extractors``, which read the
    pooled figure. Where TopoPrune's mean is the lower, says so, and what the gates read."""
    if not within:
        raise ValueError("within must name at least one perturbation")
    missing = {"stable", "extractors"} - set(gates)
    if missing:
        raise ValueError(f"gates must give the outcomes of 'stable' and 'extractors', missing {sorted(missing)!r}")
    lower = [where for where, (t, c) in within.items() if t < c]
    pairs = "; ".join(f"{where} {t:.2f} against {c:.2f}" for where, (t, c) in within.items())
    head = "Within classes, which is the ranking the selection reads, TopoPrune's score keeps its ranking "
    if not lower:
        return (f"{head}at least as well as the distance to the class centre ({pairs}, TopoPrune first, this run's "
                "means over seeds)")  # fmt: skip
    outcomes = f"the gate stable reads {gates['stable']} on it, the gate extractors {gates['extractors']}"
    both = all(gates[g] == "pass" for g in ("stable", "extractors"))
    tail = (f"The gates read the pooled figure, which no class-balanced selection reads ({outcomes}), "
            + ("and gate the transfer row all the same" if both else "so the rows they gate read *untested*"))
    return (f"{head}less well than the distance to the class centre {' and '.join(lower)} ({pairs}, TopoPrune first, "
            "this run's means over seeds): the opposite of the abstract's argument that topology is the more "
            f"stable signal. {tail}")  # fmt: skip


def within_plain_sentence(results: TopoPruneResults, rows: Sequence[Claim]) -> str:
    """:func:`within_plain` on a run and its claims table (:func:`claims`)."""
    m = results.summary["methods"]
    within = {where: (m[f"spearman_{key}_within"]["topoprune"]["mean"], m[f"spearman_{key}_within"]["centre"]["mean"])
              for key, where in STABILITY_WHERE.items()}  # fmt: skip
    return within_plain(within, {r.name: r.outcome for r in rows if r.kind == "gate"})


def rank_alike_phrase(rho_within: float, level: float = STABLE) -> str:
    """How alike TopoPrune and the control rank the samples within classes, in words for the page, from their
    within-class Spearman (mean over classes and seeds; :func:`~explorables.topoprune.experiment.
    within_class_spearman`) against the gates' ``level``: "much as the control does" at or above it."""
    if rho_within >= level:
        return f"much as the control does (within-class Spearman {rho_within:.2f}, at least the gates' level {level})"
    return (f"only partly as the control does (within-class Spearman {rho_within:.2f}, below the gates' level "
            f"{level})")


def accuracy_gains(results: TopoPruneResults, view: str, rate: str) -> dict[str, np.ndarray]:
    """Per baseline, TopoPrune's per-seed accuracy minus the baseline's (same seed, same split)."""
    acc = results.summary["methods"]["accuracy"][view]
    return {b: _values(acc["topoprune"][rate]) - _values(acc[b][rate]) for b in BASELINES}


def robustness_gains(results: TopoPruneResults, rate: str) -> dict[str, np.ndarray]:
    """TopoPrune's per-seed kept-set stability (Jaccard, clean vs noisy features) minus the geometric
    baselines': both keeping their lowest scores against the centre distance (primary); then TopoPrune's
    evenly spaced ranks against the centre distance by the same rule, the D2-style graph and CCS."""
    jac = results.summary["methods"]["jaccard"]
    topo = _values(jac["topoprune"][rate])
    gains = {PRIMARY_ROBUSTNESS: _values(jac["topoprune_low"][rate]) - _values(jac["centre"][rate]),
             "evenly spaced ranks vs centre distance, same rule": topo - _values(jac["centre_rule"][rate])}
    for g in ("d2", "ccs"):
        gains[f"evenly spaced ranks vs {METHOD_NAMES[g]}"] = topo - _values(jac[g][rate])
    return gains


def mean_abs(d: Mapping) -> float:
    """Mean over seeds of the absolute value (how far the accuracy moves, whatever the direction)."""
    return float(np.mean(np.abs(d["values"])))


def within_class_text(within: Mapping[str, Mapping], level: float = STABLE) -> str:
    """The gate's companion figure, for its measured text: TopoPrune's mean-over-classes Spearman (the
    ranking a class-balanced selection reads; the gate reads the pooled one), and how many seeds fall
    below the gate's ``level`` on it."""
    vals = np.asarray(within["topoprune"]["values"], dtype=float)
    below = int((vals < level).sum())
    where = (f"below the gate's {level} on {below} of {vals.size} seeds" if below
             else f"at or above the gate's {level} on every seed")
    return (f"within classes (mean over classes; not read by the gate) {_ms(within['topoprune'])}, {where} "
            f"(control {_ms(within['radius'])}; centre distance {_ms(within['centre'])})")


def claims(results: TopoPruneResults) -> list[Claim]:
    """The rows: the check, the gates ``stable`` and ``extractors``, the claims (criteria in :data:`CRITERIA`)."""
    cfg, s = results.config, results.summary
    m = s["methods"]
    top = str(max(cfg.prune_grid))
    seeds = f"{len(cfg.seeds)} seed(s)"
    averaged = (f"random = mean of {cfg.n_random_draws} class-balanced draws; every subset at {float(top):.0%} "
                f"trained from {cfg.n_inits} initialisations (mean)")  # fmt: skip
    setting = (f"{cfg.dataset}, pool of {m['n_pool']}, MLP trained on the kept subset, {m['n_test']} test images; "
               f"{averaged}; {seeds}")  # fmt: skip
    rho, rho_t = m["spearman_noise"], m["spearman_transfer"]
    within = {"noise": m["spearman_noise_within"], "transfer": m["spearman_transfer_within"]}

    def accuracy_measured(view: str) -> str:
        acc = m["accuracy"][view]
        text = (f"TopoPrune {_ms(acc['topoprune'][top])}; " + ", ".join(f"{METHOD_NAMES[b]} {_ms(acc[b][top])}"
                for b in BASELINES) + f"; full pool {_ms(m['full_accuracy'])}; TopoPrune − random "
                + _iv(accuracy_gains(results, view, top)["random"]))  # fmt: skip
        # the lower rates, where this view trains them: measured, read by no verdict (after the verdict's
        # numbers, so that the study's parsers, which read the first interval, read the verdict's)
        for r in (str(x) for x in cfg.prune_grid if str(x) != top and str(x) in acc["topoprune"]):
            gain = _values(acc["topoprune"][r]) - _values(acc["random"][r])
            text += (f"; at {float(r):.0%} pruning (no verdict reads it): TopoPrune {_ms(acc['topoprune'][r])}, "
                     + ", ".join(f"{METHOD_NAMES[b]} {_ms(acc[b][r])}" for b in (*BASELINES, "radius"))
                     + f", paired gain over random {_iv(gain)}")  # fmt: skip
        if view == "mlp":  # the control's own kept set (centre offset) at the verdict's rate: read by no verdict
            text += (f"; {METHOD_NAMES['radius']}, its own kept set, at {float(top):.0%} pruning (no verdict reads "
                     f"it): {_ms(acc['radius'][top])}")  # fmt: skip
        return text

    acc_mlp = m["accuracy"]["mlp"]
    room = _values(acc_mlp[ROOM_BASELINE][top]) - _values(acc_mlp["random"][top])
    rows = [
        Claim(
            "Differentiable persistent homology (our implementation: torch distances at gudhi's persistence pairs)",
            f"{s['persistence_check']['n_clouds']} random clouds of {cfg.n_neighbours + 1} points, H0 and H1",
            f"largest gap to gudhi's diagram {s['persistence_check']['max_gap']:.1e}",
            persistence_verdict(s["persistence_check"]["max_gap"]), kind="check",
        ),
        Claim(
            f"The score is stable under the robustness claim's feature noise ({cfg.noise} × each feature's sd; "
            "the stability the abstract argues from)",
            f"Spearman of TopoPrune's scores (total persistence of {cfg.n_neighbours}-neighbourhoods in the latent "
            f"features), clean vs noise {cfg.noise} × each feature's sd; MLP features; {seeds}",
            f"Spearman {_ms(rho['topoprune'])} (control, averaged kNN radius {_ms(rho['radius'])}; centre "
            f"distance {_ms(rho['centre'])}); {within_class_text(within['noise'])}",
            stability_gate(rho["topoprune"]["values"]), kind="gate", name="stable",
        ),
        Claim(
            "The score is stable across feature extractors",
            f"Spearman of TopoPrune's scores, MLP vs CNN features; {seeds}",
            f"Spearman {_ms(rho_t['topoprune'])} (control {_ms(rho_t['radius'])}; centre distance "
            f"{_ms(rho_t['centre'])}); {within_class_text(within['transfer'])}",
            stability_gate(rho_t["topoprune"]["values"]), kind="gate", name="extractors",
        ),
        Claim(
            "Room: a selection method beats random at the highest rate (positive control of the accuracy claims)",
            f"D2-style graph − random, paired, pruning {float(top):.0%}, MLP features select; {averaged}; {seeds}",
            f"D2-style graph {_ms(acc_mlp['d2'][top])}, random {_ms(acc_mlp['random'][top])}",
            room_gate(room), kind="gate", name="room",
        ),
        Claim(
            "High accuracy at high pruning rates (e.g. 90%)",
            f"pruning {float(top):.0%}, MLP features select; {setting}",
            accuracy_measured("mlp"), accuracy_verdict(accuracy_gains(results, "mlp", top)),
            gates=("stable", "room"),
        ),
    ]
    jac = m["jaccard"]
    rows.insert(3, Claim(
        "Fragile: noise degrades the geometric baseline's kept set, which sits off the random floor (positive "
        "control of the robustness claim)",
        f"centre distance keeping its lowest distances per class, kept-set Jaccard clean vs noisy (noise "
        f"{cfg.noise}); pruning {float(top):.0%}; paired with random selection's; {seeds}",
        f"Jaccard centre distance {_ms(jac['centre'][top])}, random {_ms(jac['random'][top])}",
        fragile_gate(_values(jac["centre"][top]), _values(jac["random"][top])), kind="gate", name="fragile",
    ))  # fmt: skip
    gains = robustness_gains(results, top)
    rows.append(Claim(
        "Robust to noise in the latent features (geometric methods are not)",
        f"noise {cfg.noise} × each feature's sd on the MLP features; pruning {float(top):.0%}; {seeds}",
        "kept-set Jaccard, TopoPrune − baseline, paired: " + ", ".join(f"{k} {_iv(v)}" for k, v in gains.items())
        + f"; Jaccard, lowest scores: TopoPrune {_ms(jac['topoprune_low'][top])}, centre distance "
        f"{_ms(jac['centre'][top])}, control {_ms(jac['radius_low'][top])}; evenly spaced ranks: TopoPrune "
        f"{_ms(jac['topoprune'][top])}; random {_ms(jac['random'][top])}"
        + "; mean |accuracy change|: " + ", ".join(
            f"{METHOD_NAMES[k]} {mean_abs(m['noise_change'][k][top]):.3f}"
            for k in ("topoprune", *GEOMETRIC, "random")),
        robustness_verdict(gains), gates=("stable", "fragile"),
    ))  # fmt: skip
    rows.append(Claim(
        "Transfers across architectures",
        f"CNN features select, the MLP trains; pruning {float(top):.0%}; {averaged}; {seeds}",
        accuracy_measured("cnn"), accuracy_verdict(accuracy_gains(results, "cnn", top)),
        gates=("stable", "extractors", "room"),
    ))  # fmt: skip
    acc = m["control_accuracy"]
    control = _values(acc["topoprune"][top]) - _values(acc["radius"][top])
    k = cfg.n_control_offsets
    grid = (f"each accuracy the mean over {k} offsets of the evenly spaced rule's rank grid (every other row "
            "reads the centre offset alone); " if k > 1 and cfg.topo_selection == "coverage" else "")
    kept = "kept sets (mean over the grid's placements) beat" if grid else "kept set beats"
    rows.append(Claim(
        f"Control (ours): TopoPrune's {kept} a non-persistence score (the averaged kNN radius) under the same "
        "selection rule",
        f"same neighbourhoods, same averaging over memberships and same selection, score = mean distance to "
        f"the {cfg.n_neighbours} nearest neighbours in the features (no persistence); pruning "
        f"{float(top):.0%}; {grid}{seeds}",
        f"TopoPrune {_ms(acc['topoprune'][top])}, control {_ms(acc['radius'][top])}; TopoPrune − control "
        f"{_iv(control)}; room this rule leaves, offset mean − random (random's own kept sets, paired): "
        + ", ".join(f"{METHOD_NAMES[k]} {_iv(v)}" for k, v in control_room(results).items()),
        control_verdict(control), gates=("stable", "room"),
    ))  # fmt: skip
    return rows


def ends_table(results: TopoPruneResults) -> str:
    """Accuracy (mean ± sd over seeds, MLP features) of TopoPrune and the control with each selection rule,
    next to random selection (Markdown)."""
    m, cfg = results.summary["methods"], results.config
    rates = [str(r) for r in cfg.prune_grid]
    acc = m["accuracy"]["mlp"]
    rows = [("random", "–", *(_cell(acc["random"], r) for r in rates))]
    for k in END_SCORED:
        rows.append((METHOD_NAMES[k], f"the run's rule ({cfg.topo_selection})", *(_cell(acc[k], r) for r in rates)))
        rows += [(METHOD_NAMES[k], END_NAMES[mode], *(_cell(m["ends"][mode][k], r) for r in rates))
                 for mode in END_MODES]  # fmt: skip
    return markdown_table(("method", "kept per class", *(f"pruned {float(r):.0%}" for r in rates)), rows)


def accuracy_table(results: TopoPruneResults, view: str = "mlp") -> str:
    """Test accuracy (mean ± sd over seeds) per method and pruning rate, for one feature view (Markdown)."""
    m, rates = results.summary["methods"], [str(r) for r in results.config.prune_grid]
    header = ("method", *(f"pruned {float(r):.0%}" for r in rates))
    return markdown_table(header, [(METHOD_NAMES[k], *(_cell(m["accuracy"][view][k], r) for r in rates))
                                   for k in METHODS])  # fmt: skip


def robustness_table(results: TopoPruneResults) -> str:
    """Per method: Spearman of scores (clean vs noisy, MLP vs CNN; pooled, and the mean over classes), kept-set
    Jaccard and accuracy moves (Markdown)."""
    m, rates = results.summary["methods"], [str(r) for r in results.config.prune_grid]
    top = rates[-1]
    header = ("method", "Spearman clean–noisy", "within classes", "Spearman MLP–CNN", "within classes",
              *(f"Jaccard {float(r):.0%}" for r in rates),
              f"accuracy change under noise ({float(top):.0%})", f"change, CNN features ({float(top):.0%})")
    rows = []
    for k in METHODS:
        rho, rho_t, rho_w, rho_tw = (_ms(m[key][k]) if k in SCORED else "–" for key in (
            "spearman_noise", "spearman_transfer", "spearman_noise_within", "spearman_transfer_within"))
        rows.append((METHOD_NAMES[k], rho, rho_w, rho_t, rho_tw, *(_ms(m["jaccard"][k][r]) for r in rates),
                     _ms(m["noise_change"][k][top]), _ms(m["transfer_change"][k][top])))  # fmt: skip
    # kept sets measured but not trained: the centre distance by TopoPrune's rule; TopoPrune and the control
    # keeping their lowest scores (the robustness claim's primary comparison, with the centre distance's row)
    for k, name in (("centre_rule", f"{METHOD_NAMES['centre']}, evenly spaced ranks"),
                    ("topoprune_low", "TopoPrune, lowest scores"),
                    ("radius_low", f"{METHOD_NAMES['radius']}, lowest scores")):
        rows.append((f"{name} (kept sets only)", *("–",) * 4, *(_ms(m["jaccard"][k][r]) for r in rates), "–", "–"))
    return markdown_table(header, rows)


def ranking_sentence(results: TopoPruneResults) -> str:
    """Which method is most accurate at each pruning rate (MLP features), and where TopoPrune ranks."""
    m, parts = results.summary["methods"]["accuracy"]["mlp"], []
    for r in (str(x) for x in results.config.prune_grid):
        order = sorted(METHODS, key=lambda k: -m[k][r]["mean"])
        parts.append(f"at {float(r):.0%} pruning the best is {METHOD_NAMES[order[0]]} ({m[order[0]][r]['mean']:.3f}) "
                     f"and TopoPrune ranks {order.index('topoprune') + 1} of {len(order)}")  # fmt: skip
    return "; ".join(parts)


def stability_phrase(rho: float, jaccard: float, jaccard_random: float) -> str:
    """How stable a score's choice of samples is under feature noise, in words for the page: "close to
    random" whenever the kept sets overlap within ``RANDOM_JACCARD`` of two random draws' overlap (whatever
    the ranks do: the choice of samples is what the claim is about), with a word on the ranks when they
    hold; otherwise "stable" if the rank correlation is at least ``STABLE``, "partly stable" below."""
    if jaccard <= jaccard_random + RANDOM_JACCARD:
        ranks = " (although the scores keep their ranking)" if rho >= STABLE else ""
        return ("close to random: its kept set overlaps the clean one about as much as two random draws do"
                + ranks)
    if rho >= STABLE:
        return "stable: the scores keep their ranking"
    return "partly stable: the ranking survives only in part"


def stability_sentence(results: TopoPruneResults) -> str:
    """:func:`stability_phrase` for TopoPrune at the highest pruning rate of the run."""
    m, top = results.summary["methods"], str(max(results.config.prune_grid))
    return stability_phrase(m["spearman_noise"]["topoprune"]["mean"], m["jaccard"]["topoprune"][top]["mean"],
                            m["jaccard"]["random"][top]["mean"])  # fmt: skip


def diagnosis_table(results: TopoPruneResults) -> str:
    """Spearman of each score variant with itself under each perturbation (first seed; Markdown): from the
    first version's score to TopoPrune's, one change at a time."""
    d = results.summary["methods"]["diagnosis"]
    header = ("score", *(PERTURBATION_NAMES[p] for p in PERTURBATIONS))
    rows = []
    for v in VARIANTS:
        cells = ["1 (reads no layout)" if v in ("topoprune", "own") and p == "umap_seed" else f"{d[v][p]:.2f}"
                 for p in PERTURBATIONS]  # fmt: skip
        rows.append((VARIANT_NAMES[v], *cells))
    return markdown_table(header, rows)


def pairs_table(results: TopoPruneResults) -> str:
    """What each perturbation of the diagnosis does to the neighbourhoods and their H0 persistence pairs
    (first seed; Markdown): :func:`~explorables.topoprune.persistence.pair_changes` in the UMAP layout
    (the first version's neighbourhoods) and in the latent features (TopoPrune's)."""
    d = results.summary["methods"]["diagnosis_pairs"]
    cfg = results.config
    where = {"layout": f"UMAP layout, k = {cfg.layout_neighbours} (first version)",
             "features": f"latent features, k = {cfg.n_neighbours} (TopoPrune now)"}  # fmt: skip
    stats = {"members_kept": "neighbours kept", "pairs_kept": "pairs kept",
             "changed": "neighbourhoods with a changed pair"}  # fmt: skip
    header = ("neighbourhoods", "share", *(PERTURBATION_NAMES[p] for p in PERTURBATIONS))
    rows = [(where[space], name, *(f"{d[space][p][stat]:.0%}" for p in PERTURBATIONS))
            for space in ("layout", "features") for stat, name in stats.items()]  # fmt: skip
    return markdown_table(header, rows)


#: a paired interval in a claim's stored ``measured`` text: "TopoPrune − <baseline> +0.010 [-0.001, +0.021]"
_PAIRED = re.compile(r"TopoPrune − ([\w ]+?) ([+-]\d+\.\d+) \[([+-]\d+\.\d+), ([+-]\d+\.\d+)\]")


def study_disagreement_sentence(study: Mapping, margin: float = ACC_MARGIN) -> str:
    """Markdown, for the page: each gate or claim of a seed study (:func:`~explorables.core.seed_study.
    load_study`) whose verdict word differs between base seeds, with, per base seed, its word and the
    paired interval (TopoPrune − the row's reference) stored in its measured text, read against
    ``margin``. Says where the interval's upper end sits on the base seeds that read *no* (below the
    margin) and how far the intervals' means spread; "" when every row agrees."""
    margin = check_positive("margin", margin)
    parts = []
    for row in study["rows"]:
        if row["agree"] or row["kind"] == "check":
            continue
        found = [_PAIRED.search(text) for text in row["measured"]]
        seeds = study["seeds"]
        if not all(found):
            parts.append(f"“{row['claim']}” reads " + ", ".join(
                f"*{w}* on base seed {b}" for b, w in zip(seeds, row["verdicts"], strict=True)) + ".")
            continue
        ref = found[0].group(1)
        lows = [float(f.group(3)) for f in found]
        highs = [float(f.group(4)) for f in found]
        means = [float(f.group(2)) for f in found]
        per_seed = "; ".join(f"base seed {b} *{w}*, {f.group(2)} [{f.group(3)}, {f.group(4)}]"
                             for b, w, f in zip(seeds, row["verdicts"], found, strict=True))  # fmt: skip
        no = [b for b, w in zip(seeds, row["verdicts"], strict=True) if w == "no"]
        text = (f"“{row['claim']}” (TopoPrune − {ref}, paired, against the margin {margin:g}): {per_seed}. "
                f"The means range from {min(means):+.3f} to {max(means):+.3f} over base seeds")
        if no:
            gap = max(h for b, h in zip(seeds, highs, strict=True) if b in no)
            shown = f"{gap:+.3f}" + (f", just under {margin:g} before rounding" if gap >= margin else "")
            text += (f"; on base seed(s) {', '.join(map(str, no))} the upper end ({shown}) lies below the "
                     f"margin, so the row reads *no* there, while on the others it reaches the margin")
        if all(lo < margin for lo in lows):
            text += "; on no base seed does the lower end clear the margin"
        n = _SEEDS.search(row.get("setting", ""))
        if n and int(n.group(1)) > 1:
            text += ". " + pooled_sentence(means, lows, highs, int(n.group(1)), margin)
        parts.append(text + ".")
    return " ".join(parts)


def study_edge_sentence(study: Mapping, margin: float = ACC_MARGIN) -> str:
    """Markdown, for the page: each claim of a seed study (:func:`~explorables.core.seed_study.load_study`)
    whose verdict word is the same on every base seed although, on some base seed, an end of the paired
    interval stored in its measured text (TopoPrune − the row's reference, three decimals) rounds to
    ``margin``: there the word rests on digits the study does not show, and a run whose floating point
    differs in the last place could read the neighbouring word (*no* where the upper end sits at the
    margin, *yes* where the lower end does). "" when no agreeing row sits at the margin."""
    margin = check_positive("margin", margin)
    parts = []
    for row in study["rows"]:
        if not row["agree"] or row["kind"] != "claim":
            continue
        found = [_PAIRED.search(text) for text in row["measured"]]
        if not all(found):
            continue
        edges = []
        for b, f in zip(study["seeds"], found, strict=True):
            low, high = float(f.group(3)), float(f.group(4))
            for end, value, other in (("upper", high, "no"), ("lower", low, "yes")):
                if round(value, 3) == round(margin, 3):
                    edges.append(f"on base seed {b} the {end} end ({value:+.3f}) rounds to the margin (it could read "
                                 f"*{other}* there)")  # fmt: skip
        if edges:
            parts.append(f"“{row['claim']}” reads *{row['verdicts'][0]}* on every base seed, but "
                         f"{'; '.join(edges)}: that agreement rests on digits beyond the third decimal.")
    return " ".join(parts)


#: TopoPrune's room in the control row's measured text (offset mean − random) and its gain over random in the
#: accuracy row's (one kept set), as :func:`claims` writes them
_ROOM_TOPO = re.compile(r"offset mean − random[^:]*: TopoPrune ([+-]\d+\.\d+) \[([+-]\d+\.\d+), ([+-]\d+\.\d+)\]")
_GAIN_RANDOM = re.compile(r"TopoPrune − random ([+-]\d+\.\d+) \[([+-]\d+\.\d+), ([+-]\d+\.\d+)\]")


def _word(low: float, high: float, margin: float) -> str:
    return "yes" if low >= margin else "no" if high < margin else "unclear"


def _words(words: Sequence[str], seeds: Sequence[int]) -> str:
    if len(set(words)) == 1:
        return f"*{words[0]}* on all {len(words)} base seeds"
    return ", ".join(f"*{w}* on base seed {b}" for b, w in zip(seeds, words, strict=True))


def averaged_accuracy_sentence(study: Mapping, margin: float = ACC_MARGIN) -> str:
    """What the accuracy row's part against random selection would read if averaged over the grid's placements
    like the control row, per base seed of a seed study (:func:`~explorables.core.seed_study.load_study`):
    TopoPrune's offset mean minus random selection is stored in the control row's measured text (the room,
    :func:`control_room`), read against ``margin`` as the row reads its one kept set's gain over random (three
    decimals, as stored). A description in words for the page: no verdict reads it."""
    margin = check_positive("margin", margin)
    rows = {name: next((r for r in study["rows"] if r["claim"].startswith(name)), None)
            for name in ("High accuracy", "Control")}  # fmt: skip
    if None in rows.values():
        raise ValueError("the study needs the accuracy row and the control row")
    room = [_ROOM_TOPO.search(t) for t in rows["Control"]["measured"]]
    kept = [_GAIN_RANDOM.search(t) for t in rows["High accuracy"]["measured"]]
    if not all(room) or not all(kept) or len(room) != len(kept):
        raise ValueError("a measured text lacks TopoPrune's room (control row) or its gain over random (accuracy row)")
    seeds = list(study["seeds"])
    averaged = [_word(float(f.group(2)), float(f.group(3)), margin) for f in room]
    one = [_word(float(f.group(2)), float(f.group(3)), margin) for f in kept]
    below = sum(float(a.group(1)) <= float(k.group(1)) for a, k in zip(room, kept, strict=True))
    same = [b for b, a, o in zip(seeds, averaged, one, strict=True) if a == o]
    text = (f"TopoPrune's offset mean minus random selection (the room in the control row's measured text, what an "
            f"averaged accuracy row would read against random) reads {_words(averaged, seeds)} against the margin "
            f"{margin:g}, where the row's own part against random (its one kept set) reads {_words(one, seeds)}; "
            f"its mean is at or below the one kept set's on {below} of {len(seeds)} base seeds, so ")  # fmt: skip
    if len(same) == len(seeds):
        return text + "on these base seeds the averaging would give the accuracy row the word it reads now"
    other = ", ".join(str(b) for b in seeds if b not in same)
    return text + f"the averaging would change the accuracy row's part against random on base seed(s) {other}"


#: the seeds of one run in a claim's stored ``setting`` text: "...; 12 seed(s)"
_SEEDS = re.compile(r"(\d+) seed\(s\)")


def pooled_interval(means: Sequence[float], lows: Sequence[float], highs: Sequence[float],
                    n_seeds: int) -> Interval:  # fmt: skip
    """The 95% t-interval of the per-seed values of several runs of ``n_seeds`` seeds each, read together
    as one run, from each run's mean and 95% t-interval (``low``, ``high``): each run's sample sd from
    its half-width, then the pooled sum of squares (within the runs plus between their means). Exact for
    unrounded inputs; from the rounded intervals a seed study stores it is as close as their digits."""
    n_seeds = check_int("n_seeds", n_seeds, 2)
    m, lo, hi = (np.asarray(v, dtype=float) for v in (means, lows, highs))
    if not m.shape == lo.shape == hi.shape or m.ndim != 1 or m.size == 0:
        raise ValueError(f"means, lows and highs must be 1-D of one non-zero length, got {m.shape}, {lo.shape}, "
                         f"{hi.shape}")  # fmt: skip
    if not (np.all(np.isfinite(m)) and np.all(lo <= m) and np.all(m <= hi)):
        raise ValueError("each mean must be finite and lie inside its interval [low, high]")
    sd = (hi - lo) / 2 * np.sqrt(n_seeds) / t_multiplier(n_seeds)
    total = m.size * n_seeds
    ss = (n_seeds - 1) * float(np.sum(sd**2)) + n_seeds * float(np.sum((m - m.mean()) ** 2))
    return Interval(float(m.mean()), float(np.sqrt(ss / (total - 1) / total)), total)


def pooled_sentence(means: Sequence[float], lows: Sequence[float], highs: Sequence[float], n_seeds: int,
                    margin: float = ACC_MARGIN) -> str:  # fmt: skip
    """:func:`pooled_interval` in words for the page: the interval of every base seed's seeds read as one
    run, and where it lies against zero and against ``margin`` (a description: no verdict reads it)."""
    margin = check_positive("margin", margin)
    iv = pooled_interval(means, lows, highs, n_seeds)
    zero = "above zero" if iv.low > 0 else "below zero" if iv.high < 0 else "across zero"
    against = ("clears the margin" if iv.low >= margin else "lies below the margin" if iv.high < margin
               else "reaches the margin without clearing it")  # fmt: skip
    return (f"Read together as one run of {iv.n} seeds (from the rounded intervals above; a description, no "
            f"verdict reads it), the gain is {iv.format(digits=3, signed=True)}: {zero}, and it {against}")


def stability_source(gain_noise: Sequence[float], gain_extractor: Sequence[float]) -> str:
    """Where the score's stability comes from, in words for the page, from TopoPrune's paired rank
    correlation minus the control's (the averaged kNN radius: same neighbourhoods, same averaging, no
    persistence), per seed, under noise and across extractors: the topology adds stability only when
    both intervals clear zero; when neither does, the stability comes from aggregating over many points
    (:func:`averaging_source` measures how much of it the averaging over memberships adds). When only one
    clears zero, the sentence says what the other reads: the control keeping its
    ranking *better* (the interval below zero) or as well (straddling zero)."""
    words = (compare(gain_noise, 0.0), compare(gain_extractor, 0.0))
    where = ("under noise", "across extractors")
    if words == ("yes", "yes"):
        return "the persistence: TopoPrune keeps its ranking better than the control, under noise and across extractors"
    if "yes" in words:
        better, other = (0, 1) if words[0] == "yes" else (1, 0)
        control = ("the control keeps its ranking better than TopoPrune" if words[other] == "no"
                   else "the control keeps its ranking as well as TopoPrune, within the seeds' spread")
        return (f"the persistence only in part: TopoPrune keeps its ranking better than the control "
                f"{where[better]} only, while {where[other]} {control}")  # fmt: skip
    return ("aggregation over many points, not the topology: the control, which has no persistence, keeps its "
            "ranking as well (within the seeds' spread) or better")  # fmt: skip


def averaging_source(own: Mapping[str, float], averaged: Mapping[str, float], k: int, level: float = STABLE) -> str:
    """What the averaging over memberships adds to the score's stability, in words for the page, from the
    diagnosis (first seed; no verdict reads it): the Spearman of each sample's own neighbourhood's total
    persistence (``own``) and of TopoPrune's averaged score (``averaged``) with themselves under the
    feature noise and across extractors, against the gates' ``level``. Three readings: the own value
    already clears the level on both (the stability comes from the aggregation inside a neighbourhood,
    a ``k``-edge tree, before any averaging); only the averaged score clears it on both (the averaging
    lifts it there); or not even the averaged score clears it on both."""
    keys, where = ("noise", "extractor"), ("under the noise", "across extractors")
    text = (f"without the averaging over memberships, each sample's own neighbourhood's total persistence keeps "
            f"a Spearman of {own['noise']:.2f} {where[0]} and {own['extractor']:.2f} {where[1]}, TopoPrune's "
            f"averaged score {averaged['noise']:.2f} and {averaged['extractor']:.2f} (the diagnosis table's last "
            f"two rows; first seed, no verdict reads it)")  # fmt: skip
    adds = ", ".join(f"{averaged[q] - own[q]:+.2f} {w}" for q, w in zip(keys, where, strict=True))
    if all(own[q] >= level for q in keys):
        return (f"{text}: most of the stability is there before any averaging, from the aggregation inside each "
                f"neighbourhood (with H0 only its total persistence is the length of a {k}-edge minimum spanning "
                f"tree, a sum over many edges), and the averaging adds {adds}")  # fmt: skip
    if all(averaged[q] >= level for q in keys):
        below = " and ".join(w for q, w in zip(keys, where, strict=True) if own[q] < level)
        return (f"{text}: the own value falls below the gates' {level} {below}, and the averaging over "
                f"memberships (adding {adds}) is what lifts the score to it")  # fmt: skip
    return f"{text}: the score stays below the gates' {level} with or without the averaging on this seed"


def averaging_source_sentence(results: TopoPruneResults) -> str:
    """:func:`averaging_source` on a run's diagnosis (first seed)."""
    d = results.summary["methods"]["diagnosis"]
    return averaging_source(d["own"], d["topoprune"], results.config.n_neighbours)


def offsets_counts_sentence(report: str) -> str:
    """The counts of ``benchmarks/topoprune_offsets.md`` (its summary table: offsets K, projected page
    seconds, gates, claim rows agreeing on every tuning base seed), in words for the page."""
    rows = re.findall(r"^\| (\d+) \| \d+ \| (yes|NO) \| (\d+) of (\d+) \|$", report, re.M)
    if not rows:
        raise ValueError("report: no summary row '| K | page s | yes/NO | a of n |' found")
    parts = [f"{'one offset' if k == '1' else f'{k} offsets'}: {a} of {n} claim rows agree on every tuning base "
             f"seed{'' if gates == 'yes' else ' (a gate fails)'}" for k, gates, a, n in rows]  # fmt: skip
    return "; ".join(parts)


def power_counts_sentence(report: str) -> str:
    """The counts of ``benchmarks/topoprune_power.md`` (its summary table: seeds per run, projected page
    seconds, gates, claim rows agreeing on every tuning base seed, whether the rule's parts 1-3 are met),
    in words for the page."""
    rows = re.findall(r"^\| (\d+) \| (\d+) \| (yes|NO) \| (\d+) of (\d+) \| (yes|no)\b", report, re.M)
    if not rows:
        raise ValueError("report: no summary row '| seeds | page s | yes/NO | a of n | yes/no...' found")
    parts = [f"{n} seeds per run: {a} of {total} claim rows agree on every tuning base seed"
             f"{'' if gates == 'yes' else ' (a gate fails)'}, page projected at {page} s"
             f"{', meets the rule' if met == 'yes' else ''}" for n, page, gates, a, total, met in rows]  # fmt: skip
    return "; ".join(parts)


def control_power_sentence(report: str) -> str:
    """The counts of ``benchmarks/topoprune_control_power.md`` (its summary table: offsets K of the control
    comparison, projected page seconds, gates, the control row's words on the tuning base seeds, the median
    half-width of its interval, other rows as with one offset, whether the rule is met), in words for the page."""
    rows = re.findall(r"^\| (\d+) \| (\d+) \| (yes|NO) \| ([a-z, ]+) \| (\d\.\d+) \| (yes|NO) \| (yes|no) \|$",
                      report, re.M)  # fmt: skip
    if not rows:
        raise ValueError("report: no summary row '| K | page s | yes/NO | words | half-width | yes/NO | yes/no |'")
    parts = []
    for k, page, gates, words, hw, same, met in rows:
        found = words.split(", ")
        said = (f"*{found[0]}* on all {len(found)}" if len(set(found)) == 1
                else ", ".join(f"*{w}*" for w in found) + f" on the {len(found)}")  # fmt: skip
        parts.append(f"{'one offset' if k == '1' else f'{k} offsets'}: the control row reads {said} tuning base "
                     f"seeds, median half-width {hw}{'' if gates == 'yes' else ' (a gate fails)'}"
                     f"{'' if same == 'yes' else ' (another row changes)'}, page projected at {page} s"
                     f"{', meets the rule' if met == 'yes' else ''}")  # fmt: skip
    return "; ".join(parts)


def stability_source_sentence(results: TopoPruneResults) -> str:
    """:func:`stability_source` on a run (per-seed Spearman, TopoPrune minus the control)."""
    m = results.summary["methods"]
    keys = ("spearman_noise", "spearman_transfer")
    gains = [_values(m[key]["topoprune"]) - _values(m[key]["radius"]) for key in keys]
    return stability_source(*gains)


#: the two perturbations of the stability gates, as the page names them
STABILITY_WHERE = {"noise": "under noise", "transfer": "across extractors"}
#: the scores TopoPrune's within-class ranking is compared with, as the page names them
WITHIN_OTHERS = {"radius": "control", "centre": "centre distance"}


def within_stability(gains: Mapping[str, Mapping[str, Sequence[float]]],
                     lowest: Mapping[str, bool] | None = None) -> str:  # fmt: skip
    """The within-class comparison in words for the page: ``gains[where][other]`` is TopoPrune's
    within-class Spearman minus ``other``'s, per seed (``where`` as in :data:`STABILITY_WHERE`'s values,
    ``other`` as in :data:`WITHIN_OTHERS`'). Per perturbation: "the least stable of the three" when
    every paired interval lies below zero, "better than" every other when every one clears zero,
    otherwise each comparison's own word. ``lowest[where]`` (TopoPrune's mean the lowest of the
    three) adds that fact where the intervals alone do not say it."""
    parts = []
    for where, per in gains.items():
        if not per:
            raise ValueError(f"gains[{where!r}] must name at least one score to compare with")
        words = {name: compare(g, 0.0) for name, g in per.items()}
        names = " and the ".join(words)
        if all(w == "no" for w in words.values()):
            parts.append(f"{where} TopoPrune's score is the least stable of the three: the {names} keep their "
                         "within-class ranking better (paired intervals below zero)")  # fmt: skip
            continue
        if all(w == "yes" for w in words.values()):
            parts.append(f"{where} TopoPrune keeps its within-class ranking better than the {names}")
            continue
        said = {"yes": "better than", "unclear": "about as well as", "no": "worse than"}
        groups = {w: [n for n, v in words.items() if v == w] for w in said}
        text = f"{where} TopoPrune keeps its within-class ranking " + ", and ".join(
            f"{said[w]} the {' and the '.join(names)}" + (" (within the seeds' spread)" if w == "unclear" else "")
            for w, names in groups.items() if names)  # fmt: skip
        if lowest and lowest.get(where):
            text += " (its mean is the lowest of the three, though not every paired interval lies below zero)"
        parts.append(text)
    return "; ".join(parts)


def pooled_reversal(pooled: Mapping[str, Sequence[float]], within: Mapping[str, Sequence[float]],
                    other: str = "control") -> str:  # fmt: skip
    """Where TopoPrune's lead over ``other`` (paired Spearman gains per seed, ``pooled`` over the pool and
    ``within`` classes, keyed by perturbation) clears zero on the pooled figure but not within classes:
    that lead comes from the differences between the classes' score ranges, which no class-balanced
    selection sees. "" where no perturbation shows it."""
    parts = []
    for where, gain in pooled.items():
        if compare(gain, 0.0) != "yes":
            continue
        inside = compare(within[where], 0.0)
        if inside == "yes":
            continue
        turn = "reverses: the " + other + " keeps its ranking better" if inside == "no" else "is gone"
        parts.append(f"{where} TopoPrune's pooled lead over the {other} comes from the differences between the "
                     f"classes' score ranges, which no class-balanced selection sees; within classes it {turn}")
    return "; ".join(parts)


def within_source_sentence(results: TopoPruneResults) -> str:
    """:func:`within_stability` and :func:`pooled_reversal` on a run (per-seed within-class Spearman,
    TopoPrune minus the control and minus the centre distance)."""
    m = results.summary["methods"]
    gains, lowest, pooled, within = {}, {}, {}, {}
    for key, where in STABILITY_WHERE.items():
        w = m[f"spearman_{key}_within"]
        topo = _values(w["topoprune"])
        gains[where] = {name: topo - _values(w[k]) for k, name in WITHIN_OTHERS.items()}
        lowest[where] = all(w["topoprune"]["mean"] < w[k]["mean"] for k in WITHIN_OTHERS)
        pooled[where] = _values(m[f"spearman_{key}"]["topoprune"]) - _values(m[f"spearman_{key}"]["radius"])
        within[where] = gains[where]["control"]
    reversal = pooled_reversal(pooled, within)
    return within_stability(gains, lowest) + (f". The pooled figure hides this: {reversal}" if reversal else "")


#: a gate row's within-class text, as :func:`within_class_text` writes it
_WITHIN = re.compile(r"within classes \([^)]*\) (-?\d\.\d+) ±.*\(control (-?\d\.\d+) ±[^;]*; centre distance "
                     r"(-?\d\.\d+) ±")  # fmt: skip


def study_within_sentence(study: Mapping) -> str:
    """From a seed study (:func:`~explorables.core.seed_study.load_study`): on how many base seeds
    TopoPrune's mean within-class Spearman is the lowest of the three scores (TopoPrune, the control,
    the centre distance), under noise (gate ``stable``) and across extractors (gate ``extractors``),
    read off the gate rows' measured texts."""
    parts = []
    for name, where in (("stable", "under noise"), ("extractors", "across extractors")):
        row = next((r for r in study["rows"] if r.get("name") == name), None)
        if row is None:
            raise ValueError(f"the study has no gate row named {name!r}")
        found = [_WITHIN.search(text) for text in row["measured"]]
        if not all(found):
            raise ValueError(f"gate {name!r}: a measured text lacks the within-class figures")
        low = sum(float(f.group(1)) < min(float(f.group(2)), float(f.group(3))) for f in found)
        parts.append(f"{where} on {low} of {len(found)} base seeds")
    return "TopoPrune's within-class mean is the lowest of the three " + " and ".join(parts)


#: short names of the claim rows, by the start of their claim text, for :func:`study_counts_sentence`
ROW_NAMES = {"High accuracy": "the accuracy row", "Robust": "the robustness row", "Transfers": "the transfer row",
             "Control": "the control row"}  # fmt: skip


def study_counts_sentence(study: Mapping) -> str:
    """A seed study's verdicts counted, in words for the page (so that no count is typed): the gates
    (every one passing on every base seed, or which failed where), then each claim row of
    :data:`ROW_NAMES`, its commonest word with its count and every other word with its base seeds."""
    seeds = list(study["seeds"])
    n = len(seeds)
    failed = [f"`{r['name']}` failed on base seed(s) " + ", ".join(str(b) for b, v in zip(seeds, r["verdicts"],
              strict=True) if v != "pass") for r in study["rows"] if r["kind"] == "gate" and
              any(v != "pass" for v in r["verdicts"])]  # fmt: skip
    parts = ["; ".join(failed) if failed else f"every gate passed on all {n} base seeds"]
    for row in study["rows"]:
        name = next((v for k, v in ROW_NAMES.items() if row["claim"].startswith(k)), None)
        if row["kind"] != "claim" or name is None:
            continue
        words = list(row["verdicts"])
        common = max(dict.fromkeys(words), key=words.count)
        if words.count(common) == n:
            parts.append(f"{name} read *{common}* on all {n}")
            continue
        others = [f"*{w}* on {words.count(w)} (base seed{'s' if words.count(w) > 1 else ''} "
                  + ", ".join(str(b) for b, v in zip(seeds, words, strict=True) if v == w) + ")"
                  for w in dict.fromkeys(words) if w != common]  # fmt: skip
        parts.append(f"{name} read *{common}* on {words.count(common)} and " + " and ".join(others))
    return "; ".join(parts)


def robustness_at_margin_sentence(study: Mapping, margin: float = 0.0) -> str:
    """What the robustness claim's primary part (:data:`PRIMARY_ROBUSTNESS`) would read at another
    ``margin``, per base seed, from the paired intervals a seed study stores in the row's measured text
    (three decimals): the row takes the primary part's word unless it reads yes."""
    row = next((r for r in study["rows"] if r["claim"].startswith("Robust")), None)
    if row is None:
        raise ValueError("the study has no robustness row")
    pat = re.compile(re.escape(PRIMARY_ROBUSTNESS) + r" ([+-]\d+\.\d+) \[([+-]\d+\.\d+), ([+-]\d+\.\d+)\]")
    found = [pat.search(text) for text in row["measured"]]
    if not all(found):
        raise ValueError("a measured text of the robustness row lacks its primary part's interval")
    words = ["yes" if float(f.group(2)) >= margin else "no" if float(f.group(3)) < margin else "unclear"
             for f in found]  # fmt: skip
    per = ", ".join(f"*{w}* on base seed {b}" for b, w in zip(study["seeds"], words, strict=True))
    return f"at a margin of {margin:g} the primary part reads {per}"


def accuracy_moves_sentence(results: TopoPruneResults) -> str:
    """Whether a geometric method's accuracy drops under the feature noise or with the CNN's features
    (paired per seed, its interval against zero, at the highest rate): the paper's mechanism, extrinsic
    geometry's *performance* degrading, can show only where one does. Says so where none does."""
    m, top = results.summary["methods"], str(max(results.config.prune_grid))
    parts, any_drop = [], False
    for key, where in (("noise_change", "under noise"), ("transfer_change", "with the CNN's features")):
        down = [METHOD_NAMES[k] for k in GEOMETRIC if compare(_values(m[key][k][top]), 0.0) == "no"]
        any_drop = any_drop or bool(down)
        parts.append(f"{where} the accuracy of the {', '.join(down)} drops (paired interval below zero)" if down
                     else f"{where} no geometric method's accuracy drops (every paired interval reaches zero)")
    text = "; ".join(parts)
    if not any_drop:
        text += (": nothing degrades at the accuracy level here, so the paper's mechanism (geometric methods' "
                 "performance degrading) cannot show at this scale, and the robustness row reads the kept sets")
    return text
