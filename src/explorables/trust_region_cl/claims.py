"""The chapter's tables: what we verified (checks), what the setup can show (gates), the paper's claims.

Every threshold is a module constant below and every verdict function is declared in
:data:`CRITERIA`, with synthetic inputs that reach each of its branches (the contract test drives
them). Claims are decided on the interval (95% t-interval: mean ± t·se) of per-seed paired differences
(:mod:`explorables.core.verdicts`): members with the same seed start from the same weights and see
the same batches, so methods are compared seed by seed. Lower is better for every number compared
(sliced Wasserstein distance, forgetting, steps), so an *advantage* is the baseline's value minus
TR-CL's.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..core.tables import Claim, checks_table  # noqa: F401 - what the notebook imports
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from ..core.tables import markdown_table as table
from ..core.verdicts import Criterion, compare, fmt_mean_sd, gate, interval, scope_verdict
from .continual import BASELINES, CONTROL, METHODS
from .experiment import TRAINED, TrustRegionCLResults

# --- thresholds: the one declared place ---------------------------------------------------------
#: a difference of final SWD or forgetting counts when its interval clears this (about the seed-to-seed sd of a
#: method's mean final SWD in our first runs) ...
SWD_MARGIN = 0.03
#: ... and a difference of re-convergence steps when it clears this (about two loss checks)
STEPS_MARGIN = 5.0
#: check: the MAML reading's cosine rises with λ and reaches this at the tightest trust region
COSINE_THRESHOLD = 0.9
#: trained-step cosines (TR-CL against replay) count as different when their interval clears this
COSINE_MARGIN = 0.05
#: check: the multiplier found by dual ascent holds TR-CL's Fisher distance to its anchor within this relative band
#: of the radius at the end of every task (mean over tasks 2..K, every seed)
RADIUS_BAND = 0.1
#: gate "forgetting": on every seed fine-tuning forgets at least this much (SWD) ...
FORGET_GATE = 0.1
#: ... and generative replay alone still forgets at least the margin (interval over seeds), so a better method has
#: room
REPLAY_ROOM = SWD_MARGIN
#: gate "relearning": at most this share of the compared methods' (task, seed) runs is already within tolerance
#: before any fine-tuning step (interval over seeds), so re-convergence measures coming back, not retention
RELEARN_MAX = 0.5
#: the baselines the abstract names (EWC, replay, continual meta-learning): the verdicts on "best" / "faster" count
#: only these. Fine-tuning, which protects nothing, is shown for reference.
NAMED_BASELINES: tuple[str, ...] = ("ewc", "replay", "reptile")


def _iv(values: Sequence[float] | np.ndarray, digits: int = 3) -> str:
    return interval(values).format(digits, signed=True)


def _paired(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    x, y = np.asarray(a, float), np.asarray(b, float)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"candidate and baseline must be paired per seed, got shapes {x.shape} and {y.shape}")
    return x - y


def paired_outcome(candidate: Sequence[float], baseline: Sequence[float], margin: float) -> str:
    """ "win", "loss" or "tie" for ``candidate`` against ``baseline``, lower being better, on the interval of the
    per-seed paired difference: a win when the interval of ``baseline - candidate`` clears ``margin``, a loss when
    that of ``candidate - baseline`` does, a tie (not clearly different) otherwise. Used by the page's sentences."""
    if compare(_paired(baseline, candidate), margin) == "yes":
        return "win"
    if compare(_paired(candidate, baseline), margin) == "yes":
        return "loss"
    return "tie"


# --- check --------------------------------------------------------------------------------------


