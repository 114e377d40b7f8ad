"""The chapter's claims table (Claims kit 3): five checks, four gates, the paper's claims.

Every verdict is decided by the book-wide rules of :mod:`explorables.core.verdicts` on per-seed
values (95% t-interval: mean ± t·se over seeds, paired by seed where two arms share the data draws).
The thresholds are the module-level constants below, declared once with :data:`CRITERIA`; they were
fixed before the comparisons were computed. Added in review, after results had been seen (the page's
folded box says so): the motion gate's probe, the motion claim's part "above chance", the control's
part "MCC − chance below the margin", and the check on the chance level's own error.

Every chance level is the median MCC of random rotations of the arm's **whitened** targets
(:func:`~explorables.crl.experiment.chance_level`).

* **checks** (ours): the metric reads 1 for a permuted, rescaled copy of the true latents; every
  chance level's own standard error is at most :data:`CHANCE_SE` (a tenth of the margin);
* **gate** ``ivae``: in iVAE's own setting (latents without edges, independent given the environment,
  whose noise scales change across environments; the factorised prior) the learner recovers the
  latents by at least :data:`ABOVE_CHANCE` above the chance level, on every seed: without that, our
  budget cannot show identification at all, and the synthetic claims read ``untested``;
* **gate** ``causal``: the causal prior's positive control, fixed before it was first run: the
  causal-prior learner on the ``ivae`` gate's edge-free data (truth lambda = 0, inside the causal prior's
  class) recovers the latents by at least :data:`ABOVE_CHANCE` above chance on every seed. ``ivae``
  certifies only the factorised learner; without this gate a causal-prior shortfall could be the
  causal-prior learner's own, and the claims that train the causal prior read ``untested``;
* **gate** ``rotation`` (the rotation lens, fixed before it was first computed): the score can tell a
  recovery from a rotation. For every arm and seed, the :data:`~explorables.crl.experiment.ROTATION_QUANTILE`
  quantile of the rotations' MCC behind the chance level stays below chance + :data:`ABOVE_CHANCE` (a
  learner that identifies nothing beyond a linear map is read as recovered in fewer than 5% of its draws),
  and the true latents (MCC 1) clear it;
* **gate** ``motion``: a positive control that does not score the method under test: a supervised
  probe (cubic ridge regression, fitted on half the samples) reads the angles from the stick-figure
  coordinates at least :data:`ABOVE_CHANCE` above chance on every seed, so the observations hold
  the angles at this sample size;
* three **checks** of the exact lens (:mod:`~explorables.crl.lens`), checks and not claims because with
  the mixing known the gap has a closed form (the page's eq. crl-gap-closed; a test checks it): the
  flow's log-determinant agrees with autograd's; with every influence fixed and nothing to absorb the
  removal (phi = 0), deleting any edge costs at least :data:`LENS_GAP` nats per sample on every seed;
  per pattern, a gap of at least :data:`LENS_GAP` on every changing edge and an interval below
  :data:`LENS_TOL` on every fixed one (thresholds set after one preliminary run on three seeds, as the
  page's folded box says);
* **claims**: identification with all influences changing (no when the interval of MCC − chance
  averaged over components lies below the margin, else per component: :func:`identification_verdict`;
  this rule was set after seeing seed studies, in two steps the page's folded box lists), the causal
  prior against the
  baselines (per baseline; it stands only when the causal prior recovers at least some components), partial
  identifiability (per pattern: identifiable ones recovered, the fixed edge's child's learned latent
  drawing on its parents more than in the all-change run), the no-change control (per child: the
  same parent gain; both stand only behind a yes of the all-change claim, :func:`behind_identification`),
  the post-nonlinear extension (per component), the motion case
  (above chance first, then against the plain VAE; gated by ``motion`` and by ``ivae``, since it
  uses the same learner).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.tables import Claim, apply_gates
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from ..core.tables import markdown_table as table
from ..core.verdicts import Criterion, compare, first_word, fmt_mean_sd, gate, interval, scope_verdict
from .experiment import CAUSAL_CHECK, IVAE_CHECK, ROTATION_QUANTILE, CRLResults
from .metrics import matched_correlations
from .scm import default_graph, make_data, make_scm

#: a target is *recovered* when its MCC exceeds the chance level of a random rotation of the same
#: targets by at least this (paired by seed): the gates on every seed, the claims on the interval
ABOVE_CHANCE = 0.15
#: one prior beats another when the paired per-seed MCC gain's interval clears this
MARGIN = 0.05
#: the earlier rule for a predicted non-identifiable component (a paired MCC drop from the all-change run
#: by this); the verdicts now read the parent gain (:data:`PARENT_GAIN`), the page's history cites it
GAP = 0.1
#: a child is *not pinned to itself* when the R² gain from its true parents of the learned latent matched
#: to it (:func:`~explorables.crl.experiment.parent_gains`) rises, paired by seed against the all-change
#: run, by an interval clearing this (fixed before the gains were first computed)
PARENT_GAIN = 0.1
#: the metric check: MCC of a permuted, rescaled copy must be 1 within this
METRIC_TOL = 1e-9
#: the chance-level check: each chance level's own standard error (over the rotations) at most this
CHANCE_SE = ABOVE_CHANCE / 10
#: the exact lens: removing an edge *costs* likelihood when its held-out gap (nats per sample) is at
#: least this: the lens's gate on every seed and edge (phi = 0), the claim on the interval over seeds
LENS_GAP = 0.05
#: ... and is *free* when the interval of its gap lies below this
LENS_TOL = 0.02
#: the flow check: analytic and autograd log-determinants agree within this
FLOW_TOL = 1e-8


def _every_part(words: Sequence[str], unit: str) -> str:
    """A pattern's word: yes when every part reads yes, no when any reads no, unclear otherwise."""
    if not words:
        raise ValueError(f"a pattern needs at least one {unit}, got none")
    return "yes" if all(w == "yes" for w in words) else "no" if "no" in words else "unclear"


