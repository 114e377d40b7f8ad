"""Continual learning of a task sequence: fine-tuning, EWC, generative replay, Reptile with replay,
and the trust-region method (generative replay plus a Fisher-metric trust region *constraint*).

Every method is a set of *members* of one ensemble (:mod:`.diffusion`), one per seed. The
trust-region method solves on task ``k``, eq. (trcl-constraint),

    min_theta  L_new(theta) + beta * L_replay(theta)
    s.t.       d_F(theta, theta*)^2 = sum_i F_i (theta_i - theta*_i)^2 <= r^2,

a trust region of fixed radius ``r`` in the diagonal Fisher metric, through its Lagrangian
``L_new + beta L_replay + (lambda / 2) (d_F^2 - r^2)``: an Adam step on ``theta`` and a projected
dual-ascent step on the multiplier, eq. (trcl-dual),
``lambda <- max(0, lambda + eta max(lambda, 1) clip(d_F^2 / r^2 - 1, -1, 1))``, which starts at 0
on every task, and reads the distance the Adam step reached; a member that the Adam step took outside its region is
then projected back onto it: the nearest point of the region, ``theta* + u`` with ``u_i = (theta_i - theta*_i) /
(1 + mu F_i)`` and ``mu >= 0`` such that ``d_F = r`` (:func:`project_onto_region`; a weight with ``F_i = 0``, one the
earlier tasks do not use, is left where the Adam step put it). Under Adam's normalised steps a larger multiplier buys
no pull towards the anchor, so without the projection the dual ascent can diverge while the distance stays above the
radius (benchmarks/trust_region_cl_radius_rule.md), and the multiplier is bounded by ``DUAL_MAX``
(benchmarks/trust_region_cl_radius_rule2.md; how often the bound acts is recorded). So
``lambda`` is run per task and member: it stays 0 while the weights are inside the region (an
infinite radius is exactly generative replay) and grows while the Adam step leaves it; at a tight radius it reaches
``DUAL_MAX`` on some steps of every task, and the projection, not the multiplier, holds the distance at the radius.
The penalty form, eq. (trcl-objective),

    L_new(theta) + beta * L_replay(theta) + (lambda / 2) * sum_i F_i (theta_i - theta*_i)^2,

with a fixed ``lambda`` is EWC (``beta = 0``) or EWC plus replay (an arm of its own), and
``beta = 0``, ``lambda = 0`` is fine-tuning.
``L_replay`` is the denoising loss on samples that a frozen copy of the member (its parameters
at the end of task ``k - 1``) generated for every earlier task, with their task labels.
``F`` is the diagonal empirical Fisher of the denoising loss, accumulated online over tasks, and
``theta*`` the parameters at the end of the previous task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from ..core.arguments import ArgumentError, Array, checked
from ..core.checkpoint import Checkpointer, LoopState
from ..core.params import Bool, Choice, Float, Int, Positive, Rule, Text
from ..core.resources import check_memory
from ..core.validation import check_choice, check_in_range, check_int, check_positive
from .diffusion import (
    LABELS,
    X_BATCH,
    Net,
    Params,
    Schedule,
    _per_sample_loss,
    _sample,
    check_inputs,
    check_param_dict,
    draw_t_noise,
)
from .tasks import TASKS, check_tasks, sample_task, task_dim

METRICS: tuple[str, ...] = ("none", "fisher", "isotropic")
#: "freeze": after each Adam step every weight with Fisher > 0 goes back to its anchor (TR-CL's projection at radius 0;
#: benchmarks/trust_region_cl_reconv_rule.md, part 2)
PENALTIES: tuple[str, ...] = ("constraint", "ewc", "freeze")
#: an Adam (or preconditioned) step size: above 1 these small diffusion nets only diverge
LEARNING_RATE = Float(0.0, 1.0, low_inclusive=False)


@checked(name=Text(nonempty=True), label=Text(nonempty=True), replay=Bool(), metric=Choice(METRICS), reptile=Bool(),
         penalty=Choice(PENALTIES))  # fmt: skip
@dataclass(frozen=True)
class Method:
    """What a continual learner does on each new task."""

    name: str
    label: str
    replay: bool  # generative replay of earlier tasks
    metric: str  # trust-region metric: "none", "fisher" (diagonal Fisher) or "isotropic" (same trace and zero set)
    reptile: bool = False  # Reptile interpolation of the weights after every few steps
    # "constraint" (fixed radius, multiplier by dual ascent), "ewc" (fixed ewc_lambda) or "freeze" (weights with Fisher
    # > 0 held at the anchor: parameter isolation)
    penalty: str = "constraint"


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("finetune", "fine-tuning", replay=False, metric="none"),
        Method("ewc", "EWC", replay=False, metric="fisher", penalty="ewc"),
        Method("replay", "generative replay", replay=True, metric="none"),
        Method("reptile", "Reptile + replay", replay=True, metric="none", reptile=True),
        Method("trcl", "trust region (TR-CL)", replay=True, metric="fisher"),
        Method("trcl_penalty", "EWC penalty + replay", replay=True, metric="fisher", penalty="ewc"),
        Method("trcl_iso", "masked isotropic trust region (control)", replay=True, metric="isotropic"),
        Method("freeze", "hard freeze + replay (control)", replay=True, metric="fisher", penalty="freeze"),
    )
}
BASELINES: tuple[str, ...] = ("finetune", "ewc", "replay", "reptile")
CONTROL = "trcl_iso"
#: the second control: parameter isolation, every weight the earlier tasks reach frozen (TR-CL at radius 0)
FREEZE = "freeze"


# ------------------------------------------------------------------------------------------- checks
def _check_members(members: list, n_seeds: int) -> None:
    if not isinstance(members, (list, tuple)) or not members:
        raise ArgumentError(f"members must be a non-empty list of Member, got {members!r:.60}")
    for i, mem in enumerate(members):
        if not isinstance(mem, Member):
            raise ArgumentError(f"members[{i}] must be a Member, got {type(mem).__name__}")
        if mem.seed_index >= n_seeds:
            raise ArgumentError(f"members[{i}].seed_index must be < n_seeds = {n_seeds}, got {mem.seed_index}")


def _check_eval_set(eval_set: dict, net: Net, n_steps: int, n_tasks: int, n_seeds: int) -> None:
    """Fixed evaluation batches as :func:`eval_batch` makes: ``x``, ``noise`` ``(S, K, n, d)``; ``t`` ``(S, K, n)``."""
    if not isinstance(eval_set, dict) or set(eval_set) != {"x", "t", "noise"}:
        raise ArgumentError(f"eval_set must be a dict with keys 'x', 't', 'noise' (eval_batch's), got {eval_set!r:.60}")
    dims: dict = {}
    Array("s k n d").check_dims("eval_set['x']", eval_set["x"], dims)
    Array("s k n", integer=True).check_dims("eval_set['t']", eval_set["t"], dims)
    Array("s k n d").check_dims("eval_set['noise']", eval_set["noise"], dims)
    s_count, k_count, _, d = eval_set["x"].shape
    if s_count < n_seeds or k_count < n_tasks or d != net.d_data:
        raise ArgumentError(f"eval_set must hold >= {n_seeds} seeds, >= {n_tasks} tasks and {net.d_data} coordinates, "
                            f"got eval_set['x'] of shape {tuple(eval_set['x'].shape)}")  # fmt: skip
    for key in ("x", "t", "noise"):
        if not isinstance(eval_set[key], torch.Tensor):
            raise ArgumentError(f"eval_set[{key!r}] must be a torch.Tensor, got {type(eval_set[key]).__name__}")
    if int(eval_set["t"].min()) < 0 or int(eval_set["t"].max()) >= n_steps:
        raise ArgumentError(f"eval_set['t'] must hold steps in [0, {n_steps - 1}]")


def _check_batch(name: str, batch: tuple, net: Net, schedule: Schedule, members: int) -> None:
    """A fixed batch ``(x0, task, t, noise)`` of :func:`per_sample_loss`'s shapes, one row per member."""
    if not isinstance(batch, (tuple, list)) or len(batch) != 4:
        raise ArgumentError(f"{name} must be a tuple (x0, task, t, noise), got {batch!r:.60}")
    dims: dict = {}
    for i, rule in enumerate((X_BATCH, LABELS, LABELS, X_BATCH)):
        rule.check_dims(f"{name}[{i}]", batch[i], dims)
    check_inputs(net, schedule.n_steps, members, where=f"{name}: ", x0=batch[0], task=batch[1], t=batch[2],
                 noise=batch[3])  # fmt: skip


