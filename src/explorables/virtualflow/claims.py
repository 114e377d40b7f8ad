"""The chapter's claims table: each claim of the abstract, our setting, our number, a verdict (Claims kit 3).

Every threshold is a module constant below and every verdict function is declared in ``CRITERIA`` with
synthetic inputs that reach each of its branches. Claims are decided on the interval over seeds (95%
t-interval: mean ± t·se of per-seed paired differences, :mod:`explorables.core.verdicts`) and depend on gates:
positive controls showing that the setup can show the effect at all. The book glues the functions'
output and never decides between sentences itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.tables import Claim
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from ..core.tables import markdown_table as table
from ..core.verdicts import Criterion, compare, fmt_pm, gate, interval, scope_verdict
from .experiment import (
    BEAM_LABELS,
    BEAMFORMING,
    FIXED_LABELS,
    FIXED_LAYOUT,
    METHOD_LABELS,
    METHODS,
    VirtualFlowConfig,
    VirtualFlowResults,
    reflow_gate_rooms,
)

# --- the criteria's thresholds: the one declared place -------------------------------------------------

#: learning "adds something" to the pseudo-target when its SI-SDR against the truth is higher by this (dB)
LEARNING_MARGIN = 1.0
LEARNING_CLAIM = "Virtual-Flow generates virtual-mic signals without ground-truth targets (pseudo-VM targets)"
#: the downstream claim, read in the fixed-layout MVDR: reflow's channel in the missing mic's slot "beats" the
#: supervised one when the output's SI-SDR is higher (interval over seeds above this, dB; the claim says "beats", and
#: this threshold was set with the fixed-layout reading, issue 42's seventh pass, before base seeds 0-4 were run)
DOWNSTREAM_MARGIN = 0.0
#: gate "physical": a physical mic at the virtual position must raise the MVDR output by at least this (dB) more than
#: a random channel (no information) does
PHYSICAL_GATE = 1.0
#: a band's magnitude is "better" when the absolute energy ratio (or the bin-by-bin error) is smaller by this (dB)
MAGNITUDE_MARGIN = 1.0
#: reflow's one step "matches" the base flow's many steps when its SI-SDR is at most this far below (dB)
REFLOW_TOL = 0.5
#: gate "curved": the base flow's one-step sample must differ from its many-step sample (same noise) by at least
#: this much relative energy (NMSE, dB): one Euler step is not already the answer, so reflow has something to distil
CURVE_GATE = -10.0
#: gate "useful": in the fixed-layout MVDR, the supervised virtual channel in the missing mic's slot must beat the slot
#: left empty (zeros) by at least this (dB) on every seed (each seed's mean over its test rooms): else no channel
#: computable at test time that we have is worth more than nothing to that beamformer, and the downstream claim is
#: untested. The value 0.5 dB was set for the earlier reading (supervised minus a random channel in the adaptive MVDR),
#: which failed on base seeds 0-4; the quantity and the every-seed rule were chosen after that, on tuning base seeds
#: 100-105 (issue 42's seventh pass; the value unchanged; the page's box says how)
USEFUL_GATE = 0.5


def _pm(entry: dict, digits: int = 2, index: int | None = None) -> str:
    """``mean ± sd`` (sample sd over seeds, as the aggregate stores it) of an aggregate entry (``index``: a band)."""
    if index is None:
        return fmt_pm(entry["mean"], entry["sd"], digits)
    return fmt_pm(entry["mean"][index], entry["sd"][index], digits)


def _iv(values: Sequence[float]) -> str:
    return f"{interval(values).format(2, signed=True)} dB"


def _diff(a: Sequence[float], b: Sequence[float]) -> list[float]:
    return [float(x - y) for x, y in zip(a, b, strict=True)]


# --- gates ----------------------------------------------------------------------------------------------


def room_gate(supervised_minus_pseudo: Sequence[float]) -> str:
    """Gate "room": the input holds more about the virtual mic than the pseudo-target gives: the supervised
    model (trained on the truth) is at least ``LEARNING_MARGIN`` dB above the real mics' pseudo-target
    (interval)."""
    word = gate(supervised_minus_pseudo, LEARNING_MARGIN)
    if word == "pass":
        return f"pass: a network trained on the truth is ≥ {LEARNING_MARGIN:g} dB above the pseudo-target"
    return f"fail: not even a network trained on the truth is ≥ {LEARNING_MARGIN:g} dB above the pseudo-target"


def room_mean_check(supervised_minus_pseudo: Sequence[float]) -> str:
    """Check "room_mean": the gate "room"'s quantity on average alone, its mean over seeds against
    ``LEARNING_MARGIN`` (no interval). It decides nothing (the gate is decided on the interval); it records, as a
    verdict word the seed study keeps, whether a failing gate failed on its mean or only on the spread over seeds
    (what :func:`room_tally` reads, instead of a number parsed from a text)."""
    values = [float(x) for x in supervised_minus_pseudo]
    if not values:
        raise ValueError("supervised_minus_pseudo must hold at least one seed's value, got none")
    mean = sum(values) / len(values)
    if mean >= LEARNING_MARGIN:
        return (
            f"pass: the supervised network's mean lead over the pseudo-target ({mean:+.2f} dB) clears "
            f'{LEARNING_MARGIN:g} dB (the gate "room" itself is decided on the interval)'
        )
    return (
        f"fail: the supervised network's mean lead over the pseudo-target ({mean:+.2f} dB) is below "
        f"{LEARNING_MARGIN:g} dB"
    )


def physical_gate(physical_minus_random: Sequence[float]) -> str:
    """Gate "physical": a *physical* microphone at the virtual position raises the MVDR output's SI-SDR by at
    least ``PHYSICAL_GATE`` dB more than a random channel that carries no information (interval over seeds);
    else the beamformer cannot tell information from an extra dimension, and no virtual channel can show its
    value here."""
    word = gate(physical_minus_random, PHYSICAL_GATE)
    if word == "pass":
        return (
            f"pass: a physical mic at the virtual position adds ≥ {PHYSICAL_GATE:g} dB more to the MVDR output than "
            "a random channel"
        )
    return (
        f"fail: a physical mic at the virtual position does not add {PHYSICAL_GATE:g} dB more to the MVDR output "
        "than a random channel: our beamformer cannot show a virtual channel's value"
    )


def useful_gate(supervised_minus_empty: Sequence[float]) -> str:
    """Gate "useful": in the fixed-layout MVDR (weights fitted with a physical mic at the virtual position, not
    refitted), the *supervised* virtual channel (trained on the truth, computed at test time from the real
    microphones alone) in that mic's slot gives an output SI-SDR at least ``USEFUL_GATE`` dB above the slot left
    empty (zeros), on every seed; else the best-informed virtual channel we have is worth no more to that
    beamformer than nothing, and a comparison with it says nothing. (Not against a random channel: in a fixed
    layout zeros beat a random channel, which feeds noise through the slot's weight, so beating it is nearly true
    by construction.)"""
    word = gate(supervised_minus_empty, USEFUL_GATE, rule="every seed")
    if word == "pass":
        return (
            f"pass: in the fixed layout the supervised virtual channel beats the empty slot by ≥ {USEFUL_GATE:g} dB on "
            "every seed"
        )
    return (
        f"fail: in the fixed layout the supervised virtual channel does not beat the empty slot by {USEFUL_GATE:g} dB "
        "on every seed: our toy cannot tell virtual channels apart downstream"
    )


def headroom_gate(supervised_abs_ratio: Sequence[float]) -> str:
    """Gate "headroom": the supervised model's top-band energy is off by at least ``MAGNITUDE_MARGIN`` dB
    (absolute energy ratio, interval), so an estimator can be that much closer to the truth."""
    word = gate(supervised_abs_ratio, MAGNITUDE_MARGIN)
    if word == "pass":
        return f"pass: the supervised model's top-band energy is ≥ {MAGNITUDE_MARGIN:g} dB off"
    return f"fail: the supervised model's top-band energy is within {MAGNITUDE_MARGIN:g} dB of the truth"


def curved_gate(one_to_many_nmse: Sequence[float]) -> str:
    """Gate "curved": the base flow's one-step sample is at least ``CURVE_GATE`` dB (NMSE) away from its
    many-step sample from the same noise (interval): one Euler step is not already the answer, so reflow can
    show an effect."""
    word = gate(one_to_many_nmse, CURVE_GATE)
    if word == "pass":
        return f"pass: the base flow's one step lands ≥ {CURVE_GATE:g} dB (NMSE) away from its many steps"
    return (
        f"fail: the base flow's one step lands within {CURVE_GATE:g} dB (NMSE) of its many steps (a straight flow: "
        "nothing to distil)"
    )


def compute_check(nfe_reflow: int, nfe_flow: int, nfe_supervised: int) -> str:
    """Check (by construction): reflow needs no more network evaluations per bin than a same-size regression
    network and fewer than the base flow."""
    if nfe_reflow <= nfe_supervised and nfe_reflow < nfe_flow:
        return (
            f"pass: {nfe_reflow} evaluation, {nfe_flow // nfe_reflow}× fewer than the base flow and as many as "
            "a same-size regression network"
        )
    return "fail: reflow does not reduce the number of network evaluations"


# --- the paper's claims ----------------------------------------------------------------------------------


def learning_verdict(flow_minus_pseudo: Sequence[float], flow_minus_nearest: Sequence[float]) -> str:
    """SI-SDR against the true VM, per-seed paired differences. The claim: Virtual-Flow beats the real mics'
    pseudo-target by ``LEARNING_MARGIN`` dB on the interval. A copy of the nearest real mic is a floor, not a part
    of the claim's scope: behind it (interval below the margin) the row reads no, within noise of it the row reads
    at best unclear, and clearing it earns nothing, because the pseudo-target, which every network's head starts
    from (eq. vf-head), clears it without any learning (``benchmarks/virtualflow_learning_floor_rule.md``).
    The flow is not judged against regression on the same pseudo-targets on SI-SDR: a sampler scores below the
    conditional mean on SI-SDR by construction, so that part could only read no; the flow against that
    regression is judged on a distributional measure, the top band's energy, in :func:`magnitude_verdict`."""
    what = f"≥ {LEARNING_MARGIN:g} dB SI-SDR above the real mics' pseudo-target"
    floor = compare(flow_minus_nearest, LEARNING_MARGIN)
    word = compare(flow_minus_pseudo, LEARNING_MARGIN)
    if floor == "no":
        return f"no: not {what}: not even {LEARNING_MARGIN:g} dB above a copy of the nearest real mic (the floor)"
    if floor == "unclear" and word == "yes":
        return f"unclear: {what}, but within seed noise of the floor, a copy of the nearest real mic"
    floor_said = "above the floor, a copy of the nearest mic" if floor == "yes" else "within noise of the floor"
    return {
        "yes": f"yes: {what} ({floor_said})",
        "no": f"no: not {what} ({floor_said})",
        "unclear": f"unclear: whether {what} is within seed noise ({floor_said})",
    }[word]