def maml_check(cosines: Sequence[float], threshold: float = COSINE_THRESHOLD) -> str:
    """pass: the cosine of the trust-region step with the one-step update never falls as λ grows and reaches
    ``threshold`` at the tightest; fail otherwise.

    The limit is first-order Taylor algebra: for any smooth loss the exact trust-region step turns into the
    one-step update as λ grows (a test shows it on random data and a random metric). So it checks our reading and
    our solver on the trained model; it is not evidence that TR-CL behaves like a meta-learner.
    """
    grows = all(b >= a - 1e-9 for a, b in itertools.pairwise(cosines)) and cosines[-1] > cosines[0]
    if grows and cosines[-1] >= threshold:
        return f"pass: the cosine rises with λ and reaches {cosines[-1]:.3f} ≥ {threshold} at the tightest"
    if not grows:
        return "fail: the cosine does not rise steadily as the trust region tightens"
    return f"fail: the cosine rises with λ but stays at {cosines[-1]:.3f} < {threshold}"


def radius_check(ratios: Sequence[float], band: float = RADIUS_BAND) -> str:
    """pass: on every seed TR-CL's Fisher distance to the anchor at the end of a task, over its radius, lies within
    ``band`` of 1 (the multiplier found per task makes the constraint active and met); fail otherwise (the region
    is not reached, so TR-CL is replay, or the multiplier does not hold the radius)."""
    lo, hi = min(ratios), max(ratios)
    if 1 - band <= lo and hi <= 1 + band:
        return f"pass: distance / radius in [{lo:.3f}, {hi:.3f}], within {band:g} of 1 on every seed"
    return f"fail: distance / radius in [{lo:.3f}, {hi:.3f}], not within {band:g} of 1 on every seed"


# --- gates --------------------------------------------------------------------------------------


def forgetting_gate(finetune: Sequence[float], replay: Sequence[float], threshold: float = FORGET_GATE,
                    room: float = REPLAY_ROOM) -> str:
    """pass: on every seed fine-tuning forgets at least ``threshold``, and the interval over seeds of generative
    replay's forgetting clears ``room`` (there is forgetting to prevent, and replay alone does not already prevent
    it); fail otherwise."""
    ft, rp = gate(finetune, threshold, rule="every seed"), gate(replay, room)
    if ft == rp == "pass":
        return f"pass: fine-tuning forgets ≥ {threshold} on every seed; replay forgets {_iv(replay)}, ≥ {room}"
    why = []
    if ft == "fail":
        why.append(f"fine-tuning forgets < {threshold} on some seed (lowest {min(finetune):.3f})")
    if rp == "fail":
        why.append(f"replay alone forgets {_iv(replay)}, not clearly ≥ {room}: no room left")
    return "fail: " + "; ".join(why)


def relearning_gate(at_start: Sequence[float], threshold: float = RELEARN_MAX) -> str:
    """pass: the interval of the per-seed share of runs already within tolerance before any step lies at or below
    ``threshold``; fail otherwise (re-convergence would mostly measure retention)."""
    word = gate(at_start, threshold, direction="below")
    how = "at or below" if word == "pass" else "not clearly at or below"
    return f"{word}: share within tolerance at step 0 {_iv(at_start, 2)}, {how} {threshold}"


def fair_control_gate(iso_minus_replay: Sequence[float], margin: float = SWD_MARGIN) -> str:
    """pass: the isotropic control, its radius tuned like TR-CL's, is a real competitor: its final SWD is not clearly
    worse than generative replay's (the same method with no constraint at all), i.e. the interval over seeds of
    the paired difference does not lie wholly above ``margin``; fail otherwise (beating a control that any
    constraint makes worse shows little)."""
    word = "fail" if compare(iso_minus_replay, margin) == "yes" else "pass"
    how = "not clearly worse than" if word == "pass" else "clearly worse than"
    return f"{word}: isotropic minus replay {_iv(iso_minus_replay)}, {how} no constraint by {margin}"


# --- claims -------------------------------------------------------------------------------------


