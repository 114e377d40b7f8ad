"""The chapter's reduced-scale reproduction, one code path for every scale.

For each missing rate and seed: hide one modality of that share of the training pairs (half of
them the image, half the text, unless ``image_missing_share`` says otherwise), train the baseline
(mean-fill + DJSRH-style hashing) and UGGRH at every code length, and score image->text and
text->image mAP@all on a complete query set against a complete database. The digit classes are
read only there, by :func:`evaluate`.

Parts: one per missing rate (``missing_0``, ``missing_35``, ...), ``ablations`` (each UGGRH
module removed, and the control, at the highest missing rate), ``imbalance`` (all missing
modalities on one side) and ``speed`` (packed Hamming codes against float cosine search).

Every part is a list of per-seed tasks, each a deterministic function of the config and its seed, run on one
torch and one BLAS thread. With two or more CPUs (``processes``), spawned
worker processes take the pending tasks from the end of the list while this process works from its start,
so the numbers are those of the serial run (tested).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, ClassVar

import numpy as np
from threadpoolctl import threadpool_limits

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Bool, Choice, Float, Int, Positive, Probability, Seeds, Tuple, param
from ..core.threads import one_cpu_thread, worker_count
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
    processes: int = param(
        0,
        Int(0, 64),
        "processes on a CPU: with 2 or more, spawned workers take per-seed tasks from the end of the list while "
        "this one works from its start (0: every CPU available); the numbers are the same for any count",
    )

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            n_query=80, n_train=100, n_database=300, n_epochs=30, n_completion_steps=30, n_hidden=64, seeds=(0, 1),
            missing_rate_grid=(0.0, 0.7), bits_grid=(16,), ablation_bits=16, imbalance_share_grid=(),
            timing_n_database=5_000, timing_n_queries=5, processes=1,
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


def _missing_seed(cfg: UGGRHConfig, rate: float, i: int, seed: int) -> dict:
    """Baseline and UGGRH at one missing rate and seed, every code length (the first seed, ``i == 0``, also stores
    the figures' examples and similarity target at the highest rate)."""
    train, query, database = load_data(cfg, seed)
    pairs = incomplete(cfg, train, rate, seed)
    show = cfg.use_examples and cfg.dataset == "digits" and rate == cfg.missing_rate_grid[-1] and i == 0
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


def _ablation_seed(cfg: UGGRHConfig, seed: int) -> dict[str, float]:
    """At the highest missing rate and ``ablation_bits``: UGGRH without each module, and the control, one seed."""
    rate, bits = cfg.missing_rate_grid[-1], cfg.ablation_bits
    out = {}
    train, query, database = load_data(cfg, seed)
    pairs = incomplete(cfg, train, rate, seed)
    for name, modules in ABLATIONS.items():
        if name != "uggrh":
            r = _fit_eval(cfg, pairs, modules, (bits,), query, database, seed)[bits]
            out[name] = 0.5 * (r["i2t"] + r["t2i"])
    keep = pairs.complete  # the control: the baseline trained on the complete pairs only
    complete_pairs = IncompletePairs(pairs.image[keep], pairs.text[keep], pairs.has_image[keep], pairs.has_text[keep])
    r = _fit_eval(cfg, complete_pairs, None, (bits,), query, database, seed)[bits]
    out["drop_incomplete"] = 0.5 * (r["i2t"] + r["t2i"])
    return out


def _imbalance_seed(cfg: UGGRHConfig, seed: int, share: float) -> dict[str, float]:
    """Baseline and UGGRH at the highest missing rate and ``ablation_bits`` with ``share`` of the incomplete pairs
    lacking the image, one seed."""
    rate, bits = cfg.missing_rate_grid[-1], cfg.ablation_bits
    train, query, database = load_data(cfg, seed)
    pairs = incomplete(cfg, train, rate, seed, share)
    out = {}
    for method, modules in (("baseline", None), ("uggrh", ABLATIONS["uggrh"])):
        r = _fit_eval(cfg, pairs, modules, (bits,), query, database, seed)[bits]
        out[method] = 0.5 * (r["i2t"] + r["t2i"])
    return out


def _imbalance_key(share: float, seed: int) -> str:
    return f"imbalance/share_{round(share * 1000)}/seed_{seed}"


def seed_tasks(cfg: UGGRHConfig) -> dict[str, tuple[str, Callable[..., dict], tuple]]:
    """Every per-seed task of :func:`run` in the order its parts read them, keyed by its checkpoint entry:
    ``(part, function, arguments)``; each is a deterministic function of the config and its arguments."""
    tasks: dict[str, tuple[str, Callable[..., dict], tuple]] = {}
    for rate in cfg.missing_rate_grid:
        for i, seed in enumerate(cfg.seeds):
            tasks[f"{part_name(rate)}/seed_{seed}"] = (part_name(rate), _missing_seed, (cfg, rate, i, seed))
    for seed in cfg.seeds:
        tasks[f"ablations/seed_{seed}"] = ("ablations", _ablation_seed, (cfg, seed))
    for share in cfg.imbalance_share_grid:
        if share != cfg.image_missing_share:  # that share is the highest-rate part itself
            for seed in cfg.seeds:
                tasks[_imbalance_key(share, seed)] = ("imbalance", _imbalance_seed, (cfg, seed, share))
    return tasks


def _compute(function: Callable[..., dict], args: tuple) -> dict:
    """One task, on one torch and one BLAS thread wherever it runs: its matrices are small, a second thread
    mostly waits (and spins), and the numbers do not depend on the machine's core count."""
    with one_cpu_thread(), threadpool_limits(1, user_api="blas"):
        return function(*args)


class SeedTasks:
    """The per-seed tasks of one run, shared between this process and worker processes.

    ``result(key)`` returns a task's value: from the checkpoint, from a worker, or computed here, and
    stores it in the checkpoint (so that a resumed run skips it). This process takes pending tasks from the
    start of the list, in the order the parts read them; each :meth:`feed` thread sends the last pending
    task to a worker, waits for it (without using a CPU) and takes the next, until none is left.
    """

    def __init__(self, cfg: UGGRHConfig, checkpoint: Checkpointer) -> None:
        self.tasks, self.checkpoint = seed_tasks(cfg), checkpoint
        self.pending = [key for key, (part, _, _) in self.tasks.items()
                        if checkpoint.get(f"part/{part}") is None and checkpoint.get(key) is None]  # fmt: skip
        self.running: set[str] = set()
        self.away: dict[str, Any] = {}  # a worker's value (or its exception), until this process reads it
        self.stopped = False
        self.lock = threading.Condition()

    def result(self, key: str) -> Any:
        found = self.checkpoint.get(key)
        if found is not None:
            return found
        with self.lock:
            while key in self.running:
                self.lock.wait()
            outcome = self.away.pop(key, None)
            if key in self.pending:
                self.pending.remove(key)
        if outcome is None:
            _, function, args = self.tasks[key]
            outcome = _compute(function, args)
        elif isinstance(outcome, BaseException):
            raise outcome
        self.checkpoint.save(key, outcome)
        return outcome

    def feed(self, pool: ProcessPoolExecutor) -> None:
        while True:
            with self.lock:
                if self.stopped or not self.pending:
                    return
                key = self.pending.pop()
                self.running.add(key)
            _, function, args = self.tasks[key]
            try:
                outcome = pool.submit(_compute, function, args).result()
            except BaseException as err:  # handed to this process, which raises it where the part reads the task
                outcome = err
            with self.lock:
                self.running.discard(key)
                self.away[key] = outcome
                self.lock.notify_all()

    def stop(self) -> None:
        with self.lock:
            self.stopped = True


def _missing_part(cfg: UGGRHConfig, rate: float, tasks: SeedTasks) -> tuple[dict, dict]:
    """Baseline and UGGRH at one missing rate: mAP per code length, mean ± sd over seeds (each seed checkpointed)."""
    per: dict[str, dict[int, list[dict]]] = {"baseline": {b: [] for b in cfg.bits_grid},
                                             "uggrh": {b: [] for b in cfg.bits_grid}}  # fmt: skip
    randoms, confidence, curves = [], [], {}
    for seed in cfg.seeds:
        done = tasks.result(f"{part_name(rate)}/seed_{seed}")
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


def _ablations(cfg: UGGRHConfig, tasks: SeedTasks) -> tuple[dict, dict]:
    """At the highest missing rate and ``ablation_bits``: UGGRH without each module, and the control."""
    scores: dict[str, list[float]] = {name: [] for name in (*ABLATIONS, "drop_incomplete") if name != "uggrh"}
    for seed in cfg.seeds:
        done = tasks.result(f"ablations/seed_{seed}")
        for name in scores:
            scores[name].append(done[name])
    summary = {"missing_rate": cfg.missing_rate_grid[-1], "bits": cfg.ablation_bits}
    return {**summary, **{k: _mean_sd(v) for k, v in scores.items()}}, {}


def _imbalance(cfg: UGGRHConfig, tasks: SeedTasks) -> tuple[dict, dict]:
    """At the highest missing rate and ``ablation_bits``: the share of incomplete pairs that lack the image, swept
    over ``imbalance_share_grid`` (0: every incomplete pair lacks its text, 1: its image). The incomplete pairs are
    the same for every share (:func:`make_incomplete` draws them before the share), so the share
    ``image_missing_share`` is the highest-rate part itself (its values are reused, not retrained) and the control
    (the baseline on the complete pairs, from ``ablations``) is the same for every share."""
    rate, bits = cfg.missing_rate_grid[-1], cfg.ablation_bits
    main = tasks.checkpoint.get(f"part/{part_name(rate)}")["summary"]
    control = tasks.checkpoint.get("part/ablations")["summary"]["drop_incomplete"]
    rows = []
    for share in cfg.imbalance_share_grid:
        if share == cfg.image_missing_share:
            rows.append({"image_missing_share": share, "reused": True, "control": control,
                         **{m: main[m][str(bits)]["mean"] for m in ("baseline", "uggrh")}})  # fmt: skip
            continue
        scores: dict[str, list[float]] = {"baseline": [], "uggrh": []}
        for seed in cfg.seeds:
            done = tasks.result(_imbalance_key(share, seed))
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
    """Run the missing-rate sweep, the ablations with the control, the imbalance part and the speed part.

    With ``cfg.processes`` (0: every CPU available) of 2 or more and the CPU as device, spawned worker processes
    take the pending per-seed tasks (:class:`SeedTasks`) from the end of the list while this process works from
    its start; the parts, their checkpointed seeds and every number are those of the serial run. A part's time
    includes what this process waited for a worker."""
    cfg, checkpoint = start_run(UGGRHConfig, config, checkpoint)
    tasks = SeedTasks(cfg, checkpoint)
    parts: dict[str, Any] = {part_name(r): (lambda r=r: _missing_part(cfg, r, tasks)) for r in cfg.missing_rate_grid}
    parts["ablations"] = lambda: _ablations(cfg, tasks)
    if cfg.imbalance_share_grid:
        parts["imbalance"] = lambda: _imbalance(cfg, tasks)
    parts["speed"] = lambda: _speed(cfg)
    workers = worker_count(cfg.processes, len(tasks.pending)) - 1 if resolve_device(cfg.device).type == "cpu" else 0
    with ExitStack() as stack:
        if workers > 0:
            pool = stack.enter_context(ProcessPoolExecutor(workers, mp_context=get_context("spawn")))
            feeders = [threading.Thread(target=tasks.feed, args=(pool,), daemon=True) for _ in range(workers)]
            stack.callback(lambda: [thread.join() for thread in feeders])
            stack.callback(tasks.stop)  # first on the way out: no new task; the running ones finish
            for thread in feeders:
                thread.start()
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
