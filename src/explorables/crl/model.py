"""VAEs with three priors, trained side by side as one ensemble of independent members.

Every member is a VAE (MLP encoder ``q(z | x)``, MLP decoder ``p(x | z)``) with one of three priors:

* ``"plain"``: ``p(z) = N(0, I)`` and an encoder ``q(z | x)``, blind to the environment;
* ``"factorised"``: ``p(z | u) = prod_i N(z_i; m_i(u), s_i(u)^2)``, iVAE's conditionally factorised prior;
* ``"causal"``: ``p(z | u) = prod_i N(z_i; m_i(u) + sum_{j<i} lambda_ij(u) g_j(z_j), s_i(u)^2)``, eq.
  (crl-prior): an additive-noise causal model over the latents in a fixed causal order (strictly
  triangular influences), whose influences ``lambda(u)`` and noise parameters are learned per
  environment and whose parent functions ``g_j`` are small learned MLPs, with an L1 penalty on the
  influences (sparsity);
* ``"shared"``: the same causal prior with one ``lambda`` for every environment (environment 0's row of
  the table serves all; only the noise's location and scale change): influences that do not change,
  the natural non-identifiable comparison for the children (the L1 penalty acts on that one table; the
  unused rows only decay).

Tensors carry a leading member axis ``M``; member ``m`` only ever touches row ``m`` of each parameter,
and the loss is a sum over members, so (Adam being elementwise) each member trains as it would
alone. The learner sees observations and environment labels only, never the true latents.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from ..core.arguments import Array, OfInstance, checked
from ..core.checkpoint import Checkpointer, LoopState
from ..core.params import Bool, Choice, Float, Int, Positive, Text, Tuple
from ..core.resources import check_memory
from ..core.validation import check_choice, check_int, check_positive

PRIORS: tuple[str, ...] = ("causal", "factorised", "plain", "shared")
#: the largest size (observed dimension, latents, environments, width) a model here takes
MAX_SIZE = 100_000
_SIZES = dict(
    priors=Tuple(Choice(PRIORS)),
    n_envs=Int(1, MAX_SIZE),
    d_latent=Int(1, MAX_SIZE),
    width=Int(1, MAX_SIZE),
    seeds=Tuple(Int(0)),
    obs_std=Positive(),
)


def _check_model_memory(m: int, d_obs: int, d_latent: int, n_envs: int, width: int, g_width: int) -> None:
    """The parameters, their gradients and Adam's two moments (float32) must fit in memory."""
    per_member = (d_obs + n_envs + 2 * width + 2 * d_latent) * width + (width + d_obs) * width
    per_member += n_envs * d_latent * (d_latent + 2) + 3 * d_latent * g_width
    check_memory({"the ensemble's parameters (priors x width x (d_obs + n_envs + width))": 16.0 * m * per_member})


def _init(shape: tuple[int, ...], generators: Sequence[torch.Generator], scale: float) -> torch.Tensor:
    return torch.stack([torch.randn(shape, generator=gen) * scale for gen in generators])


class EnsembleMLP(nn.Module):
    """``M`` independent leaky-ReLU MLPs; weights ``(M, fan_in, fan_out)``."""

    def __init__(self, sizes: Sequence[int], generators: Sequence[torch.Generator]):
        super().__init__()
        #: the leaky ReLU's negative slope (1: the network is linear; :func:`fit` anneals it to 0.2)
        self.slope = 0.2
        self.weights = nn.ParameterList(
            [nn.Parameter(_init((a, b), generators, 1.0 / math.sqrt(a))) for a, b in itertools.pairwise(sizes)]
        )
        self.biases = nn.ParameterList([nn.Parameter(torch.zeros(len(generators), 1, b)) for b in sizes[1:]])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for k, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            x = torch.baddbmm(b, x, w)
            if k < len(self.weights) - 1:
                x = nn.functional.leaky_relu(x, self.slope)
        return x


#: a tensor argument of an :class:`EnsembleVAE` method, checked against the ensemble's sizes
_INPUT = OfInstance("_check_input", "a finite tensor of the ensemble's shape (M, B, ...)")


