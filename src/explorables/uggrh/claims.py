"""The chapter's tables: what we verified (checks), what the setup can show (gates), the paper's claims.

Every threshold is a module constant below and every verdict function is declared in
:data:`CRITERIA`, with synthetic inputs that reach each of its branches (the contract test drives
them). Claims are decided on the interval (95% t-interval: mean ± t·se) of per-seed paired differences
(:mod:`explorables.core.verdicts`): a seed sets the split, the missing pattern and the networks, the
same for every method. "mAP" is the mean of image->text and text->image mAP@all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..core.tables import Claim, checks_table, markdown_table  # noqa: F401 - what the notebook imports
from ..core.tables import claims_table as claims_markdown  # noqa: F401 - what the notebook imports
from ..core.verdicts import Criterion, compare, fmt_mean_sd, gate, interval, scope_verdict
from .experiment import METHOD_NAMES, UGGRHResults, part_name

# --- thresholds: the one declared place ---------------------------------------------------------
#: the research notes' pass mark for "more accurate", written before any run: +3 mAP points (also the
#: control's and the imbalance claim's)
GAIN_MARGIN = 0.03
#: an ablation "hurts" when removing the module costs at least one mAP point
MODULE_MARGIN = 0.01
#: "more robust": UGGRH's drop is smaller than the baseline's by at least one mAP point ...
ROBUST_MARGIN = 0.01
#: ... from a start with complete data no more than this below the baseline's
START_LEVEL = 0.03
#: gate "learns": with complete data the baseline beats random codes by at least this mAP (interval)
LEARN_MARGIN = 0.1
#: gate "room": missing modalities cost the mean-fill baseline at least this mAP (interval), so a method
#: that handles them has the claimed +0.03 to win back
ROOM = GAIN_MARGIN
#: check: packed Hamming search at least this many times faster per query than float cosine search
MIN_SPEEDUP = 5.0


def _iv(values: Sequence[float] | np.ndarray, digits: int = 3) -> str:
    return interval(values).format(digits, signed=True)


def _diff(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"paired per-seed values must have the same seeds, got shapes {a.shape} and {b.shape}")
    return a - b


# --- check --------------------------------------------------------------------------------------


def speed_verdict(hamming_s: float, cosine_s: float, min_speedup: float = MIN_SPEEDUP) -> str:
    """Check: packed Hamming search is ``>= min_speedup`` times faster per query than float cosine search."""
    if hamming_s <= 0 or cosine_s <= 0:
        raise ValueError(f"timings must be > 0, got {hamming_s} and {cosine_s}")
    ratio = cosine_s / hamming_s
    if ratio >= min_speedup:
        return f"pass: {ratio:.0f}× ≥ {min_speedup:g}× faster per query, and far smaller"
    return f"fail: only {ratio:.1f}× faster per query (< {min_speedup:g}×)"


# --- gates --------------------------------------------------------------------------------------


def learns_gate(lead: Sequence[float], threshold: float = LEARN_MARGIN) -> str:
    """pass: the interval of the per-seed lead of the baseline over random codes, with complete data, clears
    ``threshold``; fail otherwise."""
    word = gate(lead, threshold)
    return f"{word}: lead over random codes {_iv(lead)} {'clears' if word == 'pass' else 'does not clear'} {threshold}"


def room_gate(baseline_drop: Sequence[float], threshold: float = ROOM) -> str:
    """pass: the interval of the mean-fill baseline's per-seed drop from complete data to the highest missing rate
    clears ``threshold``; fail otherwise (missing modalities barely hurt: nothing for UGGRH to win back)."""
    word = gate(baseline_drop, threshold)
    how = "clears" if word == "pass" else "does not clear"
    return f"{word}: baseline's drop {_iv(baseline_drop)} {how} {threshold}"


# --- claims -------------------------------------------------------------------------------------


def gain_verdict(gains_by_bits: Mapping[str, Sequence[float]], margin: float = GAIN_MARGIN) -> str:
    """UGGRH beats the baseline at a high missing rate. ``gains_by_bits``: per code length, the paired per-seed gains
    (UGGRH minus baseline on the same split and missing pattern). A code length reads yes when the gain's interval
    clears ``margin``, no when it falls short, unclear otherwise; joined over the code lengths
    (:func:`~explorables.core.verdicts.scope_verdict`)."""
    parts = {f"{b} bits": compare(g, margin) for b, g in gains_by_bits.items()}
    return scope_verdict(parts, f"gain ≥ {margin:.2f} mAP")


def robustness_part(baseline_drop: Sequence[float], uggrh_drop: Sequence[float], start_diff: Sequence[float],
                    margin: float = ROBUST_MARGIN, level: float = START_LEVEL) -> str:
    """One code length: yes when the interval of (baseline's drop minus UGGRH's) clears ``margin`` *and* UGGRH's
    start with complete data (``start_diff``: UGGRH minus baseline at 0 %, per seed) is not below the baseline's by
    more than ``level`` (its interval lies above ``-level``): a smaller fall from a lower start is not robustness.
    no when the drop difference falls short or the start is clearly lower; unclear otherwise."""
    smaller = compare(_diff(baseline_drop, uggrh_drop), margin)
    start = compare(start_diff, -level)
    if smaller == "no" or start == "no":
        return "no"
    return "yes" if smaller == start == "yes" else "unclear"


def robustness_verdict(by_bits: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]],
                       margin: float = ROBUST_MARGIN, level: float = START_LEVEL) -> str:
    """UGGRH degrades less as modalities go missing. ``by_bits``: per code length the per-seed
    ``(baseline_drop, uggrh_drop, start_diff)`` (:func:`robustness_part`); joined over the code lengths."""
    parts = {f"{b} bits": robustness_part(*v, margin=margin, level=level) for b, v in by_bits.items()}
    return scope_verdict(parts, f"drop smaller by ≥ {margin:.2f}, from a start no more than {level:.2f} lower")


def module_verdict(full: Sequence[float], ablated: Sequence[float], margin: float = MODULE_MARGIN) -> str:
    """A module contributes: the interval of the per-seed cost of removing it (UGGRH minus the ablation) against
    ``margin``: yes when it clears it, no when it falls short, unclear when it straddles it."""
    cost = _diff(full, ablated)
    word = compare(cost, margin)
    how = {"yes": "clears", "no": "falls short of", "unclear": "straddles"}[word]
    return f"{word}: the cost of removing it, {_iv(cost)}, {how} {margin:.2f} mAP"


def control_verdict(uggrh: Sequence[float], drop_incomplete: Sequence[float], margin: float = GAIN_MARGIN) -> str:
    """Control: is UGGRH's gain more than avoiding mean-fill? The interval of UGGRH minus the baseline trained on
    the complete pairs only, paired by seed, against ``margin`` (the accuracy claim's pass mark): yes when it
    clears it (UGGRH uses the incomplete pairs), no when it falls short (dropping them does as well or better),
    unclear otherwise."""
    diff = _diff(uggrh, drop_incomplete)
    word = compare(diff, margin)
    text = {"yes": "UGGRH uses the incomplete pairs, not just avoids them",
            "no": "dropping the incomplete pairs does as well or better, so UGGRH's lead over the mean-fill baseline "
                  "comes from mean-fill hurting it",
            "unclear": "within the seed-to-seed spread of the margin"}[word]  # fmt: skip
    return f"{word}: UGGRH minus the control {_iv(diff)} vs {margin:.2f}: {text}"


def imbalance_verdict(gains: Mapping[str, Sequence[float]], margin: float = GAIN_MARGIN) -> str:
    """Robust under modality imbalance: per tested share of image-missing pairs, the interval of UGGRH's per-seed
    gain over the baseline against ``margin``; joined over the shares."""
    return scope_verdict({f"{s} images missing": compare(g, margin) for s, g in gains.items()},
                         f"gain ≥ {margin:.2f} mAP")  # fmt: skip


_HI, _LO, _MID = (0.10, 0.11, 0.09), (0.0, 0.01, -0.01), (-0.1, 0.05, 0.2)
_ZERO = (0.0, 0.0, 0.0)

CRITERIA: tuple[Criterion, ...] = (
    Criterion("speed", "check", speed_verdict, MIN_SPEEDUP, "packed Hamming search >= 5x faster than cosine",
              {"pass": ((1e-4, 1e-2), {}), "fail": ((1e-3, 2e-3), {})}),
    Criterion("learns", "gate", learns_gate, LEARN_MARGIN,
              "interval of the baseline's lead over random codes, complete data, >= 0.1",
              {"pass": (((0.3, 0.32, 0.31),), {}), "fail": ((_LO,), {})}),
    Criterion("room", "gate", room_gate, ROOM,
              "interval of the mean-fill baseline's drop from 0 % to the highest missing rate >= 0.03",
              {"pass": ((_HI,), {}), "fail": ((_LO,), {})}),
    Criterion("gain", "claim", gain_verdict, GAIN_MARGIN,
              "per code length, interval of UGGRH minus baseline vs 0.03; joined over code lengths",
              {"yes": (({"16": _HI, "32": _HI},), {}), "no": (({"16": _LO, "32": _LO},), {}),
               "unclear": (({"16": _MID, "32": _LO},), {}), "partly": (({"16": _LO, "32": _HI},), {})},
              scoped=True),
    Criterion("robustness", "claim", robustness_verdict, ROBUST_MARGIN,
              "per code length, interval of the drop difference vs 0.01 and of the start difference above -0.03",
              {"yes": (({"16": (_HI, _ZERO, _ZERO)},), {}), "no": (({"16": (_HI, _ZERO, (-0.1, -0.11, -0.09))},), {}),
               "unclear": (({"16": (_MID, _ZERO, _ZERO)},), {}),
               "partly": (({"16": (_HI, _ZERO, _ZERO), "32": (_ZERO, _ZERO, _ZERO)},), {})}, scoped=True),
    Criterion("module", "claim", module_verdict, MODULE_MARGIN, "interval of the cost of removing a module vs 0.01",
              {"yes": ((_HI, _ZERO), {}), "no": ((_ZERO, _ZERO), {}), "unclear": ((_MID, _ZERO), {})}),
    Criterion("control", "claim", control_verdict, GAIN_MARGIN,
              "interval of UGGRH minus the baseline on the complete pairs only vs 0.03",
              {"yes": ((_HI, _ZERO), {}), "no": ((_ZERO, _ZERO), {}), "unclear": ((_MID, _ZERO), {})}),
    Criterion("imbalance", "claim", imbalance_verdict, GAIN_MARGIN,
              "per share of image-missing pairs, interval of UGGRH minus baseline vs 0.03; joined",
              {"yes": (({"0%": _HI, "100%": _HI},), {}), "no": (({"0%": _LO, "100%": _LO},), {}),
               "unclear": (({"0%": _MID},), {}), "partly": (({"0%": _HI, "100%": _LO},), {})}, scoped=True),
)


# --- sentences for the page (they follow the verdict functions' words) --------------------------


def control_reading(uggrh: Sequence[float], drop_incomplete: Sequence[float], margin: float = GAIN_MARGIN) -> str:
    """How to read UGGRH's lead over the mean-fill baseline, given the control (paired per-seed mAPs of UGGRH and
    of the baseline trained on the complete pairs only): the sentence follows :func:`control_verdict`'s word."""
    word = control_verdict(uggrh, drop_incomplete, margin).split(":")[0]
    diff = _iv(_diff(uggrh, drop_incomplete))
    if word == "yes":
        return (f"UGGRH stays ahead of that control by {diff} (mean [interval over seeds]), so its lead is more "
                "than avoiding mean-fill.")  # fmt: skip
    if word == "unclear":
        return (f"UGGRH minus that control is {diff} (mean [interval over seeds]), which straddles the {margin:.2f} "
                "margin: the seeds cannot tell whether its lead is more than avoiding mean-fill.")  # fmt: skip
    return (f"UGGRH minus that control is {diff} (mean [interval over seeds]), short of the {margin:.2f} margin, so "
            "most of UGGRH's lead over the mean-fill baseline measures how much mean-fill hurts the baseline, not "
            "what completing the missing half adds.")  # fmt: skip