def comparison_verdict(advantages: Mapping[str, Sequence[float]], margin: float, what: str) -> str:
    """TR-CL is best on ``what``: per named baseline, the interval of its per-seed advantage (baseline minus TR-CL)
    against ``margin`` (yes: ahead; no: not ahead by the margin; unclear: straddles it), joined over the baselines
    (:func:`~explorables.core.verdicts.scope_verdict`: ahead of some only is partly; ahead of none is no)."""
    parts = {METHODS[m].label if m in METHODS else m: compare(a, margin) for m, a in advantages.items()}
    return scope_verdict(parts, f"TR-CL ahead on {what} by ≥ {margin:g}")


def control_verdict(advantage: Sequence[float], margin: float = SWD_MARGIN) -> str:
    """The Fisher metric matters: the interval of TR-CL's per-seed advantage in final SWD over the same method with
    an isotropic metric of equal trace, against ``margin``: yes (ahead), no (not ahead by the margin), unclear."""
    word = compare(advantage, margin)
    how = {"yes": "clears", "no": "falls short of", "unclear": "straddles"}[word]
    return f"{word}: TR-CL's advantage over the isotropic trust region, {_iv(advantage)}, {how} {margin}"


_HI, _LO, _MID = (0.10, 0.11, 0.09), (0.0, 0.01, -0.01), (-0.1, 0.05, 0.2)
_NAMED = ("ewc", "replay", "reptile")

CRITERIA: tuple[Criterion, ...] = (
    Criterion("maml", "check", maml_check, COSINE_THRESHOLD, "cosine rises with λ and reaches 0.9 at the tightest",
              {"pass": (([0.3, 0.6, 0.95],), {}), "fail": (([0.3, 0.6, 0.8],), {})}),
    Criterion("radius", "check", radius_check, RADIUS_BAND, "every seed: distance / radius within 0.1 of 1",
              {"pass": (([0.98, 1.02, 1.05],), {}), "fail": (([0.4, 0.5, 0.45],), {})}),
    Criterion("forgetting", "gate", forgetting_gate, FORGET_GATE,
              "every seed: fine-tuning forgets >= 0.1 SWD; interval of replay's forgetting >= 0.03",
              {"pass": (([0.3, 0.2, 0.4], [0.10, 0.11, 0.09]), {}),
               "fail": (([0.3, 0.2, 0.4], [0.05, 0.0, 0.06]), {})}),
    Criterion("relearning", "gate", relearning_gate, RELEARN_MAX,
              "interval of the share of runs within tolerance at step 0 <= 0.5",
              {"pass": (([0.2, 0.25, 0.3],), {}), "fail": (([0.9, 0.95, 1.0],), {})}),
    Criterion("fair control", "gate", fair_control_gate, SWD_MARGIN,
              "interval of isotropic minus replay final SWD not wholly above 0.03",
              {"pass": ((_LO,), {}), "fail": ((_HI,), {})}),
    Criterion("best", "claim", comparison_verdict, SWD_MARGIN,
              "per named baseline, interval of its final SWD (or forgetting, or steps) minus TR-CL's vs the margin",
              {"yes": ((dict.fromkeys(_NAMED, _HI), SWD_MARGIN, "x"), {}),
               "no": ((dict.fromkeys(_NAMED, _LO), SWD_MARGIN, "x"), {}),
               "unclear": ((dict.fromkeys(_NAMED, _MID), SWD_MARGIN, "x"), {}),
               "partly": ((dict(dict.fromkeys(_NAMED, _LO), ewc=_HI), SWD_MARGIN, "x"), {})}, scoped=True),
    Criterion("control", "claim", control_verdict, SWD_MARGIN,
              "interval of isotropic minus TR-CL final SWD vs 0.03",
              {"yes": ((_HI,), {}), "no": ((_LO,), {}), "unclear": ((_MID,), {})}),
)


def _pm(stats: dict, digits: int = 3) -> str:
    return fmt_mean_sd(stats["per_seed"], digits)