def _iv(values: Sequence[float]) -> str:
    return interval(values).format(signed=True)


# --- verdict functions (pure, driven by CRITERIA with synthetic numbers) ---------------------------


def metric_check(error: float, tol: float = METRIC_TOL) -> str:
    """pass when the MCC of a permuted, rescaled copy of the latents is 1 within ``tol``."""
    word = "pass" if error <= tol else "fail"
    return f"{word}: |MCC − 1| = {error:.1e} vs {tol:.0e}"


def chance_check(max_se: float, tol: float = CHANCE_SE) -> str:
    """pass when the largest standard error of any chance level (bootstrap over its rotations) is at most ``tol``."""
    word = "pass" if max_se <= tol else "fail"
    return f"{word}: largest standard error of a chance level {max_se:.4f} vs {tol:.3f}"


def flow_verdict(error: float, tol: float = FLOW_TOL) -> str:
    """pass when the flow's analytic log-determinant, and the alternative's (flow after the shear), agree
    with autograd's within ``tol``."""
    word = "pass" if error <= tol else "fail"
    return f"{word}: largest |log-det − autograd| = {error:.1e} vs {tol:.0e}"


def lens_gate(gaps: Mapping[str, Sequence[float]], threshold: float = LENS_GAP) -> str:
    """pass when removing each edge with nothing to absorb it (phi = 0) costs at least ``threshold``
    nats per sample on every seed: the lens sees a missing edge."""
    words = {e: gate(v, threshold, rule="every seed") for e, v in gaps.items()}
    if not words:
        raise ValueError("gaps must name at least one edge, got none")
    bad = [e for e, w in words.items() if w == "fail"]
    word = "fail" if bad else "pass"
    return f"{word}: gap ≥ {threshold} nats on every seed for " + ("every edge" if not bad else f"not {', '.join(bad)}")


def lens_word(
    changing: Sequence[Sequence[float]], fixed: Sequence[Sequence[float]], gap: float = LENS_GAP, tol: float = LENS_TOL
) -> str:
    """One pattern follows the theory (yes) when every changing edge's gap interval clears ``gap`` and
    every fixed edge's gap interval lies below ``tol``; no when any reads no; unclear otherwise."""
    return _every_part([compare(v, gap) for v in changing] + [compare(v, tol, "below") for v in fixed], "edge")


def lens_check(
    patterns: Mapping[str, tuple[Sequence[Sequence[float]], Sequence[Sequence[float]]]],
    gap: float = LENS_GAP,
    tol: float = LENS_TOL,
) -> str:
    """A check, not a claim: with the mixing known and the model class of eq. (crl-anm), the gap has the
    closed form of eq. (crl-gap-closed), so the lens verifies our generator and fitting against the
    argument, it does not test the paper. pass when every pattern follows it (:func:`lens_word` yes)."""
    words = {p: lens_word(ch, fx, gap, tol) for p, (ch, fx) in patterns.items()}
    if not words:
        raise ValueError("patterns must name at least one pattern, got none")
    bad = [p for p, w in words.items() if w != "yes"]
    rule = f"gap ≥ {gap} nats where the influence changes, below {tol} where it is fixed"
    return f"pass: {rule}, every pattern" if not bad else f"fail: {rule}, not for " + ", ".join(bad)


def recovery_gate(above_chance: Sequence[float], margin: float = ABOVE_CHANCE) -> str:
    """pass when MCC minus its chance level clears ``margin`` on every seed (a positive control)."""
    word = gate(above_chance, margin, rule="every seed")
    return f"{word}: MCC − chance ≥ {margin} on {'every' if word == 'pass' else 'not every'} seed"


def rotation_gate(lucky: Sequence[float], room: Sequence[float], margin: float = ABOVE_CHANCE) -> str:
    """The rotation lens: the score can tell a recovery from a rotation. pass when, for every arm and seed,
    a rotation of the whitened true latents (a learner that identifies nothing beyond a linear map) stays
    below chance + ``margin`` even in its luckiest draws (``lucky``: the :data:`ROTATION_QUANTILE` quantile
    of the rotations' MCC minus the chance level) and the true latents themselves (MCC 1) clear it
    (``room``: 1 minus the chance level)."""
    lucky_a, room_a = np.asarray(lucky, dtype=float).ravel(), np.asarray(room, dtype=float).ravel()
    if lucky_a.size == 0 or room_a.size == 0 or not (np.all(np.isfinite(lucky_a)) and np.all(np.isfinite(room_a))):
        raise ValueError("lucky and room must be non-empty arrays of finite numbers")
    q = f"{100 * ROTATION_QUANTILE:.0f}%"
    if np.all(lucky_a < margin) and np.all(room_a >= margin):
        return f"pass: a rotation's {q} quantile stays below chance + {margin}, the true latents clear it, everywhere"
    why = []
    if not np.all(lucky_a < margin):
        why.append(f"a rotation's {q} quantile reaches chance + {margin} (largest +{lucky_a.max():.2f})")
    if not np.all(room_a >= margin):
        why.append(f"even the true latents stay below chance + {margin} (smallest room {room_a.min():+.2f})")
    return "fail: " + "; ".join(why)


def identification_verdict(above_chance: Mapping[str, Sequence[float]], margin: float = ABOVE_CHANCE) -> str:
    """The all-change claim, on the metric the identifiability literature reports: MCC **averaged over
    components**. no when the 95% interval of that average minus its chance level (paired by seed) lies
    below ``margin``: if every component were recovered, their average would clear the margin too. The
    sentence names any component that clears the margin on its own (a root, identifiable by its changing
    noise alone as in iVAE, can). Otherwise per component (:func:`components_verdict`: yes every component
    recovered, partly some, unclear when intervals straddle the margin)."""
    if not above_chance:
        raise ValueError("above_chance must name at least one component, got none")
    parts = {name: compare(v, margin) for name, v in above_chance.items()}
    pooled = np.mean([np.asarray(v, dtype=float) for v in above_chance.values()], axis=0)
    if compare(pooled, margin) == "no":
        alone = [k for k, w in parts.items() if w == "yes"]
        return f"no: averaged over components, MCC − chance {_iv(pooled)} lies below {margin}; " + (
            f"alone, {', '.join(alone)} clear{'s' if len(alone) == 1 else ''} it" if alone else "no component clears it"
        )
    return components_verdict(above_chance, margin)