def magnitude_verdict(
    energy_gain: Sequence[float],
    magnitude_gain: Sequence[float],
    control_gain: Sequence[float],
    nearest_gain: Sequence[float],
    noise_gain: Sequence[float],
) -> str:
    """Top band, per-seed paired gains in dB (positive: Virtual-Flow is closer to the truth), each by
    ``MAGNITUDE_MARGIN`` on the interval. Three parts of the claim's scope: the band's energy (|ratio| smaller)
    and the bin-by-bin magnitude error against the supervised model, and the band's energy against the
    regression trained on the same pseudo-targets (``control_gain``: is it the flow that keeps the energy, or
    the targets?). Two trivial baselines come first, on the bin-by-bin magnitude error (a band's energy is
    right for any channel at the right level, so only the bin-by-bin error can tell them apart): a copy of the
    nearest real mic (``nearest_gain``) and noise at the real mics' level (``noise_gain``). Unless the flow is
    that much closer than both, the claim reads no: an estimator that a copy or level-matched noise matches
    has not "improved magnitude estimation", whatever it does against the supervised model."""
    baselines = {
        "bin-by-bin magnitude vs a copy of the nearest mic": compare(nearest_gain, MAGNITUDE_MARGIN),
        "bin-by-bin magnitude vs noise at the real mics' level": compare(noise_gain, MAGNITUDE_MARGIN),
    }
    parts = {
        "band energy vs supervised": compare(energy_gain, MAGNITUDE_MARGIN),
        "bin-by-bin magnitude vs supervised": compare(magnitude_gain, MAGNITUDE_MARGIN),
        "band energy vs regression on the same pseudo-targets": compare(control_gain, MAGNITUDE_MARGIN),
    }
    what = f"≥ {MAGNITUDE_MARGIN:g} dB closer to the truth"
    if any(w != "yes" for w in baselines.values()):
        behind = [p for p, w in baselines.items() if w != "yes"]
        said = scope_verdict({**baselines, **parts}, what).split(": ", 1)[1]
        return f"no: not {what} than a trivial baseline ({', '.join(behind)}) — {said}"
    return scope_verdict(parts, what)


def beamforming_verdict(reflow_minus_supervised: Sequence[float]) -> str:
    """Fixed-layout MVDR output SI-SDR (the missing mic's slot filled with each channel), the per-seed paired
    difference reflow minus supervised VM against ``DOWNSTREAM_MARGIN`` dB on the interval over seeds. The floor,
    the slot left empty, is the gate "useful" (the supervised channel beats it on every seed), so a reflow channel
    that beats the supervised one on every seed's mean also beats leaving the slot empty there."""
    word = compare(reflow_minus_supervised, DOWNSTREAM_MARGIN)
    said = {
        "yes": "above the supervised VM's",
        "no": (
            "below the supervised VM's (in a linear fixed layout, where a sample's unpredictable part can only add "
            "error; the paper's neural beamformer is not reproduced)"
        ),
        "unclear": "neither clearly above nor clearly below the supervised VM's",
    }[word]
    return f"{word}: the fixed-layout output with reflow's channel in the slot is {said} (interval over seeds)"


def reflow_verdict(reflow_one_minus_base_many: Sequence[float], energy_gap: Sequence[float]) -> str:
    """Reflow at one step against the base flow at many steps, per-seed paired numbers; two parts: its SI-SDR
    against the truth at most ``REFLOW_TOL`` dB below (interval above −tol), and its top-band energy ratio within
    ``MAGNITUDE_MARGIN`` dB of the base flow's (``energy_gap`` = |difference|, interval below the margin): a
    one-step model that fell back to the conditional mean would keep the SI-SDR but lose the band's energy."""
    parts = {
        f"SI-SDR within {REFLOW_TOL:g} dB": compare(reflow_one_minus_base_many, -REFLOW_TOL),
        f"top-band energy within {MAGNITUDE_MARGIN:g} dB": compare(energy_gap, MAGNITUDE_MARGIN, "below"),
    }
    return scope_verdict(parts, "reflow's one step against the base flow's many steps")


