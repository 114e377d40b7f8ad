"""The chapter's tables: our checks, the gates (can the setup show the effect?) and the paper's claims.

Every row is decided by a function below on per-seed numbers, with the book-wide rules of
:mod:`explorables.core.verdicts` (an interval ``95% t-interval: mean ± t·se`` over seeds against a threshold);
every threshold is a constant of this module, and :data:`CRITERIA` drives each function through
its branches with synthetic numbers. Every alignment statistic is the mean over the layers of
``layer_grid`` (fixed before looking at the results), per seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..core.tables import Claim, apply_gates, markdown_table
from ..core.tables import claims_table as claims_markdown  # noqa: F401 - what the notebook imports
from ..core.verdicts import Criterion, compare, fmt_mean_sd, gate, interval, scope_verdict
from .experiment import CUE_NAMES, ENCODERS, SensoryResults

# --- thresholds: the one declared place ----------------------------------------------------------------------------

#: claim: "clearly above chance": mutual k-NN alignment at least this much above k / (n - 1)
MARGIN = 0.05
#: claim: the model "beats" the bag-of-words reference when it aligns at least this much higher
REFERENCE_MARGIN = 0.02
#: claim: a cue or length gain counts from this much mutual k-NN alignment
MIN_GAIN = 0.01
#: gate "cue": the cue moves the fraction of continuations that mostly describe its sense (a look under "see", a sound
#: under "hear"; :func:`~explorables.sensory.stimuli.dominant_sense`) by at least this over the other cue, every seed:
#: a tenth of the items (set on tuning base seeds 100-102 with this measure, see the page's "how criteria were set")
CUE_SHIFT = 0.10
#: gate "words": a bag of the captions' words aligns with each encoder at least this much above chance, every seed
WORDS_MARGIN = MARGIN
#: check: the metric gives 1 for identical and rotated features to this precision
EXACT = 1e-12
#: check: independent features (metric check) and the controls sit within this of chance (interval over their
#: draws, every seed's pooled); half the margin of the above-chance claim they guard
CHANCE_TOL = MARGIN / 2


def layer_means(results: SensoryResults, cue: str, encoder: str, t: int) -> list[float]:
    """Per seed: mutual k-NN alignment of ``cue`` with ``encoder`` at continuation length ``t``, mean over layers."""
    cfg, per_seed = results.config, results.summary["alignment"]["per_seed"]
    c, e = cfg.cues.index(cue), ENCODERS.index(encoder)
    return [float(np.mean(row[c][e][t])) for row in per_seed]


def difference(results: SensoryResults, encoder: str, t: int, cue: str, other: str) -> list[float]:
    """Per seed: alignment with ``encoder`` under ``cue`` minus under ``other`` (means over layers)."""
    a, b = layer_means(results, cue, encoder, t), layer_means(results, other, encoder, t)
    return [x - y for x, y in zip(a, b, strict=True)]


def generated_only_means(results: SensoryResults, cue: str, encoder: str) -> list[float] | None:
    """Per seed: alignment of the mean hidden state over the generated tokens only (``t >= 1``; the prompt's and
    the opening's tokens left out), mean over layers; None when the run generated nothing."""
    a, cfg = results.summary["alignment"], results.config
    if "per_seed_gen" not in a or cfg.n_new_tokens == 0:
        return None
    c, e = cfg.cues.index(cue), ENCODERS.index(encoder)
    return [float(np.mean(row[c][e])) for row in a["per_seed_gen"]]


def opening_only_means(results: SensoryResults, opening_cue: str, encoder: str) -> list[float] | None:
    """Per seed: alignment at ``T = 0`` of the "opening only" control (the neutral instruction, the answer opened
    as under ``opening_cue``), mean over layers; None when the run has no such control."""
    o = results.summary["alignment"].get("opening_only")
    if o is None or opening_cue not in o["openings"]:
        return None
    j, e = o["openings"].index(opening_cue), ENCODERS.index(encoder)
    return [float(np.mean(row[j][e])) for row in o["per_seed"]]


def _crossover_gains(results: SensoryResults, means) -> tuple[list[float], list[float]] | None:
    """Per seed, the crossover from a per-cue means function (``means(results, cue, encoder)``): vision under
    "see" minus under "hear", and audio under "hear" minus under "see"; ``None`` where it was not measured."""
    see_vision = means(results, "see", "vision")
    if see_vision is None:
        return None
    return (_minus(see_vision, means(results, "hear", "vision")),
            _minus(means(results, "hear", "audio"), means(results, "see", "audio")))  # fmt: skip


def instruction_gains(results: SensoryResults) -> tuple[list[float], list[float]] | None:
    """Per seed, what the instruction adds to the ``T = 0`` crossover beyond its opening: the cued crossover
    (vision(see) − vision(hear), audio(hear) − audio(see)) minus the same crossover of the opening-only control
    ("Describe it." + the same opening), paired by seed; ``None`` where the control was not run. Read with
    :func:`direction_verdict`, i.e. against :data:`MIN_GAIN`, the margin of the other ``T = 0`` rows (fixed
    before this difference was computed on any seed)."""
    op = _crossover_gains(results, opening_only_means)
    if op is None:
        return None
    cued = (difference(results, "vision", 0, "see", "hear"), difference(results, "audio", 0, "hear", "see"))
    return _minus(cued[0], op[0]), _minus(cued[1], op[1])


def _minus(a: Sequence[float], b: Sequence[float]) -> list[float]:
    return [x - y for x, y in zip(a, b, strict=True)]


def cue_shifts(results: SensoryResults) -> tuple[list[float], list[float]]:
    """Per seed: the fraction of continuations that mostly describe a look under "see" minus under "hear", and the
    fraction that mostly describe a sound under "hear" minus under "see" (both > 0 when the text follows the cue;
    :func:`~explorables.sensory.stimuli.dominant_sense`)."""
    w = results.summary["alignment"]["cue_senses"]
    visual = [a - b for a, b in zip(w["see"]["visual"], w["hear"]["visual"], strict=True)]
    auditory = [a - b for a, b in zip(w["hear"]["auditory"], w["see"]["auditory"], strict=True)]
    return visual, auditory


def _within(values: Sequence[float], centre: float, tol: float) -> bool:
    """The interval (95% t-interval: mean ± t·se) of ``values`` lies inside ``centre ± tol``."""
    iv = interval(values)
    return centre - tol <= iv.low and iv.high <= centre + tol


def _iv(values: Sequence[float]) -> str:
    return interval(values).format(3, signed=True)


# --- verdict functions: per-seed numbers in, a word and its reason out ----------------------------------------------


def metric_verdict(identical: float, rotated: float, independent: Sequence[float], chance: float) -> str:
    """Check: identical and rotated-and-scaled features score 1 (to :data:`EXACT`), and the interval over
    draws of independent features lies within :data:`CHANCE_TOL` of chance."""
    if abs(identical - 1) <= EXACT and abs(rotated - 1) <= EXACT and _within(independent, chance, CHANCE_TOL):
        return f"pass: 1 for identical and rotated features, within {CHANCE_TOL} of chance for independent ones"
    return "fail: the metric misses a constructed case"


def control_verdict(values: Mapping[str, Sequence[float]], chance: float, tol: float = CHANCE_TOL) -> str:
    """Check: every control's interval over its draws (every seed's draws pooled) lies within ``tol`` of chance,
    naming those that do not: an equivalence test, so a control far from chance, or too noisy to place, fails."""
    off = [name for name, v in values.items() if not _within(v, chance, tol)]
    if not off:
        return f"pass: every control within {tol} of chance (interval over its draws)"
    return f"fail: {', '.join(off)} not within {tol} of chance (interval over its draws)"


def cue_gate_verdict(visual_shift: Sequence[float], auditory_shift: Sequence[float],
                     threshold: float = CUE_SHIFT) -> str:  # fmt: skip
    """Gate: the cue changes the text. Per seed, "see" raises the fraction of continuations that mostly describe a
    look over "hear", and "hear" the fraction that mostly describe a sound over "see", each by ``>= threshold`` on
    every seed."""
    short = [name for name, v in (("visual", visual_shift), ("auditory", auditory_shift))
             if gate(v, threshold, rule="every seed") == "fail"]  # fmt: skip
    if not short:
        return f"pass: each cue raises the fraction of continuations of its sense by ≥ {threshold:.2f} on every seed"
    return (f"fail: the {' and '.join(short)} fraction of continuations does not move by {threshold:.2f} on every "
            "seed: the model does not follow the cue")  # fmt: skip


def words_gate_verdict(vision: Sequence[float], audio: Sequence[float], chance: float,
                       margin: float = WORDS_MARGIN) -> str:  # fmt: skip
    """Gate: a bag of the captions' words aligns with each encoder ``>= chance + margin`` on every seed: the
    information a text-only model could pick up is in the words, and the encoders see it."""
    short = [e for e, v in zip(ENCODERS, (vision, audio), strict=True)
             if gate(v, chance + margin, rule="every seed") == "fail"]  # fmt: skip
    if not short:
        return f"pass: the captions' words align with both encoders ≥ chance + {margin} on every seed"
    return f"fail: the captions' words do not align with the {' and '.join(short)} encoder on every seed"


def above_chance_verdict(
    vision: Sequence[float], audio: Sequence[float], chance: float,
    reference: tuple[Sequence[float], Sequence[float]] | None = None,
) -> str:  # fmt: skip
    """The model aligns with both encoders. Parts, per encoder: the interval over seeds of alignment minus
    chance clears :data:`MARGIN`; with ``reference`` (per seed, the bag-of-words alignment with vision and
    with audio), also: the paired interval of alignment minus the bag of words clears :data:`REFERENCE_MARGIN`
    (the most obvious other explanation, "the captions name the attributes", ruled out)."""
    parts = {f"{e} above chance": compare(np.asarray(v) - chance, MARGIN)
             for e, v in zip(ENCODERS, (vision, audio), strict=True)}  # fmt: skip
    if reference is not None:
        for e, v, r in zip(ENCODERS, (vision, audio), reference, strict=True):
            parts[f"{e} above the bag of words"] = compare(np.asarray(v) - np.asarray(r), REFERENCE_MARGIN)
    return scope_verdict(parts, "alignment with the encoders")


def direction_verdict(vision_gain: Sequence[float], audio_gain: Sequence[float]) -> str:
    """A cue (or length) effect in the predicted direction, from per-seed gains for vision and audio. Parts: each
    gain's interval over seeds against :data:`MIN_GAIN`; yes when both clear it, no when both fall short,
    partly when one clears it and the other does not."""
    parts = {"vision gain": compare(vision_gain, MIN_GAIN), "audio gain": compare(audio_gain, MIN_GAIN)}
    return scope_verdict(parts, f"gains against {MIN_GAIN}")


# --- rows ----------------------------------------------------------------------------------------------------------


def _fmt(values: Sequence[float]) -> str:
    return f"{_iv(values)} (seeds: {', '.join(f'{v:+.3f}' for v in values)})"


def _level(values: Sequence[float]) -> str:
    return fmt_mean_sd(values, 3)


def claims(results: SensoryResults) -> list[Claim]:
    """Every row: checks, gates and the paper's claims on ``results`` (criteria in the verdict functions above)."""
    cfg, s = results.config, results.summary
    a, met = s["alignment"], s["metric"]
    chance, tmax = a["chance"], cfg.n_new_tokens
    setup = (f"{a['model']['name']}, {cfg.n_stimuli} items, k = {cfg.k}, {len(cfg.seeds)} seeds "
             f"(stimuli + phrasing), mean over layers {list(cfg.layer_grid)}")  # fmt: skip
    independent = met["independent"]["values"]
    rows = [Claim(
        "Mutual k-NN alignment measures shared neighbourhoods (the metric the paper uses)",
        f"constructed features, n = {met['n']}, k = {met['k']}",
        f"identical {met['identical']:.3f}, rotated + scaled {met['rotated_scaled']:.3f}, independent "
        f"{_level(independent)} over {len(independent)} draws (chance {met['chance']:.3f})",
        metric_verdict(met["identical"], met["rotated_scaled"], independent, met["chance"]), kind="check",
    )]  # fmt: skip
    controls = {"vision vs audio encoder": a["control_draws"]["encoder_vs_encoder"],
                "shuffled pairing": a["control_draws"]["shuffled"]}  # fmt: skip
    rows.append(Claim(
        "The two encoders share no structure, and a broken pairing scores chance",
        f"vision encoder vs audio encoder on fresh stimulus sets; LLM (last layer, T = 0, mean over cues and "
        f"encoders) vs encoders after shuffling the items; {cfg.n_control_draws} draws per seed × "
        f"{len(cfg.seeds)} seeds, interval over the draws against chance ± {CHANCE_TOL}",
        f"encoders {_iv(controls['vision vs audio encoder'])}, shuffled {_iv(controls['shuffled pairing'])}; "
        f"chance {chance:.3f}",
        control_verdict(controls, chance), kind="check",
    ))  # fmt: skip
    bow = [a["bag_of_words"][e]["values"] for e in ENCODERS]
    rows.append(Claim(
        "the captions' words carry what the encoders see",
        f"a bag of the captions' words (no model) against each encoder; threshold chance + {WORDS_MARGIN} on "
        f"every seed; {len(cfg.seeds)} seeds",
        f"vision {_level(bow[0])}, audio {_level(bow[1])}; chance {chance:.3f}",
        words_gate_verdict(bow[0], bow[1], chance), kind="gate", name="words",
    ))  # fmt: skip
    has = {c: c in cfg.cues for c in ("none", "see", "hear")}
    if has["see"] and has["hear"]:
        vs, au = cue_shifts(results)
        rows.append(Claim(
            "the model keeps to its forced opening's modality in the words it generates",
            f"fraction of the {tmax}-token continuations that mostly describe a look (more visual than auditory words) "
            f"under “see” minus under “hear”, and that mostly describe a sound under “hear” minus under “see”; the "
            f"continuation is the generated words only (the forced opening “I see” / “I hear” excluded), so this asks "
            f"whether the model keeps to a forced prefix's modality, not whether it follows the instruction alone; "
            f"threshold {CUE_SHIFT} on every seed",
            f"visual shift {_fmt(vs)}; auditory shift {_fmt(au)}",
            cue_gate_verdict(vs, au), kind="gate", name="cue",
        ))  # fmt: skip
    if has["none"]:
        v, au = layer_means(results, "none", "vision", 0), layer_means(results, "none", "audio", 0)
        rows.append(Claim(
            "A text-only LLM's representations are shaped by perceptual regularities (align with specialist "
            "encoders)",
            f"no cue, last prompt token (T = 0); {setup}",
            f"vision {_level(v)}, audio {_level(au)}; chance {chance:.3f}; a bag of words of the captions (no "
            f"model): vision {_level(bow[0])}, audio {_level(bow[1])}",
            above_chance_verdict(v, au, chance, (bow[0], bow[1])), gates=("words",),
        ))  # fmt: skip
    t0_label = ("last prompt token (T = 0): under “see” / “hear” that is the forced opening's last token "
                "(‘ see’ / ‘ hear’), under no cue the line break after the chat header; no generated token, so a "
                "T = 0 cue effect is how the sensory word at that position reads out the caption (centring removes "
                "what is the same for every item); the opening-only control gives part of it, and “cued − opening "
                "only” (paired per seed) is what the instruction adds")  # fmt: skip
    for t, label in ((0, t0_label), (tmax, f"generative representation (T = {tmax})")):
        if has["see"] and has["hear"]:
            dv = difference(results, "vision", t, "see", "hear")
            da = difference(results, "audio", t, "hear", "see")
            extra = ""
            if t == 0:
                gen = _crossover_gains(results, generated_only_means)
                if gen is not None:
                    extra += (f"; not read by the verdict, generated tokens only (t ≥ 1, {tmax} tokens pooled): "
                              f"vision gain {_fmt(gen[0])}, audio gain {_fmt(gen[1])}")  # fmt: skip
                op = _crossover_gains(results, opening_only_means)
                if op is not None:
                    extra += (f"; opening only (“Describe it.” + “I see” / “I hear”, T = 0): vision gain "
                              f"{_fmt(op[0])}, audio gain {_fmt(op[1])}")  # fmt: skip
                    added = instruction_gains(results)
                    extra += (f"; cued − opening only, paired per seed (what the instruction adds; "
                              f"{direction_verdict(*added).split(':')[0]} against {MIN_GAIN}): vision "
                              f"{_fmt(added[0])}, audio {_fmt(added[1])}")  # fmt: skip
            rows.append(Claim(
                "A “see” cue moves the model toward the vision encoder and a “hear” cue toward the audio encoder "
                "(crossover)",
                f"{label}; gains: vision(see) − vision(hear) and audio(hear) − audio(see); {setup}",
                f"vision gain {_fmt(dv)}; audio gain {_fmt(da)}{extra}",
                direction_verdict(dv, da), gates=("cue",),
            ))  # fmt: skip
        if has["see"] and has["hear"] and has["none"]:
            dv = difference(results, "vision", t, "see", "none")
            da = difference(results, "audio", t, "hear", "none")
            extra = ""
            gv = generated_only_means(results, "see", "vision") if t == 0 else None
            if gv is not None:
                gen_v = _minus(gv, generated_only_means(results, "none", "vision"))
                gen_a = _minus(generated_only_means(results, "hear", "audio"),
                               generated_only_means(results, "none", "audio"))  # fmt: skip
                extra = (f"; not read by the verdict, generated tokens only (t ≥ 1): vision gain {_fmt(gen_v)}, "
                         f"audio gain {_fmt(gen_a)}")  # fmt: skip
            rows.append(Claim(
                "Sensory prompting brings the model closer to the matching encoder than no cue does",
                f"{label}; gains: vision(see) − vision(none) and audio(hear) − audio(none); {setup}",
                f"vision gain {_fmt(dv)}; audio gain {_fmt(da)}{extra}",
                direction_verdict(dv, da), gates=("cue",),
            ))  # fmt: skip
    if has["see"] and has["hear"] and tmax > 0:
        see_v = layer_means(results, "see", "vision", 0)
        gv = [x - y for x, y in zip(layer_means(results, "see", "vision", tmax), see_v,
                                    strict=True)]  # fmt: skip
        hear_a = layer_means(results, "hear", "audio", 0)
        ga = [x - y for x, y in zip(layer_means(results, "hear", "audio", tmax), hear_a,
                                    strict=True)]  # fmt: skip
        rows.append(Claim(
            "Alignment grows with the length of the generated continuation",
            f"matching cue (see → vision, hear → audio), T = {tmax} minus T = 0 (T = 0 is the forced opening's token; "
            f"the T = {tmax} mean still holds that token's state, diluted by the generated ones); {setup}",
            f"vision gain {_fmt(gv)}; audio gain {_fmt(ga)}",
            direction_verdict(gv, ga), gates=("cue",),
        ))  # fmt: skip
    return rows


# --- criteria: each verdict function, its threshold and synthetic inputs reaching every branch ----------------------

_UP, _FLAT, _NOISY = [0.05, 0.06, 0.055], [0.0, -0.002, 0.001], [0.0, 0.04, 0.02]
_CHANCE = 0.128
CRITERIA: tuple[Criterion, ...] = (
    Criterion("metric", "check", metric_verdict, CHANCE_TOL,
              "identical and rotated features score 1; independent features' interval within the tolerance of chance",
              {"pass": ((1.0, 1.0, [0.128, 0.13, 0.126], _CHANCE), {}),
               "fail": ((1.0, 1.0, [0.2, 0.21, 0.19], _CHANCE), {})}),
    Criterion("controls", "check", control_verdict, CHANCE_TOL,
              "encoders vs encoders and the shuffled pairing: interval over their draws within the tolerance of chance",
              {"pass": (({"a": [0.128, 0.13, 0.126]}, _CHANCE), {}),
               "fail": (({"a": [0.16, 0.17, 0.165]}, _CHANCE), {})}),
    Criterion("words", "gate", words_gate_verdict, WORDS_MARGIN,
              "bag of words vs each encoder ≥ chance + margin on every seed",
              {"pass": (([0.3, 0.35], [0.25, 0.3], _CHANCE), {}), "fail": (([0.3, 0.35], [0.15, 0.3], _CHANCE), {})}),
    Criterion("cue", "gate", cue_gate_verdict, CUE_SHIFT,
              "fraction of continuations mostly visual (see − hear) and mostly auditory (hear − see) ≥ threshold, "
              "every seed", {"pass": (([0.3, 0.4], [0.2, 0.5]), {}), "fail": (([0.3, 0.4], [0.05, 0.5]), {})}),
    Criterion("above chance", "claim", above_chance_verdict, MARGIN,
              "per encoder: interval of alignment − chance against MARGIN, and of alignment − bag of words against "
              "REFERENCE_MARGIN", {
                  "yes": (([0.3, 0.31, 0.29], [0.3, 0.31, 0.29], _CHANCE, ([0.2] * 3, [0.2] * 3)), {}),
                  "partly": (([0.3, 0.31, 0.29], [0.3, 0.31, 0.29], _CHANCE, ([0.4] * 3, [0.4] * 3)), {}),
                  "no": (([0.12, 0.13, 0.125], [0.12, 0.13, 0.125], _CHANCE, ([0.4] * 3, [0.4] * 3)), {}),
                  "unclear": (([0.13, 0.3, 0.2], [0.13, 0.3, 0.2], _CHANCE, ([0.13, 0.3, 0.2], [0.13, 0.3, 0.2])),
                              {})}, scoped=True),
    Criterion("direction", "claim", direction_verdict, MIN_GAIN,
              "vision and audio gains per seed, each interval against MIN_GAIN (cue rows and the length row)",
              {"yes": ((_UP, _UP), {}), "partly": ((_UP, _FLAT), {}), "no": ((_FLAT, _FLAT), {}),
               "unclear": ((_NOISY, _FLAT), {})}, scoped=True),
)


# --- tables and sentences for the page -----------------------------------------------------------------------------


def alignment_table(results: SensoryResults, t: int = 0) -> str:
    """Mutual k-NN alignment per cue, encoder and layer at continuation length ``t``: mean ± sd over seeds, with
    the reference levels beside it: chance ``k / (n - 1)``, the shuffled pairing and the bag of words of the
    captions against the same encoder."""
    cfg, a = results.config, results.summary["alignment"]
    header = ("cue", "encoder", *(f"layer {layer}" for layer in cfg.layer_grid),
              "chance k/(n−1)", "shuffled pairing", "bag of words")  # fmt: skip
    per_seed = np.asarray(a["per_seed"])  # (seeds, cues, encoders, T, layers)
    rows = []
    for c, cue in enumerate(cfg.cues):
        for e, enc in enumerate(ENCODERS):
            rows.append((CUE_NAMES.get(cue, cue), enc, *(fmt_mean_sd(per_seed[:, c, e, t, li], 3)
                                                          for li in range(len(cfg.layer_grid))),
                         f"{a['chance']:.3f}", fmt_mean_sd(a["shuffled"]["values"], 3),
                         fmt_mean_sd(a["bag_of_words"][enc]["values"], 3)))  # fmt: skip
    return markdown_table(header, rows)


def cue_words_table(results: SensoryResults) -> str:
    """Per cue (mean ± sd over seeds): the fraction of continuations that mostly describe a look and a sound (the
    cue gate's measure), and the share of visual and of auditory words among all their words."""
    cfg, a = results.config, results.summary["alignment"]
    w, f = a["cue_words"], a["cue_senses"]
    rows = [(CUE_NAMES.get(cue, cue), fmt_mean_sd(f[cue]["visual"], 3), fmt_mean_sd(f[cue]["auditory"], 3),
             fmt_mean_sd(w[cue]["visual"], 3), fmt_mean_sd(w[cue]["auditory"], 3))
            for cue in cfg.cues]  # fmt: skip
    return markdown_table(("cue", "continuations mostly visual", "continuations mostly auditory",
                           "visual words (share)", "auditory words (share)"), rows)


def cka_table(results: SensoryResults, which: int = 0) -> str:
    """Linear CKA (eq. sensory-cka) per cue, encoder and layer, mean over seeds, at ``T = 0`` (``which=0``) or
    at ``T = T_max`` (``which=1``). Each cell is ``CKA (shuffled)``: beside it, the same cell's features with the
    items shuffled (mean over shufflings and seeds). Two more columns (mean ± sd over seeds): independent random
    features of the same sizes (isotropic, so not a null for these features) and the bag of words."""
    cfg, a = results.config, results.summary["alignment"]
    ref, sh = a["cka_reference"], a.get("cka_shuffled_mean")

    def cell(c: int, e: int, li: int) -> str:
        value = f"{a['cka_mean'][c][e][which][li]:.3f}"
        return f"{value} ({sh[c][e][which][li]:.3f})" if sh is not None else value

    header = ("cue", "encoder", *(f"layer {layer} (shuffled)" for layer in cfg.layer_grid),
              "random features, same sizes (not a null for these features)", "bag of words")  # fmt: skip
    rows = [(CUE_NAMES.get(cue, cue), enc, *(cell(c, e, li) for li in range(len(cfg.layer_grid))),
             *(fmt_mean_sd(ref[enc][r]["values"], 3) for r in ("random", "bag_of_words")))
            for c, cue in enumerate(cfg.cues) for e, enc in enumerate(ENCODERS)]  # fmt: skip
    return markdown_table(header, rows)


def reference_sentence(results: SensoryResults) -> str:
    """The model's no-cue alignment (T = 0, mean over layers) against a bag of words of the captions, with the
    paired interval over seeds (the claim's own parts)."""
    a = results.summary["alignment"]
    if "none" not in results.config.cues:
        return "the no-cue condition was not run"
    parts, above = [], []
    for enc in ENCODERS:
        lm = layer_means(results, "none", enc, 0)
        bow = a["bag_of_words"][enc]["values"]
        d = np.asarray(lm) - np.asarray(bow)
        word = {"yes": "above", "no": "not above", "unclear": "within the seed spread of"}[compare(d, REFERENCE_MARGIN)]
        above.append(word == "above")
        parts.append(f"with the {enc} encoder the model scores {np.mean(lm):.3f}, {word} the bag of words "
                     f"({np.mean(bow):.3f}; difference {_iv(d)})")  # fmt: skip
    if not any(above):
        tail = ("so the model organises the items around what "
                "the captions describe no better than a list of their words does")  # fmt: skip
    else:
        tail = "so for " + " and ".join(e for e, up in zip(ENCODERS, above, strict=True) if up) + (
            " the model organises the captions closer to the encoder than their bare words do")
    return "; ".join(parts) + "; " + tail


def reproduction_sentence(results: SensoryResults) -> str:
    """What was reproduced, read from the claims' verdicts after their gates (above chance; the cue effects)."""
    rows = [r for r in apply_gates(claims(results)) if r.kind == "claim"]
    base = [c for c in rows if c.claim.startswith("A text-only LLM")]
    cue_rows = [c for c in rows if "cue" in c.claim or "prompting" in c.claim or "grows" in c.claim]
    first = (f"Alignment of the no-cue representations with the encoders: {base[0].outcome}"
             if base else "The no-cue condition was not run")  # fmt: skip
    words = ("yes", "partly", "no", "unclear", "untested")
    counts = {v: sum(c.outcome == v for c in cue_rows) for v in words}
    said = ", ".join(f"{counts[v]} {v}" for v in words if counts[v])
    return f"{first}. Of the {len(cue_rows)} cue and continuation-length rows: {said}"
