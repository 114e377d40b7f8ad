"""Training DCDM and its ablations side by side, and using the trained models (no labels anywhere here).

An *arm* is one variant of the method; a *member* is one arm trained from one seed. All members of
an experiment form one :class:`ConceptModels`: stacked encoders, denoisers and centres, trained
together by :func:`train_concept_models` (the members share nothing but the batched arithmetic;
each draws its own batches, noise and Dirichlet samples). Members of the same seed start from the
same weights and the same centres, so the arms are compared in pairs.

Arms:

* ``dcdm``: learned centres, ``pi ~ Dir(alpha(x_0))``, KL weight ``beta`` (the method);
* ``fixed_centres``: the same, but the centres stay where they start (the data mean plus noise, not
  training inputs: see :func:`initial_centres`);
* ``softmax``: learned centres, ``pi = softmax(h)`` (deterministic, no Dirichlet, no KL);
* ``no_kl``: learned centres, Dirichlet weights, ``beta = 0``;
* ``ddpm``: centres fixed at zero, so ``m = 0``: a plain DDPM with the same denoiser (the baseline
  for sample quality).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from ..core.arguments import DEFAULT_INT_MAX, ArgumentError, Array, OfInstance, checked
from ..core.checkpoint import Checkpointer, LoopState
from ..core.params import Bool, Choice, Float, Int, Positive, Text, Tuple
from ..core.validation import check_int, check_positive
from . import dcdm as M
from .networks import Ensemble

ARMS: tuple[str, ...] = ("dcdm", "fixed_centres", "softmax", "no_kl", "ddpm")
CONCEPT_ARMS: tuple[str, ...] = ARMS[:4]
#: the centres start at the data mean plus this many per-coordinate standard deviations of noise
CENTRE_NOISE = 0.3
#: the most samples a :class:`ConceptModels` sampling method draws per member (per concept)
MAX_SAMPLES = 1_000_000
#: a :class:`ConceptModels` method's argument checked against the models (their arms, seeds, data width, steps)
_OF_MODELS = OfInstance("_check_argument", "an input batch (n, D), a trained arm, a seed index or diffusion steps")


@checked(
    n_concepts=Int(1, 10_000),
    n_steps=Int(1, 10**9),
    n_diffusion_steps=Int(1, M.MAX_DIFFUSION_STEPS),
    batch_size=Int(1, 10**6),
    lr=Positive(),
    beta=Float(0.0),
    prior=Positive(),
    centre_noise=Positive(),
)
@dataclass(frozen=True)
class TrainSettings:
    """What :func:`train_concept_models` needs besides the data (the config's fields, one dataset's share)."""

    n_concepts: int
    n_steps: int
    n_diffusion_steps: int
    batch_size: int
    lr: float
    beta: float
    prior: float
    centre_noise: float = CENTRE_NOISE


@checked(
    centres=Array("e k d"),
    arms=Tuple(Choice(ARMS), distinct=True),
    seeds=Tuple(Int(0, DEFAULT_INT_MAX), distinct=True),
)
@dataclass
class ConceptModels:
    """Trained members: ``encoder`` and ``denoiser`` ensembles, ``centres`` ``(E, K, D)``, and who is who.

    ``E = len(arms) * len(seeds)`` members, arm-major (all seeds of the first arm, then the next arm's).
    """

    encoder: Ensemble
    denoiser: Ensemble
    centres: torch.Tensor
    arms: tuple[str, ...]
    seeds: tuple[int, ...]
    schedule: M.NoiseSchedule
    losses: list[list[float]] = field(default_factory=list)
    #: what ``on_snapshot`` returned at each snapshot step (kept in the loop's checkpoint: a resumed run has them all)
    snapshots: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.centres, torch.Tensor):
            raise ArgumentError(f"centres must be a torch tensor, got {type(self.centres).__name__}")
        n = len(self.arms) * len(self.seeds)
        for name in ("centres", "encoder", "denoiser"):
            value = getattr(self, name)
            size = value.shape[0] if name == "centres" else value.n_members
            if size != n:
                raise ArgumentError(f"{name} must hold len(arms) * len(seeds) = {n} members, got {size}")

    @property
    def n_members(self) -> int:
        return len(self.arms) * len(self.seeds)

    def _check_argument(self, name: str, value: object) -> object:
        """A method's argument checked against the models: an input batch ``x`` (a finite float tensor
        ``(n, D)``), an ``arm`` they hold, a ``seed_index`` below ``len(seeds)``, diffusion ``steps`` in ``[0, T)``."""
        if name == "x":
            if not isinstance(value, torch.Tensor) or not value.is_floating_point():
                what = f"a {value.dtype} tensor" if isinstance(value, torch.Tensor) else type(value).__name__
                raise ArgumentError(f"x must be a float torch tensor of shape (n, {self.centres.shape[2]}), got {what}")
            return Array("n d").check_dims(name, value, {"d": (self.centres.shape[2], "the centres")})
        if name == "arm":
            if not isinstance(value, str) or value not in self.arms:
                raise ArgumentError(f"arm must be one of the trained arms {self.arms}, got {value!r}")
            return value
        if name == "seed_index":
            return check_int(name, value, minimum=0, maximum=len(self.seeds) - 1)
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise ArgumentError(f"steps must be a sequence of diffusion steps in [0, {self.schedule.n_steps - 1}]")
        return [check_int(name, t, minimum=0, maximum=self.schedule.n_steps - 1) for t in value]

    @checked(arm=_OF_MODELS, seed_index=_OF_MODELS)
    def index(self, arm: str, seed_index: int) -> int:
        """The member of ``arm`` trained from the ``seed_index``-th seed."""
        return self.arms.index(arm) * len(self.seeds) + seed_index

    def softmax_mask(self) -> torch.Tensor:
        return torch.tensor([a == "softmax" for a in self.arms for _ in self.seeds], device=self.centres.device)

    @torch.no_grad()
    @checked(x=_OF_MODELS, batch_size=Int(1, DEFAULT_INT_MAX))
    def concept_weights(self, x: torch.Tensor, batch_size: int = 4096) -> torch.Tensor:
        """The inferred weights of every input for every member, ``(E, n, K)``: the Dirichlet mean
        ``alpha / sum(alpha)`` (the softmax for the softmax arm)."""
        outs = [
            self.encoder(x[i : i + batch_size].expand(self.n_members, -1, -1)) for i in range(0, len(x), batch_size)
        ]
        h = torch.cat(outs, dim=1)
        alpha = M.concentrations(h)
        return torch.where(self.softmax_mask()[:, None, None], h.softmax(-1), alpha / alpha.sum(-1, keepdim=True))

    @checked(skip_nested=True, x=_OF_MODELS)
    def assign(self, x: torch.Tensor) -> np.ndarray:
        """The concept of every input for every member, ``(E, n)``: the argmax of the inferred weights."""
        return self.concept_weights(x).argmax(-1).cpu().numpy()

    @torch.no_grad()
    @checked(n_per_concept=Int(1, MAX_SAMPLES))
    def sample_concepts(self, n_per_concept: int, noise: Callable | None = None) -> torch.Tensor:
        """``n_per_concept`` samples of each concept (one-hot ``pi``) for every member, ``(E, K, n, D)``."""
        n_concepts, d = self.centres.shape[1], self.centres.shape[2]
        m = self.centres[:, :, None, :].expand(-1, -1, n_per_concept, -1).reshape(self.n_members, -1, d)
        x = M.reverse_process(self.denoiser, self.schedule, m, noise=noise)
        return x.reshape(self.n_members, n_concepts, n_per_concept, d)

    @torch.no_grad()
    @checked(x=_OF_MODELS)
    def sample_like(self, x: torch.Tensor) -> torch.Tensor:
        """One sample per input of ``x`` for every member, ``(E, n, D)``: ``pi`` drawn from each input's
        inferred ``Dir(alpha(x))`` (the aggregate posterior over concept weights), ``m = pi C``, then the
        reverse process. Only the weights come from ``x``; the sample itself starts from noise."""
        h = self.encoder(x.expand(self.n_members, -1, -1))
        m = M.concept_weights(h, self.softmax_mask()) @ self.centres
        return M.reverse_process(self.denoiser, self.schedule, m)

    @torch.no_grad()
    @checked(skip_nested=True, x=_OF_MODELS, steps=_OF_MODELS, seed=Int(0, DEFAULT_INT_MAX))
    def denoising_loss(self, x: torch.Tensor, steps: Sequence[int], seed: int) -> torch.Tensor:
        """The denoising error ``|| eps - eps_theta(x_t, t, m) ||^2 / D`` of every member at each of ``steps``,
        averaged over the inputs ``x``: ``(E, len(steps))``. ``m`` is each input's inferred centre (the
        Dirichlet mean times the centres; 0 for the plain DDPM), ``x_t`` is drawn from eq. (dcdm-forward)
        with the same noise ``eps`` for every member (own generator, seeded by ``seed``): the arms are
        compared on the same draws. The ELBO's reconstruction term, split by noise level."""
        m = self.concept_weights(x) @ self.centres  # (E, n, D)
        gen = torch.Generator().manual_seed(int(seed))
        out = torch.empty(self.n_members, len(steps), device=x.device)
        for j, t in enumerate(steps):
            eps = torch.randn(x.shape, generator=gen).to(x.device).expand_as(m)
            tt = torch.full(m.shape[:-1], t, dtype=torch.long, device=x.device)
            x_t = M.forward_sample(x.expand_as(m), m, tt, eps, self.schedule)
            out[:, j] = ((eps - self.denoiser(x_t, tt, m)) ** 2).mean(-1).mean(-1)
        return out

    @torch.no_grad()
    @checked(n=Int(1, MAX_SAMPLES), prior=Positive(), seed=Int(0, DEFAULT_INT_MAX))
    def sample_prior(self, n: int, prior: float, seed: int) -> torch.Tensor:
        """``n`` samples for every member from the model's own prior, ``(E, n, D)``: ``pi ~ Dir(prior)``
        (symmetric), ``m = pi C``, then the reverse process; no input is looked at. The draws come from
        their own generators (seeded by ``seed``), so torch's global random state is left alone."""
        n_concepts = self.centres.shape[1]
        pi = np.random.default_rng(seed).dirichlet(np.full(n_concepts, float(prior)), size=(self.n_members, n))
        pi = torch.as_tensor(pi, dtype=self.centres.dtype, device=self.centres.device)
        device = self.centres.device
        return M.reverse_process(self.denoiser, self.schedule, pi @ self.centres, noise=generator_noise(seed, device))


