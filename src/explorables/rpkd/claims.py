"""The chapter's tables: our checks, the gates (can the setup show the effect?) and the paper's claims.

Every row is decided by a function below on per-seed numbers, with the book-wide rules of
:mod:`explorables.core.verdicts` (an interval ``95% t-interval: mean ± t·se`` over seeds against a threshold);
every threshold is a constant of this module, and :data:`CRITERIA` drives each function through
its branches with synthetic numbers. Seeds are paired: the same seed gives every arm the same
labelled subset and the same batches, so differences between arms are taken seed by seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..core.arguments import checked
from ..core.tables import Claim, apply_gates
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from ..core.tables import markdown_table as table
from ..core.verdicts import Criterion, compare, fmt_mean_sd, gate, interval, scope_verdict
from .experiment import CONTROL_TARGET, POOLED, TEACHER_FEATURES, RPKDConfig, RPKDResults, run_protocols
from .training import ARM_LABELS, CONTROL

# --- thresholds: the one declared place ----------------------------------------------------------------------------

#: a paired accuracy difference "counts" (one method beats another, a gap grows) from this many points (fraction)
MARGIN = 0.01
#: gate: the teacher beats a CE student of the student's architecture by this much, at every C and on every seed
HEADROOM = 0.05
#: gate ``distill``: the better of KD and OFA gains at least :data:`MARGIN` over CE, mean over C (interval)
#: gate: a linear probe reads the fine digit from the teacher's own features at the fewest classes at least this well
TEACHER_INFO = 0.5
#: check: every arm beats chance (1 / C) by this much on every seed (the students learn at all)
ABOVE_CHANCE = 0.05
#: check: dead channels (zero on every training image) allowed in the teacher's last convolution, at every C
DEAD_CHANNELS = 0
#: claim: at the fewest classes the prototype target's probe accuracy beats the logits' by at least this
PROBE_MARGIN = 0.10
#: claim: RPKD's gain over CE, averaged over class counts seed by seed, is at least this ("transfers")
TRANSFER_MARGIN = 0.03
#: claim: RPKD beats the no-prototype control, averaged over class counts seed by seed, by at least this
CONTROL_MARGIN = MARGIN


# --- numbers from the results --------------------------------------------------------------------------------------


def accuracy_of(results: RPKDResults, arm: str, n_classes: int) -> dict:
    """``{"mean", "sd", "per_seed"}`` test accuracy of ``arm`` at ``C = n_classes``."""
    return results.summary[f"C={n_classes}"]["accuracy"][arm]


def per_seed(results: RPKDResults, arm: str, n_classes: int) -> np.ndarray:
    """Test accuracy of ``arm`` at ``C = n_classes``, one value per seed."""
    return np.asarray(accuracy_of(results, arm, n_classes)["per_seed"], dtype=float)


def paired(results: RPKDResults, arm: str, baseline: str, n_classes: int) -> np.ndarray:
    """Per seed: accuracy of ``arm`` minus that of ``baseline`` at ``C = n_classes`` (same seed, same batches)."""
    return per_seed(results, arm, n_classes) - per_seed(results, baseline, n_classes)


def pooled(results: RPKDResults, arm: str, baseline: str) -> np.ndarray:
    """Per seed: the paired difference ``arm - baseline`` averaged over the class counts."""
    grid = results.summary["class_grid"]
    return np.mean([paired(results, arm, baseline, c) for c in grid], axis=0)


def gain(results: RPKDResults, arm: str, baseline: str, n_classes: int) -> float:
    """Mean accuracy of ``arm`` minus that of ``baseline`` at ``C = n_classes`` (mean over seeds)."""
    return accuracy_of(results, arm, n_classes)["mean"] - accuracy_of(results, baseline, n_classes)["mean"]


def teacher_edges(results: RPKDResults) -> dict[int, np.ndarray]:
    """Per class count, per seed: the teacher's test accuracy minus that of the CE student (the headroom)."""
    return {c: results.summary[f"C={c}"]["teacher_accuracy"] - per_seed(results, "ce", c)
            for c in results.summary["class_grid"]}