_ABOVE, _BELOW, _NOISY = [2.0, 2.5, 2.2], [-1.0, -0.5, -0.8], [-3.0, 4.0, 1.0]

CRITERIA: tuple[Criterion, ...] = (
    Criterion(
        "room",
        "gate",
        room_gate,
        LEARNING_MARGIN,
        "supervised − pseudo-target ≥ 1 dB (interval)",
        {"pass": ((_ABOVE,), {}), "fail": ((_NOISY,), {})},
    ),
    Criterion(
        "room_mean",
        "check",
        room_mean_check,
        LEARNING_MARGIN,
        "mean over seeds of supervised − pseudo-target ≥ 1 dB (no interval; decides nothing, read by room_tally)",
        {"pass": (([-3.0, 6.0, 1.5],), {}), "fail": ((_NOISY,), {})},
    ),
    Criterion(
        "physical",
        "gate",
        physical_gate,
        PHYSICAL_GATE,
        "physical-mic MVDR − random-channel MVDR ≥ 1 dB (interval)",
        {"pass": ((_ABOVE,), {}), "fail": (([-0.1, -0.2, 0.0],), {})},
    ),
    Criterion(
        "useful",
        "gate",
        useful_gate,
        USEFUL_GATE,
        "fixed-layout MVDR, supervised VM in the slot − the slot left empty ≥ 0.5 dB on every seed",
        {"pass": ((_ABOVE,), {}), "fail": (([3.0, 0.4, 2.5],), {})},
    ),
    Criterion(
        "headroom",
        "gate",
        headroom_gate,
        MAGNITUDE_MARGIN,
        "|supervised top-band energy ratio| ≥ 1 dB (interval)",
        {"pass": (([5.0, 4.5, 5.5],), {}), "fail": (([0.2, 0.4, 0.3],), {})},
    ),
    Criterion(
        "curved",
        "gate",
        curved_gate,
        CURVE_GATE,
        "NMSE of the base flow's one step to its many steps ≥ −10 dB (interval)",
        {"pass": (([-3.0, -4.0, -3.5],), {}), "fail": (([-30.0, -28.0, -31.0],), {})},
    ),
    Criterion(
        "compute",
        "check",
        compute_check,
        "NFE",
        "reflow's evaluations ≤ supervised's and < base flow's",
        {"pass": ((1, 8, 1), {}), "fail": ((2, 2, 1), {})},
    ),
    Criterion(
        "learning",
        "claim",
        learning_verdict,
        LEARNING_MARGIN,
        "≥ 1 dB SI-SDR above the real mics' pseudo-target (interval); a nearest-mic copy is a floor: behind it no",
        {
            "yes": ((_ABOVE, _ABOVE), {}),
            "no": ((_ABOVE, _BELOW), {}),
            "unclear": ((_NOISY, _ABOVE), {}),
        },
    ),
    Criterion(
        "magnitude",
        "claim",
        magnitude_verdict,
        MAGNITUDE_MARGIN,
        "top band ≥ 1 dB closer: bin-by-bin error vs a nearest-mic copy and level-matched noise (else no); energy "
        "and bin-by-bin error vs supervised, energy vs regression on the same targets",
        {
            "yes": ((_ABOVE, _ABOVE, _ABOVE, _ABOVE, _ABOVE), {}),
            "partly": ((_ABOVE, _BELOW, _BELOW, _ABOVE, _ABOVE), {}),
            "no": ((_ABOVE, _ABOVE, _ABOVE, _BELOW, _ABOVE), {}),
            "unclear": ((_NOISY, _BELOW, _BELOW, _ABOVE, _ABOVE), {}),
        },
        scoped=True,
    ),
    Criterion(
        "beamforming",
        "claim",
        beamforming_verdict,
        DOWNSTREAM_MARGIN,
        "fixed-layout MVDR: reflow VM in the slot − supervised VM in the slot > 0 dB (interval)",
        {
            "yes": ((_ABOVE,), {}),
            "no": ((_BELOW,), {}),
            "unclear": ((_NOISY,), {}),
        },
    ),
    Criterion(
        "reflow",
        "claim",
        reflow_verdict,
        -REFLOW_TOL,
        "reflow one step − base many steps ≥ −0.5 dB SI-SDR, |top-band energy difference| ≤ 1 dB (interval)",
        {
            "yes": (([-0.1, 0.1, 0.0], [0.2, 0.3, 0.25]), {}),
            "partly": (([-0.1, 0.1, 0.0], [3.0, 3.5, 3.2]), {}),
            "no": (([-3.0, -2.5, -2.8], [3.0, 3.5, 3.2]), {}),
            "unclear": ((_NOISY, [3.0, 3.5, 3.2]), {}),
        },
        scoped=True,
    ),
)


def _below_real(results: VirtualFlowResults) -> bool:
    """Is every fixed-layout fill-in but the physical mic below the real mics' own refitted MVDR in the same rooms
    (means over seeds)?"""
    a = results.summary["aggregate"]
    return all(a[f"fixed_sisdr/{b}"]["mean"] < a["fixed_sisdr/real"]["mean"] for b in FIXED_LAYOUT if b != "physical")


def fixed_rooms(cfg: VirtualFlowConfig) -> str:
    """The rooms per seed the fixed layout is read on, in words."""
    if not cfg.n_fixed_scenes:
        return f"its {cfg.n_test_scenes} test rooms"
    return (
        f"{cfg.n_test_scenes + cfg.n_fixed_scenes} rooms (its {cfg.n_test_scenes} test rooms and "
        f"{cfg.n_fixed_scenes} more, evaluation only)"
    )


def reflow_rooms(cfg: VirtualFlowConfig) -> str:
    """The rooms per seed the reflow row is read on, in words."""
    n_gate = reflow_gate_rooms(cfg)
    if not n_gate:
        return f"its {cfg.n_test_scenes} test rooms"
    return (
        f"{cfg.n_test_scenes + n_gate} rooms (its {cfg.n_test_scenes} test rooms and {n_gate} of the gate rooms, on "
        "which no network is trained)"
    )


def reflow_row_values(results: VirtualFlowResults) -> tuple[list[float], list[float], list[float]]:
    """The reflow row's per-seed quantities, means over the seed's test rooms and gate rooms (the same solves from one
    noise draw per room, :func:`~explorables.virtualflow.experiment.reflow_row_scores`;
    ``benchmarks/virtualflow_reflow_rooms_rule2.md``): SI-SDR of reflow's one step minus the base flow's
    ``n_sample_steps``; |top-band energy ratio difference| between them; the same difference signed."""
    cfg = results.config
    top, k = cfg.n_bands - 1, cfg.n_sample_steps
    si = _diff(per_seed(results, "reflow_row/sisdr/reflow/1"), per_seed(results, f"reflow_row/sisdr/flow/{k}"))
    signed = _diff(
        per_seed(results, "reflow_row/energy/reflow/1", top), per_seed(results, f"reflow_row/energy/flow/{k}", top)
    )
    return si, [abs(x) for x in signed], signed