def lower_start_reading(starts: Mapping[str, Sequence[float]], level: float = START_LEVEL) -> str:
    """Code lengths where UGGRH clearly starts more than ``level`` below the baseline with complete data.
    ``starts``: per code length, the per-seed start difference (UGGRH minus baseline mAP at 0 %)."""
    lower = [b for b, d in starts.items() if compare(d, -level) == "no"]
    if not lower:
        return f"With complete data UGGRH does not start clearly more than {level:.2f} below the baseline."
    return (f"At {', '.join(lower)} bits UGGRH already trails the baseline by more than {level:.2f} with complete "
            "data, where there is nothing to complete, so its smaller fall there says little.")  # fmt: skip


def ablation_reading(
    module_verdicts: Mapping[str, str], no_completion: float, baseline: float, control_verdict_text: str
) -> str:
    """Which modules the ablations credit (``module_verdicts``: module -> verdict), whether UGGRH without completion
    falls below the mean-fill baseline itself (mean mAPs ``no_completion`` and ``baseline``), and what the control
    (``control_verdict_text``, from :func:`control_verdict`) says about all of them together."""
    helping = [m for m, v in module_verdicts.items() if v.startswith("yes")]
    names = ", ".join(helping[:-1]) + (" and " if len(helping) > 1 else "") + (helping[-1] if helping else "")
    first = f"The ablations credit {names}" if helping else "No ablation clearly credits a module"
    first += " with part of UGGRH's lead over the mean-fill baseline"
    word = control_verdict_text.split(":")[0]
    first += {"no": ", but together they do not lift UGGRH clearly above the control.",
              "yes": ", and together they lift UGGRH above the control.",
              "unclear": "; whether together they lift UGGRH above the control, the seeds cannot tell."}[word]
    second = ""
    if no_completion < baseline:
        second = (f" Without completion our UGGRH reaches {no_completion:.3f}, below the mean-fill baseline's "
                  f"{baseline:.3f} on average: the rest of our pipeline copes worse with mean-filled rows than the "
                  "baseline does, so the completion row measures that weakness as well as what completion adds.")
    return first + second


