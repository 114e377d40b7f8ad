"""The chapter's claims table: each claim of the abstract, our setting, our number, a verdict.

Verdicts come from the functions below (tested on constructed numbers), with the criterion
written in each; the book glues their output and never decides between sentences itself.
"""

from __future__ import annotations

import numpy as np

from ..core.arguments import checked
from ..core.tables import Claim
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from ..core.tables import markdown_table as table
from .experiment import RPKDResults
from .training import ARM_LABELS, CONTROL

#: a gain counts when the mean over seeds is at least this many accuracy points (fraction) ...
MARGIN = 0.01
#: ... and the probe gap counts when prototype targets beat the logits by at least this
PROBE_MARGIN = 0.10
#: RPKD "transfers" when its gain over CE averages at least this over class counts
TRANSFER_MARGIN = 0.03
#: the prototypes "matter" (yes) when RPKD beats the control by at least this on average over class counts
CONTROL_STRONG = 0.05


def accuracy_of(results: RPKDResults, arm: str, n_classes: int) -> dict:
    """``{"mean", "sd", "per_seed"}`` test accuracy of ``arm`` at ``C = n_classes``."""
    return results.summary[f"C={n_classes}"]["accuracy"][arm]


def gain(results: RPKDResults, arm: str, baseline: str, n_classes: int) -> float:
    """Mean accuracy of ``arm`` minus that of ``baseline`` at ``C = n_classes`` (mean over seeds)."""
    return accuracy_of(results, arm, n_classes)["mean"] - accuracy_of(results, baseline, n_classes)["mean"]


def beats(a: dict, b: dict, margin: float = MARGIN) -> bool:
    """``a`` beats ``b``: the mean is higher by ``>= margin`` and by more than either seed-to-seed sd."""
    return a["mean"] - b["mean"] >= max(margin, a["sd"], b["sd"])


def low_class_verdict(wins_low: bool, wins_high: bool, gain_low: float, gain_high: float, noise: float = 0.0) -> str:
    """yes: RPKD beats the best logit method at the fewest classes, and by more than at the most classes;
    partly: it beats it at the fewest classes only, or its gain grows as C shrinks without winning; no: neither.
    The gain "grows" when it is larger at the fewest classes by more than ``noise`` (the claims pass the
    largest seed-to-seed sd of the four arms compared, and at least ``MARGIN``)."""
    grows = gain_low - gain_high > noise
    if wins_low and grows:
        return "yes: RPKD beats the best logit method at the fewest classes, and the gain grows as C shrinks"
    if wins_low or (grows and wins_high):
        return "partly: RPKD wins at the fewest classes only, or its advantage does not grow as C shrinks"
    if grows:
        return "partly: RPKD trails the best logit method, though by less as C shrinks"
    return ("no: RPKD does not beat the best logit method (KD or OFA) at any class count, nor close the gap "
            "as C shrinks by more than the seed-to-seed sd")


def probe_verdict(gaps: dict[int, float], margin: float = PROBE_MARGIN) -> str:
    """yes: at the fewest classes the prototype target's probe accuracy beats the logits' by ``>= margin``
    and the gap is larger than at the most classes; partly: only the first; no: otherwise."""
    low, high = gaps[min(gaps)], gaps[max(gaps)]
    if low >= margin and low > high:
        return (f"yes: prototype targets carry more fine-label information (≥ {margin:.2f} more), "
                "most at the fewest classes")
    if low >= margin:
        return (f"partly: prototype targets carry more information (≥ {margin:.2f}) "
                "but the gap does not grow as C shrinks")
    return f"no: prototype targets do not carry ≥ {margin:.2f} more fine-label information than the logits"


def transfer_verdict(gains: dict[int, float], margin: float = TRANSFER_MARGIN) -> str:
    """RPKD's gain over CE per class count. yes: positive at every class count and ``>= margin`` on average
    over class counts (9 paired runs at 3 seeds, steadier than one class count's 3); partly: ``>= MARGIN`` at
    some class count; no: otherwise."""
    mean = sum(gains.values()) / len(gains)
    if mean >= margin and all(g > 0 for g in gains.values()):
        return (f"yes: the student gains from the teacher through the prototypes "
                f"(≥ {margin:.2f} on average, > 0 at every C)")
    if any(g >= MARGIN for g in gains.values()):
        return "partly: RPKD beats CE at some class counts only"
    return "no: RPKD does not beat training the student alone"