def _measured(results: TrustRegionCLResults, part: str, key: str, digits: int = 3) -> str:
    methods = results.summary[part]["methods"]
    return "; ".join(f"{METHODS[m].label} {_pm(methods[m][key], digits)}" for m in ("trcl", *BASELINES))


def _advantages(results: TrustRegionCLResults, part: str, key: str,
                against: tuple[str, ...] = NAMED_BASELINES) -> dict[str, np.ndarray]:
    methods = results.summary[part]["methods"]
    return {m: _paired(methods[m][key]["per_seed"], methods["trcl"][key]["per_seed"]) for m in against}


def _adv_text(adv: Mapping[str, np.ndarray]) -> str:
    return "advantage " + ", ".join(f"over {METHODS[m].label} {_iv(a)}" for m, a in adv.items())


def claims(results: TrustRegionCLResults) -> list[Claim]:
    """The checks, gates and claims (criteria in :data:`CRITERIA`)."""
    cfg, s = results.config, results.summary
    n, k = len(cfg.seeds), len(cfg.tasks)
    seq, rec = s["sequence"]["methods"], s["reconvergence"]["methods"]
    setting = f"{k} tasks, {cfg.n_steps_per_task} steps each, {n} seeds; mean ± sd"
    against = "verdict against " + ", ".join(METHODS[m].label for m in NAMED_BASELINES) + " (fine-tuning: reference)"
    cos = [c["mean"] for c in s["maml"]["cos_maml"]]
    at_start = np.mean([rec[m]["fraction_at_start_per_seed"] for m in ("trcl", *NAMED_BASELINES)], axis=0)
    iso_minus_replay = _paired(seq[CONTROL]["final_swd"]["per_seed"], seq["replay"]["final_swd"]["per_seed"])
    final_adv = _advantages(results, "sequence", "final_swd")
    forget_adv = _advantages(results, "sequence", "forgetting")
    steps_adv = _advantages(results, "reconvergence", "steps")
    control_adv = _advantages(results, "sequence", "final_swd", (CONTROL,))[CONTROL]
    return [
        Claim(
            "the MAML reading's limit: as λ grows the trust-region step turns into the one-step update −D⁻¹∇L "
            "(holds for any smooth loss; checks our algebra and solver, not that TR-CL meta-learns)",
            f"last task switch, TR-CL anchors of {n} seeds; λ = " + ", ".join(f"{v:g}" for v in s["maml"]["lambdas"]),
            ", ".join(f"{c['mean']:.2f} ± {c['sd']:.2f}" for c in s["maml"]["cos_maml"])
            + f" (the step TR-CL took in training: {_pm(s['maml']['trained_trcl']['cos_maml'])})",
            maml_check(cos), kind="check",
        ),
        Claim(
            "the multiplier found per task holds TR-CL on its trust region's boundary: Fisher distance to the anchor "
            "= radius at the end of each task",
            f"TR-CL, radius {cfg.trust_radius:g}, dual ascent (η = {cfg.dual_lr:g}); distance / radius at the end "
            f"of tasks 2..{k}, mean per seed; multiplier λ found, mean over tasks",
            f"distance / radius {_pm(seq['trcl']['distance_ratio'])}; λ {_pm(seq['trcl']['multiplier'], 1)}",
            radius_check(seq["trcl"]["distance_ratio"]["per_seed"]), kind="check",
        ),
        Claim(
            "there is forgetting to prevent, and replay alone does not prevent it",
            f"{setting}; forgetting = final SWD − SWD right after learning the task, mean over tasks 1..{k - 1}",
            f"fine-tuning {_pm(seq['finetune']['forgetting'])}; generative replay {_pm(seq['replay']['forgetting'])}",
            forgetting_gate(seq["finetune"]["forgetting"]["per_seed"], seq["replay"]["forgetting"]["per_seed"]),
            kind="gate", name="forgetting",
        ),
        Claim(
            "re-convergence measures coming back, not retention",
            f"share of (task, seed) runs within {cfg.reconverge_tol:.0%} of the post-learning loss before any "
            "fine-tuning step, TR-CL and the named baselines, per seed",
            ", ".join(f"{METHODS[m].label} {rec[m]['fraction_at_start']:.0%}" for m in ("trcl", *NAMED_BASELINES)),
            relearning_gate(at_start), kind="gate", name="relearning",
        ),
        Claim(
            "the isotropic control is a real competitor (no worse than no pull at all)",
            f"{setting}; {METHODS[CONTROL].label}, radius {cfg.iso_radius:g} (tuned like TR-CL's), against "
            "generative replay (the same method without any constraint), final SWD, paired by seed",
            f"isotropic {_pm(seq[CONTROL]['final_swd'])}; replay {_pm(seq['replay']['final_swd'])}",
            fair_control_gate(iso_minus_replay), kind="gate", name="fair control",
        ),
        Claim(
            "best final performance (sample quality of every task after the whole sequence)",
            f"{setting}; sliced Wasserstein distance to real samples, mean over tasks (lower is better); {against}",
            _measured(results, "sequence", "final_swd") + "; " + _adv_text(final_adv),
            comparison_verdict(final_adv, SWD_MARGIN, "final sample quality"), gates=("forgetting",),
        ),
        Claim(
            "best retention of earlier tasks",
            f"{setting}; forgetting = final SWD − SWD right after learning the task, mean over tasks 1..{k - 1}; "
            f"{against}",
            _measured(results, "sequence", "forgetting") + "; " + _adv_text(forget_adv),
            comparison_verdict(forget_adv, SWD_MARGIN, "forgetting"), gates=("forgetting",),
        ),
        Claim(
            "recovers early-task performance faster (re-convergence)",
            f"{setting}; fine-tuning steps until a task's held-out loss is within {cfg.reconverge_tol:.0%} of its "
            f"value right after it was learned (at most {cfg.reconverge_max_steps}), mean over tasks 1..{k - 1}; "
            f"{against}",
            _measured(results, "reconvergence", "steps", 1) + "; " + _adv_text(steps_adv),
            comparison_verdict(steps_adv, STEPS_MARGIN, "re-convergence steps"), gates=("forgetting", "relearning"),
        ),
        Claim(
            "(our control) the Fisher metric matters, not only the pull towards the anchor",
            f"{setting}; TR-CL against {METHODS[CONTROL].label}, final SWD, paired by seed",
            f"TR-CL {_pm(seq['trcl']['final_swd'])}; isotropic {_pm(seq[CONTROL]['final_swd'])}",
            control_verdict(control_adv), gates=("forgetting", "fair control"),
        ),
    ]