def probe_per_seed(results: RPKDResults, target: str, n_classes: int) -> np.ndarray:
    """Fine-digit probe accuracy of ``target`` at ``C = n_classes``, one probe split per seed."""
    return np.asarray(results.summary[f"C={n_classes}"]["probe_per_seed"][target], dtype=float)


def probe_gaps(results: RPKDResults) -> dict[int, float]:
    """Per class count: probe accuracy of the prototype distribution minus that of the class logits (means)."""
    return {c: results.summary[f"C={c}"]["probe"]["prototypes"] - results.summary[f"C={c}"]["probe"]["logits"]
            for c in results.summary["class_grid"]}


def best_logit_arm(results: RPKDResults, n_classes: int) -> str:
    """The better of KD and OFA at ``C = n_classes`` (mean accuracy)."""
    arms = [a for a in ("kd", "ofa") if a in results.summary["arms"]]
    return max(arms, key=lambda a: accuracy_of(results, a, n_classes)["mean"])


def _iv(values: Sequence[float] | np.ndarray) -> str:
    return interval(values).format(3, signed=True)


# --- verdict functions: per-seed numbers in, a word and its reason out ----------------------------------------------


def learns_verdict(margins: Mapping[str, Sequence[float]], threshold: float = ABOVE_CHANCE) -> str:
    """Check: every arm's accuracy minus chance (``1 / C``), per seed, is at least ``threshold``.
    ``margins`` maps a label (arm and class count) to its per-seed margins over chance."""
    short = [k for k, v in margins.items() if gate(v, threshold, rule="every seed") == "fail"]
    if not short:
        return f"pass: every arm beats chance by ≥ {threshold:.2f} at every class count, on every seed"
    return f"fail: below chance + {threshold:.2f} on some seed: {', '.join(short)}"


def headroom_verdict(edges: Mapping[int, Sequence[float]], threshold: float = HEADROOM) -> str:
    """Gate: the teacher beats the CE student by ``>= threshold`` at every class count, on every seed
    (``edges``: per class count, per seed, teacher minus CE). Without it no distillation can gain."""
    short = [f"C = {c}" for c, v in edges.items() if gate(v, threshold, rule="every seed") == "fail"]
    if not short:
        return f"pass: the teacher beats CE by ≥ {threshold:.2f} at every C, on every seed"
    return (f"fail: the teacher does not beat CE by {threshold:.2f} on every seed at {', '.join(short)}: "
            "no room for distillation")


def distill_verdict(gains: Sequence[float], threshold: float = MARGIN) -> str:
    """Gate: per seed, the better known distiller's (KD or OFA) accuracy minus CE's, averaged over class counts;
    pass when its interval lies at or above ``threshold``. Without it, no distillation converts the teacher's
    headroom into accuracy in this setup, and RPKD's rows could not tell a failure of RPKD from one of the setup."""
    if gate(gains, threshold) == "pass":
        return f"pass: logit distillation gains ≥ {threshold:.2f} over CE alone (interval over seeds)"
    return (f"fail: no known distiller gains {threshold:.2f} over CE alone beyond the seed-to-seed spread: "
            "this setup gives distillation no usable room")


def teacher_info_verdict(values: Sequence[float], threshold: float = TEACHER_INFO) -> str:
    """Gate: a linear probe reads the fine digit from the teacher's own feature map at the fewest classes
    (per probe split) with an interval above ``threshold``: the information a richer target could carry exists."""
    if gate(values, threshold) == "pass":
        return f"pass: the teacher's features hold the fine digit (interval above {threshold:.2f})"
    return f"fail: the teacher's features do not clearly hold the fine digit (interval not above {threshold:.2f})"


def dead_channels_verdict(counts: Mapping[int, int], threshold: int = DEAD_CHANNELS) -> str:
    """Check: per class count, the teacher's dead last-layer channels (0 at every location of every training
    image) number at most ``threshold``."""
    over = [f"C = {c}: {n}" for c, n in counts.items() if n > threshold]
    if not over:
        return f"pass: at most {threshold} dead channels in the teacher's last convolution, at every C"
    return f"fail: more than {threshold} dead channels in the teacher's last convolution at {', '.join(over)}"


