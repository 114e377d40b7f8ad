"""The chapter's claims table: each claim of the abstract, our setting, our number, a verdict.

Verdicts come from the functions below (tested on constructed numbers), with the criteria
written in each; the book glues their output and never decides between sentences itself.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..core.tables import Claim
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from ..core.tables import markdown_table as table
from .continual import BASELINES, CONTROL, METHODS
from .experiment import TRAINED, TrustRegionCLResults

#: the MAML reading holds ("yes") when the mean cosine at the tightest trust region reaches this
COSINE_THRESHOLD = 0.9


#: differences smaller than these are ties: about the seed-to-seed sd of a method's mean final SWD in our runs,
#: and about two loss checks of re-convergence (fixed after base seeds 0 and 1 gave flipping verdicts without them)
SWD_MARGIN = 0.03
STEPS_MARGIN = 5.0
#: differences of trained-step cosines smaller than this are ties (set by the reviewer before seeing the book numbers)
COSINE_MARGIN = 0.05
#: the baselines the abstract names (EWC, replay, continual meta-learning): the verdicts on "best" / "faster" count
#: only these. Fine-tuning, which protects nothing, is shown for reference. (Changed in review: a win over
#: fine-tuning alone, tied with every named baseline, used to make "partly".)
NAMED_BASELINES: tuple[str, ...] = ("ewc", "replay", "reptile")


def compare(candidate: list[float], baseline: list[float], margin: float) -> str:
    """ "win", "loss" or "tie" for ``candidate`` against ``baseline``, lower being better.

    A win: the candidate's mean is lower by more than ``margin`` *and* it is lower on a strict
    majority of the paired seeds (seed ``i`` of both started from the same weights and saw the same
    data); a loss is the same the other way round; anything else is a tie.
    """
    a, b = np.asarray(candidate, float), np.asarray(baseline, float)
    if a.shape != b.shape or a.size == 0:
        raise ValueError(f"candidate and baseline must be paired per seed, got {a.shape} and {b.shape}")
    if a.mean() < b.mean() - margin and (a < b).sum() * 2 > a.size:
        return "win"
    if b.mean() < a.mean() - margin and (b < a).sum() * 2 > a.size:
        return "loss"
    return "tie"


def comparison_verdict(outcomes: dict[str, str], what: str) -> str:
    """yes: TR-CL wins against every baseline on ``what``; partly: it wins against some and loses to
    none; no: it wins against none, or loses to one."""
    label = lambda kind: ", ".join(METHODS[m].label for m, o in outcomes.items() if o == kind)  # noqa: E731
    wins, ties, losses = label("win"), label("tie"), label("loss")
    if outcomes and all(o == "win" for o in outcomes.values()):
        return f"yes: TR-CL has the best {what}, ahead of every baseline by more than the margin"
    if wins and not losses:
        return f"partly: TR-CL is ahead of {wins} on {what}, tied (within the margin) with {ties}"
    if losses:
        return f"no: {losses} {'is' if ',' not in losses else 'are'} ahead of TR-CL on {what}"
    return f"no: TR-CL is tied with every baseline on {what}"


def reconvergence_verdict(outcomes: dict[str, str], fraction_at_start: float) -> str:
    """:func:`comparison_verdict` on re-convergence steps, with a caveat when at least half of
    TR-CL's (task, seed) runs were already within tolerance before any step: then the count mostly
    measures retention, not how fast a lost task comes back."""
    verdict = comparison_verdict(outcomes, "re-convergence steps")
    if fraction_at_start >= 0.5:
        verdict += (
            f" (but {fraction_at_start:.0%} of TR-CL's runs were within tolerance before any step, so this mostly "
            "measures retention, not the speed of coming back)"
        )
    return verdict


def maml_verdict(cosines: list[float], threshold: float = COSINE_THRESHOLD) -> str:
    """yes: the cosine grows as the trust region tightens and reaches ``threshold`` at the tightest;
    partly: it grows but stays below; no: it does not grow.

    The limit is first-order Taylor algebra: for any smooth loss the exact trust-region step turns
    into the one-step update as lambda grows (a test shows it on random data and a random metric).
    So a "yes" checks our reading and our solver on the trained model, and where the approximation
    is tight; it is not evidence that TR-CL behaves like a meta-learner, and the verdict says so.
    """
    grows = all(b >= a - 1e-9 for a, b in itertools.pairwise(cosines)) and cosines[-1] > cosines[0]
    caveat = (
        " (this limit holds for any smooth loss by construction: it checks our algebra, not that TR-CL meta-learns)"
    )
    if grows and cosines[-1] >= threshold:
        return (
            f"yes, for our reconstruction of the reading: the cosine rises with λ and reaches ≥ {threshold} "
            "at the tightest trust region" + caveat
        )
    if cosines[-1] > cosines[0]:
        return (
            f"partly, for our reconstruction of the reading: the cosine rises with λ but stays below {threshold}"
            + caveat
        )
    return "no: the cosine does not rise as the trust region tightens"


def control_verdict(outcome: bool | str) -> str:
    """Whether the Fisher metric matters: TR-CL against the same method with an isotropic metric of equal trace.

    ``outcome`` is TR-CL's :func:`compare` result against the control ("win", "tie" or "loss"; ``True`` means
    "win" and ``False`` "tie"). (Changed in review: a loss used to be reported as "does as well".)"""
    if isinstance(outcome, bool):
        outcome = "win" if outcome else "tie"
    if outcome == "win":
        return "yes: the Fisher metric beats an isotropic trust region of the same trace by more than the margin"
    if outcome == "loss":
        return "no: an isotropic trust region of the same trace does better than the Fisher metric, beyond the margin"
    if outcome != "tie":
        raise ValueError(f"outcome must be 'win', 'tie' or 'loss', got {outcome!r}")
    return (
        "no: an isotropic trust region of the same trace does as well (within the margin); the Fisher shape made no "
        "measurable difference"
    )


def _outcomes(
    results: TrustRegionCLResults, part: str, key: str, margin: float, against: tuple[str, ...] = BASELINES
) -> dict[str, str]:
    methods = results.summary[part]["methods"]
    return {m: compare(methods["trcl"][key]["per_seed"], methods[m][key]["per_seed"], margin) for m in against}


def _pm(stats: dict) -> str:
    return f"{stats['mean']:.3f} ± {stats['sd']:.3f}"


def _measured(results: TrustRegionCLResults, part: str, key: str, fmt=_pm) -> str:
    methods = results.summary[part]["methods"]
    return "; ".join(f"{METHODS[m].label} {fmt(methods[m][key])}" for m in ("trcl", *BASELINES))


def claims(results: TrustRegionCLResults) -> list[Claim]:
    """The claims table, verdicts computed from the measured numbers (criteria in the functions above)."""
    cfg, s = results.config, results.summary
    n, k = len(cfg.seeds), len(cfg.tasks)
    setting = f"{k} tasks, {cfg.n_steps_per_task} steps each, {n} seeds; mean ± sd"
    against = "verdict against " + ", ".join(METHODS[m].label for m in NAMED_BASELINES) + " (fine-tuning: reference)"
    cos = [c["mean"] for c in s["maml"]["cos_maml"]]
    steps = lambda st: f"{st['mean']:.1f} ± {st['sd']:.1f}"  # noqa: E731
    return [
        Claim(
            "best final performance (sample quality of every task after the whole sequence)",
            f"{setting}; sliced Wasserstein distance to real samples, mean over tasks (lower is better); {against}",
            _measured(results, "sequence", "final_swd"),
            comparison_verdict(
                _outcomes(results, "sequence", "final_swd", SWD_MARGIN, NAMED_BASELINES), "final sample quality"
            ),
        ),
        Claim(
            "best retention of earlier tasks",
            f"{setting}; forgetting = final SWD − SWD right after learning the task, mean over tasks 1..{k - 1}; "
            f"{against}",
            _measured(results, "sequence", "forgetting"),
            comparison_verdict(_outcomes(results, "sequence", "forgetting", SWD_MARGIN, NAMED_BASELINES), "forgetting"),
        ),
        Claim(
            "recovers early-task performance faster (re-convergence)",
            f"{setting}; fine-tuning steps until a task's held-out loss is within {cfg.reconverge_tol:.0%} of its "
            f"value right after it was learned (at most {cfg.reconverge_max_steps}), mean over tasks 1..{k - 1}; "
            f"{against}",
            _measured(results, "reconvergence", "steps", steps),
            reconvergence_verdict(
                _outcomes(results, "reconvergence", "steps", STEPS_MARGIN, NAMED_BASELINES),
                s["reconvergence"]["methods"]["trcl"]["fraction_at_start"],
            ),
        ),
        Claim(
            "under local approximations the update is MAML-like, with a single implicit inner step",
            f"last task switch, TR-CL anchors of {n} seeds; λ = "
            + ", ".join(f"{v:g}" for v in s["maml"]["lambdas"])
            + "; cosine of the trust-region step with the one-step update −D⁻¹∇L",
            ", ".join(f"{c['mean']:.2f} ± {c['sd']:.2f}" for c in s["maml"]["cos_maml"])
            + f" (the step TR-CL took in training: {_pm(s['maml']['trained_trcl']['cos_maml'])})",
            maml_verdict(cos),
        ),
        Claim(
            "(our control) the Fisher metric matters, not only the pull towards the anchor",
            f"{setting}; TR-CL against {METHODS[CONTROL].label}, final SWD",
            f"TR-CL {_pm(s['sequence']['methods']['trcl']['final_swd'])}; "
            f"isotropic {_pm(s['sequence']['methods'][CONTROL]['final_swd'])}",
            control_verdict(_outcomes(results, "sequence", "final_swd", SWD_MARGIN, (CONTROL,))[CONTROL]),
        ),
    ]


def plasticity_sentence(results: TrustRegionCLResults) -> str:
    """Whether TR-CL's retention is bought with stiffness: its last task's quality against fine-tuning's."""
    m = results.summary["sequence"]["methods"]
    tr, ft = m["trcl"]["last_task_swd"], m["finetune"]["last_task_swd"]
    verb = (
        "learns the last task about as well as"
        if tr["mean"] <= ft["mean"] + max(ft["sd"], 0.02)
        else "learns the last task worse than"
    )
    return f"TR-CL {verb} fine-tuning (SWD on the last task {_pm(tr)} against {_pm(ft)}), so its retention is " + (
        "not bought with stiffness."
        if verb.startswith("learns the last task about")
        else "partly bought with stiffness."
    )