def plasticity_sentence(results: TrustRegionCLResults) -> str:
    """Whether TR-CL's retention is bought with stiffness: its last task's quality against fine-tuning's, paired by
    seed (worse: the interval of TR-CL minus fine-tuning clears :data:`SWD_MARGIN`)."""
    m = results.summary["sequence"]["methods"]
    tr, ft = m["trcl"]["last_task_swd"], m["finetune"]["last_task_swd"]
    worse = paired_outcome(tr["per_seed"], ft["per_seed"], SWD_MARGIN) == "loss"
    verb = "learns the last task worse than" if worse else "learns the last task not clearly worse than"
    return (f"TR-CL {verb} fine-tuning (SWD on the last task {_pm(tr)} against {_pm(ft)}), so its retention is "
            + ("partly bought with stiffness." if worse else "not clearly bought with stiffness."))


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
        first += f"; at the penalty form's strength (λ = {m['trust_lambda']:g}) it is {at:.3f}"
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
    verdict = paired_outcome([-v for v in tr["per_seed"]], [-v for v in rp["per_seed"]], COSINE_MARGIN)
    third = {
        "win": ", so the real TR-CL step is closer to the one-step update than a step without the trust region.",
        "tie": ", so on this number the real TR-CL step is not closer to the one-step update than a step without "
        "the trust region.",
        "loss": ", so the real TR-CL step is further from the one-step update than a step without the trust region.",
    }[verdict]
    return first + second + third