def _lead_and_trend(lead: Mapping[str, str], trend_name: str, trend: str, what: str) -> str:
    """A claim "X leads at the fewest classes, most there": the lead parts, then the trend as one more part.
    The trend counts only when some lead part reads yes: a gap that narrows while X is ahead of no rival
    is not a part of "leads", so then the lead parts alone decide (no, or unclear within seed noise)."""
    if "yes" not in lead.values():
        return (f"{scope_verdict(lead, what)} (ahead of no rival, so the {trend_name!r} part, which reads "
                f"{trend}, does not count)")
    return scope_verdict({**lead, trend_name: trend}, what)


def probe_verdict(gap_low: Sequence[float], gap_high: Sequence[float], gap_pooled: Sequence[float],
                  margin: float = PROBE_MARGIN) -> str:
    """Per probe split: prototype minus logit probe accuracy at the fewest (``gap_low``) and the most classes,
    and prototype minus pooled-projection (no prototypes) probe accuracy at the fewest (``gap_pooled``).
    Parts: the gap at the fewest classes is ``>= margin``; it is larger there than at the most classes by
    ``>= MARGIN``; the prototypes beat the same projection without them by ``>= MARGIN``. The first part
    reading no makes the claim no (and the others then do not count)."""
    low, high = np.asarray(gap_low, dtype=float), np.asarray(gap_high, dtype=float)
    lead = {f"prototypes ≥ logits + {margin:.2f} at the fewest C": compare(low, margin)}
    what = "fine-label information of the prototype target over the logits"
    if "yes" not in lead.values():
        return _lead_and_trend(lead, "gap larger at the fewest C", compare(low - high, MARGIN), what)
    return scope_verdict({**lead, "gap larger at the fewest C": compare(low - high, MARGIN),
                          "prototypes ≥ the same projection without them": compare(gap_pooled, MARGIN)}, what)


def comparison_verdict(vs: Mapping[str, Sequence[float]], trend: Sequence[float], margin: float = MARGIN) -> str:
    """``vs``: per logit baseline (KD, OFA), per seed, RPKD minus it at the fewest classes; ``trend``: per seed,
    RPKD's lead over the best logit method at the fewest classes minus its lead at the most. Parts: RPKD beats
    each baseline by ``>= margin``; its lead grows by ``>= margin`` as C shrinks. Behind every baseline: no."""
    lead = {f"beats {name}": compare(v, margin) for name, v in vs.items()}
    return _lead_and_trend(lead, "lead grows as C shrinks", compare(trend, margin), "RPKD against logit distillation")


def transfer_verdict(gains: Sequence[float], margin: float = TRANSFER_MARGIN) -> str:
    """Per seed, RPKD minus CE averaged over class counts: yes when the interval lies above ``margin``,
    no when it lies below, unclear when it straddles it."""
    word = compare(gains, margin)
    return {"yes": f"yes: the student gains ≥ {margin:.2f} over CE alone from the prototype space",
            "no": f"no: RPKD's gain over CE alone is below {margin:.2f}",
            "unclear": f"unclear: RPKD's gain over CE straddles {margin:.2f} within the seed-to-seed spread"}[word]


def control_verdict(gains: Sequence[float], margin: float = CONTROL_MARGIN) -> str:
    """Per seed, RPKD minus the control (CE + feature matching through the same random projection, no
    prototypes) averaged over class counts: yes above ``margin``, no below, unclear when it straddles."""
    word = compare(gains, margin)
    return {"yes": f"yes: the prototypes add ≥ {margin:.2f} over matching features through the same projection",
            "no": f"no: the same projection without prototypes does as well (RPKD's lead is below {margin:.2f})",
            "unclear": f"unclear: RPKD's lead over the control straddles {margin:.2f} within the seed-to-seed "
                       "spread"}[word]


# --- rows ----------------------------------------------------------------------------------------------------------


def _has(results: RPKDResults, *arms: str) -> bool:
    """Whether every one of ``arms`` was trained in this run (``arms`` is a config field)."""
    return all(a in results.summary["arms"] for a in arms)