def components_verdict(above_chance: Mapping[str, Sequence[float]], margin: float = ABOVE_CHANCE) -> str:
    """Per component, MCC minus the chance level (paired by seed) against ``margin``; yes: every
    component recovered, partly: some, no: none (interval rule, :func:`~explorables.core.verdicts.combine`)."""
    parts = {name: compare(v, margin) for name, v in above_chance.items()}
    return scope_verdict(parts, f"MCC − chance ≥ {margin}")


def beats_verdict(gains: Mapping[str, Sequence[float]], margin: float = MARGIN) -> str:
    """Per baseline, the paired per-seed MCC gain against ``margin``; a method behind every baseline reads no."""
    parts = {name: compare(g, margin) for name, g in gains.items()}
    return scope_verdict(parts, f"paired MCC gain ≥ {margin}")


def pattern_word(
    recovered: Sequence[Sequence[float]],
    increases: Sequence[Sequence[float]],
    margin: float = ABOVE_CHANCE,
    gain: float = PARENT_GAIN,
) -> str:
    """One pattern follows the prediction (yes) when every predicted-identifiable component is
    recovered (MCC − chance ≥ ``margin``) and every other one's learned latent draws on its parents more
    than in the all-change run (paired increase of the R² gain from the parents ≥ ``gain``: it landed
    elsewhere in its class ``z_i - c g(z_j)``); no when any of these reads no; unclear otherwise."""
    return _every_part([compare(v, margin) for v in recovered] + [compare(d, gain) for d in increases], "component")


def partial_verdict(
    patterns: Mapping[str, tuple[Sequence[Sequence[float]], Sequence[Sequence[float]]]],
    margin: float = ABOVE_CHANCE,
    gain: float = PARENT_GAIN,
) -> str:
    """Per one-fixed-edge pattern, :func:`pattern_word` of (recovered parts, parent-gain increases); yes:
    every pattern follows the prediction, partly: some, no: none."""
    parts = {p: pattern_word(rec, inc, margin, gain) for p, (rec, inc) in patterns.items()}
    return scope_verdict(parts, "pattern follows the prediction")


def child_word(increase: Sequence[float], gain: float = PARENT_GAIN) -> str:
    """One child is *not pinned down* without changes (yes) when the R² gain from its parents of its
    matched learned latent exceeds the all-change run's by ≥ ``gain`` (paired interval): the learner
    landed elsewhere in ``z_i - c g(z_j)``, which the theory allows. Scoring MCC against chance could not
    say this: the class's members correlate with ``z_i`` far above chance."""
    return compare(increase, gain)


def control_verdict(children: Mapping[str, Sequence[float]], gain: float = PARENT_GAIN) -> str:
    """Without changing influences, per child (paired increase of its parent gain) through
    :func:`child_word`: yes every child not pinned down, partly some, no none."""
    parts = {name: child_word(v, gain) for name, v in children.items()}
    return scope_verdict(parts, f"paired increase of the R² gain from the parents ≥ {gain}, without changes")


def motion_verdict(
    above: Sequence[float], gain: Sequence[float], margin: float = ABOVE_CHANCE, beat: float = MARGIN
) -> str:
    """The causal prior recovers the angles: its MCC − chance against ``margin`` is the primary part
    (not yes: the claim takes its word); when it reads yes, the paired gain over the plain VAE against
    ``beat`` decides yes (combined) or partly."""
    parts = {"above chance": compare(above, margin), "above the plain VAE": compare(gain, beat)}
    if parts["above chance"] != "yes":
        return (
            f"{parts['above chance']}: MCC − chance {_iv(above)} vs {margin} (the primary part); "
            f"gain over the plain VAE {_iv(gain)} vs {beat}"
        )
    return scope_verdict(parts, f"MCC − chance ≥ {margin}, paired gain ≥ {beat}")


def behind_identification(identified: str, verdict: str, stands_on: Sequence[str] = ("yes",)) -> str:
    """Partial identifiability and the no-change control read the causal prior's components *against its
    all-change run*; they mean something only when that run identifies the latents. The baselines claim
    ("the causal prior is what recovers them") means something only when the causal prior recovers at
    least some (``stands_on=("yes", "partly")``). So ``verdict`` stands when the all-change claim
    (``identified``, its verdict) reads a word of ``stands_on``; otherwise the row reads unclear, naming
    why and keeping its own reading (the kit has no claim-on-claim gate)."""
    word = first_word(identified)
    if word in stands_on:
        return verdict
    return (
        f"unclear: read against the all-change run, which must identify the latents first; "
        f"“identified” reads {word}. On its own: {verdict}"
    )