def penalty_sentence(results: TrustRegionCLResults) -> str:
    """The constraint against the penalty form (EWC's fixed-λ penalty plus the same replay): final SWD and
    forgetting, paired by seed."""
    methods = results.summary["sequence"]["methods"]
    quality = paired_outcome(methods["trcl"]["final_swd"]["per_seed"],
                             methods["trcl_penalty"]["final_swd"]["per_seed"], SWD_MARGIN)
    forget = paired_outcome(methods["trcl"]["forgetting"]["per_seed"],
                            methods["trcl_penalty"]["forgetting"]["per_seed"], SWD_MARGIN)
    words = {"win": "better than", "tie": "not clearly different from", "loss": "worse than"}
    return (
        f"Against the penalty form (EWC's penalty with λ = {results.config.ewc_lambda:g} plus the same replay), "
        f"the constraint's final sample quality ({_pm(methods['trcl']['final_swd'])} against "
        f"{_pm(methods['trcl_penalty']['final_swd'])}) is {words[quality]} the penalty's, and its forgetting "
        f"({_pm(methods['trcl']['forgetting'])} against {_pm(methods['trcl_penalty']['forgetting'])}) "
        f"{words[forget]} the penalty's."
    )


def reconvergence_sentence(results: TrustRegionCLResults) -> str:
    """How much of re-convergence is retention: the share of (task, seed) runs back within tolerance at step 0."""
    rec = results.summary["reconvergence"]["methods"]
    shares = ", ".join(f"{METHODS[m].label} {rec[m]['fraction_at_start']:.0%}" for m in ("trcl", *BASELINES))
    return (
        "Re-convergence as measured here mixes two things: how much was retained, and how fast the rest comes "
        f"back. The share of (task, seed) runs already within tolerance before any fine-tuning step: {shares}."
    )


#: the committed record of the radius tuning (``benchmarks/tune_trust_region_cl.py``, tuning base seeds 100 and 101)
TUNING_FILE = Path(__file__).resolve().parents[3] / "data" / "trust_region_cl_tuning.json"


def tuning_table(path: Path | str = TUNING_FILE) -> str:
    """The radius tuning, from its committed record: mean final SWD per radius and metric (tuning base seeds only,
    the same grid and runs for both metrics), and the radius each metric got."""
    if not Path(path).is_file():
        return f"(the tuning record {Path(path).name} is not part of this copy: see the repository's data/ folder)"
    record = json.loads(Path(path).read_text())
    radii, mean, best = record["radii"], record["mean_final_swd"], record["best"]
    rows = [[f"{r:g}"] + [f"{mean[f'{m}@{r:g}']:.3f}" + (" ←" if best[m] == r else "") for m in ("trcl", "trcl_iso")]
            for r in radii]  # fmt: skip
    rows.append(["no constraint (replay)", f"{mean['replay']:.3f}", f"{mean['replay']:.3f}"])
    note = (f"base seeds {', '.join(map(str, record['base_seeds']))}, {record['seeds_per_base']} seeds each, "
            f"{record['n_steps_per_task']} steps per task, replay buffer {record['n_replay']}")  # fmt: skip
    return table(["radius", "TR-CL (Fisher metric)", "isotropic metric"], rows) + f"\n\n({note}; ← the pick)"


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
                _pm(rec[m]["steps"], 1),
                str(rec[m]["n_censored"]),
                _pm(seq[m]["multiplier"], 1) if METHODS[m].metric != "none" else "–",
                _pm(seq[m]["distance_ratio"]) if METHODS[m].metric != "none" and METHODS[m].penalty == "constraint"
                else "–",
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
        "λ at task end",
        "distance / radius",
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