def _check_tensor(name: str, value: torch.Tensor, members: int) -> None:
    if not isinstance(value, torch.Tensor):
        raise ArgumentError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.shape[0] != members:
        raise ArgumentError(f"{name} must have one entry per member ({members}), got shape {tuple(value.shape)}")


def _check_radius(name: str, value: float) -> float:
    """A trust-region radius: a number > 0, ``inf`` allowed (no constraint)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ArgumentError(f"{name} must be a radius > 0 (inf: no constraint), got {value!r}")
    return float(value)


class Radius(Rule):
    """A trust-region radius, or ``None`` where ``optional``: a number > 0, ``inf`` allowed (no constraint)."""

    def __init__(self, optional: bool = True):
        self.optional = optional

    def check(self, name: str, value: object) -> float | None:
        if value is None and self.optional:
            return None
        return _check_radius(name, value)  # type: ignore[arg-type]

    def describe(self) -> str:
        return "a radius > 0 (inf: no constraint)" + (" or None" if self.optional else "")

    def bad_values(self) -> list:
        return ["seven", float("nan"), 0.0, -1.0, True] + ([] if self.optional else [None])


# --------------------------------------------------------------------------------------------- Fisher
@checked(x0=X_BATCH, task=LABELS, t=LABELS, noise=X_BATCH, chunk_size=Int(1, 10**6))
def diagonal_fisher(
    params: Params,
    net: Net,
    schedule: Schedule,
    x0: torch.Tensor,
    task: torch.Tensor,
    t: torch.Tensor,
    noise: torch.Tensor,
    chunk_size: int = 64,
) -> Params:
    """Diagonal empirical Fisher of the denoising loss, eq. (trcl-fisher), per member.

    ``F_i = (1/N) sum_n (d l_n / d theta_i)^2`` over ``N`` samples, each with its own draw of the
    step ``t`` and the noise: ``x0``/``noise`` are ``(M, N, d)``, ``task``/``t`` ``(M, N)``.
    Per-sample gradients come from ``torch.func`` (``vmap`` of ``grad``); member ``m``'s
    parameters only enter its own loss, so one call gives every member's Fisher.
    """
    members = check_param_dict("params", params, net.shapes())
    check_inputs(net, schedule.n_steps, members, x0=x0, task=task, t=t, noise=noise)
    return _diagonal_fisher(params, net, schedule, x0, task, t, noise, chunk_size)


def _diagonal_fisher(params: Params, net: Net, schedule: Schedule, x0: torch.Tensor, task: torch.Tensor,
                     t: torch.Tensor, noise: torch.Tensor, chunk_size: int = 64) -> Params:  # fmt: skip
    def one(p: Params, x: torch.Tensor, c: torch.Tensor, tt: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        return _per_sample_loss(p, net, schedule, x[:, None], c[:, None], tt[:, None], e[:, None]).sum()

    # Squared gradients are summed chunk by chunk: stacking all N per-sample gradients first needs N x the
    # parameters in memory (35 GiB at the paper preset, which a GPU smoke run found out of memory).
    per_sample_grad = torch.func.vmap(torch.func.grad(one), in_dims=(None, 1, 1, 1, 1))
    n = x0.shape[1]
    total: Params = {}
    for start in range(0, n, chunk_size):
        part = slice(start, start + chunk_size)
        grads = per_sample_grad(params, x0[:, part], task[:, part], t[:, part], noise[:, part])
        for k, g in grads.items():
            total[k] = g.pow(2).sum(0) if k not in total else total[k] + g.pow(2).sum(0)
    return {k: v / n for k, v in total.items()}


@checked()
def isotropic_like(fisher: Params) -> Params:
    """The control's metric, masked isotropic: on every weight where the member's Fisher is > 0, the mean of its
    Fisher entries over those weights; 0 where the Fisher is 0 (the same trace and the same zero set as the Fisher,
    none of its values; benchmarks/trust_region_cl_masked_rule.md). The weights the Fisher leaves free (those only
    the later tasks' label inputs reach) stay free, so the control differs from TR-CL only in the Fisher's values."""
    check_param_dict("fisher", fisher)
    if any(bool((f < 0).any()) for f in fisher.values()):
        raise ArgumentError("fisher must hold entries >= 0 (a diagonal Fisher)")
    return _isotropic_like(fisher)


def _isotropic_like(fisher: Params) -> Params:
    total = sum(f.flatten(1).sum(1) for f in fisher.values())
    count = sum((f.flatten(1) > 0).sum(1) for f in fisher.values())
    mean = total / count.clamp_min(1)
    return {k: torch.where(f > 0, mean.view(-1, *([1] * (f.dim() - 1))).expand_as(f), torch.zeros_like(f))
            for k, f in fisher.items()}  # fmt: skip


@checked(strength=Array("m"))
def trust_region_penalty(params: Params, anchor: Params, metric: Params, strength: torch.Tensor) -> torch.Tensor:
    """The trust-region penalty, eq. (trcl-penalty): ``(lambda/2) sum_i F_i (theta_i - theta*_i)^2`` per member.

    ``strength`` holds ``lambda`` per member, shape ``(M,)``; returns ``(M,)``. It is zero at the
    anchor and exactly quadratic in the displacement.
    """
    members = check_param_dict("params", params)
    shapes = {k: tuple(v.shape[1:]) for k, v in params.items()}
    for name, value in (("anchor", anchor), ("metric", metric)):
        if check_param_dict(name, value, shapes) != members:
            raise ArgumentError(f"{name} must have the members of params ({members})")
    _check_tensor("strength", strength, members)
    return _trust_region_penalty(params, anchor, metric, strength)


def _trust_region_penalty(params: Params, anchor: Params, metric: Params, strength: torch.Tensor) -> torch.Tensor:
    return 0.5 * strength * _squared_distance(params, anchor, metric)


def _squared_distance(params: Params, anchor: Params, metric: Params) -> torch.Tensor:
    """``d^2 = sum_i metric_i (theta_i - theta*_i)^2`` per member, ``(M,)``: the trust region's squared distance."""
    return sum((metric[k] * (params[k] - anchor[k]).pow(2)).flatten(1).sum(1) for k in params)


#: a speed-up that changes no number (a test runs both ways and compares to the bit): members with a replay weight of
#: 0 skip the replay batch's forward pass
SKIP_UNWEIGHTED_REPLAY = True

#: the multiplier's step is proportional to max(lambda, DUAL_FLOOR): additive near 0, geometric above
DUAL_FLOOR = 1.0
#: after each Adam step a constrained member outside its region is projected back onto it, the nearest point of the
#: region (:func:`project_onto_region`; benchmarks/trust_region_cl_radius_rule.md): under Adam's normalised steps a
#: growing multiplier buys no pull towards the anchor, so without it the dual ascent can diverge while the distance
#: stays above the radius
PROJECT = True
#: Newton steps of the projection's one-dimensional equation for mu at most (it converges from below in a few)
PROJECTION_STEPS = 100
#: the multiplier's upper bound (projected dual ascent onto [0, DUAL_MAX]; inf: unbounded). With the projection
#: holding the constraint, a larger multiplier buys nothing under Adam's normalised step, and growing it by
#: x(1 + eta) every step would inflate that step further (its second moment lags), so the dual ascent diverged on a
#: member whose Adam step kept leaving the region (benchmarks/trust_region_cl_radius_rule2.md; fixed before any run)
DUAL_MAX = 1e5


@checked(displacement=Array("m p"), metric=Array("m p"), radius=Array("m", finite=False))
def project_onto_region(displacement: torch.Tensor, metric: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
    """The nearest point (Euclidean) of the trust region ``{u : sum_i F_i u_i^2 <= r^2}`` to ``displacement``, per
    member: rows of ``(M, P)`` displacements ``theta - theta*``, a metric ``F >= 0`` of their shape, radii ``(M,)``
    (``inf``: no constraint).

    A row inside its region is returned as it is. Outside, the minimiser of ``|u - y|^2`` on the region is
    ``u_i = y_i / (1 + mu F_i)`` (the stationarity condition of the Lagrangian), with the ``mu > 0`` that puts ``u``
    on the boundary; so a coordinate with ``F_i = 0`` is never moved (the region does not constrain it), and one
    with a small ``F_i`` is moved little. ``mu`` solves ``1 / d_F(u(mu)) = 1 / r``, whose left side is concave and
    increasing in ``mu`` (Moré and Sorensen's secular equation), so Newton's method from ``mu = 0`` rises to the root
    without overshooting; a last rescaling of the ``F_i > 0`` coordinates puts the row exactly on the boundary.
    Computed in float64, returned in the input's dtype.
    """
    if displacement.shape != metric.shape:
        raise ArgumentError(f"metric must have the shape of displacement {tuple(displacement.shape)}, "
                            f"got {tuple(metric.shape)}")  # fmt: skip
    _check_tensor("radius", radius, displacement.shape[0])
    if bool((metric < 0).any()) or not bool((radius > 0).all()):
        raise ArgumentError("metric must hold entries >= 0 and radius values > 0 (a diagonal metric, radii)")
    return _project_onto_region(displacement, metric, radius)


def _project_onto_region(displacement: torch.Tensor, metric: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
    y, f, r = displacement.double(), metric.double(), radius.double()
    w2 = f * y * y  # F_i y_i^2
    outside = w2.sum(1) > r * r
    if not bool(outside.any()):
        return displacement
    y, f, w2, r = y[outside], f[outside], w2[outside], r[outside]
    mu = torch.zeros_like(r)
    fw2, inv_r = f * w2, 1.0 / r  # loop invariants
    for _ in range(PROJECTION_STEPS):
        q = 1.0 + mu[:, None] * f
        h2 = (w2 / q.pow(2)).sum(1)  # d_F(u(mu))^2
        psi = h2.rsqrt() - inv_r  # < 0 while outside; concave and increasing in mu
        if bool((psi.abs() * r <= 1e-12).all()):
            break
        dpsi = h2.pow(-1.5) * (fw2 / q.pow(3)).sum(1)
        mu = mu - psi / dpsi
    u = y / (1.0 + mu[:, None] * f)
    h = (f * u * u).sum(1).sqrt()
    u = torch.where(f > 0, u * (r / h)[:, None], u)  # exactly on the boundary; F_i = 0 coordinates untouched
    out = displacement.clone()
    out[outside] = u.to(displacement.dtype)
    return out


@checked(lam=Array("m"), dist2=Array("m"), radius=Array("m", finite=False), lr=Positive())
def dual_step(lam: torch.Tensor, dist2: torch.Tensor, radius: torch.Tensor, lr: float) -> torch.Tensor:
    """One projected dual-ascent step on the trust region's multiplier, eq. (trcl-dual), per member:
    ``lambda <- max(0, lambda + lr * max(lambda, 1) * v)`` with the violation
    ``v = clip(d^2 / r^2 - 1, -1, 1)``.

    The step grows ``lambda`` while the squared distance ``d^2`` exceeds ``r^2`` and shrinks it (to
    no less than 0) inside the region; at a fixed point either ``lambda = 0`` and ``d <= r``, or
    ``d = r`` (complementary slackness). The step size is relative (at most a fraction ``lr`` of
    ``lambda`` per step, additive below 1), so multipliers of very different scales, which tight and
    loose radii need, are reached in a few dozen steps without overshooting by orders of magnitude.
    An infinite radius keeps ``lambda`` at 0.
    """
    if bool((lam < 0).any()) or bool((dist2 < 0).any()) or not bool((radius > 0).all()):
        raise ArgumentError("lam and dist2 must be >= 0 and radius > 0 (a multiplier, a squared distance, a radius)")
    violation = (dist2 / radius.pow(2) - 1.0).clamp(-1.0, 1.0)
    return (lam + lr * lam.clamp_min(DUAL_FLOOR) * violation).clamp_min(0.0)


# ---------------------------------------------------------------------------------- the sequence
@checked(method=Choice(tuple(METHODS)), seed_index=Int(0, 10**6), radius=Radius())
@dataclass(frozen=True)
class Member:
    """One model of the ensemble: which method, which seed (index into the run's seeds)."""

    method: str
    seed_index: int
    radius: float | None = None  # a constrained member's own radius (None: the Strengths' radius of its metric)
    strength: float | None = None  # a fixed-penalty member's own lambda (None: the Strengths' lambda of its method)

    def __post_init__(self) -> None:
        if self.radius is not None:
            _check_radius("radius", self.radius)
        if self.strength is not None:
            check_in_range("strength", self.strength, 0.0, 1e9)


@dataclass(frozen=True)
class Strengths:
    """The methods' knobs: replay weight beta, the trust-region radii (Fisher and isotropic metric) and the
    multiplier's dual step, EWC's strength lambda, Reptile's step. A radius may be ``inf`` (no constraint)."""

    replay_weight: float = 1.0
    trust_radius: float = 0.1
    iso_radius: float = 0.1
    ewc_lambda: float = 1.0
    reptile_every: int = 10
    reptile_step: float = 0.5
    fisher_decay: float = 1.0
    dual_lr: float = 0.1
    penalty_lambda: float | None = None  # the penalty form's (EWC + replay) lambda; None: ewc_lambda

    def __post_init__(self) -> None:
        check_in_range("replay_weight", self.replay_weight, 0.0, 1e6)
        _check_radius("trust_radius", self.trust_radius)
        _check_radius("iso_radius", self.iso_radius)
        check_in_range("ewc_lambda", self.ewc_lambda, 0.0, 1e9)
        if self.penalty_lambda is not None:
            check_in_range("penalty_lambda", self.penalty_lambda, 0.0, 1e9)
        check_in_range("dual_lr", self.dual_lr, 0.0, 1.0, low_inclusive=False)
        check_int("reptile_every", self.reptile_every, 1)
        check_in_range("reptile_step", self.reptile_step, 0.0, 1.0, low_inclusive=False)
        check_in_range("fisher_decay", self.fisher_decay, 0.0, 1.0)

    @checked()  # member: a Member (a str or a number is refused naming it, not an AttributeError)
    def lambda_of(self, member: Member) -> float:
        """The fixed penalty strength of ``member``: its own ``strength`` if set, else EWC's ``ewc_lambda`` or the
        penalty form's ``penalty_lambda`` (``ewc_lambda`` when None); 0 for a method without a fixed penalty."""
        me = METHODS[member.method]
        if me.metric == "none" or me.penalty != "ewc":
            return 0.0
        if member.strength is not None:
            return float(member.strength)
        if me.replay and self.penalty_lambda is not None:
            return float(self.penalty_lambda)
        return float(self.ewc_lambda)


@dataclass
class SequenceRecord:
    """What :func:`train_sequence` measured: after each task, samples of every task seen so far and
    the denoising loss of every task on fixed evaluation batches; plus the state at the last switch."""

    samples: list[torch.Tensor]  # per task k: (M, k + 1, n_samples, d), samples generated after task k
    eval_losses: list[torch.Tensor]  # per task k: (M, n_tasks), evaluation losses after task k
    params: Params  # parameters after the whole sequence
    switch: dict  # the state when the last task starts: anchor, Fisher, replay buffer (for the MAML reading)
    train_losses: torch.Tensor  # (n_tasks, n_steps_per_task, M) new-task losses
    multipliers: torch.Tensor | None = None  # (n_tasks, M): lambda at the end of each task (fixed or dual)
    distances: torch.Tensor | None = None  # (n_tasks, M): d(theta, theta*) at the end of each task, member's metric
    radii: torch.Tensor | None = None  # (M,): each member's radius (inf: no constraint)
    multiplier_max: torch.Tensor | None = None  # (n_tasks, M): the largest multiplier reached during each task
    cap_hits: torch.Tensor | None = None  # (n_tasks, M): steps of each task on which DUAL_MAX bounded the dual step


def _per_seed(draws: tuple[torch.Tensor, ...], seed_of: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Random draws made once per seed, ``(S, ...)``, handed to every member of that seed, ``(M, ...)``: common random
    numbers, so that two methods of one seed differ only by what the methods do."""
    return tuple(d[seed_of] for d in draws)


def _gather(buffer: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return torch.gather(buffer, 1, idx.unsqueeze(-1).expand(-1, -1, buffer.shape[-1]))


def eval_batch(tasks: tuple[str, ...], n_seeds: int, n: int, n_steps: int, seed: int, device) -> dict:
    """Fixed evaluation batches per task and seed (real data, steps and noise drawn once): ``(S, K, n, d)``."""
    g = torch.Generator().manual_seed(seed)
    x = torch.stack([torch.stack([sample_task(t, n, g) for t in tasks]) for _ in range(n_seeds)]).to(device)
    t = torch.randint(0, n_steps, x.shape[:3], generator=g).to(device)
    noise = torch.randn(x.shape, generator=g).to(device)
    return {"x": x, "t": t, "noise": noise}


@torch.no_grad()
def eval_losses(
    params: Params, net: Net, schedule: Schedule, batch: dict, seed_of: torch.Tensor, first_task: int = 0
) -> torch.Tensor:
    """Denoising loss of every member on every task's fixed evaluation batch: ``(M, K)``.

    ``batch`` may hold a slice of the tasks, starting at task index ``first_task``.
    """
    x, t, noise = batch["x"][seed_of], batch["t"][seed_of], batch["noise"][seed_of]  # (M, K, n, d)
    m, k, n, d = x.shape
    task = torch.arange(first_task, first_task + k, device=x.device).view(1, k, 1).expand(m, k, n)
    losses = _per_sample_loss(
        params, net, schedule, x.reshape(m, k * n, d), task.reshape(m, -1), t.reshape(m, -1), noise.reshape(m, k * n, d)
    )
    return losses.view(m, k, n).mean(-1)


# skip_nested: sample_task and dual_step in the loop run bare (the task, batch sizes and members are checked here)
@checked(skip_nested=True, n_seeds=Int(1, 10_000), n_steps_per_task=Int(1, 10**7), batch_size=Int(1, 10**6),
         lr=LEARNING_RATE, n_fisher=Int(1, 10**6), n_samples=Int(1, 10**6), n_replay=Int(1, 10**6), progress=Bool(),
         checkpoint_name=Text())  # fmt: skip
def train_sequence(
    params: Params,
    net: Net,
    schedule: Schedule,
    tasks: tuple[str, ...],
    members: list[Member],
    strengths: Strengths,
    *,
    n_seeds: int,
    n_steps_per_task: int,
    batch_size: int,
    lr: float,
    n_fisher: int,
    n_samples: int,
    eval_set: dict,
    seed: int,
    n_replay: int | None = None,
    progress: bool = False,
    on_step: Callable[[int, int], None] | None = None,
    checkpoint: Checkpointer | None = None,
    checkpoint_name: str = "",
) -> SequenceRecord:
    """Train every member on ``tasks`` in order, each with its method (see the module docstring).

    Data: each seed has its own stream of real samples of the current task (members of different
    methods with the same seed see the same batches), and every other random draw (diffusion times
    and noise, replay indices, the Fisher's draws, the sampling noise) is also made once per seed
    and shared by its members: common random numbers, so two methods of one seed differ only by what
    the methods do. Real data of earlier tasks is never used for
    training; replay uses only the samples a member generated itself. After each task the member's
    Fisher is computed on real data of that task (the task just learned, as in online EWC), and
    ``n_samples`` samples of every task seen so far are generated: they are the evaluation
    samples, and the first ``n_replay`` of each task (all when ``None``) the next task's replay buffer.

    With a ``checkpoint`` and a ``checkpoint_name``, the whole state is saved at every task switch
    (weights, Fisher, anchor, replay buffer, what was measured, the random generators; Adam starts
    afresh on each task), and a resumed run continues from the last finished task with the same
    numbers as an uninterrupted one.
    """
    tasks = check_tasks(tasks)
    if task_dim(tasks[0]) != net.d_data or len(tasks) > net.n_tasks:
        raise ArgumentError(f"tasks must be at most net.n_tasks = {net.n_tasks} tasks of net.d_data = {net.d_data} "
                            f"coordinates, got {tasks!r}")  # fmt: skip
    _check_members(members, n_seeds)
    for mem in members:
        check_choice("method", mem.method, tuple(METHODS))
    check_positive("lr", lr)
    if check_param_dict("params", params, net.shapes()) != len(members):
        raise ArgumentError(f"params must hold one member per entry of members ({len(members)})")
    _check_eval_set(eval_set, net, schedule.n_steps, len(tasks), max(mem.seed_index for mem in members) + 1)
    m_count, n_weights = len(members), sum(a * b for a, b in net.shapes().values())
    check_memory({
        "the training batches' activations (members x batch_size x width x depth)":
            32.0 * m_count * batch_size * (net.d_in + net.width * net.depth),
        "the replay buffer and the samples kept (members x tasks x n_samples x d)":
            8.0 * m_count * len(tasks) ** 2 * n_samples * net.d_data,
        "the Fisher's per-sample gradients (64 x members x weights)": 4.0 * 64 * m_count * n_weights,
    })  # fmt: skip
    device = params["w0"].device
    m_count = len(members)
    seed_of = torch.tensor([mem.seed_index for mem in members], device=device)
    meths = [METHODS[mem.method] for mem in members]
    beta = torch.tensor([strengths.replay_weight if me.replay else 0.0 for me in meths], device=device)
    # members whose replay loss counts (beta > 0): only they run the replay batch through the net; the others'
    # replay gradient is exactly zero, so leaving them out changes no number (the draws are still made for all)
    replayed: torch.Tensor | slice = torch.nonzero(beta > 0).flatten().cpu()
    n_replayed, replay_all = len(replayed), len(replayed) == m_count
    if n_replayed and bool((replayed.diff() == 1).all()):  # a block of members (the usual order): a view, no copy
        replayed = slice(int(replayed[0]), int(replayed[-1]) + 1)
    else:
        replayed = replayed.to(device)
    fixed = torch.tensor([strengths.lambda_of(mem) for mem in members], device=device)
    constrained = torch.tensor([me.metric != "none" and me.penalty == "constraint" for me in meths], device=device)
    default = {"fisher": strengths.trust_radius, "isotropic": strengths.iso_radius, "none": float("inf")}
    radius = torch.tensor(
        [
            float("inf") if me.penalty != "constraint" or me.metric == "none"
            else (mem.radius if mem.radius is not None else default[me.metric])
            for mem, me in zip(members, meths, strict=True)
        ],
        device=device,
    )  # fmt: skip
    iso = torch.tensor([me.metric == "isotropic" for me in meths], device=device)
    frozen = torch.tensor([me.penalty == "freeze" for me in meths], device=device)
    any_frozen = bool(frozen.any())
    reptile = torch.tensor([me.reptile for me in meths], device=device, dtype=torch.float32)
    any_reptile = bool(reptile.any())  # else the interpolation moves no member (r = 0): skipped, the same numbers
    data_gens = [torch.Generator().manual_seed(seed * 7919 + 101 * s) for s in range(n_seeds)]
    g = torch.Generator().manual_seed(seed * 7919 + 17)
    params = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    fisher = {k: torch.zeros_like(v) for k, v in params.items()}
    anchor = {k: v.detach().clone() for k, v in params.items()}
    samples, losses_after, train_losses, multipliers, distances = [], [], [], [], []
    multiplier_max, cap_hits = [], []
    buffer_x = buffer_c = None
    switch: dict = {}
    # the state at a task switch: the weights (restored in place), the generators, and the rest as extra values
    loop = LoopState(checkpoint, checkpoint_name, tensors=params,
                     generators={**{f"data/{s}": dg for s, dg in enumerate(data_gens)}, "draws": g})  # fmt: skip
    first_task, saved = loop.restore()
    if first_task:  # resume after the last finished task
        fisher, anchor = ({n: v.to(device) for n, v in saved[key].items()} for key in ("fisher", "anchor"))
        buffer_x, buffer_c = saved["buffer_x"].to(device), saved["buffer_c"].to(device)
        samples = [v.to(device) for v in saved["samples"]]
        losses_after = [v.to(device) for v in saved["losses_after"]]
        train_losses = [v.to(device) for v in saved["train_losses"]]
        multipliers = [v.to(device) for v in saved["multipliers"]]
        distances = [v.to(device) for v in saved["distances"]]
        multiplier_max = [v.to(device) for v in saved["multiplier_max"]]
        cap_hits = [v.to(device) for v in saved["cap_hits"]]
        switch = {k: ({n: v.to(device) for n, v in x.items()} if isinstance(x, dict) else x.to(device))
                  for k, x in saved["switch"].items()}  # fmt: skip
    for k, name in enumerate(tasks):
        if k < first_task:
            continue
        if k == len(tasks) - 1 and k > 0:  # the state the MAML reading starts from
            switch = {
                "anchor": {n: v.clone() for n, v in anchor.items()},
                "fisher": {n: v.clone() for n, v in fisher.items()},
                "buffer_x": buffer_x.clone(),
                "buffer_c": buffer_c.clone(),
            }
        metric = {
            n: torch.where(iso.view(-1, *([1] * (f.dim() - 1))), _isotropic_like(fisher)[n], f)
            for n, f in fisher.items()
        }
        # the freeze members' weights that the earlier tasks reach (Fisher > 0): held at the anchor
        hold = {n: frozen.view(-1, *([1] * (f.dim() - 1))) & (f > 0) for n, f in fisher.items()} if any_frozen else {}
        opt = torch.optim.Adam(list(params.values()), lr=lr)
        start = {n: v.detach().clone() for n, v in params.items()}
        lam = fixed.clone()  # the constrained members' multipliers start at 0 on every task, eq. (trcl-dual)
        lam_max, hits = lam.clone(), torch.zeros(m_count, dtype=torch.long, device=device)
        task_losses = []
        steps = range(n_steps_per_task)
        for step in tqdm(steps, desc=f"task {k + 1}: {name}", leave=False) if progress else steps:
            x0 = torch.stack([sample_task(name, batch_size, dg) for dg in data_gens]).to(device)[seed_of]
            t, noise = _per_seed(draw_t_noise((n_seeds, *x0.shape[1:]), schedule.n_steps, g, device), seed_of)
            c = torch.full(t.shape, k, dtype=torch.long, device=device)
            new = _per_sample_loss(params, net, schedule, x0, c, t, noise).mean(1)
            loss = new
            if buffer_x is not None:
                idx = torch.randint(0, buffer_x.shape[1], (n_seeds, batch_size), generator=g).to(device)[seed_of]
                xr, cr = _gather(buffer_x, idx), torch.gather(buffer_c, 1, idx)
                tr, nr = _per_seed(draw_t_noise((n_seeds, *xr.shape[1:]), schedule.n_steps, g, device), seed_of)
                if replay_all or not SKIP_UNWEIGHTED_REPLAY:
                    loss = loss + beta * _per_sample_loss(params, net, schedule, xr, cr, tr, nr).mean(1)
                elif n_replayed:
                    sub = {n: v[replayed] for n, v in params.items()}
                    rep = _per_sample_loss(sub, net, schedule, xr[replayed], cr[replayed], tr[replayed], nr[replayed])
                    weighted = torch.zeros_like(loss)
                    weighted[replayed] = beta[replayed] * rep.mean(1)
                    loss = loss + weighted
                dist2 = _squared_distance(params, anchor, metric)
                loss = loss + 0.5 * lam * dist2
            opt.zero_grad(set_to_none=True)
            loss.sum().backward()
            opt.step()
            if any_frozen and k > 0:  # parameter isolation: the held weights go back to the anchor
                with torch.no_grad():
                    for n, v in params.items():
                        v.copy_(torch.where(hold[n], anchor[n], v))
            if buffer_x is not None:  # dual ascent on the constrained members' multipliers, eq. (trcl-dual)
                if PROJECT:  # the distance the Adam step reached, then the projection onto the region
                    with torch.no_grad():
                        dist2 = _squared_distance(params, anchor, metric)
                        outside = constrained & (dist2 > radius.pow(2))
                        if bool(outside.any()):
                            rows = torch.nonzero(outside).flatten()
                            disp = torch.cat([(params[n] - anchor[n])[rows].flatten(1) for n in params], 1)
                            proj = _project_onto_region(disp, flat({n: metric[n][rows] for n in params}),
                                                        radius[rows])  # fmt: skip
                            at = 0
                            for n, v in params.items():
                                size = v[0].numel()
                                v[rows] = anchor[n][rows] + proj[:, at : at + size].view(-1, *v.shape[1:])
                                at += size
                raw_lam = dual_step(lam, dist2.detach(), radius, strengths.dual_lr)
                hits += (constrained & (raw_lam > DUAL_MAX)).long()
                lam = torch.where(constrained, raw_lam.clamp_max(DUAL_MAX), lam)
                lam_max = torch.maximum(lam_max, lam)
            task_losses.append(new.detach())
            if any_reptile and (step + 1) % strengths.reptile_every == 0:  # Reptile: move only part of the way
                with torch.no_grad():
                    for n, v in params.items():
                        r = reptile.view(-1, *([1] * (v.dim() - 1)))
                        v.copy_(v - r * (1 - strengths.reptile_step) * (v - start[n]))
                        start[n] = v.detach().clone()
            if on_step is not None:
                on_step(k, step)
        train_losses.append(torch.stack(task_losses))
        # once per task (the steps' own checks run bare), before anything of the task is measured or saved: its
        # losses, and the weights, which the last step's update changed after its loss was computed
        losses_finite = bool(torch.isfinite(train_losses[-1]).all())
        if not (losses_finite and all(bool(torch.isfinite(v).all()) for v in params.values())):
            what = "loss is" if not losses_finite else "weights are"
            raise FloatingPointError(f"training diverged on task {k} ({name!r}): a member's {what} not finite; "
                                     "lower lr or the strengths")
        detached = {n: v.detach() for n, v in params.items()}
        multipliers.append(lam.clone())
        multiplier_max.append(lam_max)
        cap_hits.append(hits)
        distances.append(_squared_distance(detached, anchor, metric).sqrt())
        # online Fisher of the task just learned, on real data of that task
        xf = torch.stack([sample_task(name, n_fisher, dg) for dg in data_gens]).to(device)[seed_of]
        tf, nf = _per_seed(draw_t_noise((n_seeds, *xf.shape[1:]), schedule.n_steps, g, device), seed_of)
        cf = torch.full(tf.shape, k, dtype=torch.long, device=device)
        if k < len(tasks) - 1:  # the last task's Fisher would anchor no later task: only its draws are made
            new_fisher = _diagonal_fisher(detached, net, schedule, xf, cf, tf, nf)
            fisher = {n: strengths.fisher_decay * fisher[n] + new_fisher[n] for n in fisher}
        anchor = {n: v.clone() for n, v in detached.items()}
        # samples of every task so far: evaluation now, replay buffer for the next task
        labels = torch.arange(k + 1, device=device).repeat_interleave(n_samples).expand(m_count, -1).contiguous()
        gen = _sample(detached, net, schedule, labels, g, rows=seed_of)
        samples.append(gen.view(m_count, k + 1, n_samples, -1))
        keep = n_samples if n_replay is None else min(n_replay, n_samples)
        buffer_x = samples[-1][:, :, :keep].reshape(m_count, (k + 1) * keep, -1)
        buffer_c = labels.view(m_count, k + 1, n_samples)[:, :, :keep].reshape(m_count, -1)
        losses_after.append(eval_losses(detached, net, schedule, eval_set, seed_of))
        if k < len(tasks) - 1:
            loop.save(
                k + 1,
                {
                    "fisher": fisher, "anchor": anchor, "buffer_x": buffer_x, "buffer_c": buffer_c, "samples": samples,
                    "losses_after": losses_after, "train_losses": train_losses, "switch": switch,
                    "multipliers": multipliers, "distances": distances, "multiplier_max": multiplier_max,
                    "cap_hits": cap_hits,
                },
                final=True,
            )  # fmt: skip
    return SequenceRecord(
        samples, losses_after, {n: v.detach() for n, v in params.items()}, switch, torch.stack(train_losses),
        torch.stack(multipliers), torch.stack(distances), radius, torch.stack(multiplier_max), torch.stack(cap_hits),
    )


# ----------------------------------------------------------------------------------- re-convergence
@checked(task_index=Int(0, 10_000), task_name=Choice(TASKS), target=Array("m", finite=False),
         seed_of=Array("m", integer=True), n_seeds=Int(1, 10_000), tol=Positive(), max_steps=Int(0, 10**7),
         eval_every=Int(1, 10**7), batch_size=Int(1, 10**6), lr=LEARNING_RATE)  # fmt: skip
def reconvergence_steps(
    params: Params,
    net: Net,
    schedule: Schedule,
    task_index: int,
    task_name: str,
    target: torch.Tensor,
    eval_set: dict,
    seed_of: torch.Tensor,
    *,
    n_seeds: int,
    tol: float,
    max_steps: int,
    eval_every: int,
    batch_size: int,
    lr: float,
    seed: int,
) -> torch.Tensor:
    """Steps of plain fine-tuning on real data of an earlier task until its evaluation loss is back
    within ``tol`` of ``target`` (its loss right after it was learned), per member: the first check at or below
    ``(1 + tol) target`` on :func:`relearning_curve`'s curve over ``max_steps`` steps (:func:`crossing_steps`).

    Every member is fine-tuned the same way (Adam, no replay, no penalty; members of a seed get the
    same data, diffusion times and noise), so the count measures the starting point each method
    left behind. A member already within tolerance scores 0; one that never gets there by the last check scores
    ``(max_steps // eval_every + 1) eval_every`` (censored; ``max_steps + eval_every`` when ``eval_every`` divides
    ``max_steps``). The tests check this count against an early-exit loop in which members leave once back.
    """
    _check_tensor("target", target, check_param_dict("params", params, net.shapes()))
    curve = relearning_curve(
        params, net, schedule, task_index, task_name, eval_set, seed_of,
        n_seeds=n_seeds, n_steps=max_steps, eval_every=eval_every, batch_size=batch_size, lr=lr, seed=seed,
    )  # fmt: skip
    big = torch.finfo(curve.dtype).max  # an infinite target is always reached, a NaN one never (as loss <= it says)
    bound = torch.nan_to_num((1 + tol) * target.to(curve), nan=-big, posinf=big, neginf=-big)
    return crossing_steps(curve, bound, eval_every=eval_every, interpolate=False)


# skip_nested: sample_task in the loop runs bare (its task and batch size are checked here)
@checked(skip_nested=True, task_index=Int(0, 10_000), task_name=Choice(TASKS), seed_of=Array("m", integer=True),
         n_seeds=Int(1, 10_000), n_steps=Int(0, 10**7), eval_every=Int(1, 10**7), batch_size=Int(1, 10**6),
         lr=LEARNING_RATE)  # fmt: skip
def relearning_curve(
    params: Params,
    net: Net,
    schedule: Schedule,
    task_index: int,
    task_name: str,
    eval_set: dict,
    seed_of: torch.Tensor,
    *,
    n_seeds: int,
    n_steps: int,
    eval_every: int,
    batch_size: int,
    lr: float,
    seed: int,
) -> torch.Tensor:
    """The re-learning curve: an earlier task's evaluation loss per member at fine-tuning steps 0, ``eval_every``,
    2 ``eval_every``, ... up to ``n_steps`` (``(n_steps // eval_every + 1, M)``): plain fine-tuning (Adam, no replay,
    no penalty; members of a seed get the same data, diffusion times and noise), with every member fine-tuned for the
    whole window (none leaves early), so each curve is whole. :func:`reconvergence_steps`' count is the first check
    at or below the tolerance bound on this curve (:func:`crossing_steps`)."""
    members = check_param_dict("params", params, net.shapes())
    _check_tensor("seed_of", seed_of, members)
    if int(seed_of.min()) < 0 or int(seed_of.max()) >= n_seeds:
        raise ArgumentError(f"seed_of must hold seed indices in [0, n_seeds - 1 = {n_seeds - 1}]")
    if task_dim(task_name) != net.d_data:
        raise ArgumentError(f"task_name must be a task of net.d_data = {net.d_data} coordinates, got {task_name!r}")
    if task_index >= net.n_tasks:
        raise ArgumentError(f"task_index must be < net.n_tasks = {net.n_tasks}, got {task_index}")
    _check_eval_set(eval_set, net, schedule.n_steps, task_index + 1, n_seeds)
    check_memory({"the fine-tuning batches' activations (members x batch_size x width x depth)":
                  32.0 * members * batch_size * (net.d_in + net.width * net.depth)})  # fmt: skip
    params = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    opt = torch.optim.Adam(list(params.values()), lr=lr)
    # one data generator per seed index 0..n_seeds - 1 (members of a seed see the same draws)
    data_gens = [torch.Generator().manual_seed(seed * 6007 + 31 * s + task_index) for s in range(n_seeds)]
    g = torch.Generator().manual_seed(seed * 6007 + 7 + task_index)
    one_task = {k: v[:, task_index : task_index + 1] for k, v in eval_set.items()}

    def check() -> torch.Tensor:
        detached = {k: v.detach() for k, v in params.items()}
        return eval_losses(detached, net, schedule, one_task, seed_of, first_task=task_index)[:, 0]

    curve = [check()]
    device = params["w0"].device
    for step in range(1, n_steps - n_steps % eval_every + 1):
        x0 = torch.stack([sample_task(task_name, batch_size, dg) for dg in data_gens]).to(device)[seed_of]
        t, noise = _per_seed(draw_t_noise((n_seeds, *x0.shape[1:]), schedule.n_steps, g, device), seed_of)
        c = torch.full(t.shape, task_index, dtype=torch.long, device=device)
        loss = _per_sample_loss(params, net, schedule, x0, c, t, noise).mean(1).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % eval_every == 0:
            curve.append(check())
    return torch.stack(curve)


@checked(curve=Array("c m", tensor=True), bound=Array("m", tensor=True), eval_every=Int(1, 10**7))
def crossing_steps(curve: torch.Tensor, bound: torch.Tensor, *, eval_every: int, interpolate: bool) -> torch.Tensor:
    """Steps until a re-learning curve (:func:`relearning_curve`, ``(C, M)`` at steps 0, ``eval_every``, ...) is first
    at or below ``bound`` (``(M,)``), per member: 0 if it starts there; ``(C - 1) eval_every + eval_every`` if it never
    gets there (censored). ``interpolate=False``: the step of the first check at or
    below the bound (the count of :func:`reconvergence_steps`); ``True``: the step where the straight line between
    that check and the one before crosses the bound (steps between two checks, not a multiple of ``eval_every``)."""
    c, m = curve.shape
    below = curve <= bound
    hit = below.any(0)
    first = torch.where(hit, below.float().argmax(0), torch.full((m,), c, device=curve.device))
    steps = (first * eval_every).to(curve.dtype)
    if interpolate:
        inner = hit & (first > 0)
        i = first.clamp(1, c - 1)
        before, after = curve[i - 1, torch.arange(m)], curve[i, torch.arange(m)]
        frac = ((before - bound) / (before - after).clamp_min(torch.finfo(curve.dtype).tiny)).clamp(0, 1)
        steps = torch.where(inner, ((i - 1).to(curve.dtype) + frac) * eval_every, steps)
    return steps


@checked(curve=Array("c m", tensor=True), target=Array("m", tensor=True), eval_every=Int(1, 10**7),
         window=Int(1, 10**7))  # fmt: skip
def relearning_area(curve: torch.Tensor, target: torch.Tensor, *, eval_every: int, window: int) -> torch.Tensor:
    """The area under the re-learning curve above the target, per member ``(M,)``: the mean over the first ``window``
    fine-tuning steps of the relative excess loss ``max(0, loss / target - 1)`` (trapezoid rule between the checks of
    ``curve``, ``(C, M)`` at steps 0, ``eval_every``, ...). 0 for a curve that starts at or below the target; ``e / 2``
    for one that falls in a straight line from excess ``e`` at step 0 to the target at step ``window`` (and ``e s / (2
    window)`` if it reaches the target at step ``s <= window`` and stays there). Lower is faster; a loss below the
    target counts as the target (back is back). ``window`` must be a multiple of ``eval_every`` inside the curve."""
    if window % eval_every:
        raise ArgumentError(f"window must be a multiple of eval_every = {eval_every}, got {window}")
    n = window // eval_every
    if n + 1 > curve.shape[0]:
        last = (curve.shape[0] - 1) * eval_every
        raise ArgumentError(f"window must be <= the curve's last step {last}, got {window}")
    excess = (curve[: n + 1] / target - 1).clamp_min(0)
    return (excess[1:] + excess[:-1]).sum(0) / (2 * n)


# ---------------------------------------------------------------------------------- the MAML reading
def flat(p: Params) -> torch.Tensor:
    """Parameters (or gradients) as one vector per member: ``(M, P)``."""
    return torch.cat([v.flatten(1) for v in p.values()], 1)


@checked(lambdas=Array("m"), replay_weight=Float(0.0, 1e6), damping=Float(0.0, 1e6, low_inclusive=False),
         n_steps=Int(1, 10**6), lr=LEARNING_RATE)  # fmt: skip
def maml_reading(
    anchor: Params,
    fisher: Params,
    net: Net,
    schedule: Schedule,
    new_batch: tuple[torch.Tensor, ...],
    replay_batch: tuple[torch.Tensor, ...],
    lambdas: torch.Tensor,
    *,
    replay_weight: float,
    damping: float,
    n_steps: int,
    lr: float,
) -> dict[str, torch.Tensor]:
    """The trust-region update from the anchor, against a one-step (Fisher-preconditioned) inner update.

    Per member (an anchor with its Fisher and fixed batches ``(x0, task, t, noise)``; ``lambdas`` is
    ``(M,)``): ``n_steps`` of preconditioned gradient descent on the trust-region objective
    ``J(theta) = L(theta) + (lambda/2) (theta - theta*)^T D (theta - theta*)``, with
    ``L = L_new + beta L_replay`` and ``D = F + damping * mean(F)``; the preconditioner is
    ``lambda D + 1/lr``. Its stationary point solves ``theta = theta* - (1/lambda) D^{-1} grad L(theta)``,
    eq. (trcl-implicit): one *implicit* inner step from the anchor. Returns the cosine of the
    displacement ``u = theta - theta*`` with the explicit one-step update ``-D^{-1} grad L(theta*)``
    (eq. trcl-maml) and with the plain gradient step ``-grad L(theta*)``, and ``|u|``.
    """
    members = check_param_dict("anchor", anchor, net.shapes())
    if check_param_dict("fisher", fisher, net.shapes()) != members:
        raise ArgumentError(f"fisher must have the members of anchor ({members})")
    if any(bool((f < 0).any()) for f in fisher.values()) or not bool((flat(fisher).mean(1) > 0).all()):
        raise ArgumentError("fisher must hold entries >= 0 with a positive mean per member (D must be invertible)")
    _check_batch("new_batch", new_batch, net, schedule, members)
    _check_batch("replay_batch", replay_batch, net, schedule, members)
    _check_tensor("lambdas", lambdas, members)
    if bool((lambdas < 0).any()):
        raise ArgumentError("lambdas must hold trust-region strengths >= 0")
    metric = damped_metric(fisher, damping)
    lam = lambdas.view(-1)

    def objective_grad(p: Params) -> Params:
        return replay_objective_grad(p, net, schedule, new_batch, replay_batch, replay_weight)

    g0 = objective_grad(anchor)
    theta = {k: v.clone() for k, v in anchor.items()}
    shape = {k: (-1, *([1] * (v.dim() - 1))) for k, v in anchor.items()}
    for _ in range(n_steps):
        g = objective_grad(theta)
        for k in theta:
            lam_k = lam.view(shape[k])
            full = g[k] + lam_k * metric[k] * (theta[k] - anchor[k])
            theta[k] = theta[k] - full / (lam_k * metric[k] + 1.0 / lr)
    u = flat({k: theta[k] - anchor[k] for k in theta})
    one_step = -flat({k: g0[k] / metric[k] for k in g0})
    plain = -flat(g0)
    cos = torch.nn.functional.cosine_similarity
    return {"cos_maml": cos(u, one_step, dim=1), "cos_gradient": cos(u, plain, dim=1), "step_norm": u.norm(dim=1)}


def damped_metric(fisher: Params, damping: float) -> Params:
    """``D = F + damping * mean(F)`` per member (the metric of the MAML reading; invertible for ``damping > 0``)."""
    mean_f = flat(fisher).mean(1)
    return {k: f + damping * mean_f.view(-1, *([1] * (f.dim() - 1))) for k, f in fisher.items()}


def replay_objective_grad(
    params: Params,
    net: Net,
    schedule: Schedule,
    new_batch: tuple[torch.Tensor, ...],
    replay_batch: tuple[torch.Tensor, ...],
    replay_weight: float,
) -> Params:
    """``grad L`` per member, with ``L = L_new + beta L_replay`` on fixed batches ``(x0, task, t, noise)``."""
    p = {k: v.detach().requires_grad_(True) for k, v in params.items()}
    loss = _per_sample_loss(p, net, schedule, *new_batch).mean(1)
    loss = loss + replay_weight * _per_sample_loss(p, net, schedule, *replay_batch).mean(1)
    grads = torch.autograd.grad(loss.sum(), list(p.values()))
    return dict(zip(p, grads, strict=True))


def trained_step_cosines(
    anchor: Params,
    trained: Params,
    fisher: Params,
    net: Net,
    schedule: Schedule,
    new_batch: tuple[torch.Tensor, ...],
    replay_batch: tuple[torch.Tensor, ...],
    *,
    replay_weight: float,
    damping: float,
) -> dict[str, torch.Tensor]:
    """The displacement training actually made on the last task, ``trained - anchor`` (Adam on
    stochastic batches, many steps), against the one-step update ``-D^{-1} grad L(theta*)``
    (eq. trcl-maml) and the plain gradient step ``-grad L(theta*)``, per member.

    Unlike :func:`maml_reading`, nothing here tends to 1 by construction: it asks whether the
    update TR-CL really makes looks like the one preconditioned step of the reading.
    """
    metric = damped_metric(fisher, damping)
    g0 = replay_objective_grad(anchor, net, schedule, new_batch, replay_batch, replay_weight)
    u = flat({k: trained[k] - anchor[k] for k in anchor})
    cos = torch.nn.functional.cosine_similarity
    one_step = -flat({k: g0[k] / metric[k] for k in g0})
    return {"cos_maml": cos(u, one_step, dim=1), "cos_gradient": cos(u, -flat(g0), dim=1), "step_norm": u.norm(dim=1)}