def _values(d: Mapping) -> list[float]:
    return list(d["values"])


def _ms(d: Mapping) -> str:
    return fmt_mean_sd(d["values"], 3)


def _gains(results: UGGRHResults, rate: float) -> dict[str, np.ndarray]:
    part = results.summary[part_name(rate)]
    return {str(b): _diff(part["uggrh"][str(b)]["mean"]["values"], part["baseline"][str(b)]["mean"]["values"])
            for b in results.config.bits_grid}  # fmt: skip


def _drops(results: UGGRHResults, method: str, bits: int | str) -> np.ndarray:
    cfg, s = results.config, results.summary
    first = s[part_name(cfg.missing_rate_grid[0])][method][str(bits)]["mean"]["values"]
    last = s[part_name(cfg.missing_rate_grid[-1])][method][str(bits)]["mean"]["values"]
    return _diff(first, last)


def _starts(results: UGGRHResults) -> dict[str, np.ndarray]:
    first = results.summary[part_name(results.config.missing_rate_grid[0])]
    return {str(b): _diff(first["uggrh"][str(b)]["mean"]["values"], first["baseline"][str(b)]["mean"]["values"])
            for b in results.config.bits_grid}  # fmt: skip


def gain_sentence(results: UGGRHResults) -> str:
    """How UGGRH's gain over the baseline changes from 0% to the highest missing rate (averaged over code lengths,
    per seed), with its interval; the word follows the interval against 0."""
    rates = results.config.missing_rate_grid
    g0 = np.mean(list(_gains(results, rates[0]).values()), axis=0)
    g1 = np.mean(list(_gains(results, rates[-1]).values()), axis=0)
    trend = {"yes": "rises", "no": "falls", "unclear": "does not clearly change"}[compare(g1 - g0, 0.0)]
    return (f"Averaged over code lengths, UGGRH's gain over the baseline is {_iv(g0)} mAP with complete data and "
            f"{_iv(g1)} at {rates[-1]:.0%} missing (mean [interval over seeds]): it {trend} as modalities go "
            "missing.")  # fmt: skip