def room_values(results: VirtualFlowResults) -> list[float]:
    """The gate "room"'s quantity per seed: SI-SDR of the supervised network minus the real mics' pseudo-target,
    both against the true virtual signal, means over the seed's test rooms and gate rooms (the rooms the gate
    "physical" reads; a larger room sample than the test rooms alone: ``benchmarks/virtualflow_room_rule8.md``)."""
    return _diff(per_seed(results, "room_sisdr/supervised"), per_seed(results, "room_sisdr/pseudo"))


def per_seed(results: VirtualFlowResults, key: str, index: int | None = None) -> list[float]:
    """One number per seed of ``config.seeds`` from the per-seed summaries (``index``: a band of a list)."""
    out = []
    for s in results.config.seeds:
        value = results.summary[f"seed_{s}"][key]
        out.append(float(value if index is None else value[index]))
    return out


def claims(results: VirtualFlowResults) -> list[Claim]:
    """Evaluate the abstract's claims on ``results`` (criteria in ``CRITERIA`` above)."""
    cfg, a = results.config, results.summary["aggregate"]
    n = len(cfg.seeds)
    si = {m: a[f"sisdr/{m}"] for m in METHODS}
    top = cfg.n_bands - 1
    k_many = cfg.n_sample_steps
    setting = (
        f"{cfg.n_train_scenes} training and {cfg.n_test_scenes} test rooms per seed, {n} seeds, "
        f"{cfg.n_mics} real mics (+ {cfg.n_aux} held out for the training targets), {cfg.fs // 1000} kHz"
    )
    sis = {m: per_seed(results, f"sisdr/{m}") for m in METHODS}
    energy = {m: per_seed(results, f"energy/{m}", top) for m in METHODS}
    magerr = {m: per_seed(results, f"magerr/{m}", top) for m in METHODS}
    room = room_values(results)
    physical = _diff(per_seed(results, "gate_beam/physical"), per_seed(results, "gate_beam/random"))
    n_gate = cfg.n_test_scenes + cfg.n_gate_scenes
    fixed = {b: per_seed(results, f"fixed_sisdr/{b}") for b in FIXED_LAYOUT}
    fix = {b: a[f"fixed_sisdr/{b}"] for b in FIXED_LAYOUT}
    useful = _diff(fixed["supervised"], fixed["empty"])
    headroom = [abs(x) for x in energy["supervised"]]
    curved = per_seed(results, "to_teacher/flow/1")
    energy_gain = _diff(headroom, [abs(x) for x in energy["flow"]])
    magnitude_gain = _diff(magerr["supervised"], magerr["flow"])
    nearest_gain = _diff(magerr["nearest"], magerr["flow"])
    noise_gain = _diff(magerr["noise"], magerr["flow"])
    control_gain = _diff([abs(x) for x in energy["control"]], [abs(x) for x in energy["flow"]])
    reflow_si, reflow_energy_gap, _ = reflow_row_values(results)
    row = {(m, k): f"reflow_row/sisdr/{m}/{k}" for m, k in (("reflow", 1), ("flow", 1), ("flow", k_many))}
    row_energy = {mk: key.replace("/sisdr/", "/energy/") for mk, key in row.items()}
    note = "mean [95% t-interval] over seeds"
    rows = [
        Claim(
            "The input holds more than the pseudo-target (positive control)",
            f"SI-SDR against the true VM: the supervised network (trained on the truth) minus the real mics' "
            f"pseudo-target, on {n_gate} rooms per seed (the {cfg.n_test_scenes} test rooms and {cfg.n_gate_scenes} "
            f"more that no network is trained on); {setting}",
            f"{_iv(room)} ({note})",
            room_gate(room),
            kind="gate",
            name="room",
        ),
        Claim(
            "An oracle virtual channel (what a mic at the virtual position records) helps the beamformer "
            "(positive control)",
            "MVDR on the real mics plus a *physical* mic at the virtual position (the oracle virtual channel), against "
            "the real mics plus a random channel (no information; MVDR gains from an extra dimension alone); output "
            f"SI-SDR on the speech part; {n_gate} rooms per seed (the {cfg.n_test_scenes} test rooms and "
            f"{cfg.n_gate_scenes} more that no network sees)",
            f"{_iv(physical)} ({note})",
            physical_gate(physical),
            kind="gate",
            name="physical",
        ),
        Claim(
            "The best-informed virtual channel we have fills a missing mic's slot better than nothing (positive "
            "control)",
            "fixed-layout MVDR (weights fitted on the real mics plus a physical mic at the virtual position, in the "
            "same room: an oracle calibration; not refitted): the *supervised* virtual channel (trained on the truth, "
            "computed at test from the real mics alone) in that mic's slot, against the slot left empty (zeros); "
            f"output SI-SDR on the speech part, each seed's mean over {fixed_rooms(cfg)}; must clear "
            f"{USEFUL_GATE:g} dB on every seed (chosen on tuning seeds after the adaptive reading failed; see the box)",
            f"per seed {', '.join(f'{x:+.2f}' for x in useful)} dB; {_iv(useful)} ({note}); beside it, not gated: "
            f"minus a random channel in the slot {_iv(_diff(fixed['supervised'], fixed['random']))}, minus a copy of "
            f"the nearest mic {_iv(_diff(fixed['supervised'], fixed['nearest']))}",
            useful_gate(useful),
            kind="gate",
            name="useful",
        ),
        Claim(
            "The supervised model's top-band energy is off (positive control)",
            f"top band ({cfg.fs / 2 * top / cfg.n_bands:.0f}–{cfg.fs / 2:.0f} Hz): |energy ratio estimate/truth| of "
            "the supervised model",
            f"{interval(headroom).format(2)} dB ({note})",
            headroom_gate(headroom),
            kind="gate",
            name="headroom",
        ),
        Claim(
            "One Euler step of the base flow is not its many-step answer (positive control)",
            f"NMSE between the base flow's one-step sample and its {cfg.reflow_teacher_steps}-step sample from the "
            "same noise (one step lands on the conditional mean; many steps on a sample)",
            f"per seed {', '.join(f'{x:+.2f}' for x in curved)} dB; {_iv(curved)} ({note})",
            curved_gate(curved),
            kind="gate",
            name="curved",
        ),
        Claim(
            "Reflow needs fewer network evaluations than the base flow",
            "network evaluations per time-frequency bin (same network size for every learned model), by construction",
            f"reflow {a['nfe']['reflow']}, base flow {a['nfe']['flow']}, supervised {a['nfe']['supervised']}",
            compute_check(a["nfe"]["reflow"], a["nfe"]["flow"], a["nfe"]["supervised"]),
            kind="check",
        ),
        Claim(
            'The gate "room"\'s quantity clears its margin on average (what a failing gate failed on)',
            "the gate \"room\"'s per-seed values (supervised minus the real mics' pseudo-target, SI-SDR against the "
            "true VM), their mean alone against the gate's margin; decides nothing",
            f"mean {interval(room).mean:+.2f} dB over {n} seeds",
            room_mean_check(room),
            kind="check",
            name="room_mean",
        ),
        Claim(
            LEARNING_CLAIM,
            f"SI-SDR against the true VM signal (which it never sees); {setting}",
            f"Virtual-Flow ({k_many} steps) {_pm(si['flow'])} dB; real mics' pseudo-target {_pm(si['pseudo'])}; "
            f"nearest mic {_pm(si['nearest'])}; supervised {_pm(si['supervised'])}; regression on the same "
            f"pseudo-targets {_pm(si['control'])}; the training targets themselves (held-out mics) "
            f"{_pm(si['pseudo_train'])}; Virtual-Flow minus the real mics' pseudo-target "
            f"{_iv(_diff(sis['flow'], sis['pseudo']))}, minus nearest mic {_iv(_diff(sis['flow'], sis['nearest']))}, "
            f"minus regression on the same pseudo-targets {_iv(_diff(sis['flow'], sis['control']))} (not judged: a "
            "sample scores below the mean on SI-SDR; the flow against that regression is judged on band energy below)",
            learning_verdict(_diff(sis["flow"], sis["pseudo"]), _diff(sis["flow"], sis["nearest"])),
            gates=("room",),
        ),
        Claim(
            "Pseudo-target training improves magnitude estimation in high-frequency bands",
            f"top band ({cfg.fs / 2 * top / cfg.n_bands:.0f}–{cfg.fs / 2:.0f} Hz): energy ratio estimate/truth "
            "(0 dB is right) and bin-by-bin magnitude error (lower is better), against the supervised model; the "
            "energy also against the regression trained on the same pseudo-targets; first, the bin-by-bin error "
            "against two trivial baselines: a copy of the nearest real mic, and noise at the real mics' level",
            f"energy: Virtual-Flow {_pm(a['energy/flow'], index=top)} dB, regression on the same pseudo-targets "
            f"{_pm(a['energy/control'], index=top)}, supervised {_pm(a['energy/supervised'], index=top)}, the "
            f"training targets {_pm(a['energy/pseudo_train'], index=top)}; magnitude "
            f"error: Virtual-Flow {_pm(a['magerr/flow'], index=top)} dB, supervised "
            f"{_pm(a['magerr/supervised'], index=top)}, nearest-mic copy {_pm(a['magerr/nearest'], index=top)}, "
            f"level-matched noise {_pm(a['magerr/noise'], index=top)}; Virtual-Flow closer than the nearest-mic copy "
            f"by {_iv(nearest_gain)}, than the noise by {_iv(noise_gain)} (bin by bin); than the supervised model by "
            f"{_iv(energy_gain)} (energy), {_iv(magnitude_gain)} (bin by bin); than the regression on the "
            f"same pseudo-targets by {_iv(control_gain)} (energy)",
            magnitude_verdict(energy_gain, magnitude_gain, control_gain, nearest_gain, noise_gain),
            gates=("headroom",),
        ),
        Claim(
            "With reflow, it beats supervised neural VME on downstream beamforming",
            "fixed-layout MVDR (weights fitted on the real mics plus a physical mic at the virtual position, steering "
            "from the simulator's talker image, noise covariance from the noise-only lead; not refitted), the "
            "physical mic's slot filled with a VM channel; output SI-SDR on the speech part against the talker's "
            f"image at mic 0, each seed's mean over {fixed_rooms(cfg)}; a linear downstream: it rewards the "
            "conditional mean, not a sample",
            f"slot filled with: reflow VM {_pm(fix['reflow'])} dB; supervised VM {_pm(fix['supervised'])}; nothing "
            f"{_pm(fix['empty'])}; the physical mic {_pm(fix['physical'])}; the real mics alone, refitted, "
            f"{_pm(a['fixed_sisdr/real'])}{' (above every fill-in)' if _below_real(results) else ''}; reflow VM minus "
            "supervised VM "
            f"{_iv(_diff(fixed['reflow'], fixed['supervised']))}, minus the empty slot "
            f"{_iv(_diff(fixed['reflow'], fixed['empty']))} (not judged)",
            beamforming_verdict(_diff(fixed["reflow"], fixed["supervised"])),
            gates=("physical", "useful"),
        ),
        Claim(
            "Reflow distillation gives one-step sampling",
            f"SI-SDR against the truth and top-band energy ratio, reflow at 1 Euler step against the base flow at "
            f"{k_many} from the same noise draw, each seed's mean over {reflow_rooms(cfg)}; reflow retrained on "
            f"{cfg.n_reflow_pairs:,} noise-to-sample pairs",
            f"SI-SDR: reflow 1 step {_pm(a[row['reflow', 1]])} dB; base 1 step {_pm(a[row['flow', 1]])}; base "
            f"{k_many} steps {_pm(a[row['flow', k_many]])}; reflow 1 step minus base {k_many} steps "
            f"{_iv(reflow_si)}; top-band energy ratio: reflow 1 step "
            f"{_pm(a[row_energy['reflow', 1]], index=top)} dB, base 1 step "
            f"{_pm(a[row_energy['flow', 1]], index=top)}, base {k_many} steps "
            f"{_pm(a[row_energy['flow', k_many]], index=top)}; |reflow − base {k_many} steps| "
            f"{interval(reflow_energy_gap).format(2)} dB",
            reflow_verdict(reflow_si, reflow_energy_gap),
            gates=("curved",),
        ),
    ]
    return rows


