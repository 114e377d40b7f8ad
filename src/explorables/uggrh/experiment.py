"""The chapter's reduced-scale reproduction, one code path for every scale.

For each missing rate and seed: hide one modality of that share of the training pairs (half of
them the image, half the text, unless ``image_missing_share`` says otherwise), train the baseline
(mean-fill + DJSRH-style hashing) and UGGRH at every code length, and score image->text and
text->image mAP@all on a complete query set against a complete database. The digit classes are
read only there, by :func:`evaluate`.

Parts: one per missing rate (``missing_0``, ``missing_35``, ...), ``ablations`` (each UGGRH
module removed, and the control, at the highest missing rate), ``imbalance`` (all missing
modalities on one side) and ``speed`` (packed Hamming codes against float cosine search).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Bool, Choice, Float, Int, Positive, Probability, Seeds, Tuple, param
from .data import NPZ_LAYOUT, IncompletePairs, Modalities, digits_with_tags, load_features, make_incomplete, split
from .method import HashFunctions, Modules, TrainSettings, prepare, train_hashing
from .retrieval import map_at_all, search_timing

DATASETS: tuple[str, ...] = ("digits", "mirflickr", "nuswide", "coco")
ABLATIONS: dict[str, Modules] = {
    "uggrh": Modules(),
    "no_completion": Modules(use_completion=False),
    "no_refinement": Modules(use_refinement=False),
    "no_graph_attention": Modules(use_graph_attention=False),
    "no_fusion": Modules(use_fusion=False),
}
METHOD_NAMES: dict[str, str] = {
    "baseline": "baseline (mean-fill + DJSRH-style)",
    "uggrh": "UGGRH (our reconstruction)",
    "no_completion": "UGGRH − generative completion",
    "no_refinement": "UGGRH − similarity refinement",
    "no_graph_attention": "UGGRH − graph attention",
    "no_fusion": "UGGRH − fusion",
    "drop_incomplete": "control: baseline on the complete pairs only",
    "random": "random codes",
}


@dataclass(frozen=True)
class UGGRHConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    dataset: str = param("digits", Choice(DATASETS), "digits + synthetic tags (generated), or features from data_root")
    n_query: int = param(300, Int(1), "complete query pairs (held out)")
    n_train: int = param(400, Int(10), "training pairs, of which a missing_rate share lose one modality")
    n_database: int = param(0, Int(0), "complete database pairs searched by the queries (0: all the rest)")
    d_text: int = param(100, Int(2), "tag vocabulary of the synthetic text modality")
    n_class_tags: int = param(8, Int(1), "typical tags of each hidden class")
    p_tag: float = param(
        0.6, Probability(open_low=True), "probability that a sample carries each typical tag of its class"
    )
    n_noise_tags: int = param(3, Int(0), "random tags added to every sample")
    missing_rate_grid: tuple[float, ...] = param(
        (0.0, 0.7), Tuple(Float(0.0, 0.9), increasing=True), "shares of training pairs that lose one modality"
    )
    image_missing_share: float = param(0.5, Probability(), "of the incomplete pairs, the share that loses the image")
    bits_grid: tuple[int, ...] = param((16, 32, 64), Tuple(Int(4, 1024), increasing=True), "code lengths (bits)")
    seeds: tuple[int, ...] = param((0, 1, 2, 3), Seeds(), "seeds of the split, the missing pattern and the networks")
    n_hidden: int = param(128, Int(4), "hidden units of every MLP (encoders, translators, critics, fusion)")
    n_epochs: int = param(80, Int(1), "full-batch Adam steps of the hash network")
    lr: float = param(5e-3, Float(0.0, 1.0, low_inclusive=False), "Adam learning rate (all networks)")
    n_completion_steps: int = param(100, Int(1), "Adam steps of the translators and critics, eq. (completion-loss)")
    adversarial_weight: float = param(0.05, Float(0.0, 10.0), "weight of the adversarial term, eq. (completion-loss)")
    k_neighbours: int = param(10, Int(1), "neighbours per sample in the attention graph, eq. (hash-attention)")
    eta: float = param(0.4, Probability(), "weight of second-order similarity, eq. (djsrh-mix)")
    similarity_scale: float = param(1.5, Positive(), "scale of the similarity target before clipping, eq. (djsrh-mix)")
    quantization_weight: float = param(
        0.5, Float(0.0, 100.0), "weight of the pull to the unified codes, eq. (uggrh-loss)"
    )
    ablation_bits: int = param(32, Int(4, 1024), "code length of the ablations (must be in bits_grid)")
    imbalance_share_grid: tuple[float, ...] = param(
        (0.0, 0.5, 1.0),
        Tuple(Probability(), min_len=0, increasing=True),
        "image_missing_share values of the imbalance part (at the highest missing rate; empty: skip)",
    )
    use_examples: bool = param(True, Bool(), "store retrieval examples (digits only) for the figure")
    timing_n_database: int = param(50_000, Int(100), "database size of the speed comparison")
    timing_d_float: int = param(512, Int(1), "dimension of the float features of the speed comparison")
    timing_n_queries: int = param(20, Int(1), "queries timed in the speed comparison")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            n_query=80, n_train=100, n_database=300, n_epochs=30, n_completion_steps=30, n_hidden=64, seeds=(0, 1),
            missing_rate_grid=(0.0, 0.7), bits_grid=(16,), ablation_bits=16, imbalance_share_grid=(),
            timing_n_database=5_000, timing_n_queries=5,
        ),
        "book": {},
        "paper": dict(
            device="auto", dataset="mirflickr", n_query=2000, n_train=5000, n_database=0, n_hidden=1024,
            n_epochs=500, n_completion_steps=1000, lr=1e-3, missing_rate_grid=(0.0, 0.1, 0.3, 0.5, 0.7),
            bits_grid=(16, 32, 64, 128), seeds=(0, 1, 2, 3, 4), k_neighbours=20, use_examples=False,
            imbalance_share_grid=(0.0, 0.5, 1.0),
            timing_n_database=1_000_000, timing_n_queries=100,
        ),
    }  # fmt: skip
    DATA_ROOT_SCALES: ClassVar[tuple[str, ...]] = ("paper",)
    DATA_DESCRIPTION: ClassVar[str] = NPZ_LAYOUT

    def cross_checks(self) -> None:
        if self.missing_rate_grid[0] != 0.0:
            raise ValueError(
                f"missing_rate_grid must start at 0.0 (the drop is measured from it), got {self.missing_rate_grid}"
            )
        if self.ablation_bits not in self.bits_grid:
            raise ValueError(f"ablation_bits must be one of bits_grid {self.bits_grid}, got {self.ablation_bits}")
        if self.n_class_tags > self.d_text or self.n_noise_tags > self.d_text:
            raise ValueError(f"n_class_tags and n_noise_tags must be <= d_text ({self.d_text})")
        if self.dataset == "digits" and self.n_query + self.n_train + self.n_database > 1797 - 1:
            raise ValueError(
                f"n_query + n_train + n_database must be < 1797 (the digits), got "
                f"{self.n_query + self.n_train + self.n_database}"
            )

    def settings(self) -> TrainSettings:
        return TrainSettings(
            n_hidden=self.n_hidden, n_epochs=self.n_epochs, lr=self.lr, n_completion_steps=self.n_completion_steps,
            adversarial_weight=self.adversarial_weight, k_neighbours=self.k_neighbours, eta=self.eta,
            similarity_scale=self.similarity_scale, quantization_weight=self.quantization_weight,
        )  # fmt: skip


class UGGRHResults(Results[UGGRHConfig]):
    """What :func:`run` returns: a JSON-able ``summary`` and the arrays the figures draw."""


def load_data(cfg: UGGRHConfig, seed: int) -> tuple[Modalities, Modalities, Modalities]:
    """``(train, query, database)`` for one seed: the digits with generated tags, or the paper's features."""
    rng = np.random.default_rng([cfg.seed, seed, 1])
    if cfg.dataset == "digits":
        data = digits_with_tags(cfg.d_text, cfg.n_class_tags, cfg.p_tag, cfg.n_noise_tags, rng=rng)
    else:
        if not cfg.data_root:
            raise ValueError(f"dataset={cfg.dataset!r} is read from data_root ({NPZ_LAYOUT}); set data_root")
        data = load_features(cfg.data_root, cfg.dataset)
    return split(data, cfg.n_query, cfg.n_train, cfg.n_database, rng)