def claims(results: UGGRHResults) -> list[Claim]:
    """The checks, gates and claims of the run (criteria in :data:`CRITERIA`)."""
    cfg, s = results.config, results.summary
    n_seeds = f"{len(cfg.seeds)} seeds"
    first, high = cfg.missing_rate_grid[0], cfg.missing_rate_grid[-1]
    part, part0 = s[part_name(high)], s[part_name(first)]
    ab = s["ablations"]
    bits = str(ab["bits"])
    full = _values(part["uggrh"][bits]["mean"])
    rows: list[Claim] = []
    sp = s["speed"]["retrieval_speed"]
    rows.append(Claim(
        "Hashing to a Hamming space makes retrieval cheap in storage and time (background)",
        f"{sp['n_database']:,} items: {sp['n_bits']}-bit packed codes (XOR + popcount) vs {sp['d_float']}-d float32 "
        "cosine, top-100 per query, one core",
        f"{sp['hamming_query_s'] * 1e3:.2f} ms vs {sp['cosine_query_s'] * 1e3:.2f} ms per query "
        f"({sp['cosine_query_s'] / sp['hamming_query_s']:.0f}×); {sp['hamming_bytes'] / 2**20:.1f} MiB vs "
        f"{sp['cosine_bytes'] / 2**20:.0f} MiB",
        speed_verdict(sp["hamming_query_s"], sp["cosine_query_s"]), kind="check",
    ))  # fmt: skip
    lead = _diff(part0["baseline"][bits]["mean"]["values"], part0["random"]["values"])
    rows.append(Claim(
        "the hash codes learn: with complete data the baseline is far above random codes",
        f"{first:.0%} missing, {bits} bits, paired by seed; {n_seeds}",
        f"baseline {_ms(part0['baseline'][bits]['mean'])} vs random codes {_ms(part0['random'])}; lead {_iv(lead)}",
        learns_gate(lead), kind="gate", name="learns",
    ))  # fmt: skip
    base_drop = _drops(results, "baseline", bits)
    rows.append(Claim(
        "missing modalities hurt the mean-fill baseline (room for UGGRH to win back)",
        f"baseline's mAP at {first:.0%} minus at {high:.0%} missing, {bits} bits, paired by seed; {n_seeds}",
        f"{_ms(part0['baseline'][bits]['mean'])} → {_ms(part['baseline'][bits]['mean'])}; drop {_iv(base_drop)}",
        room_gate(base_drop), kind="gate", name="room",
    ))  # fmt: skip
    gates = ("learns", "room")
    rows.append(Claim(
        "Control: UGGRH's lead at a high missing rate is more than avoiding mean-fill",
        f"baseline trained on the complete pairs only ({1 - high:.0%} of them), {high:.0%} missing, "
        f"{bits} bits; {n_seeds}",
        f"UGGRH {_ms(part['uggrh'][bits]['mean'])} vs control {_ms(ab['drop_incomplete'])} vs mean-fill "
        f"baseline {_ms(part['baseline'][bits]['mean'])}",
        control_verdict(full, ab["drop_incomplete"]["values"]), gates=gates,
    ))  # fmt: skip
    gains = _gains(results, high)
    rows.append(Claim(
        "UGGRH is more accurate than unsupervised hashing under high missing rates",
        f"{high:.0%} of training pairs lack one modality; {', '.join(map(str, cfg.bits_grid))} bits; {n_seeds}; "
        "gain paired by seed",
        "; ".join(f"{b} bits: UGGRH {_ms(part['uggrh'][b]['mean'])} vs mean-fill baseline "
                  f"{_ms(part['baseline'][b]['mean'])}, gain {_iv(g)}" for b, g in gains.items())
        + f" (random codes {part['random']['mean']:.3f})",
        gain_verdict(gains), gates=gates,
    ))  # fmt: skip
    control = ab["drop_incomplete"]["values"]
    starts = _starts(results)
    by_bits = {str(b): (_drops(results, "baseline", b), _drops(results, "uggrh", b), starts[str(b)])
               for b in cfg.bits_grid}  # fmt: skip
    rows.append(Claim(
        "UGGRH is more robust: its accuracy falls less as modalities go missing",
        f"drop of mAP from {first:.0%} to {high:.0%} missing, and the start at {first:.0%}, paired by seed; {n_seeds}",
        "; ".join(f"{b} bits: drop UGGRH {fmt_mean_sd(u, 3)} vs baseline {fmt_mean_sd(base, 3)}, difference "
                  f"{_iv(base - u)} (start UGGRH minus baseline {_iv(st)})" for b, (base, u, st) in by_bits.items()),
        robustness_verdict(by_bits), gates=gates,
    ))  # fmt: skip
    # the control at 0 % is the baseline itself (every pair is complete), so its drop starts from the baseline's mAP
    control_drop = _diff(part0["baseline"][bits]["mean"]["values"], control)
    rows.append(Claim(
        "More robust than the control: UGGRH falls less than the baseline on the complete pairs only",
        f"drop of mAP from {first:.0%} to {high:.0%} missing, {bits} bits, and the start at {first:.0%}, paired by "
        f"seed; {n_seeds}",
        f"drop UGGRH {fmt_mean_sd(by_bits[bits][1], 3)} vs control {fmt_mean_sd(control_drop, 3)}, difference "
        f"{_iv(control_drop - by_bits[bits][1])} (start UGGRH minus baseline {_iv(starts[bits])})",
        robustness_verdict({bits: (control_drop, by_bits[bits][1], starts[bits])}), gates=gates,
    ))  # fmt: skip
    for name, what in (
        ("no_completion", "generative completion"),
        ("no_refinement", "discriminator-guided refinement"),
        ("no_graph_attention", "hash-aware graph attention"),
        ("no_fusion", "cross-modal fusion"),
    ):
        rows.append(Claim(
            f"Each module matters: {what}",
            f"ablation at {high:.0%} missing, {bits} bits; {n_seeds}",
            f"UGGRH {fmt_mean_sd(full, 3)} vs {METHOD_NAMES[name]} {_ms(ab[name])}; cost of removing it, paired by "
            f"seed: {_iv(_diff(full, ab[name]['values']))}; without it, minus the control: "
            f"{_iv(_diff(ab[name]['values'], control))}",
            module_verdict(full, ab[name]["values"]), gates=gates,
        ))  # fmt: skip
    if "imbalance" in s:
        im = s["imbalance"]
        gains_im = {f"{r['image_missing_share']:.0%}": _diff(r["uggrh"]["values"], r["baseline"]["values"])
                    for r in im["rows"]}  # fmt: skip
        rows.append(Claim(
            "UGGRH is robust to modality imbalance",
            f"{high:.0%} missing, split between the sides by the share of image-missing pairs ("
            f"{', '.join(gains_im)}); {im['bits']} bits; {n_seeds}",
            "; ".join(f"{r['image_missing_share']:.0%} images missing: UGGRH {_ms(r['uggrh'])} vs baseline "
                      f"{_ms(r['baseline'])}, gain {_iv(_diff(_values(r['uggrh']), _values(r['baseline'])))}, "
                      f"UGGRH minus control {_iv(_diff(_values(r['uggrh']), _values(r['control'])))}"
                      for r in im["rows"])
            + f" (control {_ms(im['rows'][0]['control'])}, the same pairs at every share)",
            imbalance_verdict(gains_im), gates=gates,
        ))  # fmt: skip
    return rows