def control_verdict(gains: dict[int, float], strong: float = CONTROL_STRONG, noise: float = 0.0) -> str:
    """RPKD minus the control (same random projection, feature matching, no prototypes) per class count.
    yes: ``>= strong`` on average over class counts and positive at every one; partly: ``>= MARGIN`` on
    average; no: the control is as good. Both also need the average above ``noise`` (the claims pass
    twice its standard error over seeds, :func:`control_noise`): a difference within it is not read as one."""
    mean = sum(gains.values()) / len(gains)
    if mean >= max(strong, noise) and all(g > 0 for g in gains.values()):
        return f"yes: prototypes matter: RPKD beats the same projection without them by ≥ {strong:.2f} on average"
    if mean >= max(MARGIN, noise):
        return (f"partly: prototypes add a little over feature matching through the same projection "
                f"({MARGIN:.2f} to {strong:.2f} on average over class counts, beyond twice its standard error)")
    if mean >= MARGIN:
        return (f"no: RPKD's average gain over the same projection without prototypes ({mean:+.3f}) is within "
                f"twice its standard error over seeds ({noise:.3f})")
    return "no: plain feature matching through the same projection does as well as RPKD"


def control_noise(results: RPKDResults) -> float:
    """Twice the standard error over seeds of RPKD's paired gain over the control, averaged over class counts:
    ``2 sqrt(sum_C var_s(d_{C,s}) / S) / n_C`` with ``d`` the per-seed differences (same seed, same batches)."""
    grid = results.summary["class_grid"]
    var = 0.0
    for c in grid:
        d = np.subtract(accuracy_of(results, "rpkd", c)["per_seed"], accuracy_of(results, CONTROL, c)["per_seed"])
        var += float(d.var(ddof=1)) / d.size if d.size > 1 else 0.0
    return 2.0 * float(np.sqrt(var)) / len(grid)


def _fmt(stats: dict) -> str:
    return f"{stats['mean']:.3f} ± {stats['sd']:.3f}"


def comparison_noise(results: RPKDResults, low: int, high: int) -> float:
    """The largest seed-to-seed sd of RPKD and the best logit arm at ``C = low`` and ``C = high`` (at least MARGIN):
    a change of RPKD's gain across class counts smaller than this is not read as a trend."""
    sds = [accuracy_of(results, arm, c)["sd"] for c in (low, high) for arm in ("rpkd", best_logit_arm(results, c))]
    return max(MARGIN, *sds)


def best_logit_arm(results: RPKDResults, n_classes: int) -> str:
    """The better of KD and OFA at ``C = n_classes`` (mean accuracy)."""
    arms = [a for a in ("kd", "ofa") if a in results.summary["arms"]]
    return max(arms, key=lambda a: accuracy_of(results, a, n_classes)["mean"])


def probe_gaps(results: RPKDResults) -> dict[int, float]:
    """Per class count: probe accuracy of the prototype distribution minus that of the class logits."""
    return {c: results.summary[f"C={c}"]["probe"]["prototypes"] - results.summary[f"C={c}"]["probe"]["logits"]
            for c in results.summary["class_grid"]}


def _has(results: RPKDResults, *arms: str) -> bool:
    """Whether every one of ``arms`` was trained in this run (``arms`` is a config field)."""
    return all(a in results.summary["arms"] for a in arms)


def _n_labelled(results: RPKDResults) -> int:
    """The labels each student saw (every training image under the standard protocol)."""
    return int(results.summary.get("n_labelled", results.config.n_labelled))


def _is_standard(results: RPKDResults) -> bool:
    return results.summary.get("protocol", results.config.protocol) == "standard"


def probe_claim(results: RPKDResults) -> Claim:
    """The mechanism row: fine-label information of each target (linear probe), fewest vs most classes."""
    grid = results.summary["class_grid"]
    low, high = min(grid), max(grid)
    gaps = probe_gaps(results)
    s_low = results.summary[f"C={low}"]["probe"]
    return Claim(
        "with few classes, the prototype vocabulary is a richer target than the label space",
        f"linear probe for the fine digit from each teacher target, C = {low} and {high}",
        f"probe accuracy at C = {low}: prototypes {s_low['prototypes']:.3f}, logits {s_low['logits']:.3f} "
        f"(gap {gaps[low]:+.3f}; at C = {high}: {gaps[high]:+.3f})",
        probe_verdict(gaps),
    )