def maml_sentence(results: TrustRegionCLResults) -> str:
    """What the MAML table says, and what it does not: the limit is algebra; the step training
    actually took (Adam, stochastic batches) is the part that could have come out otherwise."""
    m = results.summary["maml"]
    cos, lam = m["cos_maml"][-1]["mean"], m["lambdas"][-1]
    first = f"At the tightest trust region (λ = {lam:g}) the step's cosine with the one-step update is {cos:.3f}" + (
        ", as the implicit-step equation says it must become for any smooth loss"
        if cos >= COSINE_THRESHOLD
        else ", short of the limit the implicit-step equation predicts"
    )
    if m["trust_lambda"] in m["lambdas"]:
        at = m["cos_maml"][m["lambdas"].index(m["trust_lambda"])]["mean"]
        first += f"; at the strength TR-CL trains with (λ = {m['trust_lambda']:g}) it is {at:.3f}"
    tr, rp = m["trained_trcl"]["cos_maml"], m["trained_replay"]["cos_maml"]
    second = (
        ". The step that training really took on the last task (Adam, stochastic batches, "
        f"{results.config.n_steps_per_task} steps) has cosine {_pm(tr)} with the same one-step update"
        + (
            " (far from 1: the update TR-CL really makes is not that one preconditioned step)"
            if tr["mean"] < COSINE_THRESHOLD
            else " (close to 1)"
        )
        + "; "
        f"for generative replay, which has no penalty, the same cosine (with its own anchor and Fisher) is {_pm(rp)}"
    )
    verdict = compare([-v for v in tr["per_seed"]], [-v for v in rp["per_seed"]], COSINE_MARGIN)
    third = {
        "win": ", so the real TR-CL step is closer to the one-step update than a step without the trust region.",
        "tie": ", so on this number the real TR-CL step is not closer to the one-step update than a step without "
        "the trust region.",
        "loss": ", so the real TR-CL step is further from the one-step update than a step without the trust region.",
    }[verdict]
    return first + second + third