@checked(d_obs=Int(1, MAX_SIZE), g_width=Int(1, MAX_SIZE), **_SIZES)
class EnsembleVAE(nn.Module):
    """``M`` VAEs with the priors ``priors[m]`` (see the module docstring); ``n_envs`` environments."""

    def __init__(
        self,
        priors: Sequence[str],
        d_obs: int,
        d_latent: int,
        n_envs: int,
        *,
        width: int = 32,
        g_width: int = 8,
        seeds: Sequence[int],
        obs_std: float = 0.1,
        encoder_env: bool = False,
    ):
        super().__init__()
        for p in priors:
            check_choice("priors", p, PRIORS)
        if len(seeds) != len(priors):
            raise ValueError(f"seeds must hold one seed per member ({len(priors)}), got {len(seeds)}")
        d_obs, d_latent = check_int("d_obs", d_obs), check_int("d_latent", d_latent)
        n_envs, width = check_int("n_envs", n_envs), check_int("width", width)
        self.obs_std = check_positive("obs_std", obs_std)
        _check_model_memory(len(priors), d_obs, d_latent, n_envs, width, g_width)
        gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
        m = len(priors)
        self.priors, self.d_latent = tuple(priors), d_latent
        self.encoder = EnsembleMLP((d_obs + n_envs, width, width, 2 * d_latent), gens)
        self.decoder = EnsembleMLP((d_latent, width, width, d_obs), gens)
        self.loc = nn.Parameter(torch.zeros(m, n_envs, d_latent))
        self.log_scale = nn.Parameter(torch.zeros(m, n_envs, d_latent))
        self.influence = nn.Parameter(_init((n_envs, d_latent, d_latent), gens, 0.1))  # lambda[u, i, j]: j -> i
        self.g_in = nn.Parameter(_init((d_latent, g_width), gens, 1.0))
        self.g_bias = nn.Parameter(_init((d_latent, g_width), gens, 0.5))
        self.g_out = nn.Parameter(_init((d_latent, g_width), gens, 1.0 / math.sqrt(g_width)))
        self.g_lin = nn.Parameter(torch.ones(m, d_latent))
        uses_env = torch.tensor([p != "plain" for p in priors], dtype=torch.float32)
        causal = torch.tensor([p in ("causal", "shared") for p in priors], dtype=torch.float32)
        shared = torch.tensor([p == "shared" for p in priors], dtype=torch.float32)
        self.register_buffer("shared_on", shared.view(m, 1, 1, 1))
        self.register_buffer("env_on", uses_env.view(m, 1, 1))
        # the encoder reads u only with encoder_env (q(z | x, u) as in iVAE); the plain prior never does
        self.register_buffer("encoder_env_on", uses_env.view(m, 1, 1) * float(bool(encoder_env)))
        tril = torch.tril(torch.ones(d_latent, d_latent), diagonal=-1)
        self.register_buffer("influence_mask", causal.view(m, 1, 1, 1) * tril)

    def _check_input(self, name: str, value: object) -> torch.Tensor:
        """A method's tensor, checked against the ensemble: ``x`` ``(M, B, d_obs)``, ``z`` and ``noise``
        ``(M, B, d_latent)``, ``onehot`` ``(M, B, n_envs)`` (floats, finite), ``env`` labels ``(M, B)`` (long, in
        ``[0, n_envs - 1]``) or their one-hot codes ``(M, B, n_envs)``."""
        m, n_envs = self.loc.shape[0], self.loc.shape[1]
        dims = {"m": (m, "the ensemble's members"), "e": (n_envs, "the environments")}
        dims["d"] = (self.d_latent, "the latents")
        dims["o"] = (self.encoder.weights[0].shape[1] - n_envs, "the observed dimension")
        if not isinstance(value, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor, got {type(value).__name__}")
        if name == "env" and value.ndim == 2 and value.dtype == torch.long:
            Array("m b").check_dims(name, value, dims)
            if int(value.min()) < 0 or int(value.max()) >= n_envs:
                raise ValueError(f"{name} must hold environment labels in [0, {n_envs - 1}]")
            return value
        shape = {"x": "m b o", "z": "m b d", "noise": "m b d"}.get(name, "m b e")
        if not value.is_floating_point():
            labels = " (long labels (M, B) or float one-hot codes)" if name == "env" else ""
            raise ValueError(f"{name} must be a float tensor of shape ({', '.join(shape.split())}){labels}")
        return Array(shape).check_dims(name, value, dims)

    @checked(z=_INPUT)
    def parent_functions(self, z: torch.Tensor) -> torch.Tensor:
        """``g_j(z_j)`` for every latent ``j``: a linear term plus a one-hidden-layer tanh MLP, ``(M, B, d)``."""
        hidden = torch.tanh(z.unsqueeze(-1) * self.g_in.unsqueeze(1) + self.g_bias.unsqueeze(1))  # (M, B, d, K)
        return self.g_lin.unsqueeze(1) * z + (hidden * self.g_out.unsqueeze(1)).sum(-1)

    def influences(self) -> torch.Tensor:
        """The masked influences ``lambda[m, u, i, j]`` (``j -> i``, ``j < i``; zero for the factorised and
        plain priors; environment 0's for every ``u`` under the shared prior)."""
        table = self.shared_on * self.influence[:, :1] + (1.0 - self.shared_on) * self.influence
        return table * self.influence_mask

    @checked(skip_nested=True, z=_INPUT, env=_INPUT)
    def log_prior(self, z: torch.Tensor, env: torch.Tensor) -> torch.Tensor:
        """``log p(z | u)`` of eq. (crl-prior) up to a constant, per sample: ``(M, B)``.

        ``env`` holds labels ``(M, B)`` or their one-hot codes ``(M, B, n_envs)`` (faster: one batched
        product picks every environment's parameters).
        """
        onehot = env if env.ndim == 3 else nn.functional.one_hot(env, self.loc.shape[1]).to(z.dtype)
        d = self.d_latent
        table = torch.cat([self.loc, self.log_scale, self.influences().flatten(2)], dim=-1)  # (M, E, 2d + d^2)
        per_sample = torch.bmm(onehot, table)  # (M, B, 2d + d^2): this sample's environment's parameters
        lam = per_sample[..., 2 * d :].unflatten(-1, (d, d))
        mean = self.env_on * per_sample[..., :d] + (lam @ self.parent_functions(z).unsqueeze(-1)).squeeze(-1)
        log_s = self.env_on * per_sample[..., d : 2 * d]
        return (-0.5 * ((z - mean) * torch.exp(-log_s)) ** 2 - log_s).sum(-1)

    @checked(x=_INPUT, onehot=_INPUT)
    def encode(self, x: torch.Tensor, onehot: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Posterior mean and log-variance of ``q(z | x)``, each ``(M, B, d)``. With ``encoder_env`` the
        environment priors' encoders also read the one-hot code, ``q(z | x, u)`` as in iVAE; otherwise
        (and always for the plain prior) that input is zeros. The mixing is injective, so ``x`` alone
        determines ``z`` and ``q(z | x)`` loses nothing."""
        out = self.encoder(torch.cat([x, onehot * self.encoder_env_on], dim=-1))
        return out[..., : self.d_latent], out[..., self.d_latent :].clamp(-12.0, 6.0)

    @checked(skip_nested=True, x=_INPUT, env=_INPUT, noise=_INPUT)
    def elbo(
        self,
        x: torch.Tensor,
        env: torch.Tensor,
        generator: torch.Generator | None = None,
        noise: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """One-sample ELBO per member, eq. (crl-elbo), mean over the batch (constants dropped): ``(M,)``.

        ``noise``: the standard-normal draws of the reparametrisation (else drawn from ``generator``).
        """
        onehot = env if env.ndim == 3 else nn.functional.one_hot(env, self.loc.shape[1]).to(x.dtype)
        mu, log_var = self.encode(x, onehot)
        eps = torch.randn(mu.shape, generator=generator).to(mu.device) if noise is None else noise
        z = mu + torch.exp(0.5 * log_var) * eps
        log_lik = -0.5 * ((x - self.decoder(z)) / self.obs_std).pow(2).sum(-1)
        log_q = -0.5 * (eps.pow(2) + log_var).sum(-1)
        return (log_lik + self.log_prior(z, onehot) - log_q).mean(-1)


def schedule(
    step: int, n_steps: int, lr: float, obs_std: float, obs_std_start: float, warmup: float, cosine: bool
) -> tuple[float, float, float]:
    """Learning rate, leaky-ReLU slope and decoder standard deviation at ``step`` of ``n_steps`` (see :func:`fit`).

    With ``t = min(step / (warmup n_steps), 1)``: slope ``1 - 0.8 t`` (linear at the start, 0.2 after the
    warm-up) and decoder std ``obs_std_start^(1 - t) obs_std^t``; the learning rate is ``lr`` or, with
    ``cosine``, ``lr (1 + cos(pi step / n_steps)) / 2``.
    """
    t = 1.0 if warmup <= 0 else min(step / (warmup * n_steps), 1.0)
    rate = lr * 0.5 * (1.0 + math.cos(math.pi * step / n_steps)) if cosine else lr
    return rate, 1.0 - 0.8 * t, obs_std_start ** (1.0 - t) * obs_std**t


@checked(
    skip_nested=True,  # the model's methods in the training loop run bare
    x=Array("m n o"),
    env=Array("_ _", integer=True),
    n_steps=Int(1, 10**8),
    batch_size=Int(1, 10**6),
    lr=Positive(),
    sparsity=Float(0.0),
    warmup=Float(0.0, 1.0),
    cosine=Bool(),
    encoder_env=Bool(),
    progress=Bool(),
    name=Text(),
    **_SIZES,
)
def fit(
    x: torch.Tensor,
    env: torch.Tensor,
    priors: Sequence[str],
    n_envs: int,
    d_latent: int,
    *,
    seeds: Sequence[int],
    n_steps: int = 1500,
    batch_size: int = 128,
    lr: float = 1e-2,
    width: int = 32,
    sparsity: float = 1e-3,
    obs_std: float = 0.1,
    obs_std_start: float | None = None,
    warmup: float = 0.0,
    cosine: bool = False,
    encoder_env: bool = False,
    callback: Callable[[int, EnsembleVAE], None] | None = None,
    progress: bool = False,
    checkpoint: Checkpointer | None = None,
    name: str = "",
    extra_state: Callable[[], Any] | None = None,
) -> EnsembleVAE:
    """Train ``len(priors)`` VAEs on observations ``x`` ``(M, n, d_obs)`` with environment labels ``env``
    ``(M, n)`` by maximising the ELBO (Adam, minibatches drawn per member), eq. (crl-elbo).

    Member ``m`` sees ``x[m]`` and ``env[m]`` only; ``d_latent`` is the number of latents it fits
    (the true number; choosing it is not part of this chapter).
    ``callback(step, model)`` (optional) is called every 100 steps (the training-curve snapshots).

    The schedule (:func:`schedule`): over the first ``warmup`` fraction of the steps the networks start
    linear (leaky-ReLU slope 1) and bend to slope 0.2, and the decoder's standard deviation in eq.
    (crl-elbo) falls geometrically from ``obs_std_start`` (default: ``obs_std``, no annealing) to
    ``obs_std``; a wide decoder noise first lets the prior shape the codes, before reconstruction
    dominates. With ``cosine`` the learning rate follows ``lr (1 + cos(pi t / T)) / 2``.

    Resumable: with a ``checkpoint`` the loop stores the model, the optimiser, every member's
    generator and the step under ``name`` (throttled by the checkpointer), plus ``extra_state()``
    (the caller's own loop state, e.g. its curves; the caller reads it back from
    ``checkpoint.get(name)["extra"]``), and a resumed run continues from there, to the bit.
    """
    if not torch.is_tensor(x) or not torch.is_tensor(env):
        raise TypeError(f"x and env must be torch tensors, got {type(x).__name__} and {type(env).__name__}")
    if x.ndim != 3 or env.shape != x.shape[:2]:
        raise ValueError(f"x must be (M, n, d_obs) and env (M, n), got {tuple(x.shape)} and {tuple(env.shape)}")
    if not x.is_floating_point() or env.dtype != torch.long:
        raise TypeError(f"x must be a float tensor and env a long one, got dtypes {x.dtype} and {env.dtype}")
    if len(priors) != x.shape[0]:
        raise ValueError(f"priors must hold one prior per member of x ({x.shape[0]}), got {len(priors)}")
    if int(env.min()) < 0 or int(env.max()) >= n_envs:
        raise ValueError(f"env must hold labels in [0, n_envs - 1 = {n_envs - 1}], got labels up to {int(env.max())}")
    n_steps, batch_size = check_int("n_steps", n_steps), check_int("batch_size", batch_size)
    check_positive("lr", lr)
    obs_std_start = obs_std if obs_std_start is None else check_positive("obs_std_start", obs_std_start)
    m, n, d_obs = x.shape
    model = EnsembleVAE(
        priors, d_obs, d_latent, n_envs, width=width, seeds=seeds, obs_std=obs_std, encoder_env=encoder_env
    ).to(x.device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    # every member's minibatches and reparametrisation noise come from its own generator, so a
    # member trains exactly as it would alone
    gens = [torch.Generator().manual_seed(int(s) + 1) for s in seeds]
    rows = torch.arange(m, device=x.device).unsqueeze(1)
    onehot = nn.functional.one_hot(env, n_envs).to(x.dtype)
    loop = LoopState(checkpoint, name, modules={"model": model}, optimizers={"optimizer": opt}, generators=gens)
    start, _ = loop.restore()
    for step in tqdm(range(start, n_steps), desc="VAEs", disable=not progress, initial=start, total=n_steps):
        rate, slope, model.obs_std = schedule(step, n_steps, lr, obs_std, obs_std_start, warmup, cosine)
        model.encoder.slope = model.decoder.slope = slope
        for group in opt.param_groups:
            group["lr"] = rate
        idx = torch.stack([torch.randint(0, n, (batch_size,), generator=gen) for gen in gens]).to(x.device)
        eps = torch.stack([torch.randn(batch_size, d_latent, generator=gen) for gen in gens]).to(x.device)
        loss = -model.elbo(x[rows, idx], onehot[rows, idx], noise=eps).sum()
        loss = loss + sparsity * model.influences().abs().sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if callback is not None and (step + 1) % 100 == 0:
            callback(step + 1, model)
        loop.save(step + 1, extra_state)
    _, model.encoder.slope, model.obs_std = schedule(n_steps, n_steps, lr, obs_std, obs_std_start, warmup, cosine)
    model.decoder.slope = model.encoder.slope
    if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        raise ValueError(f"lr = {lr} is too large for this data: training diverged (a parameter is NaN or inf)")
    return model


@checked(x=Array("m n o"), env=Array("m n", integer=True))
def encode_means(model: EnsembleVAE, x: torch.Tensor, env: torch.Tensor) -> np.ndarray:
    """Posterior means ``(M, n, d)`` of every member on its own observations (what MCC is computed on)."""
    if not torch.is_tensor(x) or not torch.is_tensor(env) or not x.is_floating_point() or env.dtype != torch.long:
        raise TypeError(f"x and env must be float and long tensors, got {type(x).__name__} and {type(env).__name__}")
    n_envs, d_obs = model.loc.shape[1], model.encoder.weights[0].shape[1] - model.loc.shape[1]
    if x.shape[0] != len(model.priors) or x.shape[2] != d_obs:
        raise ValueError(f"x must have shape ({len(model.priors)}, n, {d_obs}) for this model, got {tuple(x.shape)}")
    if int(env.min()) < 0 or int(env.max()) >= n_envs:
        raise ValueError(f"env must hold labels in [0, {n_envs - 1}], got [{int(env.min())}, {int(env.max())}]")
    with torch.no_grad():
        onehot = nn.functional.one_hot(env, model.loc.shape[1]).to(x.dtype)
        return model.encode(x, onehot)[0].cpu().numpy()