@checked(x_train=Array("n d", tensor=True), n_concepts=Int(1, 10_000), seed=Int(0, DEFAULT_INT_MAX), noise=Positive())
def initial_centres(x_train: torch.Tensor, n_concepts: int, seed: int, noise: float = CENTRE_NOISE) -> torch.Tensor:
    """Where the centres of every concept arm start, ``(K, D)``: the data mean plus Gaussian noise of ``noise``
    times each coordinate's standard deviation (own generator, seeded by ``seed``).

    Not at training inputs: centres started at random inputs are exemplars already, so an arm that keeps
    them fixed conditions every sample on a real input and cannot show what learning the centres adds.
    From near the mean, a centre says little about an input until training moves it."""
    z = torch.randn(n_concepts, x_train.shape[1], generator=torch.Generator().manual_seed(int(seed)))
    x = x_train.detach().float()
    return (x.mean(0) + noise * x.std(0) * z.to(x.device)).to(x_train.dtype)


def member_seed(base_seed: int, seed: int) -> int:
    """The initialisation seed of the members trained from ``seed`` in a run with base seed ``base_seed``."""
    return int(seed) + 7919 * int(base_seed)


@checked(
    skip_nested=True,  # the training steps' loss gets checked or made values and runs bare
    x_train=Array("n d", tensor=True),
    seeds=Tuple(Int(0, DEFAULT_INT_MAX), distinct=True),
    base_seed=Int(0, DEFAULT_INT_MAX),
    arms=Tuple(Choice(ARMS), distinct=True),
    name=Text(),
    snapshot_steps=Tuple(Int(0, 10**9), min_len=0),
    progress=Bool(),
)
def train_concept_models(
    x_train: torch.Tensor,
    settings: TrainSettings,
    make_encoder: Callable[[], torch.nn.Module],
    make_denoiser: Callable[[], torch.nn.Module],
    *,
    seeds: Sequence[int],
    base_seed: int = 0,
    arms: Sequence[str] = ARMS,
    checkpoint: Checkpointer | None = None,
    name: str = "",
    snapshot_steps: Sequence[int] = (),
    on_snapshot: Callable[[int, ConceptModels], None] | None = None,
    progress: bool = False,
) -> ConceptModels:
    """Train every arm from every seed on ``x_train`` with the objective of eq. (dcdm-elbo) (Adam, cosine decay).

    Takes inputs only: no labels reach the training. ``x_train`` is ``(n, D)``; ``seeds`` and ``arms``
    (among :data:`ARMS`) are distinct and non-empty. ``on_snapshot(step, models)`` is called at the
    ``snapshot_steps`` (the explorable's frames); what it returns (unless ``None``) is kept in
    ``models.snapshots``. Resumable through ``checkpoint`` under ``name``: the loop state carries the
    random state it draws from and the snapshots taken so far, so a resumed run ends as the uninterrupted
    one, bit for bit.
    """
    unknown = sorted(set(arms) - set(ARMS))
    if unknown:
        raise ValueError(f"arms must be among {ARMS}, got {unknown}")
    n_steps = check_int("n_steps", settings.n_steps, minimum=1)
    check_positive("lr", settings.lr)
    device = x_train.device
    arms, seeds = tuple(arms), tuple(int(s) for s in seeds)
    init_seeds = [member_seed(base_seed, s) for _ in arms for s in seeds]
    encoder = Ensemble(make_encoder, init_seeds, device)
    denoiser = Ensemble(make_denoiser, init_seeds, device)
    starts = []
    for arm, s in zip([a for a in arms for _ in seeds], init_seeds, strict=True):
        start = initial_centres(x_train, settings.n_concepts, s, settings.centre_noise)
        starts.append(torch.zeros_like(start) if arm == "ddpm" else start)
    centres = torch.nn.Parameter(torch.stack(starts))
    models = ConceptModels(
        encoder, denoiser, centres, arms, seeds, M.NoiseSchedule.cosine(settings.n_diffusion_steps, device)
    )
    per_member = [a for a in arms for _ in seeds]
    learn = torch.tensor([a not in ("fixed_centres", "ddpm") for a in per_member], device=device)
    beta = torch.tensor(
        [0.0 if a in ("softmax", "no_kl", "ddpm") else settings.beta for a in per_member], device=device
    )
    softmax = models.softmax_mask()
    params = [*encoder.parameters(), *denoiser.parameters(), centres]
    # foreach: one batched op per update step for all parameters (torch picks it on GPUs, the per-tensor loop on
    # CPUs); the same arithmetic, so the same numbers bit for bit (tested), in less time on the CPU
    opt = torch.optim.Adam(params, lr=settings.lr, foreach=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5 * (1 + math.cos(math.pi * min(k, n_steps) / n_steps)))
    # the loop draws batches, times and noise from the global random state: it is part of the loop's state
    loop = LoopState(checkpoint, name, modules={"encoder": encoder, "denoiser": denoiser}, tensors={"centres": centres},
                     optimizers={"optimizer": opt}, schedulers={"scheduler": sched}, global_rng=True)  # fmt: skip
    start, extra = loop.restore()
    if start:
        models.losses = [list(v) for v in extra["losses"]]
        models.snapshots = list(extra.get("snapshots", []))
    snapshot_steps = set(snapshot_steps)
    for step in tqdm(range(start, n_steps + 1), disable=not progress, desc=name or "train"):
        if step in snapshot_steps and on_snapshot is not None:
            taken = on_snapshot(step, models)
            if taken is not None:
                models.snapshots.append(taken)
        if step == n_steps:
            break
        idx = torch.randint(len(x_train), (models.n_members, settings.batch_size), device=device)
        x0 = x_train[idx]
        c = torch.where(learn[:, None, None], centres, centres.detach())
        loss, _ = M.dcdm_loss(  # nested in a skip_nested boundary: its rules and relation are skipped per step
            x0, encoder(x0), c, denoiser, models.schedule, beta=beta, prior=settings.prior, softmax=softmax
        )
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()  # members are independent: the sum's gradient is each member's own
        opt.step()
        sched.step()
        if step % 50 == 0:
            models.losses.append([float(v) for v in loss.detach().cpu()])
        loop.save(step + 1, {"losses": models.losses, "snapshots": models.snapshots})
    models.centres = centres.detach()
    return models


def generator_noise(seed: int, device: str | torch.device = "cpu") -> Callable[[tuple[int, ...]], torch.Tensor]:
    """A noise source for :func:`~explorables.dcdm.dcdm.reverse_process` from its own generator (fixed
    noise for pictures, leaving torch's global random state alone)."""
    gen = torch.Generator().manual_seed(int(seed))
    return lambda shape: torch.randn(shape, generator=gen).to(device)