_UP, _MID, _DOWN = [0.3, 0.31, 0.29], [0.0, 0.3, 0.15], [0.0, 0.01, -0.01]
_ZERO = [0.0, 0.002, -0.002]
CRITERIA: tuple[Criterion, ...] = (
    Criterion(
        "the flow's log-determinant is exact and the shear keeps it",
        "check",
        flow_verdict,
        FLOW_TOL,
        "|analytic − autograd| ≤ tol",
        {"pass": ((1e-14,), {}), "fail": ((1e-3,), {})},
    ),
    Criterion(
        "lens: a removed edge costs likelihood when nothing absorbs it",
        "check",
        lens_gate,
        LENS_GAP,
        "gap ≥ threshold on every seed, every edge",
        {"pass": (({"0→1": _UP, "1→2": _UP},), {}), "fail": (({"0→1": _UP, "1→2": [0.3, 0.01, 0.3]},), {})},
    ),
    Criterion(
        "lens: a gap exactly where influences change (per pattern)",
        "check",
        lens_check,
        f"{LENS_GAP} / {LENS_TOL}",
        "every pattern: changing edges' gap interval ≥ gap, fixed edges' below tol",
        {
            "pass": (({"all": ([_UP], []), "fix": ([_UP], [_ZERO])},), {}),
            "fail": (({"all": ([_UP], []), "fix": ([_MID], [_ZERO])},), {}),
        },
    ),
    Criterion(
        "metric is 1 for a permuted, rescaled copy",
        "check",
        metric_check,
        METRIC_TOL,
        "|MCC − 1| ≤ tol",
        {"pass": ((1e-12,), {}), "fail": ((1e-3,), {})},
    ),
    Criterion(
        "every chance level's own error is small",
        "check",
        chance_check,
        CHANCE_SE,
        "largest bootstrap se of a chance level ≤ tol",
        {"pass": ((0.004,), {}), "fail": ((0.03,), {})},
    ),
    Criterion(
        "recovery gate (ivae; motion: the supervised probe)",
        "gate",
        recovery_gate,
        ABOVE_CHANCE,
        "MCC − chance ≥ margin on every seed",
        {"pass": ((_UP,), {}), "fail": (([0.3, 0.1, 0.3],), {})},
    ),
    Criterion(
        "rotation lens: the score tells a recovery from a rotation",
        "gate",
        rotation_gate,
        ABOVE_CHANCE,
        f"every arm and seed: the rotations' {ROTATION_QUANTILE:.0%} quantile − chance < margin ≤ 1 − chance",
        {
            "pass": (([0.05, 0.06], [0.31, 0.32]), {}),
            "fail": (([0.05, 0.2], [0.31, 0.32]), {}),
        },
    ),
    Criterion(
        "identified with every influence changing (averaged, then per component)",
        "claim",
        identification_verdict,
        ABOVE_CHANCE,
        "no when the interval of MCC − chance averaged over components lies below the margin; else per component",
        {
            "yes": (({"z0": _UP, "z1": _UP},), {}),
            "partly": (({"z0": _UP, "z1": _DOWN},), {}),
            "no": (({"z0": _DOWN, "z1": [0.05, 0.15, 0.1]},), {}),  # z1 alone unclear, the average below
            "unclear": (({"z0": _MID, "z1": _MID},), {}),
        },
        scoped=True,
    ),
    Criterion(
        "identified / post-nonlinear (per component)",
        "claim",
        components_verdict,
        ABOVE_CHANCE,
        "per component, interval of MCC − chance vs margin; combined over components",
        {
            "yes": (({"z0": _UP, "z1": _UP},), {}),
            "partly": (({"z0": _UP, "z1": _DOWN},), {}),
            "no": (({"z0": _DOWN, "z1": _DOWN},), {}),
            "unclear": (({"z0": _MID, "z1": _DOWN},), {}),
        },
        scoped=True,
    ),
    Criterion(
        "causal prior beats the baselines (and the motion case)",
        "claim",
        beats_verdict,
        MARGIN,
        "per baseline, interval of the paired MCC gain vs margin; combined over baselines",
        {
            "yes": (({"plain": _UP},), {}),
            "partly": (({"plain": _UP, "factorised": _DOWN},), {}),
            "no": (({"plain": _DOWN, "factorised": _DOWN},), {}),
            "unclear": (({"plain": [0.0, 0.1, 0.05]},), {}),
        },
        scoped=True,
    ),
    Criterion(
        "partial identifiability (per pattern)",
        "claim",
        partial_verdict,
        f"{ABOVE_CHANCE} / {PARENT_GAIN}",
        "per pattern: identifiable ones recovered and the others' parent gain rises by ≥ gain; combined over patterns",
        {
            "yes": (({"fix a": ([_UP], [_UP])},), {}),
            "partly": (({"fix a": ([_UP], [_UP]), "fix b": ([_UP], [_DOWN])},), {}),
            "no": (({"fix a": ([_DOWN], [_UP]), "fix b": ([_UP], [_DOWN])},), {}),
            "unclear": (({"fix a": ([_UP], [_MID])},), {}),
        },
        scoped=True,
    ),
    Criterion(
        "control: children not pinned down without changes",
        "claim",
        control_verdict,
        PARENT_GAIN,
        "per child, the interval of the paired increase of its R² gain from the parents ≥ gain; combined over children",
        {
            "yes": (({"z1": _UP, "z2": _UP},), {}),
            "partly": (({"z1": _UP, "z2": _DOWN},), {}),
            "no": (({"z1": _DOWN},), {}),
            "unclear": (({"z1": _MID},), {}),
        },
        scoped=True,
    ),
    Criterion(
        "motion: the causal prior recovers the angles",
        "claim",
        motion_verdict,
        f"{ABOVE_CHANCE} / {MARGIN}",
        "MCC − chance vs margin first (else its word); then the paired gain over the plain VAE; combined",
        {"yes": ((_UP, _UP), {}), "partly": ((_UP, _DOWN), {}), "no": ((_DOWN, _UP), {}), "unclear": ((_MID, _UP), {})},
        scoped=True,
    ),
)


# --- reading the results --------------------------------------------------------------------------


def _arm(results: CRLResults, name: str) -> dict[str, Any] | None:
    return results.summary["arms"].get(name)


def medians(arm: dict[str, Any]) -> list[float]:
    """Per-component median MCC over seeds."""
    return [c["median"] for c in arm["components"]]


