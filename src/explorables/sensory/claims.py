"""The chapter's claims table: each claim of the abstract, our setting, our number, a verdict.

Verdicts are computed from the measured numbers by the small functions below (each with its
criterion in its docstring, each unit-tested on constructed numbers), never typed by hand.
Every statistic is the mean over the layers of ``layer_grid`` (fixed before looking at the
results), per seed; the verdicts read all seeds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.tables import Claim, markdown_table
from ..core.tables import claims_table as claims_markdown  # noqa: F401 - what the notebook imports
from .experiment import CUE_NAMES, ENCODERS, SensoryResults

MARGIN = 0.05  # "clearly above chance": at least this much mutual k-NN alignment above k / (n - 1)


def _stats(values: Sequence[float]) -> tuple[float, float]:
    arr = np.asarray(values, dtype=float)
    return float(arr.mean()), float(arr.std(ddof=1)) if arr.size > 1 else 0.0


def layer_means(results: SensoryResults, cue: str, encoder: str, t: int) -> list[float]:
    """Per seed: mutual k-NN alignment of ``cue`` with ``encoder`` at continuation length ``t``, mean over layers."""
    cfg, per_seed = results.config, results.summary["alignment"]["per_seed"]
    c, e = cfg.cues.index(cue), ENCODERS.index(encoder)
    return [float(np.mean(row[c][e][t])) for row in per_seed]


def difference(results: SensoryResults, encoder: str, t: int, cue: str, other: str) -> list[float]:
    """Per seed: alignment with ``encoder`` under ``cue`` minus under ``other`` (means over layers)."""
    a, b = layer_means(results, cue, encoder, t), layer_means(results, other, encoder, t)
    return [x - y for x, y in zip(a, b, strict=True)]


def metric_verdict(identical: float, rotated: float, independent: float, chance: float) -> str:
    """The metric behaves: yes if identical and rotated-and-scaled features score 1 (to 1e-12) and independent
    ones lie within 0.05 of chance; no otherwise."""
    if abs(identical - 1) <= 1e-12 and abs(rotated - 1) <= 1e-12 and abs(independent - chance) <= 0.05:
        return "yes: 1 for identical and rotated features, chance for independent ones"
    return "no: the metric misses a constructed case"


REFERENCE_MARGIN = 0.02  # the model "beats" the bag-of-words reference when it aligns this much higher


def above_chance_verdict(
    vision: Sequence[float], audio: Sequence[float], chance: float, reference: Sequence[float] | None = None
) -> str:
    """The language model aligns with both encoders: yes if, for each encoder, the mean over seeds is >= chance +
    MARGIN and every seed is above chance; partly if that holds for one encoder; no if for neither.

    ``reference`` (optional): the (vision, audio) alignment of a bag of words of the captions, a space that
    knows the attribute words and nothing else. Then "yes" also needs the model to align higher than it
    (by > REFERENCE_MARGIN) with both encoders: above chance but no higher than a list of the words reads
    "partly", since the most obvious other explanation (the captions name the attributes) is not ruled out."""
    ok = [float(np.mean(v)) >= chance + MARGIN and min(v) > chance for v in (vision, audio)]
    beyond = ([float(np.mean(v)) > r + REFERENCE_MARGIN for v, r in zip((vision, audio), reference, strict=True)]
              if reference is not None else [True, True])  # fmt: skip
    if all(ok) and all(beyond):
        extra = ", and above the bag-of-words reference" if reference is not None else ""
        return f"yes: ≥ chance + {MARGIN} for both encoders, every seed above chance{extra}"
    if all(ok):
        which = " and ".join(e for e, b in zip(ENCODERS, beyond, strict=True) if not b)
        return (f"partly: above chance for both encoders, but for {which} no higher than a bag of the captions' "
                "words (no model), so the words alone can explain it")  # fmt: skip
    if any(ok):
        which = "vision" if ok[0] else "audio"
        return f"partly: clearly above chance only for the {which} encoder"
    return f"no: not clearly above chance (< chance + {MARGIN}) for either encoder"


MIN_GAIN = 0.01  # a gain smaller than this (in mutual k-NN alignment) is not an effect, whatever the seeds say


def clear_gain(gains: Sequence[float]) -> bool:
    """A gain is clear if its mean over seeds exceeds both MIN_GAIN and twice its standard error (2 sd / sqrt(n))."""
    m, sd = _stats(gains)
    return m > max(MIN_GAIN, 2 * sd / np.sqrt(len(gains)))


def direction_verdict(vision_gain: Sequence[float], audio_gain: Sequence[float]) -> str:
    """A cue effect in the predicted direction, from per-seed gains for vision and audio (each should be > 0):
    yes if both gains are clear (:func:`clear_gain`: mean > 0.01 and > 2 standard errors) and > 0 on every seed;
    partly if both are clear but some seed disagrees; no otherwise. The paper's claim is about both modalities,
    so one clear gain alone reads "no" (named in the outcome): with 3 seeds a single gain near twice its
    standard error flipped between "partly" and "no" when only the base seed changed."""
    clear = [clear_gain(g) for g in (vision_gain, audio_gain)]
    every = [all(x > 0 for x in g) for g in (vision_gain, audio_gain)]
    if all(clear) and all(every):
        return "yes: both gains clear (mean > 0.01 and > 2 s.e.) and > 0 on every seed"
    if all(clear):
        return "partly: both gains clear on average, but not > 0 on every seed"
    if any(clear):
        which, other = ("vision", "audio") if clear[0] else ("audio", "vision")
        return (f"no: only the {which} gain is clear (mean > 0.01 and > 2 s.e.), not the {other} one; "
                "the claim needs both")  # fmt: skip
    return "no: neither gain is clear (mean > 0.01 and > 2 standard errors over seeds)"


def control_verdict(values: dict[str, float], chance: float, tol: float = 0.05) -> str:
    """Controls sit at chance: yes if every control's mean is within ``tol`` of chance; no otherwise (naming them)."""
    off = [name for name, v in values.items() if abs(v - chance) > tol]
    if not off:
        return f"yes: every control within {tol} of chance"
    return f"no: {', '.join(off)} off chance by more than {tol}"