def incomplete(
    cfg: UGGRHConfig, train: Modalities, rate: float, seed: int, share: float | None = None
) -> IncompletePairs:
    """The training pairs with one modality hidden in ``rate`` of them (labels are not passed on)."""
    rng = np.random.default_rng([cfg.seed, seed, 2, round(rate * 1000)])
    share = cfg.image_missing_share if share is None else share
    return make_incomplete(train.image, train.text, rate, share, rng=rng)


def evaluate(hashing: HashFunctions, query: Modalities, database: Modalities) -> dict[str, float]:
    """Image->text and text->image mAP@all (the only place labels are read)."""
    q_img, q_txt = hashing.image_codes(query.image), hashing.text_codes(query.text)
    d_img, d_txt = hashing.image_codes(database.image), hashing.text_codes(database.text)
    return {
        "i2t": map_at_all(q_img, d_txt, query.labels, database.labels),
        "t2i": map_at_all(q_txt, d_img, query.labels, database.labels),
    }


def random_codes_map(query: Modalities, database: Modalities, n_bits: int, rng: np.random.Generator) -> float:
    """mAP@all of random codes: the chance level of this split."""
    q = np.where(rng.random((len(query.labels), n_bits)) < 0.5, 1, -1)
    d = np.where(rng.random((len(database.labels), n_bits)) < 0.5, 1, -1)
    return map_at_all(q, d, query.labels, database.labels)