def per_seed(arm: dict[str, Any], component: int | None = None) -> np.ndarray:
    """Per-seed MCC of an arm (mean over components), or of one component."""
    stats = arm["mcc"] if component is None else arm["components"][component]
    return np.asarray(stats["per_seed"], dtype=float)


def chance(arm: dict[str, Any]) -> np.ndarray:
    """Per-seed chance level of the arm's own targets (median MCC of random rotations)."""
    return np.asarray(arm["chance"]["per_seed"], dtype=float)


def above_chance(arm: dict[str, Any]) -> dict[str, np.ndarray]:
    """Per component ``z{i}``: per-seed MCC minus the arm's per-seed chance level."""
    return {f"z{i}": per_seed(arm, i) - chance(arm) for i in range(len(arm["components"]))}


def parent_gain(arm: dict[str, Any], component: int) -> np.ndarray:
    """Per-seed R² gain from the true parents of the learned latent matched to ``component``."""
    return np.asarray([row[component] for row in arm["parent_gain"]], dtype=float)


def partial_parts(results: CRLResults) -> dict[str, tuple[list[np.ndarray], list[np.ndarray]]]:
    """Per one-fixed-edge pattern: (identifiable components' MCC − chance, the others' paired increase
    of the parent gain over the all-change run)."""
    out: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}
    full = _arm(results, "causal / all")
    if full is None:
        return out
    for arm in results.summary["arms"].values():
        if arm["prior"] == "causal" and arm["data"] == "synthetic" and arm["pattern"].startswith("fix"):
            rec = [per_seed(arm, i) - chance(arm) for i, ok in enumerate(arm["identifiable"]) if ok]
            inc = [parent_gain(arm, i) - parent_gain(full, i) for i, ok in enumerate(arm["identifiable"]) if not ok]
            out[arm["pattern"]] = (rec, inc)
    return out


def control_parts(results: CRLResults) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per child component (predicted non-identifiable without changes): its per-seed all-change MCC
    minus the no-change MCC (same data draws but for what changes), and the paired increase of its
    parent gain from the all-change to the no-change run."""
    full, none = _arm(results, "causal / all"), _arm(results, "causal / none")
    if full is None or none is None:
        return {}
    return {
        f"z{i}": (per_seed(full, i) - per_seed(none, i), parent_gain(none, i) - parent_gain(full, i))
        for i, ok in enumerate(none["identifiable"])
        if not ok
    }


def max_chance_se(results: CRLResults) -> float:
    """The largest standard error of any arm's chance level, over arms and seeds."""
    return max(max(a["chance_se"]["per_seed"]) for a in results.summary["arms"].values())


def metric_error(seed: int = 0) -> float:
    """|MCC − 1| of a permuted, rescaled, shifted copy of freshly drawn latents (the metric's identity)."""
    rng = np.random.default_rng(seed)
    data = make_data(make_scm(default_graph(3), None, 5, rng), 100, 6, rng)
    copy = data.z[:, [2, 0, 1]] * np.array([-2.0, 0.5, 3.0]) + 1.0
    return float(np.max(np.abs(matched_correlations(data.z, copy) - 1.0)))


def prediction_table(results: CRLResults) -> str:
    """The theory's prediction per pattern (from the graph and what changes; no results involved)."""
    rows = []
    for arm in results.summary["arms"].values():
        if arm["prior"] == "causal" and arm["data"] == "synthetic":
            marks = ["identifiable" if i else "not identifiable" for i in arm["identifiable"]]
            rows.append([arm["pattern"], *marks])
    d = len(rows[0]) - 1 if rows else 0
    return table(["influences that change", *(f"z{i}" for i in range(d))], rows)


def fmt_median(stats: dict[str, Any]) -> str:
    """``median [min, max]`` of a statistics entry."""
    return f"{stats['median']:.2f} [{stats['min']:.2f}, {stats['max']:.2f}]"


def component_table(results: CRLResults) -> str:
    """Per arm: MCC (mean ± sd over seeds), its chance level, and every component's MCC (mean ± sd over
    seeds) with the theory's prediction (✓ identifiable, ✗ not)."""
    rows = []
    for name, arm in results.summary["arms"].items():
        comps = [
            fmt_mean_sd(c["per_seed"]) + ("" if arm["data"] == "motion" else (" ✓" if ok else " ✗"))
            for c, ok in zip(arm["components"], arm["identifiable"], strict=True)
        ]
        rows.append(
            [
                name,
                arm["correlation"],
                fmt_mean_sd(per_seed(arm)),
                fmt_mean_sd(chance(arm)),
                *comps,
                fmt_mean_sd(arm["elbo"]["per_seed"]),
            ]
        )
    d = max(len(a["components"]) for a in results.summary["arms"].values())
    header = ["arm", "correlation", "MCC mean ± sd", "chance mean ± sd", *(f"z{i}" for i in range(d)), "ELBO / sample"]
    return table(header, rows)


def reading_sentence(results: CRLResults) -> str:
    """What the run shows against the prediction, in numbers (for the page's "Reading the numbers")."""
    parts = []
    for name in ("causal / all", IVAE_CHECK):
        arm = _arm(results, name)
        if arm is not None:
            gaps = ", ".join(f"{k} {_iv(v)}" for k, v in above_chance(arm).items())
            parts.append(f"{name}: MCC minus its chance level per component (mean [95% t-interval]) {gaps}")
    children = control_parts(results)
    if children:
        parts.append(
            "from the all-change run to the no-change control the children's MCC drops by "
            + ", ".join(f"{k} {_iv(d)}" for k, (d, _) in children.items())
            + ", and without changes the parent gain (R² of the matched latent from the child's true parents, "
            "beyond the child itself) rises by "
            + ", ".join(f"{k} {_iv(a)}" for k, (_, a) in children.items())
        )
    full, plain = _arm(results, "causal / all"), _arm(results, "plain / all")
    if full is not None and plain is not None:
        mcc_gain = per_seed(full) - per_seed(plain)
        elbo_gain = np.asarray(full["elbo"]["per_seed"]) - np.asarray(plain["elbo"]["per_seed"])
        parts.append(
            f"on all-change data the causal prior's MCC minus the plain VAE's is {_iv(mcc_gain)} "
            f"while its ELBO differs by {_iv(elbo_gain)} nats per sample"
        )
    return ("At this scale: " + "; ".join(parts) + ".") if parts else ""