def _n_labelled(results: RPKDResults) -> int:
    """The labels each student saw (every training image under the standard protocol)."""
    return int(results.summary.get("n_labelled", results.config.n_labelled))


def _is_standard(results: RPKDResults) -> bool:
    return results.summary.get("protocol", results.config.protocol) == "standard"


def _tag(results: RPKDResults) -> str:
    return "standard protocol" if _is_standard(results) else "few labels"


def _headroom_name(results: RPKDResults) -> str:
    return "headroom_standard" if _is_standard(results) else "headroom"


def _distill_name(results: RPKDResults) -> str:
    return "distill_standard" if _is_standard(results) else "distill"


def _gates(results: RPKDResults) -> tuple[str, ...]:
    """The gates a claim of this run depends on: the headroom, and the known distiller's gain when KD or OFA ran."""
    return (_headroom_name(results),) + ((_distill_name(results),) if _has_any(results, "kd", "ofa") else ())


def _has_any(results: RPKDResults, *arms: str) -> bool:
    return any(a in results.summary["arms"] for a in arms)


def learns_check(runs: Sequence[RPKDResults]) -> Claim:
    """Check: every arm of every run learns (above chance on every seed)."""
    margins, worst = {}, []
    for r in runs:
        for c in r.summary["class_grid"]:
            for arm in r.summary["arms"]:
                m = per_seed(r, arm, c) - 1.0 / c
                label = f"{ARM_LABELS[arm]}, C = {c} ({_tag(r)})"
                margins[label] = m
                worst.append((float(m.min()), label))
    low, where = min(worst)
    return Claim("every student arm learns the task", "test accuracy minus chance 1/C, every arm, C and seed",
                 f"smallest margin over chance {low:+.3f} ({where})", learns_verdict(margins), kind="check")


def headroom_gate(results: RPKDResults) -> Claim:
    """Gate: the teacher beats the CE student (of the student's architecture) under this run's protocol."""
    edges = teacher_edges(results)
    return Claim(
        f"the teacher knows more than CE alone teaches ({_tag(results)})",
        f"teacher minus a CE {results.config.student} student on {_n_labelled(results)} labels, per C and seed; "
        f"threshold {HEADROOM:.2f} on every seed",
        "teacher − CE: " + ", ".join(f"C = {c}: {fmt_mean_sd(v, 3)} (min {min(v):+.3f})" for c, v in edges.items()),
        headroom_verdict(edges), kind="gate", name=_headroom_name(results),
    )


def dead_channels_check(results: RPKDResults) -> Claim:
    """Check: the teacher uses every channel of its last convolution (counted on the training set, per C)."""
    grid = results.summary["class_grid"]
    counts = {c: int(results.summary[f"C={c}"]["dead_channels"]) for c in grid}
    n = results.summary[f"C={grid[0]}"]["teacher_channels"]
    return Claim("the teacher has no dead channels",
                 "channels of the teacher's last convolution (after its ReLU) that are 0 at every location of every "
                 f"training image, per C; threshold {DEAD_CHANNELS}",
                 f"dead channels of {n}: " + ", ".join(f"C = {c}: {k}" for c, k in counts.items()),
                 dead_channels_verdict(counts), kind="check")


def distill_gate(results: RPKDResults) -> Claim:
    """Gate: the better of KD and OFA (by mean) gains over CE, averaged over class counts seed by seed."""
    arms = [a for a in ("kd", "ofa") if _has(results, a)]
    best = max(arms, key=lambda a: float(pooled(results, a, "ce").mean()))
    gains = pooled(results, best, "ce")
    return Claim(
        f"a known distiller gains over CE alone ({_tag(results)})",
        "the better of " + " and ".join(ARM_LABELS[a] for a in arms) + " (by mean) minus CE, paired by seed, mean "
        f"over C; threshold {MARGIN:.2f} (interval)",
        "; ".join(f"{ARM_LABELS[a]} − CE, mean over C: {_iv(pooled(results, a, 'ce'))}" for a in arms),
        distill_verdict(gains), kind="gate", name=_distill_name(results),
    )