def _fit_eval(cfg, pairs, modules, bits_list, query, database, seed, *, examples=False) -> dict:
    """Prepare once (completion, similarity), then train and score one hash network per code length."""
    settings = cfg.settings()
    prepared = prepare(pairs, modules, settings, seed=seed, device=cfg.device)
    out: dict[str, Any] = {"confidence": prepared.confidence}
    for bits in bits_list:
        hashing = train_hashing(prepared, bits, modules, settings, seed=seed, device=cfg.device)
        out[bits] = evaluate(hashing, query, database)
        if examples and bits == cfg.ablation_bits:
            out["examples"] = _examples(hashing, query, database)
    if examples:
        order = np.argsort(np.argmax(_train_labels_for_display(cfg, seed), axis=1), kind="stable")
        out["target"] = prepared.target.cpu().numpy()[np.ix_(order, order)][::2, ::2]
    return out


def _train_labels_for_display(cfg: UGGRHConfig, seed: int) -> np.ndarray:
    """The training classes, to *sort* the similarity picture for the reader (never given to a method)."""
    return load_data(cfg, seed)[0].labels


def _examples(
    hashing: HashFunctions, query: Modalities, database: Modalities, n_queries: int = 4, top: int = 8
) -> dict:
    """Image queries and the images of the database items whose *text* codes rank first (I->T)."""
    from .retrieval import hamming_ranking

    q = hashing.image_codes(query.image[:n_queries])
    ranking = hamming_ranking(q, hashing.text_codes(database.text))[:, :top]
    hits = (query.labels[:n_queries, None, :] * database.labels[ranking]).sum(-1) > 0
    return {"query": query.image[:n_queries], "retrieved": database.image[ranking], "hit": hits}