def lens_parts(results: CRLResults) -> dict[str, tuple[list[np.ndarray], list[np.ndarray]]]:
    """Per pattern: the per-seed gaps of the edges whose influence changes, and of those kept fixed."""
    lens = results.summary.get("lens")
    if not lens:
        return {}
    return {
        p: (
            [np.asarray(g) for g, c in zip(v["gap"], v["changes"], strict=True) if c],
            [np.asarray(g) for g, c in zip(v["gap"], v["changes"], strict=True) if not c],
        )
        for p, v in lens["patterns"].items()
    }


def lens_table(results: CRLResults) -> str:
    """Per pattern and edge: the prediction (gap or none) and the measured gap, mean [95% t-interval] over seeds."""
    lens = results.summary.get("lens")
    if not lens:
        return ""
    rows = [
        [
            p,
            *(
                ("changes → gap " if c else "fixed → none ") + _iv(g)
                for g, c in zip(v["gap"], v["changes"], strict=True)
            ),
        ]
        for p, v in lens["patterns"].items()
    ]
    if "control" in lens:
        rows.append(["none, φ = 0 (check)", *("any → gap " + _iv(g) for g in lens["control"])])
    return table(["influences that change", *(f"edge {e}" for e in lens["edges"])], rows)


def gate_reading(rows: Sequence[Claim]) -> str:
    """One sentence per gate for the page: what it certifies, and which claims it leaves untested."""
    outcome = {r.name: r.outcome for r in rows if r.kind == "gate"}
    said = []
    if "ivae" in outcome:
        said.append(
            "The iVAE gate passes: with the factorised prior, the same networks, mixing and budget recover "
            "latents in iVAE's own setting. It certifies that learner only, not the causal prior."
            if outcome["ivae"] == "pass"
            else "The iVAE gate fails: even in iVAE's own setting our VAEs do not recover the targets by the margin, "
            "so every VAE claim reads untested (the motion claim too: it uses the same learner). At this "
            "budget the learner or the setting is the obstacle; this is a defect of our reduced run, not "
            "evidence against the paper."
        )
    if "causal" in outcome:
        said.append(
            "The causal gate passes: the causal-prior learner recovers the same edge-free latents, inside its "
            "own class, so a shortfall of the causal prior on causal data is not that learner failing wherever "
            "it runs (it may still come from the causal setting being harder at this sample size)."
            if outcome["causal"] == "pass"
            else "The causal gate fails: the causal-prior learner does not recover even edge-free latents, "
            "which lie inside its own class (true influences zero), so every claim that trains it reads "
            "untested. At this scale its ELBO does not single out the true axes; this says nothing for or "
            "against the paper's population result."
        )
    if "rotation" in outcome:
        said.append(
            "The rotation gate passes: a rotation of the whitened true latents, what a learner that identifies "
            "nothing beyond a linear map can reach, stays below chance + the margin even in its luckiest draws, "
            "and the true latents clear it, so a recovered component cannot be a lucky rotation and a "
            "shortfall is not the score's blindness."
            if outcome["rotation"] == "pass"
            else "The rotation gate fails: at this number of latents a lucky rotation of the whitened true "
            "latents can reach chance + the margin, or the true latents cannot, so the score cannot tell a "
            "recovery from a rotation and every claim read against chance reads untested."
        )
    return " ".join(said)


def identification_sentence(results: CRLResults) -> str:
    """A plain sentence when the causal prior's all-change MCC (mean over components, paired with its
    chance level by seed) sits at chance: the interval of MCC − chance lies below the recovery margin."""
    full = _arm(results, "causal / all")
    if full is None:
        return ""
    gap = per_seed(full) - chance(full)
    if compare(gap, ABOVE_CHANCE, "below") != "yes":
        return ""
    return (
        f"No sign of identification at this scale: with every influence changing, the causal prior's MCC "
        f"minus its chance level, pooled over components, is {_iv(gap)}, below the margin of {ABOVE_CHANCE}."
    )


def verdict_sentence(rows: Sequence[Claim]) -> str:
    """The paper's claims with their verdicts after the gates (for the page's reading of the numbers)."""
    said = [f"“{r.claim}”: {r.outcome}" for r in apply_gates(list(rows)) if r.kind == "claim"]
    return ("The claims read, after their gates: " + "; ".join(said) + ".") if said else ""


def active_sentence(results: CRLResults) -> str:
    """What the iVAE arm's active latents say about its gate (none when the arm did not run)."""
    arm = _arm(results, IVAE_CHECK)
    if arm is None or "active" not in arm:
        return ""
    d, active = len(arm["components"]), arm["active"]
    if min(active) == d and min(per_seed(arm) - chance(arm)) >= ABOVE_CHANCE:
        return f"Every one of the iVAE arm's {d} latents stays active on every seed."
    if min(active) == d:
        return (
            f"Every one of the iVAE arm's {d} latents stays active on every seed (its posterior mean varies "
            "over the data), so its shortfall is not latents collapsing to the prior: the codes vary, but do "
            "not line up with the noises."
        )
    return (
        f"The iVAE arm keeps only {min(active)} to {max(active)} of its {d} latents active over the seeds: "
        "latents left at the prior cannot be recovered, whatever the theory allows."
    )