def ewc_sentence(results: TrustRegionCLResults) -> str:
    """TR-CL is EWC plus replay (same penalty, same strength): what replay added, from the final SWD and forgetting."""
    methods = results.summary["sequence"]["methods"]
    quality = compare(methods["trcl"]["final_swd"]["per_seed"], methods["ewc"]["final_swd"]["per_seed"], SWD_MARGIN)
    forget = compare(methods["trcl"]["forgetting"]["per_seed"], methods["ewc"]["forgetting"]["per_seed"], SWD_MARGIN)
    words = {"win": "better than", "tie": "within the margin of", "loss": "worse than"}
    return (
        f"TR-CL is EWC plus replay, with the same penalty and strength. Its final sample quality is {words[quality]} "
        f"EWC's, and its forgetting {words[forget]} EWC's: "
        + (
            "at this scale replay adds little on top of the Fisher penalty."
            if quality == "tie" and forget == "tie"
            else "replay changes the outcome measurably on at least one of the two."
        )
    )


def reconvergence_sentence(results: TrustRegionCLResults) -> str:
    """How much of re-convergence is retention: the share of (task, seed) runs back within tolerance at step 0."""
    rec = results.summary["reconvergence"]["methods"]
    shares = ", ".join(f"{METHODS[m].label} {rec[m]['fraction_at_start']:.0%}" for m in ("trcl", *BASELINES))
    return (
        "Re-convergence as measured here mixes two things: how much was retained, and how fast the rest comes "
        f"back. The share of (task, seed) runs already within tolerance before any fine-tuning step: {shares}."
    )