def teacher_info_gate(results: RPKDResults) -> Claim:
    """Gate for the probe claim: the teacher's own features hold the fine digit at the fewest classes."""
    low = min(results.summary["class_grid"])
    values = probe_per_seed(results, TEACHER_FEATURES, low)
    return Claim(
        "the teacher's features hold the fine digit at the fewest classes",
        f"linear probe for the fine digit from the teacher's feature map, C = {low}, one split per seed; "
        f"threshold {TEACHER_INFO:.2f} (chance 0.10)",
        f"probe accuracy {interval(values).format(3)}", teacher_info_verdict(values), kind="gate", name="teacher_info",
    )


def probe_claim(results: RPKDResults) -> Claim:
    """The mechanism row: fine-label information of each target (linear probe), fewest vs most classes."""
    grid = results.summary["class_grid"]
    low, high = min(grid), max(grid)
    gap = {c: probe_per_seed(results, "prototypes", c) - probe_per_seed(results, "logits", c) for c in (low, high)}
    rival = probe_per_seed(results, "prototypes", low) - probe_per_seed(results, POOLED, low)
    s_low = results.summary[f"C={low}"]["probe"]
    return Claim(
        "with few classes, the prototype vocabulary is a richer target than the label space",
        f"linear probe for the fine digit from each teacher target, C = {low} and {high}, one probe split per seed; "
        "rival: the pooled projection without prototypes",
        f"probe accuracy at C = {low}: prototypes {s_low['prototypes']:.3f}, logits {s_low['logits']:.3f}, "
        f"pooled projection {s_low[POOLED]:.3f}; prototypes − logits {_iv(gap[low])} (at C = {high}: "
        f"{_iv(gap[high])}); prototypes − pooled projection {_iv(rival)}",
        probe_verdict(gap[low], gap[high], rival), gates=("teacher_info",),
    )


def comparison_claim(results: RPKDResults, setting: str) -> Claim:
    """RPKD against KD and OFA at the fewest classes, and whether its lead grows as C shrinks."""
    grid = results.summary["class_grid"]
    low, high = min(grid), max(grid)
    names = [a for a in ("kd", "ofa") if _has(results, a)]
    vs = {ARM_LABELS[a]: paired(results, "rpkd", a, low) for a in names}
    trend = paired(results, "rpkd", best_logit_arm(results, low), low) - paired(
        results, "rpkd", best_logit_arm(results, high), high)
    return Claim(
        f"RPKD beats logit-based distillation (OFA), most where the label space is small ({_tag(results)})",
        setting,
        f"C = {low}: " + "; ".join(f"RPKD − {k} {_iv(v)}" for k, v in vs.items())
        + f"; lead at C = {low} minus at C = {high}: {_iv(trend)}",
        comparison_verdict(vs, trend), gates=_gates(results),
    )


def transfer_claim(results: RPKDResults, claim: str, setting: str) -> Claim:
    """RPKD's gain over CE alone, averaged over class counts seed by seed (KD's alongside when KD was trained)."""
    grid = results.summary["class_grid"]
    gains = pooled(results, "rpkd", "ce")
    measured = (f"RPKD − CE, mean over C: {_iv(gains)} (per C: "
                + ", ".join(f"{gain(results, 'rpkd', 'ce', c):+.3f}" for c in grid) + ")")
    if _has(results, "kd"):
        measured += f"; KD − CE: {_iv(pooled(results, 'kd', 'ce'))}"
    return Claim(claim, setting, measured, transfer_verdict(gains), gates=_gates(results))


def control_claim(results: RPKDResults) -> Claim:
    """RPKD against the control (CE + feature matching through the same random projection, no prototypes)."""
    grid = results.summary["class_grid"]
    gains = pooled(results, "rpkd", CONTROL)
    return Claim(
        "(control) the gain comes from the prototypes, not from any feature matching",
        "CE + cosine feature matching through RPKD's own random projection, no prototypes"
        + (" (standard protocol)" if _is_standard(results) else "") + "; paired by seed, mean over C",
        f"RPKD − control, mean over C: {_iv(gains)} (per C: "
        + ", ".join(f"{gain(results, 'rpkd', CONTROL, c):+.3f}" for c in grid) + ")",
        control_verdict(gains), gates=_gates(results),
    )