def control_direction(results: CRLResults) -> str:
    """A sentence when children score a higher mean MCC without changing influences than with them, and why
    that does not contradict the theory (MCC cannot show non-identification; the parent gain can)."""
    children = control_parts(results)
    higher = [k for k, (drop, _) in children.items() if float(np.mean(drop)) < 0]
    if not higher:
        return ""
    return (
        f"For {len(higher)} of the {len(children)} children ({', '.join(higher)}) the mean MCC is higher "
        "without changing influences than with them. The theory allows this: without changes the learned "
        "latent may be any member of the child's class, several of which correlate highly with the child, "
        "so MCC cannot show non-identification; the control reads the parent gain instead."
    )


def _recovery_gate_row(arm: dict[str, Any], name: str, claim: str, setting: str, extra: str = "") -> Claim:
    """A gate row: the arm's MCC minus its chance level must clear the margin on every seed
    (:func:`recovery_gate`)."""
    ac = per_seed(arm) - chance(arm)
    return Claim(
        claim,
        setting,
        f"MCC {fmt_mean_sd(per_seed(arm))}, chance {fmt_mean_sd(chance(arm))}; "
        "MCC − chance per seed " + ", ".join(f"{v:+.2f}" for v in ac) + extra,
        recovery_gate(ac),
        kind="gate",
        name=name,
    )