def control_sentence(results: UGGRHResults) -> str:
    """:func:`control_reading` on the run's ablation part (highest missing rate, ``ablation_bits``)."""
    ab = results.summary["ablations"]
    full = results.summary[part_name(ab["missing_rate"])]["uggrh"][str(ab["bits"])]["mean"]["values"]
    return control_reading(full, ab["drop_incomplete"]["values"])


def lower_start_sentence(results: UGGRHResults) -> str:
    """:func:`lower_start_reading` on the run's 0% part."""
    return lower_start_reading(_starts(results))


def ablation_sentence(results: UGGRHResults) -> str:
    """:func:`ablation_reading` on the run's ablation part."""
    s = results.summary
    ab = s["ablations"]
    part = s[part_name(ab["missing_rate"])]
    full = part["uggrh"][str(ab["bits"])]["mean"]["values"]
    names = {"no_completion": "completion", "no_refinement": "refinement", "no_graph_attention": "graph attention",
             "no_fusion": "fusion"}  # fmt: skip
    verdicts = {what: module_verdict(full, ab[name]["values"]) for name, what in names.items()}
    return ablation_reading(verdicts, ab["no_completion"]["mean"], part["baseline"][str(ab["bits"])]["mean"]["mean"],
                            control_verdict(full, ab["drop_incomplete"]["values"]))  # fmt: skip