def _protocol_claims(results: RPKDResults) -> list[Claim]:
    """The headroom gate, the comparison and the transfer claim of one run."""
    grid = results.summary["class_grid"]
    seeds = len(results.config.seeds)
    if _is_standard(results):
        setting = (f"standard protocol: CE on all {_n_labelled(results)} labels + each loss, "
                   f"{results.config.student} student, {seeds} seeds")
        transfer = "the prototype space carries the teacher's knowledge to an unlike network (standard protocol)"
    else:
        setting = (f"{results.config.student} student, labels of {_n_labelled(results)} images only, "
                   f"C = {', '.join(map(str, grid))}, {seeds} seeds")
        transfer = ("architecture-agnostic: the prototype space carries the teacher's knowledge to an unlike "
                    "network (a gain over CE alone, which any working distillation shows; not a comparison with "
                    "KD or OFA)")
    rows = []
    if _has(results, "ce"):
        rows.append(headroom_gate(results))
    if _has(results, "ce") and _has_any(results, "kd", "ofa"):
        rows.append(distill_gate(results))
    if _has(results, "rpkd", "ce") and (_has(results, "kd") or _has(results, "ofa")):
        rows.append(comparison_claim(results, setting))
    if _has(results, "rpkd", "ce"):
        rows.append(transfer_claim(results, transfer, setting + "; RPKD vs CE alone, paired by seed, mean over C"))
    return rows


def claims(results: RPKDResults, standard: RPKDResults | None = None) -> list[Claim]:
    """Every row: the check, the gates and the claims of ``results`` and (optional) ``standard``, the run under
    the standard protocol (:func:`~explorables.rpkd.experiment.standard_protocol`). A run made under the
    standard protocol itself (as the paper preset is) gives its own rows. Rows whose arms were not trained
    are left out."""
    runs = [results] + ([standard] if standard is not None else [])
    rows = [learns_check(runs), dead_channels_check(results), teacher_info_gate(results), probe_claim(results)]
    for r in runs:
        rows += _protocol_claims(r)
    if _has(results, "rpkd", "ce", CONTROL):
        rows.append(control_claim(results))
    return rows


def page_claims(config: RPKDConfig) -> list[Claim]:
    """The page's table: the run under ``config`` and under the standard protocol, side by side."""
    return claims(*run_protocols(config))


# --- criteria: each verdict function, its threshold and synthetic inputs reaching every branch ----------------------