def claims(results: CRLResults) -> list[Claim]:
    """The rows: the checks, the gates ``ivae``, ``causal`` and ``motion``, the paper's claims (:data:`CRITERIA`)."""
    cfg = results.config
    setting = (
        f"{cfg.d_latent} latents, {cfg.n_envs} environments × {cfg.n_per_env}, {cfg.mixing_layers}-layer "
        f"mixing to {cfg.d_obs} dims, {cfg.n_steps} Adam steps, {len(cfg.seeds)} seeds"
    )
    error = metric_error()
    out = [
        Claim(
            "MCC reads 1 for a permuted, rescaled, shifted copy of the true latents",
            "3 latents, 500 samples, optimal matching (scipy)",
            f"|MCC − 1| = {error:.1e}",
            metric_check(error),
            kind="check",
        )
    ]
    se = max_chance_se(results)
    out.append(
        Claim(
            "Every chance level is measured to well under the margin",
            f"median MCC of {cfg.n_rotations} Haar rotations of each arm's whitened targets, per seed; standard "
            "error by bootstrap over the rotations",
            f"largest standard error {se:.4f} (margin {ABOVE_CHANCE})",
            chance_check(se),
            kind="check",
        )
    )
    lens = results.summary.get("lens")
    if lens:
        out.append(
            Claim(
                "The flow's likelihood term is exact, and the alternative's shear leaves it unchanged",
                "square leaky-ReLU flow, d_obs = d_latent; analytic log-determinant against autograd (torch), "
                "8 samples",
                f"largest difference {lens['flow_check']:.1e}",
                flow_verdict(lens["flow_check"]),
                kind="check",
            )
        )
        if lens.get("control"):
            ctrl = dict(zip(lens["edges"], lens["control"], strict=True))
            out.append(
                Claim(
                    "The lens sees a removed edge when nothing can absorb it",
                    "influences fixed; edge removed with φ = 0; held-out log-likelihood gap per sample",
                    "smallest gap per seed " + ", ".join(f"{v:.2f}" for v in np.min(list(ctrl.values()), axis=0)),
                    lens_gate(ctrl),
                    kind="check",
                )
            )
    check = _arm(results, IVAE_CHECK)
    if check is not None:
        active = (
            f"; active latents per seed {', '.join(str(k) for k in check['active'])} of {len(check['components'])}"
            if "active" in check
            else ""
        )
        out.append(
            _recovery_gate_row(
                check,
                "ivae",
                "iVAE's own setting is reached at our budget",
                f"{cfg.d_latent} latents without edges (independent given u; noise scale per environment "
                f"log-uniform in [{cfg.noise_scales[0]:g}, {cfg.noise_scales[1]:g}]), factorised prior, same "
                "learner, mixing and budget as the claims",
                active,
            )
        )
    causal_check = _arm(results, CAUSAL_CHECK)
    if causal_check is not None:
        out.append(
            _recovery_gate_row(
                causal_check,
                "causal",
                "The causal-prior learner recovers latents inside its own class",
                f"the `ivae` gate's edge-free latents (true influences zero), causal prior with every influence "
                f"free per environment, L1 weight {cfg.sparsity:g}; same learner, mixing and budget as the claims",
            )
        )
    lens_arms = {n: a for n, a in results.summary["arms"].items() if "chance_q" in a}
    if lens_arms:
        lucky = {n: np.asarray(a["chance_q"]["per_seed"]) - chance(a) for n, a in lens_arms.items()}
        room = {n: 1.0 - chance(a) for n, a in lens_arms.items()}
        worst = max(lucky, key=lambda n: float(lucky[n].max()))
        out.append(
            Claim(
                "Rotation lens: the score tells a recovery from a rotation of the true latents",
                f"every arm and seed: {cfg.n_rotations} Haar rotations of the arm's whitened targets (a learner "
                f"that identifies nothing beyond a linear map); their {ROTATION_QUANTILE:.0%} quantile and the "
                "true latents (MCC 1) against chance + the recovery margin",
                f"rotations' {ROTATION_QUANTILE:.0%} quantile − chance at most {float(lucky[worst].max()):+.3f} "
                f"({worst}); room 1 − chance at least {min(float(v.min()) for v in room.values()):.2f}",
                rotation_gate(np.concatenate(list(lucky.values())), np.concatenate(list(room.values()))),
                kind="gate",
                name="rotation",
            )
        )
    motion, plain_motion = _arm(results, "motion / causal"), _arm(results, "motion / plain")
    probe = results.summary.get("motion_probe")
    if motion is not None and probe is not None:
        probe_chance = np.asarray(results.summary.get("motion_probe_chance", {"per_seed": chance(motion)})["per_seed"])
        ac = np.asarray(probe["per_seed"]) - probe_chance
        out.append(
            Claim(
                "The stick-figure coordinates hold the angles at our sample size (positive control)",
                "supervised probe, no VAE: cubic ridge regression from coordinates to angles, fitted on half "
                "the samples, MCC on the other half, 6 gaits; chance: rotations of the three whitened angles",
                f"probe MCC {fmt_mean_sd(probe['per_seed'])}, chance {fmt_mean_sd(probe_chance)}; "
                f"MCC − chance per seed " + ", ".join(f"{v:+.2f}" for v in ac),
                recovery_gate(ac),
                kind="gate",
                name="motion",
            )
        )
    gates = (
        (("ivae",) if check is not None else ())
        + (("causal",) if causal_check is not None else ())
        + (("rotation",) if lens_arms else ())
    )
    full = _arm(results, "causal / all")
    identified = "unclear: the all-change arm did not run"
    if full is not None:
        ac = above_chance(full)
        identified = identification_verdict(ac)
        out.append(
            Claim(
                "When the causal influences change across environments, the latents are identifiable: "
                "recovered by our causal-prior VAE (reduced run)",
                f"causal-prior VAE, all influences change; {setting}",
                f"MCC {fmt_mean_sd(per_seed(full))}, chance {fmt_mean_sd(chance(full))}; MCC − chance "
                + ", ".join(f"{k} {_iv(v)}" for k, v in ac.items()),
                identified,
                gates=gates,
            )
        )
        baselines = {
            n: a for n, a in results.summary["arms"].items() if n in ("factorised / all", "plain / all", "shared / all")
        }
        if baselines:
            gains = {n.split(" /")[0]: per_seed(full) - per_seed(a) for n, a in baselines.items()}
            out.append(
                Claim(
                    "The causal prior is what recovers them (against a plain VAE, a factorised prior and "
                    "influences shared across environments)",
                    "same data, same networks and steps; iVAE's factorised environment prior; N(0, I) prior; "
                    "the causal prior with one λ for every environment",
                    "; ".join(f"{n} {fmt_mean_sd(per_seed(a))}" for n, a in baselines.items())
                    + "; causal − baseline, paired by seed: "
                    + ", ".join(f"{n} {_iv(g)}" for n, g in gains.items()),
                    behind_identification(identified, beats_verdict(gains), ("yes", "partly")),
                    gates=gates,
                )
            )
    lp = lens_parts(results)
    if lp:
        out.append(
            Claim(
                "Exact lens: removing an edge costs likelihood exactly where its influence changes, as its "
                "closed form says (mixing known, additive-noise model)",
                f"{cfg.d_latent} latents through a known flow; the edge removed and absorbed by one "
                "environment-independent φ; held-out gap in nats per sample",
                "; ".join(
                    p
                    + ": "
                    + ", ".join(
                        ([f"changing ≥ {min(interval(v).low for v in ch):.2f}"] if ch else [])
                        + ([f"fixed ≤ {max(interval(v).high for v in fx):.3f}"] if fx else [])
                    )
                    for p, (ch, fx) in lp.items()
                )
                + " (interval ends)",
                lens_check(lp),
                kind="check",
            )
        )
    patterns = partial_parts(results)
    if patterns:
        out.append(
            Claim(
                "Partial identifiability when only some influences change",
                "one edge's influence fixed, the others change; prediction per component stated beforehand",
                "; ".join(
                    f"{p}: recovered − chance "
                    + (", ".join(_iv(v) for v in rec) or "none")
                    + "; the fixed edge's child: increase of the R² gain from its parents "
                    + (", ".join(_iv(d) for d in inc) or "none")
                    for p, (rec, inc) in patterns.items()
                ),
                behind_identification(identified, partial_verdict(patterns)),
                gates=gates,
            )
        )
    children = control_parts(results)
    if children:
        out.append(
            Claim(
                "Without changing influences, the children are not pinned down",
                "no influence changes (noise still does); same model, data draws and training; the learned "
                "latent matched to each child regressed on z_i, then on z_i and g(parents): the R² gain",
                "paired increase of the parent gain over the all-change run "
                + ", ".join(f"{k} {_iv(v)}" for k, (_, v) in children.items())
                + "; paired MCC drop "
                + ", ".join(f"{k} {_iv(d)}" for k, (d, _) in children.items()),
                behind_identification(identified, control_verdict({k: v for k, (_, v) in children.items()})),
                gates=gates,
            )
        )
    pnl = _arm(results, "causal / post-nonlinear")
    if pnl is not None:
        ac = above_chance(pnl)
        out.append(
            Claim(
                "Extends to latent post-nonlinear models",
                "z_i = h(f_i + n_i), h(v) = v/2 + 2 tanh(2v); rank (Spearman) MCC",
                f"MCC {fmt_mean_sd(per_seed(pnl))}, chance {fmt_mean_sd(chance(pnl))}; MCC − chance "
                + ", ".join(f"{k} {_iv(v)}" for k, v in ac.items()),
                components_verdict(ac),
                gates=gates,
            )
        )
    if motion is not None and plain_motion is not None:
        gain = per_seed(motion) - per_seed(plain_motion)
        above = per_seed(motion) - chance(motion)
        out.append(
            Claim(
                "Human-motion case study (ours: a synthetic kinematic chain): the causal prior recovers the angles",
                f"hip → knee → ankle angles, 6 gaits, stick-figure coordinates observed; {cfg.d_latent} latents, the "
                f"best 3 matched; chance: rotations of the 3 whitened angles with {cfg.d_latent - 3} independent "
                "dimensions, best 3 matched; above chance, then against a plain VAE",
                f"causal {fmt_mean_sd(per_seed(motion))}, plain {fmt_mean_sd(per_seed(plain_motion))}, chance "
                f"{fmt_mean_sd(chance(motion))}; causal − chance {_iv(above)}; paired gain {_iv(gain)}",
                motion_verdict(above, gain),
                gates=("motion", *gates),
            )
        )
    return out