def comparison_claim(results: RPKDResults, tag: str, setting: str) -> Claim:
    """RPKD against the better of KD and OFA at the fewest and the most classes."""
    grid = results.summary["class_grid"]
    low, high = min(grid), max(grid)
    best_low, best_high = best_logit_arm(results, low), best_logit_arm(results, high)
    g_low, g_high = gain(results, "rpkd", best_low, low), gain(results, "rpkd", best_high, high)
    return Claim(
        f"RPKD beats logit-based distillation (OFA), most where the label space is small ({tag})",
        setting,
        f"C = {low}: RPKD {_fmt(accuracy_of(results, 'rpkd', low))} vs {ARM_LABELS[best_low]} "
        f"{_fmt(accuracy_of(results, best_low, low))}; gain {g_low:+.3f} (C = {high}: {g_high:+.3f})",
        low_class_verdict(
            beats(accuracy_of(results, "rpkd", low), accuracy_of(results, best_low, low)),
            beats(accuracy_of(results, "rpkd", high), accuracy_of(results, best_high, high)),
            g_low, g_high, comparison_noise(results, low, high),
        ),
    )


def transfer_claim(results: RPKDResults, claim: str, setting: str) -> Claim:
    """RPKD's gain over CE alone at every class count (KD's alongside when KD was trained)."""
    grid = results.summary["class_grid"]
    measured = "gain over CE: " + ", ".join(f"C = {c}: {gain(results, 'rpkd', 'ce', c):+.3f}" for c in grid)
    if _has(results, "kd"):
        measured += "; KD's: " + ", ".join(f"{gain(results, 'kd', 'ce', c):+.3f}" for c in grid)
    return Claim(claim, setting, measured, transfer_verdict({c: gain(results, "rpkd", "ce", c) for c in grid}))


def control_claim(results: RPKDResults) -> Claim:
    """RPKD against the control (CE + feature matching through the same random projection, no prototypes)."""
    grid = results.summary["class_grid"]
    return Claim(
        "(control) the gain comes from the prototypes, not from any feature matching",
        "CE + cosine feature matching through RPKD's own random projection, no prototypes"
        + (" (standard protocol)" if _is_standard(results) else ""),
        "RPKD minus control: " + ", ".join(f"C = {c}: {gain(results, 'rpkd', CONTROL, c):+.3f}" for c in grid),
        control_verdict({c: gain(results, "rpkd", CONTROL, c) for c in grid}, noise=control_noise(results)),
    )


def standard_claims(standard: RPKDResults) -> list[Claim]:
    """The comparison and the transfer claim under the standard protocol (every label known, CE + each loss)."""
    n_seeds = len(standard.config.seeds)
    setting = (f"standard protocol: CE on all {_n_labelled(standard)} labels + each loss, "
               f"{standard.config.student} student, {n_seeds} seeds")
    rows = []
    if _has(standard, "rpkd") and (_has(standard, "kd") or _has(standard, "ofa")):
        rows.append(comparison_claim(standard, "standard protocol", setting))
    if _has(standard, "rpkd", "ce"):
        rows.append(transfer_claim(
            standard, "the prototype space carries the teacher's knowledge to an unlike network (standard protocol)",
            setting + "; RPKD vs CE alone"))
    return rows


def claims(results: RPKDResults, standard: RPKDResults | None = None) -> list[Claim]:
    """The claims table; ``standard`` (optional) is the run under the standard protocol
    (:func:`~explorables.rpkd.experiment.standard_protocol`), whose rows follow the few-label ones.
    A run made under the standard protocol itself (``protocol="standard"``, as the paper preset is)
    gives the probe row and the standard-protocol rows. Rows whose arms were not trained are left out."""
    rows = [probe_claim(results)]
    if _is_standard(results):
        rows += standard_claims(results)
        if _has(results, "rpkd", CONTROL):
            rows.append(control_claim(results))
        return rows
    grid = results.summary["class_grid"]
    if _has(results, "rpkd") and (_has(results, "kd") or _has(results, "ofa")):
        rows.append(comparison_claim(
            results, "few labels",
            f"{results.config.student} student, labels of {_n_labelled(results)} images only, "
            f"C = {', '.join(map(str, grid))}, {len(results.config.seeds)} seeds"))
    if _has(results, "rpkd", "ce"):
        rows.append(transfer_claim(
            results,
            "architecture-agnostic: the prototype space carries the teacher's knowledge to an unlike network "
            "(a gain over CE alone, which any working distillation shows; not a comparison with KD or OFA)",
            f"CNN teacher to {results.config.student} student, {_n_labelled(results)} labels; RPKD vs CE alone"))
    if standard is not None:
        rows += standard_claims(standard)
    if _has(results, "rpkd", CONTROL):
        rows.append(control_claim(results))
    return rows