def _mean_sd(values) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    return {"mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0, "values": arr.tolist()}


def _per_seed(checkpoint: Checkpointer | None, key: str, compute) -> Any:
    """``compute()``, stored under ``key`` so that a resumed run skips the seeds it already finished."""
    found = checkpoint.get(key) if checkpoint is not None else None
    if found is None:
        found = compute()
        if checkpoint is not None:
            checkpoint.save(key, found)
    return found


def _missing_part(cfg: UGGRHConfig, rate: float, checkpoint: Checkpointer | None = None) -> tuple[dict, dict]:
    """Baseline and UGGRH at one missing rate: mAP per code length, mean ± sd over seeds (each seed checkpointed)."""
    last = rate == cfg.missing_rate_grid[-1]
    per: dict[str, dict[int, list[dict]]] = {"baseline": {b: [] for b in cfg.bits_grid},
                                             "uggrh": {b: [] for b in cfg.bits_grid}}  # fmt: skip
    randoms, confidence, curves = [], [], {}

    def one_seed(i: int, seed: int) -> dict:
        train, query, database = load_data(cfg, seed)
        pairs = incomplete(cfg, train, rate, seed)
        show = cfg.use_examples and cfg.dataset == "digits" and last and i == 0
        out: dict[str, Any] = {"curves": {}}
        for method, modules in (("baseline", None), ("uggrh", ABLATIONS["uggrh"])):
            res = _fit_eval(cfg, pairs, modules, cfg.bits_grid, query, database, seed, examples=show)
            out[method] = {str(b): res[b] for b in cfg.bits_grid}
            if method == "uggrh":
                out["confidence"] = res["confidence"]
            if show:
                out["curves"][method] = {"examples": res["examples"], "target": res["target"]}
        out["random"] = random_codes_map(query, database, cfg.bits_grid[0], np.random.default_rng([cfg.seed, seed, 3]))
        return out

    for i, seed in enumerate(cfg.seeds):
        done = _per_seed(checkpoint, f"{part_name(rate)}/seed_{seed}", lambda i=i, seed=seed: one_seed(i, seed))
        for method in per:
            for b in cfg.bits_grid:
                per[method][b].append(done[method][str(b)])
        confidence.append(done["confidence"])
        curves.update(done["curves"])
        randoms.append(done["random"])
    summary: dict[str, Any] = {"missing_rate": rate, "random": _mean_sd(randoms), "confidence": confidence}
    for method, by_bits in per.items():
        summary[method] = {
            str(b): {d: _mean_sd([r[d] for r in rows]) for d in ("i2t", "t2i")}
            | {"mean": _mean_sd([0.5 * (r["i2t"] + r["t2i"]) for r in rows])}
            for b, rows in by_bits.items()
        }
    return summary, curves


def _ablations(cfg: UGGRHConfig, checkpoint: Checkpointer | None = None) -> tuple[dict, dict]:
    """At the highest missing rate and ``ablation_bits``: UGGRH without each module, and the control."""
    rate, bits = cfg.missing_rate_grid[-1], cfg.ablation_bits
    scores: dict[str, list[float]] = {name: [] for name in (*ABLATIONS, "drop_incomplete") if name != "uggrh"}

    def one_seed(seed: int) -> dict[str, float]:
        out = {}
        train, query, database = load_data(cfg, seed)
        pairs = incomplete(cfg, train, rate, seed)
        for name, modules in ABLATIONS.items():
            if name != "uggrh":
                r = _fit_eval(cfg, pairs, modules, (bits,), query, database, seed)[bits]
                out[name] = 0.5 * (r["i2t"] + r["t2i"])
        keep = pairs.complete  # the control: the baseline trained on the complete pairs only
        complete_pairs = IncompletePairs(
            pairs.image[keep], pairs.text[keep], pairs.has_image[keep], pairs.has_text[keep]
        )
        r = _fit_eval(cfg, complete_pairs, None, (bits,), query, database, seed)[bits]
        out["drop_incomplete"] = 0.5 * (r["i2t"] + r["t2i"])
        return out

    for seed in cfg.seeds:
        done = _per_seed(checkpoint, f"ablations/seed_{seed}", lambda seed=seed: one_seed(seed))
        for name in scores:
            scores[name].append(done[name])
    return {"missing_rate": rate, "bits": bits, **{k: _mean_sd(v) for k, v in scores.items()}}, {}


def _imbalance(cfg: UGGRHConfig, checkpoint: Checkpointer) -> tuple[dict, dict]:
    """At the highest missing rate and ``ablation_bits``: the share of incomplete pairs that lack the image, swept
    over ``imbalance_share_grid`` (0: every incomplete pair lacks its text, 1: its image). The incomplete pairs are
    the same for every share (:func:`make_incomplete` draws them before the share), so the share
    ``image_missing_share`` is the highest-rate part itself (its values are reused, not retrained) and the control
    (the baseline on the complete pairs, from ``ablations``) is the same for every share."""
    rate, bits = cfg.missing_rate_grid[-1], cfg.ablation_bits
    main = checkpoint.get(f"part/{part_name(rate)}")["summary"]
    control = checkpoint.get("part/ablations")["summary"]["drop_incomplete"]
    rows = []
    for share in cfg.imbalance_share_grid:
        if share == cfg.image_missing_share:
            rows.append({"image_missing_share": share, "reused": True, "control": control,
                         **{m: main[m][str(bits)]["mean"] for m in ("baseline", "uggrh")}})  # fmt: skip
            continue

        def one_seed(seed: int, share: float = share) -> dict[str, float]:
            train, query, database = load_data(cfg, seed)
            pairs = incomplete(cfg, train, rate, seed, share)
            out = {}
            for method, modules in (("baseline", None), ("uggrh", ABLATIONS["uggrh"])):
                r = _fit_eval(cfg, pairs, modules, (bits,), query, database, seed)[bits]
                out[method] = 0.5 * (r["i2t"] + r["t2i"])
            return out

        scores: dict[str, list[float]] = {"baseline": [], "uggrh": []}
        for seed in cfg.seeds:
            done = _per_seed(checkpoint, f"imbalance/share_{round(share * 1000)}/seed_{seed}",
                             lambda seed=seed: one_seed(seed))  # fmt: skip
            for m in scores:
                scores[m].append(done[m])
        rows.append({"image_missing_share": share, "reused": False, "control": control,
                     **{m: _mean_sd(v) for m, v in scores.items()}})  # fmt: skip
    return {"missing_rate": rate, "bits": bits, "rows": rows}, {}


def _speed(cfg: UGGRHConfig) -> tuple[dict, dict]:
    """Seconds per query: packed codes of the largest length against float32 cosine search."""
    rng = np.random.default_rng([cfg.seed, 4])
    res = search_timing(cfg.timing_n_database, cfg.bits_grid[-1], cfg.timing_d_float, cfg.timing_n_queries,
                        top_k=min(100, cfg.timing_n_database - 1), rng=rng)  # fmt: skip
    return {"retrieval_speed": res}, {}


def part_name(rate: float) -> str:
    return f"missing_{round(rate * 100)}"


@checked()
def run(
    config: UGGRHConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> UGGRHResults:
    """Run the missing-rate sweep, the ablations with the control, the imbalance part and the speed part."""
    cfg, checkpoint = start_run(UGGRHConfig, config, checkpoint)
    parts: dict[str, Any] = {
        part_name(r): (lambda r=r: _missing_part(cfg, r, checkpoint)) for r in cfg.missing_rate_grid
    }
    parts["ablations"] = lambda: _ablations(cfg, checkpoint)
    if cfg.imbalance_share_grid:
        parts["imbalance"] = lambda: _imbalance(cfg, checkpoint)
    parts["speed"] = lambda: _speed(cfg)
    summary, curves = run_parts_timed(checkpoint, parts, progress)
    return UGGRHResults(cfg, summary, curves)


def sweep_rows(results: UGGRHResults) -> list[dict]:
    """One row per (method, bits, missing rate) with mean ± sd of each direction."""
    cfg, s = results.config, results.summary
    rows = []
    for rate in cfg.missing_rate_grid:
        part = s[part_name(rate)]
        for method in ("baseline", "uggrh"):
            for b in cfg.bits_grid:
                rows.append({"method": method, "bits": b, "missing_rate": rate, **part[method][str(b)]})
    return rows


def drop(results: UGGRHResults, method: str, bits: int) -> dict[str, Any]:
    """mAP (mean of both directions) at 0% missing minus at the highest rate, per seed, as mean ± sd."""
    cfg, s = results.config, results.summary
    first = s[part_name(cfg.missing_rate_grid[0])][method][str(bits)]["mean"]["values"]
    last = s[part_name(cfg.missing_rate_grid[-1])][method][str(bits)]["mean"]["values"]
    return _mean_sd(np.subtract(first, last))


@checked()
def headline(results: UGGRHResults) -> list[str]:
    """Key numbers for the end-of-run summary of the command line."""
    cfg = results.config
    lines = []
    for row in sweep_rows(results):
        lines.append(f"{row['method']:>8} {row['bits']:>3} bits, {row['missing_rate']:.0%} missing: "
                     f"I→T {row['i2t']['mean']:.3f}±{row['i2t']['sd']:.3f}, "
                     f"T→I {row['t2i']['mean']:.3f}±{row['t2i']['sd']:.3f}")  # fmt: skip
    sp = results.summary["speed"]["retrieval_speed"]
    lines.append(
        f"search per query: Hamming {sp['hamming_query_s'] * 1e3:.2f} ms, cosine {sp['cosine_query_s'] * 1e3:.2f} ms"
    )
    lines.append(f"ablations at {cfg.missing_rate_grid[-1]:.0%}: " + ", ".join(
        f"{k} {v['mean']:.3f}" for k, v in results.summary["ablations"].items() if isinstance(v, dict)))  # fmt: skip
    return lines