def sweep_table(results: UGGRHResults) -> str:
    """Markdown: mAP@all (mean ± sd) per method, code length and missing rate, both directions."""
    from .experiment import sweep_rows

    rows = [[METHOD_NAMES[r["method"]], r["bits"], f"{r['missing_rate']:.0%}", _ms(r["i2t"]), _ms(r["t2i"])]
            for r in sweep_rows(results)]  # fmt: skip
    return markdown_table(("method", "bits", "missing", "image→text mAP", "text→image mAP"), rows)


def ablation_table(results: UGGRHResults) -> str:
    """Markdown: the ablations and the control at the highest missing rate."""
    s = results.summary
    ab = s["ablations"]
    part = s[part_name(ab["missing_rate"])]
    rows = [[METHOD_NAMES["uggrh"], _ms(part["uggrh"][str(ab["bits"])]["mean"])]]
    rows += [[METHOD_NAMES[k], _ms(v)] for k, v in ab.items() if isinstance(v, dict)]
    rows.append([METHOD_NAMES["baseline"], _ms(part["baseline"][str(ab["bits"])]["mean"])])
    return markdown_table(("method", f"mAP at {ab['missing_rate']:.0%} missing, {ab['bits']} bits"), rows)


def imbalance_table(results: UGGRHResults) -> str:
    """Markdown: the imbalance sweep (share of the incomplete pairs that lack the image), mean ± sd over seeds, with
    the paired gain over the mean-fill baseline and UGGRH minus the control (mean [interval over seeds])."""
    im = results.summary["imbalance"]
    rows = []
    for r in im["rows"]:
        u, b, c = _values(r["uggrh"]), _values(r["baseline"]), _values(r["control"])
        rows.append([f"{r['image_missing_share']:.0%}", _ms(r["baseline"]), _ms(r["uggrh"]), _ms(r["control"]),
                     _iv(_diff(u, b)), _iv(_diff(u, c))])  # fmt: skip
    return markdown_table(("incomplete pairs lacking the image", "mean-fill baseline", "UGGRH", "control",
                           "UGGRH minus baseline", "UGGRH minus control"), rows)  # fmt: skip


def stability_sentence(study: dict | None = None) -> str:
    """Which gates and claims of a seed study read the same word on every base seed, and the words of those that do
    not (checks are left out). ``study`` defaults to the chapter's committed one (``data/seed_studies/uggrh.json``)."""
    if study is None:
        from ..core.seed_study import load_study

        study = load_study("uggrh")
    shown = [r for r in study["rows"] if r["kind"] != "check"]
    differ = [r for r in shown if not r["agree"]]
    text = (f"Of the {len(shown)} gates and claims, {len(shown) - len(differ)} read the same word on every base seed "
            f"({', '.join(map(str, study['seeds']))})")  # fmt: skip
    if differ:
        text += ": the others read " + "; ".join(f"“{r['claim']}” ({', '.join(r['verdicts'])})" for r in differ)
    return text + "."