def accuracy_table(results: RPKDResults) -> str:
    """Test accuracy (mean ± sd over seeds) of every arm at every class count, with the teacher's."""
    grid = results.summary["class_grid"]
    rows = [[ARM_LABELS[a], *(_fmt(accuracy_of(results, a, c)) for c in grid)] for a in results.summary["arms"]]
    rows.append(["teacher (CNN)", *(f"{results.summary[f'C={c}']['teacher_accuracy']:.3f}" for c in grid)])
    return table(["method", *(f"C = {c}" for c in grid)], rows)


def probe_table(results: RPKDResults) -> str:
    """Probe accuracy for the fine digit from each target, per class count (chance 0.1)."""
    grid = results.summary["class_grid"]
    names = {"logits": "class logits (KD, OFA)", "prototypes": "prototype distribution (RPKD global)",
             "maps": "prototype activation maps (RPKD feature branch)"}
    rows = [[label, *(f"{results.summary[f'C={c}']['probe'][k]:.3f}" for c in grid)] for k, label in names.items()]
    return table(["target", *(f"C = {c}" for c in grid)], rows)


@checked()
def headline(results: RPKDResults, standard: RPKDResults | None = None) -> list[str]:
    """Key numbers for the end-of-run summary."""
    return [f"{c.claim}: {c.measured} -> {c.verdict}" for c in claims(results, standard)]


def logit_sentence(results: RPKDResults) -> str:
    """How RPKD compares with the best logit method (KD or OFA) across class counts, in words."""
    grid = results.summary["class_grid"]
    low, high = min(grid), max(grid)
    g_low = gain(results, "rpkd", best_logit_arm(results, low), low)
    g_high = gain(results, "rpkd", best_logit_arm(results, high), high)
    wins = beats(accuracy_of(results, "rpkd", low), accuracy_of(results, best_logit_arm(results, low), low))
    if wins:
        return "At the fewest classes RPKD beats the best logit method."
    if g_low - g_high > comparison_noise(results, low, high):
        return ("The gap to the best logit method narrows as C shrinks, the direction the paper predicts, "
                "but it does not turn into a win.")
    return ("RPKD trails the best logit method, and the gap does not narrow as C shrinks by more than the "
            "seed-to-seed spread.")


def rpkd_kd_sentence(results: RPKDResults) -> str:
    """Whether adding RPKD's branches on top of KD improves on KD, in words."""
    grid = results.summary["class_grid"]
    wins = [beats(accuracy_of(results, "rpkd_kd", c), accuracy_of(results, "kd", c)) for c in grid]
    if all(wins):
        return "Adding RPKD's branches to KD improves on KD at every class count."
    if any(wins):
        return "Adding RPKD's branches to KD improves on KD at some class counts only."
    return "Adding RPKD's branches to KD does not improve on KD at any class count."


def control_sentence(results: RPKDResults) -> str:
    """What the control says about where RPKD's transfer comes from, in words (same criterion as the verdict)."""
    outcome = control_verdict({c: gain(results, "rpkd", CONTROL, c) for c in results.summary["class_grid"]},
                              noise=control_noise(results))
    if outcome.startswith("yes"):
        return "The prototypes, not the random projection alone, carry RPKD's gain."
    if outcome.startswith("partly"):
        return ("The prototypes add a little over matching features through the same random projection, "
                "beyond the seed-to-seed noise of the average but less than the spread at any one class count.")
    return ("The control does as well as RPKD (within the seed-to-seed noise), so at this scale we cannot "
            "attribute RPKD's transfer to the prototypes rather than to matching features through a random "
            "projection.")