def method_table(results: VirtualFlowResults) -> str:
    """Per estimator: SI-SDR against the truth, per-band NMSE and energy ratio (mean ± sd over seeds), network
    evaluations per bin, and wall-clock milliseconds per second of audio on this machine (one CPU run, noisy)."""
    cfg, a = results.config, results.summary["aggregate"]
    edges = [cfg.fs / 2 * b / cfg.n_bands / 1000 for b in range(cfg.n_bands + 1)]
    bands = [f"{edges[b]:g}–{edges[b + 1]:g} kHz" for b in range(cfg.n_bands)]
    header = (
        "estimator",
        "SI-SDR (dB)",
        *[f"NMSE {b}" for b in bands],
        *[f"energy {b}" for b in bands],
        "evals",
        "ms per s of audio",
    )
    rows = []
    for m in METHODS:
        nmse, en = a[f"nmse/{m}"], a[f"energy/{m}"]
        rows.append(
            (
                METHOD_LABELS[m],
                _pm(a[f"sisdr/{m}"]),
                *[fmt_pm(mu, sd, 1) for mu, sd in zip(nmse["mean"], nmse["sd"], strict=True)],
                *[("+" if mu >= 0 else "") + fmt_pm(mu, sd, 1) for mu, sd in zip(en["mean"], en["sd"], strict=True)],
                a["nfe"][m],
                f"{1e3 * a['compute_seconds'][m]['mean']:.1f}",
            )
        )
    return table(header, rows)


def beamforming_table(results: VirtualFlowResults) -> str:
    """Per channel set: MVDR output SI-SDR and STOI (mean ± sd over seeds) and the gain over the real mics alone."""
    a = results.summary["aggregate"]
    real = a["beam_sisdr/real"]["mean"]
    rows = [
        (
            BEAM_LABELS[b],
            _pm(a[f"beam_sisdr/{b}"]),
            f"{a[f'beam_sisdr/{b}']['mean'] - real:+.2f}",
            _pm(a[f"beam_stoi/{b}"], 3),
        )
        for b in BEAMFORMING
    ]
    return table(("channels", "MVDR SI-SDR (dB)", "gain (dB)", "STOI"), rows)