_LOW, _HIGH, _MID, _NONE = [0.30, 0.31, 0.29], [0.00, 0.01, -0.01], [0.0, 0.2, 0.1], [-0.05, -0.04, -0.06]
CRITERIA: tuple[Criterion, ...] = (
    Criterion("every arm learns", "check", learns_verdict, ABOVE_CHANCE,
              "accuracy − 1/C ≥ threshold on every seed, for every arm and C",
              {"pass": (({"a": [0.3, 0.2]},), {}), "fail": (({"a": [0.3, 0.02]},), {})}),
    Criterion("headroom", "gate", headroom_verdict, HEADROOM,
              "teacher − CE ≥ threshold on every seed at every class count (both protocols, each its own gate)",
              {"pass": (({10: [0.1, 0.2], 2: [0.06, 0.3]},), {}), "fail": (({10: [0.1, 0.2], 2: [0.04, 0.3]},), {})}),
    Criterion("dead channels", "check", dead_channels_verdict, DEAD_CHANNELS,
              "dead channels of the teacher's last convolution ≤ threshold at every C",
              {"pass": (({10: 0, 2: 0},), {}), "fail": (({10: 0, 2: 1},), {})}),
    Criterion("distill", "gate", distill_verdict, MARGIN,
              "the better of KD and OFA minus CE per seed, mean over C: interval at or above threshold (each protocol "
              "its own gate)", {"pass": ((_LOW,), {}), "fail": ((_MID,), {})}),
    Criterion("teacher_info", "gate", teacher_info_verdict, TEACHER_INFO,
              "probe accuracy from the teacher's features at the fewest C: interval above threshold",
              {"pass": (([0.9, 0.92, 0.91],), {}), "fail": (([0.9, 0.3, 0.6],), {})}),
    Criterion("probe", "claim", probe_verdict, PROBE_MARGIN,
              "prototype − logit probe gap at the fewest C: interval above threshold; and above the gap at the "
              "most C by MARGIN; and prototype − pooled projection (no prototypes) at the fewest C above MARGIN; "
              "no when the first part is no", {
                  "yes": ((_LOW, _NONE, _LOW), {}), "no": ((_NONE, _NONE, _LOW), {}),
                  "unclear": ((_MID, _LOW, _LOW), {}), "partly": ((_LOW, _NONE, _HIGH), {})}, scoped=True),
    Criterion("comparison", "claim", comparison_verdict, MARGIN,
              "RPKD − KD and RPKD − OFA at the fewest C, and the growth of RPKD's lead as C shrinks: each interval "
              "against MARGIN; behind every baseline reads no", {
                  "yes": (({"KD": _LOW, "OFA": _LOW}, _LOW), {}),
                  "partly": (({"KD": _LOW, "OFA": _HIGH}, _LOW), {}),
                  "no": (({"KD": _NONE, "OFA": _NONE}, _LOW), {}),
                  "unclear": (({"KD": _MID, "OFA": _MID}, _MID), {})}, scoped=True),
    Criterion("transfer", "claim", transfer_verdict, TRANSFER_MARGIN,
              "RPKD − CE per seed, mean over C: interval against threshold",
              {"yes": ((_LOW,), {}), "no": ((_NONE,), {}), "unclear": ((_MID,), {})}),
    Criterion("control", "claim", control_verdict, CONTROL_MARGIN,
              "RPKD − control per seed, mean over C: interval against threshold",
              {"yes": ((_LOW,), {}), "no": ((_NONE,), {}), "unclear": ((_MID,), {})}),
)


# --- tables and sentences for the page -----------------------------------------------------------------------------


def accuracy_table(results: RPKDResults) -> str:
    """Test accuracy (mean ± sd over seeds, sample sd) of every arm at every class count, with the teacher's."""
    grid = results.summary["class_grid"]
    rows = [[ARM_LABELS[a], *(fmt_mean_sd(per_seed(results, a, c), 3) for c in grid)]
            for a in results.summary["arms"]]
    rows.append(["teacher (CNN)", *(f"{results.summary[f'C={c}']['teacher_accuracy']:.3f}" for c in grid)])
    return table(["method", *(f"C = {c}" for c in grid)], rows)


def probe_table(results: RPKDResults) -> str:
    """Probe accuracy for the fine digit from each target, per class count (mean ± sd over probe splits;
    chance 0.1): the logits, RPKD's two targets each beside the same projection without prototypes, and the
    teacher's own features as the reference."""
    grid = results.summary["class_grid"]
    names = {"logits": "class logits (KD, OFA)", "prototypes": "prototype distribution (RPKD global)",
             POOLED: "rival: the pooled projection, no prototypes",
             "maps": "prototype activation maps (RPKD feature branch)",
             CONTROL_TARGET: "rival: the control's target (projected map, no prototypes)",
             TEACHER_FEATURES: "reference: the teacher's feature map itself"}
    rows = [[label, *(fmt_mean_sd(probe_per_seed(results, k, c), 3) for c in grid)] for k, label in names.items()]
    return table(["target", *(f"C = {c}" for c in grid)], rows)


@checked()
def headline(results: RPKDResults, standard: RPKDResults | None = None) -> list[str]:
    """Key numbers for the end-of-run summary (a claim whose gate failed reads untested)."""
    return [f"{c.kind} | {c.claim}: {c.measured} -> {c.verdict}" for c in apply_gates(claims(results, standard))]