def _fmt(values: Sequence[float]) -> str:
    m, sd = _stats(values)
    return f"{m:+.3f} ± {sd:.3f} (seeds: {', '.join(f'{v:+.3f}' for v in values)})"


def _level(values: Sequence[float]) -> str:
    m, sd = _stats(values)
    return f"{m:.3f} ± {sd:.3f}"


def claims(results: SensoryResults) -> list[Claim]:
    """Evaluate the paper's claims on ``results`` (criteria in the verdict functions above)."""
    cfg, s = results.config, results.summary
    a, met = s["alignment"], s["metric"]
    chance, tmax = a["chance"], cfg.n_new_tokens
    setup = (f"{a['model']['name']}, {cfg.n_stimuli} items, k = {cfg.k}, {len(cfg.seeds)} seeds "
             f"(stimuli + phrasing), mean over layers {list(cfg.layer_grid)}")  # fmt: skip
    rows = [Claim(
        "Mutual k-NN alignment measures shared neighbourhoods (the metric the paper uses)",
        f"constructed features, n = {met['n']}, k = {met['k']}",
        f"identical {met['identical']:.3f}, rotated + scaled {met['rotated_scaled']:.3f}, independent "
        f"{met['independent']['mean']:.3f} ± {met['independent']['sd']:.3f} (chance {met['chance']:.3f})",
        metric_verdict(met["identical"], met["rotated_scaled"], met["independent"]["mean"], met["chance"]),
    )]  # fmt: skip
    has = {c: c in cfg.cues for c in ("none", "see", "hear")}
    if has["none"]:
        v, au = layer_means(results, "none", "vision", 0), layer_means(results, "none", "audio", 0)
        rows.append(Claim(
            "A text-only LLM's representations are shaped by perceptual regularities (align with specialist "
            "encoders)",
            f"no cue, last prompt token (T = 0); {setup}",
            f"vision {_level(v)}, audio {_level(au)}; chance {chance:.3f}; a bag of words of the captions (no "
            f"model): vision {a['bag_of_words']['vision']['mean']:.3f}, audio {a['bag_of_words']['audio']['mean']:.3f}",
            above_chance_verdict(v, au, chance, [a["bag_of_words"][e]["mean"] for e in ENCODERS]),
        ))  # fmt: skip
    for t, label in ((0, "last prompt token (T = 0)"), (tmax, f"generative representation (T = {tmax})")):
        if has["see"] and has["hear"]:
            dv = difference(results, "vision", t, "see", "hear")
            da = difference(results, "audio", t, "hear", "see")
            rows.append(Claim(
                "A “see” cue moves the model toward the vision encoder and a “hear” cue toward the audio encoder "
                "(crossover)",
                f"{label}; gains: vision(see) − vision(hear) and audio(hear) − audio(see); {setup}",
                f"vision gain {_fmt(dv)}; audio gain {_fmt(da)}",
                direction_verdict(dv, da),
            ))  # fmt: skip
        if has["see"] and has["hear"] and has["none"]:
            dv = difference(results, "vision", t, "see", "none")
            da = difference(results, "audio", t, "hear", "none")
            rows.append(Claim(
                "Sensory prompting brings the model closer to the matching encoder than no cue does",
                f"{label}; gains: vision(see) − vision(none) and audio(hear) − audio(none); {setup}",
                f"vision gain {_fmt(dv)}; audio gain {_fmt(da)}",
                direction_verdict(dv, da),
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
            f"matching cue (see → vision, hear → audio), T = {tmax} minus T = 0; {setup}",
            f"vision gain {_fmt(gv)}; audio gain {_fmt(ga)}",
            direction_verdict(gv, ga),
        ))  # fmt: skip
    controls = {"vision vs audio encoder": a["encoder_vs_encoder"]["mean"], "shuffled pairing": a["shuffled"]["mean"]}
    rows.append(Claim(
        "Control (ours): the two encoders share no structure, and a broken pairing scores chance",
        f"vision encoder vs audio encoder; LLM (last layer, T = 0, every cue) vs encoders after shuffling the items; "
        f"{len(cfg.seeds)} seeds",
        f"encoders {_level(a['encoder_vs_encoder']['values'])}, shuffled {_level(a['shuffled']['values'])}; "
        f"chance {chance:.3f}",
        control_verdict(controls, chance),
    ))  # fmt: skip
    return rows