def fixed_table(results: VirtualFlowResults) -> str:
    """The fixed-layout MVDR per fill-in of the physical mic's slot: output SI-SDR (mean ± sd over seeds), its gain
    over the real mics' own refitted MVDR (the first row, the line every fill-in is measured against) and over the
    slot left empty, and the same channel in the adaptive (refitted) MVDR where that is a channel set of its own."""
    a = results.summary["aggregate"]
    real = a["fixed_sisdr/real"]["mean"]
    empty = a["fixed_sisdr/empty"]["mean"]
    ref = _pm(a["fixed_sisdr/real"])
    rows = [("the real mics alone, refitted (no slot)", ref, "+0.00", "", ref)]
    for b in FIXED_LAYOUT:
        mu = a[f"fixed_sisdr/{b}"]["mean"]
        adaptive = _pm(a[f"beam_sisdr/{b}"]) if b in BEAMFORMING else "—"
        rows.append((FIXED_LABELS[b], _pm(a[f"fixed_sisdr/{b}"]), f"{mu - real:+.2f}", f"{mu - empty:+.2f}", adaptive))
    header = (
        "in the physical mic's slot",
        "fixed layout SI-SDR (dB)",
        "vs real mics refitted",
        "vs empty slot",
        "adaptive MVDR (refitted)",
    )
    return table(header, rows)


def _untested_clause(results: VirtualFlowResults) -> str:
    """When the gate "useful" fails: the downstream claim reads untested on this run, with the interval it would
    have been read on (reflow minus the supervised channel); empty when the gate passes."""
    fixed = {b: per_seed(results, f"fixed_sisdr/{b}") for b in ("supervised", "empty", "reflow")}
    if not useful_gate(_diff(fixed["supervised"], fixed["empty"])).startswith("fail"):
        return ""
    return (
        ' — so on this run the downstream claim reads "untested", although reflow minus the supervised channel '
        f"lies {_iv(_diff(fixed['reflow'], fixed['supervised']))} (the same interval as below)"
    )


def _control_sentence(results: VirtualFlowResults) -> str:
    """What the fixed layout's gap is about: the regression on the same pseudo-targets as the flow (no ground
    truth) against the supervised channel, and reflow against that regression, each an interval over seeds. The
    gap is called sampling, not the missing ground truth, only when the first interval straddles 0 dB and the
    second lies below it; otherwise the sentence points at the two intervals."""
    fixed = {b: per_seed(results, f"fixed_sisdr/{b}") for b in ("supervised", "control", "reflow")}
    truth = _diff(fixed["control"], fixed["supervised"])
    sampling = _diff(fixed["reflow"], fixed["control"])
    t = interval(truth)
    reading = (
        ": the gap is sampling, not the missing ground truth"
        if t.low < 0 < t.high and interval(sampling).high < 0
        else " (see the two intervals: together they do not single out sampling or the missing ground truth as the gap)"
    )
    return (
        "The regression trained on the same pseudo-targets as the flow, without the truth, fills the slot "
        f"{_iv(truth)} against the supervised channel, and reflow {_iv(sampling)} against that regression{reading}."
    )


def below_real_clause(results: VirtualFlowResults) -> str:
    """The intro's clause on the real mics' own refitted MVDR, chosen by :func:`_below_real` (means over seeds)."""
    if _below_real(results):
        return (
            "and, in our runs, no virtual channel there brings the output up to the real microphones' own refitted "
            "beamformer: it stands in for a missing microphone, it adds no information"
        )
    return (
        "and, in our runs, not every virtual channel there stays below the real microphones' own refitted "
        "beamformer on average (the fixed-layout table says which)"
    )


def fixed_sentence(results: VirtualFlowResults) -> str:
    """The fixed layout read in words: the gate "useful" (supervised minus the empty slot, every seed), the
    supervised channel against a random channel and a nearest-mic copy (reported, not gated), how much of the
    physical mic's lead over an empty slot it recovers, the flows against it (the downstream claim), and where all of
    it sits against the real mics' own refitted MVDR."""
    a = results.summary["aggregate"]
    fixed = {b: per_seed(results, f"fixed_sisdr/{b}") for b in FIXED_LAYOUT}
    real = per_seed(results, "fixed_sisdr/real")
    useful = _diff(fixed["supervised"], fixed["empty"])
    mean = {b: a[f"fixed_sisdr/{b}"]["mean"] for b in FIXED_LAYOUT}
    span = mean["physical"] - mean["empty"]
    share = 100 * (mean["supervised"] - mean["empty"]) / span if span > 0 else float("nan")
    said = (
        "In the fixed layout the supervised channel beats the empty slot by "
        f"{', '.join(f'{x:+.2f}' for x in useful)} dB on the {len(useful)} seeds (each a mean over the test rooms; "
        f'the gate "useful" asks ≥ {USEFUL_GATE:g} dB on every seed, and it reads '
        f"{useful_gate(useful).split(':')[0]}{_untested_clause(results)}). Beside it, not gated: it beats a random "
        "channel in the slot by "
        f"{_iv(_diff(fixed['supervised'], fixed['random']))} and a copy of the nearest real microphone by "
        f"{_iv(_diff(fixed['supervised'], fixed['nearest']))} (mean [95% t-interval] over seeds). A random channel "
        "is a weak control here: it feeds noise through the slot's weight, so even zeros beat it by "
        f"{_iv(_diff(fixed['empty'], fixed['random']))}."
    )
    if span > 0:
        said += (
            f" Of the physical microphone's lead over the empty slot ({span:+.2f} dB), the supervised channel "
            f"recovers about {share:.0f}%."
        )
    said += (
        " Downstream, the method's channels in the slot against the supervised one: reflow "
        f"{_iv(_diff(fixed['reflow'], fixed['supervised']))}, the base flow "
        f"{_iv(_diff(fixed['flow'], fixed['supervised']))}; reflow against the empty slot "
        f"{_iv(_diff(fixed['reflow'], fixed['empty']))}."
    )
    said += " " + _control_sentence(results)
    if _below_real(results):
        said += (
            " Every fill-in but the physical microphone stays below the real microphones' own refitted MVDR, on "
            f"average over seeds (the supervised channel minus that MVDR: {_iv(_diff(fixed['supervised'], real))}): "
            "a virtual channel here stands in for a missing microphone in a beamformer that cannot be refitted; it "
            "brings no information the real microphones lack."
        )
    else:
        said += (
            " Not every fill-in stays below the real microphones' own refitted MVDR on average: see the table for "
            "which."
        )
    return said


def physical_sentence(results: VirtualFlowResults) -> str:
    """The beamformer's own controls: what a *physical* microphone at the virtual position and a random channel
    (no information) add to the MVDR output (means over seeds, on the test and the gate rooms), read as the gate
    "physical" reads it (:func:`physical_gate`, physical minus random on the interval over seeds)."""
    gates = {b: per_seed(results, f"gate_beam/{b}") for b in ("real", "random", "physical")}
    n = len(gates["real"])
    gain = {b: sum(_diff(gates[b], gates["real"])) / n for b in ("random", "physical")}
    physical = _diff(gates["physical"], gates["random"])
    n_rooms = results.config.n_test_scenes + results.config.n_gate_scenes
    said = (
        f"Over the real microphones alone, a physical microphone at the virtual position (the oracle virtual "
        f"channel: what a perfect virtual microphone would hand the beamformer) adds "
        f"{gain['physical']:+.2f} dB to the MVDR output, and a channel of pure random noise {gain['random']:+.2f} dB "
        f"(means over {n_rooms} rooms per seed and the seeds)."
    )
    if gain["random"] > 0:
        said += (
            " The steering vector is cross-fitted (no output frame is filtered with weights fitted on it), so that "
            "gain is no chance correlation with the talker on the scored frames. Where it comes from we have not "
            "measured; our guess is the noise channel's own steering entry, a chance number estimated on the other "
            "half, which would lower the MVDR's gain most where the talker is weak, a per-frequency attenuation that "
            "SI-SDR rewards."
        )
    said += " So in this beamformer every virtual channel is measured against the random one."
    if physical_gate(physical).startswith("fail"):
        return (
            f"{said} The physical microphone's lead over the random channel, {_iv(physical)} (mean [95% t-interval] "
            f"over seeds), does not clear the gate's {PHYSICAL_GATE:g} dB on the interval: our beamformer cannot tell "
            "information from an extra dimension well enough, and the downstream comparison cannot be made here."
        )
    return (
        f"{said} The physical microphone's lead over the random channel, {_iv(physical)} (mean [95% t-interval] over "
        f"seeds), clears the gate's {PHYSICAL_GATE:g} dB: the beamformer does use information in a good extra "
        "channel. That is necessary, not sufficient, for a virtual channel to help: the physical microphone helps "
        "through what the real microphones do not record, and a channel computed from their recordings can add only "
        "what they predict of it (the reading below says why that is next to nothing for this beamformer; the gate "
        '"useful" is read in the fixed layout further down).'
    )