def logit_sentence(results: RPKDResults) -> str:
    """How RPKD compares with KD and OFA at the fewest classes, in words (the comparison verdict's own parts)."""
    low = min(results.summary["class_grid"])
    words = {a: compare(paired(results, "rpkd", a, low), MARGIN) for a in ("kd", "ofa") if _has(results, a)}
    if all(w == "yes" for w in words.values()):
        return "At the fewest classes RPKD beats every logit method."
    if any(w == "yes" for w in words.values()):
        return "At the fewest classes RPKD beats one logit method but not the other."
    if all(w == "no" for w in words.values()):
        return "At the fewest classes RPKD trails every logit method, beyond the seed-to-seed spread."
    return "At the fewest classes RPKD is level with the logit methods within the seed-to-seed spread."


def rpkd_kd_sentence(results: RPKDResults) -> str:
    """Whether adding RPKD's branches on top of KD improves on KD, in words (interval rule per class count)."""
    words = [compare(paired(results, "rpkd_kd", "kd", c), MARGIN) for c in results.summary["class_grid"]]
    if all(w == "yes" for w in words):
        return "Adding RPKD's branches to KD improves on KD at every class count."
    if any(w == "yes" for w in words):
        return "Adding RPKD's branches to KD improves on KD at some class counts only."
    if all(w == "no" for w in words):
        return "Adding RPKD's branches to KD does not improve on KD at any class count."
    return "Adding RPKD's branches to KD does not clearly improve on KD at any class count (within seed noise)."


def control_sentence(results: RPKDResults) -> str:
    """What the control says about where RPKD's transfer comes from, in words (the control verdict's word)."""
    word = control_verdict(pooled(results, "rpkd", CONTROL)).split(":")[0]
    return {
        "yes": "The prototypes, not the random projection alone, carry RPKD's gain.",
        "no": ("The control does as well as RPKD, so at this scale RPKD's transfer comes from matching features "
               "through a random projection, not from the prototypes."),
        "unclear": ("RPKD's lead over the control is within the seed-to-seed spread, so at this scale we cannot "
                    "attribute RPKD's transfer to the prototypes rather than to matching features through a "
                    "random projection."),
    }[word]


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def untested_sentence(rows: Sequence[Claim]) -> str:
    """Which claim rows read "untested" (after :func:`apply_gates`), and which gate made them so, in words."""
    gated = apply_gates(rows)
    gates = {r.name: r for r in gated if r.kind == "gate"}
    untested = [r for r in gated if r.kind == "claim" and r.outcome == "untested"]
    if not untested:
        return "No claim row is untested in this run: every gate passed."
    by_gate: dict[str, list[str]] = {}
    for r in untested:
        failed = [g for g in r.gates if g not in gates or gates[g].outcome == "fail"]
        by_gate.setdefault(" and ".join(failed), []).append(f"“{r.claim}”")
    parts = []
    for names, claims_ in by_gate.items():
        why = "; ".join(f"“{gates[g].claim}” failed ({gates[g].measured})" if g in gates else f"{g} did not run"
                        for g in names.split(" and "))
        parts.append(f"{_and(claims_)} {'reads' if len(claims_) == 1 else 'read'} untested because the gate {why}")
    return "In this run " + "; ".join(parts) + ": without it, a 'no' would be the setup's, not RPKD's."


def below_ce_sentence(runs: Sequence[RPKDResults]) -> str:
    """Where RPKD's mean accuracy is below that of CE alone (per protocol and C), in words, and where that is beyond
    the seed-to-seed spread (the book's interval rule on the paired difference)."""
    below, clear = [], []
    for r in runs:
        if not _has(r, "rpkd", "ce"):
            continue
        cs = [c for c in r.summary["class_grid"] if float(paired(r, "rpkd", "ce", c).mean()) < 0]
        if cs:
            where = f"C = {_and([str(c) for c in cs])} ({_tag(r)})"
            below.append(where)
            beyond = [c for c in cs if compare(paired(r, "rpkd", "ce", c), 0.0) == "no"]
            if beyond:
                clear.append(f"C = {_and([str(c) for c in beyond])} ({_tag(r)})")
    if not below:
        return "RPKD's mean accuracy is not below that of CE alone at any class count of either protocol."
    text = f"RPKD is below CE alone (mean over seeds) at {_and(below)}"
    return text + (f"; beyond the seed-to-seed spread at {_and(clear)}." if clear else
                   ", each within the seed-to-seed spread.")
