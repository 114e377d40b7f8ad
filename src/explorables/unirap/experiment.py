"""The chapter's reduced-scale reproduction, one code path for every scale.

Data (all procedural, from the base seed): ``n_parsing`` general-parsing scenes (query: a tool's
name; targets: its box and whole mask; no instruction, no part, no grasp), an instruction pool of
``max(labelled_grid)`` scenes (instruction, part mask, grasp), and ``n_test`` held-out instruction
scenes, drawn from their own seed (their labels are used only to score).

Three parts, each one batched ensemble (every model trains ``n_steps`` steps of ``batch_size`` scenes in all):

* ``pretrain`` (phase 1, the first ``sum(stage_fractions)`` of the steps): the curriculum's stages 1-2 on
  parsing scenes, once per seed (they see no instruction label, so every budget and both ablations start
  stage 3 from them: a warm start), the control (joint training on the curriculum's data) at the
  labelled counts of :func:`control_counts` (the ``n_control_counts`` smallest of ``labelled_grid``), and at the
  same counts the no-parsing arm (regime ``"joint"``: the instruction scenes alone, all three losses from the first
  step; no parsing scene ever enters its batches: the abstract's comparison for the transfer claim);
* ``unified`` (phase 2): the curriculum's stage 3 at every count, the control and the no-parsing arm, continued,
  and the ablation ``pose_direct`` (members of architecture ``"pose_direct"`` in the same ensemble): a pose head
  that reads an attention map of its own (the same statistics) in place of the mask, from the stage-2 weights, at
  ``n_labelled``;
* ``separate``: three task decoders, each a copy of the stage-2 decoder, at ``n_labelled`` (the pose head
  reads the mask decoder's predicted mask, stop-gradient, with the pose decoder's token).

Each phase has its own Adam warm-up and decay (peak ``lr``, then ``phase2_lr``), for the curriculum, the control and the
ablations alike.
``unified`` also scores its curriculum members at ``n_labelled`` with each test scene given another test
scene's instruction (``summary['unified']['shuffled']``): the control that the model reads the instruction;
and with their pose head fed the test scene's *true* part mask in place of its own
(``summary['unified']['true_mask']``): the positive control that the pose head can use a mask.

Member seed ``s``, with the base seed ``cfg.seed``, sets a member's initial weights (the same for every
regime; :func:`weight_seed`), its labelled subset (the first ``n`` of a seeded permutation of the pool,
so smaller subsets are nested in larger ones) and its batches. The base seed also draws the scenes.

``arm_seeds`` gives the control and the no-parsing arm further member seeds (after ``seeds``): more members for the
``parsing`` gate, which compares those two arms; ``curriculum_arm_seeds`` gives the curriculum the first few of them at
the control's counts below ``n_labelled`` (phase 1 and stage 3 there, after every other member): a row that pairs
either arm with the curriculum reads every curriculum member at the count, seed by seed; every gate reads ``seeds``.
``member_chunk`` trains each part's ensemble that many rows at a time (:func:`train_chunks`): the paper preset's
memory is then a chunk's, not the whole ensemble's, and the numbers are the same (members never interact). With
``member_chunk`` 0 an ensemble of :data:`SPLIT_ROWS` rows or more trains as two chunks of an even number of rows
(:func:`chunk_rows`), whatever the process count: with ``processes`` of 2 or more the second chunk trains in a worker
process while this one trains the first, so both CPUs work through phase 1 and phase 2.

Best of ``phase1_starts`` starts: every phase-1 member (the curriculum's and the control's alike) trains phase 1
from ``phase1_starts`` initialisations on the same batches (start 0: :func:`weight_seed`'s weights), and the start
with the lowest training loss over phase 1's last :data:`START_WINDOW` steps (its own weighted loss on its own
training batches: no test scene, no instruction label for the curriculum) goes on to phase 2. A member whose phase 1
went slowly ends phase 1 with a higher loss and starts phase 2 behind (``benchmarks/unirap_diagnosis.md``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, ClassVar

import numpy as np
import torch

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Float, Int, Positive, Seeds, Tuple, param
from ..core.threads import one_cpu_thread, worker_count
from . import metrics
from .model import UniRAP, decode, member_state
from .scenes import JAW, VOCAB, make_dataset
from .training import REGIMES, Member, predict, schedule, train

ARRAYS = ("images", "tokens", "boxes", "masks", "grasps")


@dataclass(frozen=True)
class UniRAPConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    image_size: int = param(32, Int(16, 256), "scene side in pixels (a multiple of 4)")
    max_clutter: int = param(0, Int(0, 20), "clutter blobs per scene: uniform in 0..max_clutter")
    max_tools: int = param(2, Int(1, 4), "tools per scene: uniform in 1..max_tools")
    n_parsing: int = param(600, Int(8), "general-parsing scenes (tool name only: box and whole mask, no instruction)")
    labelled_grid: tuple[int, ...] = param((16, 64, 512), Tuple(Int(4), distinct=True, increasing=True),
                                           "instruction-labelled scene counts of the data-efficiency curves")
    n_control_counts: int = param(1, Int(1, 100), "the control (joint training on the curriculum's data) and the "
                                  "no-parsing arm run at this many of the smallest counts of labelled_grid (never at "
                                  "the largest of two or more)")
    n_labelled: int = param(512, Int(4), "instruction-labelled scenes of the architecture comparison (in the grid)")
    n_test: int = param(300, Int(10), "held-out instruction scenes (their labels only score)")
    seeds: tuple[int, ...] = param((0, 1, 2), Seeds(), "member seeds (weights, labelled subset, batches)")
    # (3, 4, 5, 6, 7): 8 members per arm for the parsing gate (was none): benchmarks/unirap_members2_rule.md
    arm_seeds: tuple[int, ...] = param((3, 4, 5, 6, 7), Seeds(min_len=0),
                                       "further member seeds of the control and the no-parsing arm only (after "
                                       "seeds, none of them in seeds): more members for the parsing gate's interval; "
                                       "a row that pairs one of these arms with the curriculum reads the curriculum's "
                                       "members at the count (seeds, then the first curriculum_arm_seeds of these)")
    # 2: the curriculum at n = 16 trains arm seeds 3 and 4 too (5 staged-vs-mixed pairs; the rule's fallback E5: E7, 4,
    # failed its time term): benchmarks/unirap_pairs_rule.md
    curriculum_arm_seeds: int = param(2, Int(0, 64), "the curriculum at the control's counts below n_labelled also "
                                      "trains the first this many of arm_seeds (phase 1 and stage 3 at those counts "
                                      "only): more pairs for the rows that pair it with the control or the no-parsing "
                                      "arm; every gate reads seeds only")
    # 400: the eighth pass's candidate, 480 (0 failing tuning models of 80 against 4), met its rule's accuracy terms
    # but not its time term (quiet cold runs 61.5 and 62.8 s against the rule's 55 s ceiling), so the rule keeps 400
    n_steps: int = param(400, Int(3), "Adam steps of every member, whatever its regime (equal-steps control)")
    batch_size: int = param(8, Int(2), "scenes per step and member")
    lr: float = param(1e-2, Positive(), "Adam learning rate of phase 1 (peak; warm-up, then a linear decay to 20 %)")
    phase2_lr: float = param(1.5e-2, Positive(), "Adam peak learning rate of phase 2 (the curriculum's stage 3, the "
                             "control's rest and the ablations alike)")
    # (0.10, 0.15): stage 1 40 of 400 steps, phase 2 300 (was (0.15, 0.15), phase 2 280): benchmarks/unirap_rule7.md
    stage_fractions: tuple[float, ...] = param(
        (0.10, 0.15), Tuple(Float(0.0, 1.0), min_len=2, max_len=2),
        "curriculum: fractions of the steps for stage 1 (detection) and stage 2 (+ segmentation) on parsing data")
    width: int = param(16, Int(2, 512), "channels of the first convolution and of the pixel features")
    d_model: int = param(24, Int(4, 1024), "width of image tokens, words and the interface token")
    n_layers: int = param(2, Int(1, 24), "decoder layers of the interface token")
    n_heads: int = param(2, Int(1, 32), "attention heads")
    n_shown: int = param(10, Int(1, 100), "test scenes in the explorable's slider")
    phase1_starts: int = param(2, Int(1, 8), "initialisations per phase-1 member (curriculum and control alike): the "
                               "one with the lowest training loss over phase 1's last steps goes on to phase 2")
    member_chunk: int = param(0, Int(0, 10**4), "at most this many ensemble rows train at once (0: an ensemble of "
                              "8 rows or more in two chunks of an even number of rows, a smaller one whole): a part "
                              "trains its members in consecutive chunks (a phase-1 member's starts are rows of their "
                              "own); members are independent, so the numbers are those of one ensemble, at a "
                              "fraction of the peak memory")
    processes: int = param(0, Int(0, 64), "processes: with 2 or more a spawned worker trains the second chunk of "
                           "each part and the separate-heads arm while this one trains the first chunks (0: every "
                           "CPU available); the numbers are the same for any count")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(n_parsing=120, labelled_grid=(48,), n_labelled=48, n_test=60, n_steps=250, batch_size=8,
                      phase2_lr=1e-2,
                      n_shown=3, d_model=16, width=12, seeds=(0,), arm_seeds=(), curriculum_arm_seeds=0, max_tools=3,
                      processes=1),
        "book": {},
        "paper": dict(device="auto", image_size=96, n_parsing=20000, labelled_grid=(100, 400, 1600, 6400),
                      n_control_counts=3,
                      n_labelled=6400, n_test=2000, n_steps=20000, batch_size=64, lr=2e-3, phase2_lr=3e-3,
                      width=48, d_model=192,
                      n_layers=4, n_heads=6, seeds=(0, 1, 2, 3, 4), max_clutter=8, max_tools=3,
                      stage_fractions=(0.15, 0.15), member_chunk=35, arm_seeds=(), curriculum_arm_seeds=0),
    }

    def cross_checks(self) -> None:
        if self.image_size % 4:
            raise ValueError(f"image_size must be a multiple of 4, got {self.image_size}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model must be a multiple of n_heads ({self.n_heads}), got {self.d_model}")
        if self.n_labelled not in self.labelled_grid:
            raise ValueError(f"n_labelled must be one of labelled_grid {self.labelled_grid}, got {self.n_labelled}")
        split = round(self.stage_fractions[0] * self.n_steps) + round(self.stage_fractions[1] * self.n_steps)
        if not 1 <= split < self.n_steps:
            raise ValueError(f"stage_fractions must give stages 1 and 2 at least one step and leave stage 3 some "
                             f"(of n_steps = {self.n_steps}), got {self.stage_fractions}")
        if set(self.arm_seeds) & set(self.seeds):
            raise ValueError(f"arm_seeds must not repeat a seed of seeds {self.seeds}, got {self.arm_seeds}")
        if self.curriculum_arm_seeds > len(self.arm_seeds):
            raise ValueError(f"curriculum_arm_seeds must be at most the {len(self.arm_seeds)} arm_seeds, "
                             f"got {self.curriculum_arm_seeds}")
        if sum(self.stage_fractions) >= 1:
            raise ValueError(f"stage_fractions must sum to < 1 (the last stage needs steps), "
                             f"got {self.stage_fractions}")

    def memory_estimate(self) -> dict[str, float]:
        n_scenes = self.n_parsing + max(self.labelled_grid) + self.n_test
        return {"n_parsing, labelled_grid, n_test, image_size": n_scenes * 4 * self.image_size ** 2 * 4.0}


class UniRAPResults(Results[UniRAPConfig]):
    """What :func:`run` returns: the three metrics per regime, labelled count and seed; predictions on a
    few test scenes, and the lab's models (first member seed: the curriculum at ``n_labelled`` and at the fewest
    labels, the control at the fewest) in ``curves``."""


@functools.lru_cache(maxsize=2)
def datasets(cfg: UniRAPConfig) -> tuple[dict, dict, dict]:
    """The parsing scenes, the instruction pool and the test scenes (three disjoint seeds); cached, since
    every part reads them (treat them as read-only)."""
    size, clutter, tools = cfg.image_size, cfg.max_clutter, cfg.max_tools
    parsing = make_dataset(cfg.n_parsing, cfg.seed * 4 + 1, size, "parsing", clutter, tools)
    pool = make_dataset(max(cfg.labelled_grid), cfg.seed * 4 + 2, size, "instruction", clutter, tools)
    test = make_dataset(cfg.n_test, cfg.seed * 4 + 3, size, "instruction", clutter, tools)
    return parsing, pool, test


def weight_seed(base_seed: int, member_seed: int, start: int = 0) -> int:
    """The seed of a member's initial weights: drawn from (base seed, member seed), so that changing
    only the base seed changes the initial weights as well as the scenes; ``start`` > 0 draws another
    initialisation of the same member (phase 1's extra starts)."""
    extra = [start] if start else []
    return int(np.random.SeedSequence([base_seed, member_seed, 31, *extra]).generate_state(1)[0])


#: phase 1's starts are compared on their mean training loss over this many last steps of phase 1
START_WINDOW = 20


def make_model(cfg: UniRAPConfig, seeds: list[int], arch: str | tuple[str, ...],
               starts: list[int] | None = None) -> UniRAP:
    """The config's model for these member seeds (``arch``: one architecture, or one per member); member
    seed ``s`` initialises its weights through :func:`weight_seed` with the config's base seed (and the
    member's ``starts`` entry, 0 by default)."""
    starts = [0] * len(seeds) if starts is None else starts
    return UniRAP([weight_seed(cfg.seed, s, k) for s, k in zip(seeds, starts, strict=True)], arch=arch,
                  image_size=cfg.image_size, width=cfg.width,
                  d_model=cfg.d_model, n_layers=cfg.n_layers, n_heads=cfg.n_heads, n_words=len(VOCAB))


def members_of(cfg: UniRAPConfig, part: str) -> list[Member]:
    """The members of a part's ensemble.

    ``pretrain`` (phase 1, the first ``sum(stage_fractions)`` of the steps): one curriculum member per seed
    (stages 1-2, on parsing scenes only, shared by every curriculum model of that seed), then the control
    (joint training on the curriculum's data) at every count of :func:`control_counts`, then the no-parsing arm
    (regime ``"joint"``: joint training on the instruction scenes alone, no parsing scene ever) at the same counts.
    ``unified`` (phase 2, the rest of the steps): the curriculum's stage 3 at every labelled count, then the control
    and the no-parsing arm, continued, then the curriculum's stage 3 at ``n_labelled`` with the pose read from its
    own attention map (architecture ``"pose_direct"``).
    ``separate``: the curriculum's stage 3 at ``n_labelled`` with three decoders.
    """
    arms = cfg.seeds + cfg.arm_seeds  # per count, the curriculum's seeds first (the paired rows), then the extra ones
    control = [Member("joint_parsing", n, s) for n in control_counts(cfg) for s in arms]
    # the no-parsing arm (the abstract's comparison) after the control: the rows before it are those of a run without
    # it, and the pose_direct members stay a contiguous block at the end (their float rounding then does not move)
    bare = [Member("joint", n, s) for n in control_counts(cfg) for s in arms]
    # the curriculum's further members (curriculum_arm_seeds) at the end of each ensemble: every row before them is
    # laid out as in a run without them (benchmarks/unirap_pairs_rule.md)
    extra = cfg.arm_seeds[: cfg.curriculum_arm_seeds]
    if part == "pretrain":
        return ([Member("curriculum", cfg.n_labelled, s) for s in cfg.seeds] + control + bare
                + [Member("curriculum", cfg.n_labelled, s) for s in extra])
    if part == "unified":
        direct = [Member("curriculum", cfg.n_labelled, s, "pose_direct") for s in cfg.seeds]
        more = [Member("curriculum", n, s) for n in paired_counts(cfg) for s in extra]
        return ([Member("curriculum", n, s) for n in cfg.labelled_grid for s in cfg.seeds] + control + bare + direct
                + more)
    if part == "separate":
        return [Member("curriculum", cfg.n_labelled, s, "separate") for s in cfg.seeds]
    raise ValueError(f"part must be one of {PARTS}, got {part!r}")


def control_counts(cfg: UniRAPConfig) -> tuple[int, ...]:
    """The labelled counts at which the control (joint training on the curriculum's data) is trained: the
    ``n_control_counts`` smallest counts of ``labelled_grid``, never the largest of two or more (where the efficiency
    claim does not read it; with a one-count grid, that count). The book's run affords it at the smallest only: its
    middle count traces the curriculum's curve, and costs three members, not six."""
    grid = cfg.labelled_grid
    below = grid[:-1] if len(grid) > 1 else grid
    return below[: cfg.n_control_counts]


def paired_counts(cfg: UniRAPConfig) -> tuple[int, ...]:
    """The counts of :func:`control_counts` below ``n_labelled``: where the curriculum's further members
    (``curriculum_arm_seeds``) train stage 3 (never at ``n_labelled``, whose models the gates read on ``seeds``)."""
    return tuple(n for n in control_counts(cfg) if n < cfg.n_labelled)


def _stats(values: list[float]) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    return {"per_seed": arr.tolist(), "mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0}


def phase_steps(cfg: UniRAPConfig) -> int:
    """Steps of phase 1 (the curriculum's stages 1 and 2); phase 2 has the rest."""
    return round(cfg.stage_fractions[0] * cfg.n_steps) + round(cfg.stage_fractions[1] * cfg.n_steps)


def member_schedule(cfg: UniRAPConfig, m: Member) -> tuple[np.ndarray, np.ndarray]:
    """The member's whole schedule over ``n_steps`` (phase 1 is its first :func:`phase_steps` rows): its
    labelled subset is the first ``n_labelled`` of a permutation seeded by the member's seed (nested subsets)."""
    n_pool = max(cfg.labelled_grid)
    labelled = np.random.default_rng([cfg.seed, m.seed]).permutation(n_pool)[: m.n_labelled]
    rng = np.random.default_rng([cfg.seed, m.seed, m.n_labelled, REGIMES.index(m.regime), 17])
    return schedule(m, cfg.n_steps, cfg.batch_size, cfg.n_parsing, labelled, cfg.stage_fractions, rng)


def _source_rows(cfg: UniRAPConfig, part: str) -> list[int]:
    """For each member of ``part`` (phase 2), the row of the ``pretrain`` ensemble it starts from."""
    first = members_of(cfg, "pretrain")
    pretrained = {m.seed: i for i, m in enumerate(first) if m.regime == "curriculum"}
    own = {(m.regime, m.n_labelled, m.seed): i for i, m in enumerate(first) if m.regime != "curriculum"}
    return [pretrained[m.seed] if m.regime == "curriculum" else own[(m.regime, m.n_labelled, m.seed)]
            for m in members_of(cfg, part)]


def fork(state: dict[str, torch.Tensor], rows: list[int], arch: str) -> dict[str, torch.Tensor]:
    """The state of a new ensemble whose member ``i`` starts from member ``rows[i]`` of ``state`` (a
    ``unified`` ensemble); for ``arch="separate"`` each of the three decoders starts from the shared one."""
    index = torch.as_tensor(rows)
    out = {}
    for k, v in state.items():
        if arch == "separate" and k.startswith("decoder."):
            out[k] = v[index.repeat_interleave(3)].clone()
        else:
            out[k] = v[index].clone()
    return out


def rows_of(state: dict[str, torch.Tensor], n_members: int, rows: slice) -> dict[str, torch.Tensor]:
    """The state of members ``rows`` (a slice) of an ensemble of ``n_members`` (a parameter with several rows per
    member, the separate decoders', gives each of those members all its rows)."""
    out = {}
    for k, v in state.items():
        per = v.shape[0] // n_members
        out[k] = v[rows.start * per: rows.stop * per]
    return out


#: with ``member_chunk`` 0, an ensemble of at least this many rows trains as two chunks (:func:`chunk_rows`)
SPLIT_ROWS = 8
#: with ``member_chunk`` 0, the first chunk's share of ``unified``'s rows (the book: 16 of 28; ``pretrain`` splits
#: in halves, 20 + 18): with two processes the worker trains the second chunk and then ``separate`` (3 members of
#: three decoders) while this process scores ``unified``, so this process takes more of the training. Measured at
#: base seed 0 (``benchmarks/unirap_balance.md``): halves, 14 + 14, left this process waiting for the worker's chunk
#: and then for ``separate``
UNIFIED_SHARE = 4 / 7  # 18 + 12 of the book's 30 rows (its 2 further curriculum members; 16 + 12 of 28 without)


def chunk_rows(cfg: UniRAPConfig, n: int, share: float = 0.5) -> list[slice]:
    """The consecutive chunks of rows in which an ensemble of ``n`` rows trains: ``cfg.member_chunk`` rows at a time,
    or with ``member_chunk`` 0 two chunks of an even number of rows each (the first ``2 * ceil(n * share / 2)``:
    ``2 * ceil(n / 4)`` for halves) for ``n`` of :data:`SPLIT_ROWS` or more, else one. The chunks depend on the config
    and the part alone (``share``: :data:`UNIFIED_SHARE` for ``unified``), never on the process count.

    Why even: a batched product's rounding depends on its batch size (see :func:`train_chunks`), but on the book's
    machine (MKL, AVX-512) a chunk that starts and ends at an even row trains its members bit for bit as the whole
    ensemble does (measured: the book run's summary is unchanged at base seeds 0 and 117), and odd chunks do not."""
    if cfg.member_chunk:
        return [slice(a, min(a + cfg.member_chunk, n)) for a in range(0, n, cfg.member_chunk)]
    if not 0 < share <= 4 / 7:
        raise ValueError(f"share must be in (0, 4/7] (two chunks of at least 2 rows from {SPLIT_ROWS} rows), "
                         f"got {share}")
    if n < SPLIT_ROWS:
        return [slice(0, n)]
    first = 2 * math.ceil(n * share / 2)
    return [slice(0, first), slice(first, n)]


@functools.lru_cache(maxsize=2)
def training_pool(cfg: UniRAPConfig) -> dict[str, torch.Tensor]:
    """The scenes every member trains on, as CPU tensors: the parsing scenes, then the instruction pool (cached;
    read-only)."""
    parsing, pool_data, _ = datasets(cfg)
    return {k: torch.as_tensor(np.concatenate([parsing[k], pool_data[k]])) for k in ARRAYS}


def _train_chunk(cfg: UniRAPConfig, seeds: list[int], archs: tuple[str, ...], starts: list[int],
                 state: dict[str, torch.Tensor], idx: torch.Tensor, weights: torch.Tensor,
                 lr: float) -> tuple[dict[str, torch.Tensor], np.ndarray]:
    """One chunk of :func:`train_chunks` in a worker process (no checkpoint): its trained weights and loss curves."""
    device = resolve_device(cfg.device)
    with one_cpu_thread(device):
        sub = make_model(cfg, seeds, archs, starts).to(device)
        sub.load_state_dict(state)
        pool = {k: v.to(device) for k, v in training_pool(cfg).items()}
        curve = train(sub, pool, idx, weights, lr=lr)
        return {k: v.detach().cpu() for k, v in sub.state_dict().items()}, curve


def train_chunks(cfg: UniRAPConfig, model: UniRAP, seeds: list[int], starts: list[int],
                 pool: dict[str, torch.Tensor], idx: torch.Tensor, weights: torch.Tensor, *, lr: float,
                 checkpoint: Checkpointer | None, name: str, progress: bool, executor: Executor | None = None,
                 submitted: Callable[[], None] | None = None, share: float = 0.5) -> np.ndarray:
    """:func:`~explorables.unirap.training.train` on ``model``'s members in the chunks of :func:`chunk_rows`: each
    chunk is an ensemble of its own (its own Adam, the same schedule), trained to the end, and its weights go back
    into ``model``'s rows. Members never interact (per-member losses, clipping and Adam), so this gives the numbers of
    one ensemble at the peak memory of a chunk (up to a batched product's rounding, which depends on its batch size:
    ulps, see :func:`chunk_rows`). With an ``executor`` (a worker process) every chunk after the first trains there,
    without a checkpoint, while this process trains the first; ``submitted`` is called once they are queued (the
    caller may queue more work behind them); ``share``: the first chunk's share (:func:`chunk_rows`). Returns the loss
    curves ``(T, M)``."""
    n = model.n_members
    chunks = chunk_rows(cfg, n, share)
    jobs = {}
    if executor is not None and len(chunks) > 1:
        state = model.state_dict()
        jobs = {j: executor.submit(_train_chunk, cfg, seeds[rows], model.archs[rows], starts[rows],
                                   {k: v.detach().cpu().clone() for k, v in rows_of(state, n, rows).items()},
                                   idx[:, rows].contiguous(), weights[:, rows].contiguous(), lr)
                for j, rows in enumerate(chunks) if j > 0}
    if submitted is not None:
        submitted()
    if len(chunks) == 1:
        return train(model, pool, idx, weights, lr=lr, checkpoint=checkpoint, name=name, progress=progress)
    device = next(model.parameters()).device
    state = model.state_dict()
    curves: list[np.ndarray] = []
    for j, rows in enumerate(chunks):
        if j in jobs:
            trained, curve = jobs[j].result()
        else:
            sub = make_model(cfg, seeds[rows], model.archs[rows], starts[rows]).to(device)
            sub.load_state_dict(rows_of(state, n, rows))
            curve = train(sub, pool, idx[:, rows].contiguous(), weights[:, rows].contiguous(), lr=lr,
                          checkpoint=checkpoint, name=f"{name}/chunk{j}", progress=progress)
            trained = sub.state_dict()
            del sub
        with torch.no_grad():
            for key, target in rows_of(state, n, rows).items():
                target.copy_(trained[key].to(device))
        curves.append(curve)
    model.eval()
    return np.concatenate(curves, 1)


def score(cfg: UniRAPConfig, model: UniRAP, members: list[Member], label) -> tuple[dict, dict]:
    """Every member's three metrics on the test scenes, grouped ``{label(m): {str(n): stats}}``, and the
    decoded predictions."""
    device = next(model.parameters()).device
    _, _, test = datasets(cfg)
    images, tokens = torch.as_tensor(test["images"]).to(device), torch.as_tensor(test["tokens"]).to(device)
    pred = decode(predict(model, images, tokens), cfg.image_size)
    jaw = JAW * cfg.image_size / 32
    scores = [metrics.evaluate({k: v[i] for k, v in pred.items()}, test, jaw) for i in range(len(members))]
    summary: dict[str, Any] = {}
    for regime, n in sorted({(label(m), m.n_labelled) for m in members}):
        rows = [s for m, s in zip(members, scores, strict=True) if label(m) == regime and m.n_labelled == n]
        summary.setdefault(regime, {})[str(n)] = {key: _stats([r[key] for r in rows]) for key in rows[0]}
    return summary, pred


def train_part(cfg: UniRAPConfig, part: str, checkpoint: Checkpointer, progress: bool,
               start: dict[str, Any] | None = None, executor: Executor | None = None,
               submitted: Callable[[], None] | None = None) -> tuple[dict, dict]:
    """Train the part's ensemble (phase 1 for ``pretrain``, phase 2 from its state for the others) and score
    every phase-2 member on the test scenes: ``(summary, curves)``. A phase-2 part starts from ``start`` (the
    ``pretrain`` part's state), or else from the state the checkpoint holds. ``executor`` and ``submitted``: see
    :func:`train_chunks`."""
    device = resolve_device(cfg.device)
    _, pool_data, test = datasets(cfg)
    pool = {k: v.to(device) for k, v in training_pool(cfg).items()}
    members = members_of(cfg, part)
    split = phase_steps(cfg)
    rows = slice(0, split) if part == "pretrain" else slice(split, cfg.n_steps)
    plans = [member_schedule(cfg, m) for m in members]
    starts = [0] * len(members)
    if part == "pretrain":  # every member from cfg.phase1_starts initialisations (start-major), the same batches
        n_starts = cfg.phase1_starts
        plans, members = plans * n_starts, members * n_starts
        starts = [k for k in range(n_starts) for _ in range(len(members) // n_starts)]
    idx = torch.as_tensor(np.stack([i[rows] for i, _ in plans], 1))
    weights = torch.as_tensor(np.stack([w[rows] for _, w in plans], 1))
    arch = tuple(m.arch for m in members)
    model = make_model(cfg, [m.seed for m in members], arch, starts).to(device)
    arch = model.arch
    if part != "pretrain":  # phase 2 starts where phase 1 left each member
        if start is None:
            start = checkpoint.get("part/pretrain")["curves"]["state"]
        model.load_state_dict(fork({k: torch.as_tensor(v).to(device) for k, v in start.items()},
                                   _source_rows(cfg, part), arch))
    lr = cfg.lr if part == "pretrain" else cfg.phase2_lr
    curve = train_chunks(cfg, model, [m.seed for m in members], starts, pool, idx, weights, lr=lr,
                         checkpoint=checkpoint, name=f"{part}/train", progress=progress, executor=executor,
                         submitted=submitted, share=UNIFIED_SHARE if part == "unified" else 0.5)
    if part == "pretrain":  # each member's start with the lowest training loss over phase 1's last steps
        n = len(members) // cfg.phase1_starts
        late = curve[-min(START_WINDOW, len(curve)):].mean(0).reshape(cfg.phase1_starts, n)
        chosen = late.argmin(0)
        rows = [int(k) * n + i for i, k in enumerate(chosen)]
        state = fork({k: v.detach().cpu() for k, v in model.state_dict().items()}, rows, "unified")
        return {}, {"loss": curve[:, rows].mean(1), "state": state, "chosen_start": chosen.tolist()}
    label = lambda m: m.regime if m.arch == "unified" else m.arch  # noqa: E731
    summary, pred = score(cfg, model, members, label)
    curves: dict[str, Any] = {"loss": curve.mean(1)}
    shown = slice(0, cfg.n_shown)
    if part == "unified":
        jaw = JAW * cfg.image_size / 32
        low = min(cfg.labelled_grid)
        first = {label(m): i for i, m in reversed(list(enumerate(members))) if m.seed == cfg.seeds[0] and
                 (m.n_labelled, label(m)) in ((cfg.n_labelled, "curriculum"), (low, "joint_parsing"),
                                              (cfg.n_labelled, "pose_direct"))}
        curves["shown"] = {r: {k: v[i][shown] for k, v in pred.items()} for r, i in first.items()}
        # the lab's models (seed 0): the curriculum at the most and at the fewest labels, the control at the fewest
        lab = {f"curriculum, {cfg.n_labelled} labels": first["curriculum"],
               f"curriculum, {low} labels": next(i for i, m in enumerate(members) if label(m) == "curriculum"
                                                  and m.n_labelled == low and m.seed == cfg.seeds[0]),
               f"joint training, {low} labels": first["joint_parsing"]}
        curves["lab_models"] = {name: member_state(model, i) for name, i in lab.items()}
        summary["chance"] = metrics.evaluate(metrics.prior_predictions(pool_data, test), test, jaw)
        # control: the same models, each test scene with another test scene's instruction (does the model
        # read the instruction, or find the most salient tool?)
        images, tokens = torch.as_tensor(test["images"]).to(device), torch.as_tensor(test["tokens"]).to(device)
        perm = np.random.default_rng([cfg.seed, 23]).permutation(len(test["tokens"]))
        at_n = [i for i, m in enumerate(members) if label(m) == "curriculum" and m.n_labelled == cfg.n_labelled]
        sub = make_model(cfg, [members[i].seed for i in at_n], "unified").to(device)  # only these members
        sub.load_state_dict({k: v[at_n] for k, v in model.state_dict().items()})
        shuffled = decode(predict(sub, images, tokens[torch.as_tensor(perm).to(device)]), cfg.image_size)
        rows_ = [metrics.evaluate({k: v[j] for k, v in shuffled.items()}, test, jaw) for j in range(len(at_n))]
        summary["shuffled"] = {str(cfg.n_labelled): {key: _stats([r[key] for r in rows_]) for key in rows_[0]}}
        # positive control: the same models, the pose head fed the *true* part mask in place of sigmoid(logits)
        true_mask = torch.as_tensor(test["masks"]).to(device)
        fed = decode(predict(sub, images, tokens, pose_mask=true_mask), cfg.image_size)
        rows_ = [metrics.evaluate({k: v[j] for k, v in fed.items()}, test, jaw) for j in range(len(at_n))]
        summary["true_mask"] = {str(cfg.n_labelled): {key: _stats([r[key] for r in rows_]) for key in rows_[0]}}
    else:
        curves["shown"] = {part: {k: v[0][shown] for k, v in pred.items()}}
    return summary, curves


PARTS = ("pretrain", "unified", "separate")


def reference(cfg: UniRAPConfig) -> dict[str, Any]:
    """What the checks and the pose gate read, on the test scenes (no model): the metrics of the truth
    itself, how many test images repeat a training image, and the grasp success of grasps decoded from
    the *true* part masks' geometry alone (:func:`~explorables.unirap.metrics.grasps_from_masks`)."""
    parsing, pool, test = datasets(cfg)
    jaw = JAW * cfg.image_size / 32
    truth = {"boxes": test["boxes"], "masks": test["masks"].astype(bool), "grasps": test["grasps"]}
    seen = {row.tobytes() for data in (parsing, pool) for row in data["images"].reshape(len(data["images"]), -1)}
    repeated = sum(row.tobytes() in seen for row in test["images"].reshape(len(test["images"]), -1))
    oracle = metrics.grasp_success(metrics.grasps_from_masks(test["masks"]), test["grasps"], jaw)
    return {"truth": metrics.evaluate(truth, test, jaw), "repeated_test_scenes": int(repeated),
            "n_test": len(test["images"]), "mask_oracle_grasp": float(oracle.mean())}


def _warm(cfg: UniRAPConfig) -> None:
    """In a worker, while this process starts phase 1: the imports and the scenes (cached for its chunks)."""
    training_pool(cfg)


def _separate(cfg: UniRAPConfig, start: dict[str, Any]) -> tuple[dict, dict]:
    """The ``separate`` part in a worker process, from the ``pretrain`` part's state (no checkpoint)."""
    with one_cpu_thread(resolve_device(cfg.device)):
        return train_part(cfg, "separate", Checkpointer(None), False, start)


@checked()
def run(config: UniRAPConfig | None = None, *, checkpoint: Checkpointer | None = None,
        progress: bool = False) -> UniRAPResults:
    """The three parts (``pretrain``, then ``unified`` and ``separate`` from its state), each
    checkpointed.

    With ``cfg.processes`` (0: every CPU available) of 2 or more and the CPU as device, one spawned worker process
    trains the second chunk of ``pretrain`` and of ``unified`` (:func:`chunk_rows`) while this process trains the
    first, and then ``separate`` while this process scores ``unified`` (each the same deterministic function of the
    config and its starting weights wherever it runs); ``separate``'s part time is then the time this process waited
    for it."""
    cfg, checkpoint = start_run(UniRAPConfig, config, checkpoint)
    device = resolve_device(cfg.device)
    parts = {p: (lambda p=p: train_part(cfg, p, checkpoint, progress)) for p in PARTS}
    parallel = (device.type == "cpu" and worker_count(cfg.processes, 2) > 1
                and checkpoint.get("part/separate") is None and checkpoint.get("part/unified") is None)
    with ExitStack() as stack, one_cpu_thread(device):  # small grouped ops: a second thread only waits (core.threads)
        if parallel:
            pool = stack.enter_context(ProcessPoolExecutor(1, mp_context=get_context("spawn")))
            pool.submit(_warm, cfg)  # starts the worker now: its imports and scenes overlap phase 1's first steps
            future: list = []

            def separate_behind() -> None:  # queued behind unified's worker chunk: it trains while this one scores
                future.append(pool.submit(_separate, cfg, checkpoint.get("part/pretrain")["curves"]["state"]))

            parts["pretrain"] = lambda: train_part(cfg, "pretrain", checkpoint, progress, executor=pool)
            parts["unified"] = lambda: train_part(cfg, "unified", checkpoint, progress, executor=pool,
                                                  submitted=separate_behind)
            parts["separate"] = lambda: future[0].result()
        summary, curves = run_parts_timed(checkpoint, parts, progress)
    summary["labelled_grid"] = list(cfg.labelled_grid)
    summary["n_labelled"] = cfg.n_labelled
    summary["n_seeds"] = len(cfg.seeds)
    summary["n_arm_seeds"] = len(cfg.seeds) + len(cfg.arm_seeds)
    summary["n_pairs"] = len(cfg.seeds) + cfg.curriculum_arm_seeds  # at the counts of paired_counts
    summary["reference"] = reference(cfg)
    return UniRAPResults(cfg, summary, curves)


def scene_arrays(cfg: UniRAPConfig) -> dict:
    """The test scenes shown by the explorable (regenerated from the seed: cheap and deterministic)."""
    test = make_dataset(cfg.n_shown, cfg.seed * 4 + 3, cfg.image_size, "instruction", cfg.max_clutter, cfg.max_tools)
    return test