def span_sentence(results: VirtualFlowResults) -> str:
    """Why a virtual channel helps the MVDR or not: what part of each channel lies outside the real channels' span
    (:func:`~explorables.virtualflow.downstream.new_information`), how much of the physical microphone's own such
    part it carries, the supervised channel against the random one (the gate "useful"'s reading before the fixed
    layout; now a diagnostic), and the flow's training target against the random one as a labelled diagnostic. No
    gate reads the adaptive MVDR's virtual channels: "useful" is read in the fixed layout (:func:`fixed_sentence`)."""
    a = results.summary["aggregate"]
    out = {m: a[f"outside/{m}"]["mean"] for m in ("physical", "supervised", "flow", "reflow", "noise", "pseudo")}
    cap = {
        m: 100 * a[f"captured/{m}"]["mean"]
        for m in ("supervised", "control", "flow", "reflow", "noise", "pseudo_train")
    }
    beams = {b: per_seed(results, f"beam_sisdr/{b}") for b in ("real", "random", "supervised", "pseudo_train")}
    n = len(beams["real"])
    sup_real = sum(_diff(beams["supervised"], beams["real"])) / n
    useful = _diff(beams["supervised"], beams["random"])
    target = _diff(beams["pseudo_train"], beams["random"])
    said = (
        "Why the virtual channels do not help it: per frequency, the MVDR already forms every fixed combination of "
        "the real channels, so an extra channel can add only its part outside their span (the residual of its "
        "least-squares fit by the real channels over the speech frames). A physical microphone at the virtual "
        f"position has {out['physical']:.1f} dB of its energy there (relative to its whole energy). The supervised "
        f"virtual channel has {out['supervised']:.1f} dB, Virtual-Flow {out['flow']:.1f} dB, reflow "
        f"{out['reflow']:.1f} dB, the real mics' pseudo-target {out['pseudo']:.0f} dB (none: it is a fixed "
        f"combination of them) and the random channel {out['noise']:.1f} dB (nearly all of it). Of the physical "
        f"microphone's outside part, the supervised channel carries {cap['supervised']:.0f}%, the regression on the "
        f"pseudo-targets {cap['control']:.0f}%, Virtual-Flow {cap['flow']:.0f}%, reflow {cap['reflow']:.0f}% and the "
        f"random channel {cap['noise']:.0f}% (chance: about one part in the number of speech frames); the flow's "
        f"training target, built with the held-out microphones, {cap['pseudo_train']:.0f}%."
    )
    if max(cap["flow"], cap["reflow"]) < 2 * cap["noise"] and max(out["flow"], out["reflow"]) > out["supervised"]:
        said += (
            " The flows put more of their energy outside the span than the supervised channel, but what they put "
            "there is their own draw of what the real microphones cannot see, no closer to the physical "
            "microphone's than noise is."
        )
    said += (
        " Every network here mixes the real channels of the same bin (its filter-and-sum head); beyond them it "
        "can add only what the neighbouring frames and its nonlinearity predict"
    )
    if sup_real < 0:
        said += (
            ", and a channel that is almost a combination of the others makes the noise covariance nearly singular, "
            "where errors of the steering vector cost output quality"
        )
    said += (
        f". The supervised channel changes the output by {sup_real:+.2f} dB over the real microphones alone, and by "
        f"{_iv(useful)} against the random channel (mean [95% t-interval] over seeds)"
    )
    if compare(useful, USEFUL_GATE) != "yes":
        said += (
            f', not clearly {USEFUL_GATE:g} dB (the margin of the gate "useful", which read this difference before '
            "the fixed layout) above it on the interval. So no virtual channel of ours is worth more than noise to a "
            "beamformer that refits its weights to the channels it is given: it can already form every fixed "
            "combination of the real ones. Nor does this show what the paper's downstream (a neural beamformer) would "
            "do; a stronger downstream needs a channel computed from its own inputs less, not more, so a gain has to "
            "come from a limit of the downstream that the channel makes up for, such as a fixed input layout (below)"
        )
    else:
        said += f", clearly {USEFUL_GATE:g} dB above it on the interval"
    return (
        f"{said}. A diagnostic, not a gate: the flow's training target scores {_iv(target)} against the random "
        f"channel and carries {cap['pseudo_train']:.0f}% of the physical microphone's outside part. It is a fixed "
        f"beam of the {results.config.n_aux} held-out *physical* microphones, what the training array records, so "
        'it is close kin of the gate "physical", not a control for any virtual channel: a channel computed at test '
        "from the real microphones cannot carry what those microphones recorded, and an ideal conditional sampler "
        "cannot pass on it either."
    )


def reflow_sentence(results: VirtualFlowResults) -> str:
    """How to read the reflow row: which of its two parts hold (as :func:`reflow_verdict` decides them)."""
    si_diff, gap, signed = reflow_row_values(results)
    si = compare(si_diff, -REFLOW_TOL)
    energy = compare(gap, MAGNITUDE_MARGIN, "below")
    overshoot = sum(signed) > 0
    said = (
        f"Reflow's two parts, each seed's mean over {reflow_rooms(results.config)}: SI-SDR within {REFLOW_TOL:g} dB "
        f"of the base flow's many steps reads {si} (reflow's one step minus them {_iv(si_diff)}); top-band energy "
        f"within {MAGNITUDE_MARGIN:g} dB of theirs reads {energy} (|difference| {interval(gap).format(2)} dB; mean "
        "[95% t-interval] over seeds)."
    )
    if energy == "no":
        how = (
            "it puts more energy in the top band than the sampler does (it overshoots; it did not fall back to the "
            "conditional mean, whose band energy is lower still)"
            if overshoot
            else "it has less top-band energy than the sampler, toward the conditional mean's"
        )
        return (
            f"{said} The energy part fails clearly, so "
            '"partly" is the best this row could read whatever its SI-SDR part does: the one-step model does not '
            f"keep the many-step sampler's band energy; {how}."
        )
    return said