def results_table(results: TrustRegionCLResults) -> str:
    """Every method's numbers (mean ± sd over seeds): the table under the claims."""
    seq, rec = results.summary["sequence"]["methods"], results.summary["reconvergence"]["methods"]
    rows = []
    for m in TRAINED:
        rows.append(
            [
                METHODS[m].label,
                _pm(seq[m]["final_swd"]),
                _pm(seq[m]["forgetting"]),
                _pm(seq[m]["first_task_forgetting"]),
                _pm(seq[m]["final_loss"]),
                f"{rec[m]['steps']['mean']:.1f} ± {rec[m]['steps']['sd']:.1f}",
                str(rec[m]["n_censored"]),
            ]
        )
    header = [
        "method",
        "final SWD",
        "forgetting",
        "forgetting, task 1",
        "held-out loss",
        "re-convergence steps",
        "runs not back in time",
    ]
    return table(header, rows)


def maml_table(results: TrustRegionCLResults) -> str:
    """The MAML reading per trust-region strength."""
    s = results.summary["maml"]
    rows = [
        [f"{lam:g}", _pm(a), _pm(b), f"{c['mean']:.2e}"]
        for lam, a, b, c in zip(s["lambdas"], s["cos_maml"], s["cos_gradient"], s["step_norm"], strict=True)
    ]
    for key, label in (("trained_trcl", "TR-CL as trained"), ("trained_replay", "generative replay as trained")):
        t = s[key]
        rows.append([label, _pm(t["cos_maml"]), _pm(t["cos_gradient"]), f"{t['step_norm']['mean']:.2e}"])
    return table(
        ["λ", "cos(step, −D⁻¹∇L) (one-step MAML inner update)", "cos(step, −∇L) (plain gradient)", "|step|"], rows
    )