def alignment_table(results: SensoryResults, t: int = 0) -> str:
    """Mutual k-NN alignment per cue, encoder and layer at continuation length ``t``: mean ± sd over seeds."""
    cfg, a = results.config, results.summary["alignment"]
    header = ("cue", "encoder", *(f"layer {layer}" for layer in cfg.layer_grid))
    rows = []
    for c, cue in enumerate(cfg.cues):
        for e, enc in enumerate(ENCODERS):
            rows.append((CUE_NAMES.get(cue, cue), enc, *(f"{a['mean'][c][e][t][li]:.3f} ± {a['sd'][c][e][t][li]:.3f}"
                                                          for li in range(len(cfg.layer_grid)))))  # fmt: skip
    return markdown_table(header, rows)


def cka_table(results: SensoryResults, which: int = 0) -> str:
    """Linear CKA (eq. sensory-cka) per cue, encoder and layer, mean over seeds, at ``T = 0`` (``which=0``) or
    at ``T = T_max`` (``which=1``): the whole-Gram-matrix comparison next to mutual k-NN's neighbourhoods."""
    cfg, a = results.config, results.summary["alignment"]
    header = ("cue", "encoder", *(f"layer {layer}" for layer in cfg.layer_grid))
    rows = [(CUE_NAMES.get(cue, cue), enc, *(f"{a['cka_mean'][c][e][which][li]:.3f}"
                                            for li in range(len(cfg.layer_grid))))
            for c, cue in enumerate(cfg.cues) for e, enc in enumerate(ENCODERS)]  # fmt: skip
    return markdown_table(header, rows)


def reference_sentence(results: SensoryResults) -> str:
    """The model's no-cue alignment (T = 0, mean over layers and seeds) against a bag of words of the captions."""
    a = results.summary["alignment"]
    if "none" not in results.config.cues:
        return "the no-cue condition was not run"
    parts, above = [], []
    for enc in ENCODERS:
        lm = float(np.mean(layer_means(results, "none", enc, 0)))
        bow = a["bag_of_words"][enc]["mean"]
        word = ("above" if lm > bow + REFERENCE_MARGIN
                else "below" if lm < bow - REFERENCE_MARGIN else "about level with")  # fmt: skip
        above.append(word == "above")
        parts.append(f"with the {enc} encoder the model scores {lm:.3f}, {word} the bag of words ({bow:.3f})")
    if not any(above):
        tail = ("so the model organises the items around what "
                "the captions describe no better than a list of their words is")  # fmt: skip
    else:
        tail = "so for " + " and ".join(e for e, up in zip(ENCODERS, above, strict=True) if up) + (
            " the model organises the captions closer to the encoder than their bare words do")
    return "; ".join(parts) + "; " + tail


def reproduction_sentence(results: SensoryResults) -> str:
    """What was reproduced, read from the claims' verdicts (above chance; the cue effects)."""
    rows = claims(results)
    base = [c for c in rows if c.claim.startswith("A text-only LLM")]
    cue_rows = [c for c in rows if "cue" in c.claim or "prompting" in c.claim or "grows" in c.claim]
    first = (f"Alignment of the no-cue representations with the encoders: {base[0].outcome}"
             if base else "The no-cue condition was not run")  # fmt: skip
    counts = {v: sum(c.outcome == v for c in cue_rows) for v in ("yes", "partly", "no")}
    return (f"{first}. Of the {len(cue_rows)} cue and continuation-length rows, {counts['yes']} read yes, "
            f"{counts['partly']} partly and {counts['no']} no")  # fmt: skip