def room_sentence(results: VirtualFlowResults) -> str:
    """The gate "room" in words, read as :func:`room_gate` reads it: how far a network trained on the truth gets
    above the real mics' pseudo-target (interval over seeds), and what that means for the learning claim."""
    room = room_values(results)
    cfg = results.config
    said = (
        f"A network trained on the true virtual signals themselves gets {_iv(room)} (mean [95% t-interval] over "
        "seeds) above the real microphones' pseudo-target, against the true virtual microphone (means over "
        f"{cfg.n_test_scenes + cfg.n_gate_scenes} rooms per seed)."
    )
    if room_gate(room).startswith("fail"):
        if interval(room).mean >= LEARNING_MARGIN:  # the effect is there on average; the seeds are too spread
            return (
                f"{said} The gate asks the interval's low end to clear {LEARNING_MARGIN:g} dB, and it does not: "
                f"the mean clears {LEARNING_MARGIN:g} dB, but the interval over seeds is too wide to show it, so "
                "this run cannot show that the input holds more than the pseudo-target, and whether Virtual-Flow "
                "learns more than it is untested here, not answered."
            )
        return (
            f"{said} The gate asks the interval's low end to clear {LEARNING_MARGIN:g} dB, and it does not, nor "
            "does the mean: in this setting not even supervision can reliably learn more from the real "
            "microphones than the delay-and-sum gives, so whether Virtual-Flow does is untested here, not answered."
        )
    return (
        f"{said} That clears the gate's {LEARNING_MARGIN:g} dB: the input holds more than the pseudo-target, and "
        "the learning claim is compared."
    )


def learning_room_sentence(results: VirtualFlowResults) -> str:
    """What the learning claim can show once the gate "room" passes: the gate reads the test and gate rooms, the
    claim the test rooms (the only rooms the flow is sampled on); there, the flow minus the pseudo-target, the
    regression on the same pseudo-targets (a mean estimator, no ground truth) against the pseudo-target and the
    supervised network, and the flow against that regression: what a sample pays on SI-SDR. An ideal posterior
    sampler's squared error is twice the conditional mean's (about 3 dB on SI-SDR where the error dominates),
    so for a sample to clear the pseudo-target by ``LEARNING_MARGIN`` a mean estimator must clear it by that
    plus the sample's penalty; the sentence compares that with the supervised network's own lead on those rooms
    (all intervals over seeds)."""
    cfg = results.config
    si = {m: per_seed(results, f"sisdr/{m}") for m in ("flow", "pseudo", "control", "supervised")}
    flow = _diff(si["flow"], si["pseudo"])
    control = _diff(si["control"], si["pseudo"])
    penalty = _diff(si["flow"], si["control"])
    lead = _diff(si["supervised"], si["pseudo"])
    needed = LEARNING_MARGIN - interval(penalty).mean
    word = learning_verdict(flow, _diff(per_seed(results, "sisdr/flow"), per_seed(results, "sisdr/nearest")))
    rooms = "room" if cfg.n_test_scenes == 1 else "rooms"
    said = (
        f'The gate "room" reads {cfg.n_test_scenes + cfg.n_gate_scenes} rooms per seed; the learning claim reads the '
        f"{cfg.n_test_scenes} test {rooms}, the only ones the flow is sampled on, and there Virtual-Flow minus the "
        f"real mics' pseudo-target is {_iv(flow)}. The regression trained on the same pseudo-targets (no ground "
        f"truth; it estimates the mean) minus the pseudo-target is {_iv(control)}, and minus the supervised network "
        f"trained on the truth {_iv(_diff(si['control'], si['supervised']))}"
    )
    if compare(control, LEARNING_MARGIN) == "yes":
        said += ": learning from the pseudo-targets, without the truth, does add to them here, for a mean estimator."
    else:
        said += "."
    said += (
        f" A sample pays for its spread on SI-SDR: the flow minus that regression is {_iv(penalty)} (an ideal "
        "posterior sampler's squared error is twice the conditional mean's). For a sample to clear the "
        f"pseudo-target by {LEARNING_MARGIN:g} dB, a mean estimator would have to clear it by about {needed:.1f} dB; "
        f"the supervised network itself leads it by {interval(lead).mean:.1f} dB on these rooms"
    )
    if needed >= interval(lead).mean:
        return (
            f"{said}, so a yes would need a sampler whose mean beats the network trained on the truth: in this scene "
            f'the learning row can hardly read yes, whatever the seeds (it reads "{word.split(":")[0]}" here).'
        )
    return (
        f"{said}, so there is room for a sampler to clear the margin "
        f'(the learning row reads "{word.split(":")[0]}" here).'
    )


def _seeds_list(seeds: Sequence[int]) -> str:
    words = [str(s) for s in seeds]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def room_tally(study: dict) -> str:
    """The seed study's tally of the gate "room" in words: on which base seeds it fails (and on how many of those
    its mean alone still cleared the margin: the check row "room_mean"'s verdict words, decided on the numbers by
    :func:`room_mean_check` when the study ran, no text parsed), on which it passes, and on how many base seeds the
    learning claim therefore reads "untested"."""
    rows = study["rows"]
    gate_row = next((r for r in rows if r["kind"] == "gate" and r.get("name") == "room"), None)
    mean_row = next((r for r in rows if r["kind"] == "check" and r.get("name") == "room_mean"), None)
    learn_row = next((r for r in rows if r["claim"] == LEARNING_CLAIM), None)
    if gate_row is None or mean_row is None or learn_row is None:
        raise ValueError(
            "study must hold the gate row named 'room', the check row named 'room_mean' and the learning claim's row"
        )
    seeds = study["seeds"]
    words = {
        key: dict(zip(seeds, row["verdicts"], strict=True))
        for key, row in (("gate", gate_row), ("mean", mean_row), ("learn", learn_row))
    }
    failed = [s for s in seeds if words["gate"][s] == "fail"]
    passed = [s for s in seeds if words["gate"][s] == "pass"]
    untested = [s for s in seeds if words["learn"][s] == "untested"]
    n = len(seeds)
    if not failed:
        return f'the gate "room" passed on all {n} base seeds, so the learning claim was compared on every one'
    cleared = sum(words["mean"][s] == "pass" for s in failed)
    if cleared == len(failed):
        why = (
            f"its mean cleared {LEARNING_MARGIN:g} dB there, but the spread over inner seeds kept the interval's low "
            "end below it"
        )
    elif cleared:
        why = (
            f"on {cleared} of them its mean cleared {LEARNING_MARGIN:g} dB but the spread over inner seeds kept the "
            "interval's low end below it"
        )
    else:
        why = f"its mean stayed below {LEARNING_MARGIN:g} dB there"
    said = f'the gate "room" failed on {len(failed)} of {n} base seeds ({_seeds_list(failed)}; {why})'
    said += f" and passed on {_seeds_list(passed)}" if passed else ""
    if untested:
        said += f', so the learning claim reads "untested" on {len(untested)} of {n} ({_seeds_list(untested)})'
    return said


def band_sentence(results: VirtualFlowResults) -> str:
    """Where the pseudo-target is right and where wrong: its NMSE in the lowest and the highest band."""
    cfg, a = results.config, results.summary["aggregate"]
    nmse = a["nmse/pseudo"]["mean"]
    trend = "grows" if nmse[-1] > nmse[0] else "does not grow"
    return (
        f"The pseudo-target's error {trend} with frequency: {nmse[0]:.1f} dB below "
        f"{cfg.fs / 2 / cfg.n_bands:.0f} Hz, {nmse[-1]:.1f} dB in the top band (0 dB is an error as large as "
        "the signal)."
    )
