"""Plan of muon's ``paper`` preset: the matrix-sensing runs (CPU) and the character-level language model."""

from __future__ import annotations

import torch
from torch import nn

from ..core.plan import Part, parameter_count
from ..muon.experiment import LM_SCHEDULES, TUNED, _problem, switch_draws
from ..muon.lm import EVAL_WINDOWS, CharTransformer, _optimizers, stdlib_corpus
from ..muon.optimizers import optimize

#: optimiser steps per measured step of the sensing parts (one call of optimize; its setup is paid once per block)
BLOCK = 50
#: characters read to find the corpus's alphabet (the vocabulary of the language model)
VOCAB_CHARS = 400_000


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    problem = _problem(cfg)
    m = cfg.matrix_size
    n_arms = 5 + len(TUNED)
    runs = len(cfg.seeds) * n_arms + 2 * (len(switch_draws(cfg)) - len(cfg.seeds))
    grid_runs = len(cfg.lam_spike_grid) * (1 + len(cfg.switch_grid))
    # one Muon step: the gradient (two m x m products) and five Newton-Schulz iterations (three products each)
    muon_ops = (2 + 5 * 3) * 2 * m**3 * BLOCK
    vocab = len(set(stdlib_corpus(VOCAB_CHARS)))
    batch = 2 if dry else cfg.lm_batch_size
    context = cfg.lm_context_size
    model = CharTransformer(vocab, cfg.lm_d_model, cfg.n_lm_layers, context=context)
    optimizers = _optimizers(model, "muon", cfg.lm_adamw_lr, cfg.lm_muon_lr, muon_stage=True)
    gen = torch.Generator().manual_seed(0)

    def lm_step():
        x = torch.randint(vocab, (batch, context), generator=gen)
        y = torch.randint(vocab, (batch, context), generator=gen)
        loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        for opt in optimizers:
            opt.zero_grad()
        loss.backward()
        for opt in optimizers:
            opt.step()
        return loss

    lm_step()  # once unmeasured: the optimisers' state exists from the first step on
    # the Muon run keeps a deep copy of the model and optimiser state at the hand-over step (train_schedules' keep),
    # alive on the device while it trains on to the end
    kept = sum(v.numel() * v.element_size() for v in model.state_dict().values()) + sum(
        v.numel() * v.element_size() for opt in optimizers for st in opt.state.values() for v in st.values()
        if isinstance(v, torch.Tensor))
    windows = 4 if dry else EVAL_WINDOWS

    @torch.no_grad()
    def eval_step():
        x = torch.randint(vocab, (windows, context), generator=gen)
        y = torch.randint(vocab, (windows, context), generator=gen)
        return nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction="sum")

    held_out = cfg.n_lm_chars - int(0.9 * cfg.n_lm_chars)
    chunks = -(-((held_out - 1) // context) // EVAL_WINDOWS)  # held_out_windows' starts, in EVAL_WINDOWS chunks
    n_schedules = len(LM_SCHEDULES)
    evals = n_schedules * (cfg.n_lm_steps // 20) + n_schedules * (cfg.lm_seeds - 1)  # curve seed: every 20 steps

    def block():
        return optimize(problem, "muon", BLOCK, cfg.muon_lr, cfg.gd_lr)

    found = [
        Part("sensing runs", f"{BLOCK} Muon steps on the {m} x {m} sensing problem (gradient + Newton-Schulz)",
             block, steps=cfg.n_sensing_steps * runs // BLOCK, repeat=3,
             runs_on="cpu", precision="fp64", operations=float(muon_ops),
             note=f"{runs} runs (arms x seeds, switch draws); a block includes building the run once; the "
             "fastest of two timed blocks"),
        Part("switch grid", f"{BLOCK} steps of the switch sweep (Muon, then GD from each hand-over)",
             block, steps=cfg.n_sensing_steps * grid_runs // BLOCK,
             runs_on="cpu", precision="fp64", operations=float(muon_ops),
             note=f"upper bound: {grid_runs} runs' worth of steps (the sweep shares the Muon prefix)"),
        Part("language model", f"one Muon + AdamW step of the {cfg.n_lm_layers}-layer, {cfg.lm_d_model}-wide "
             f"Transformer on {cfg.lm_batch_size} x {context} characters", lm_step,
             steps=cfg.n_lm_steps * len(LM_SCHEDULES) * cfg.lm_seeds, parameters=parameter_count(model),
             resident_bytes=kept,
             note=f"{len(LM_SCHEDULES)} schedules x {cfg.lm_seeds} seeds; random characters of the corpus's "
             f"alphabet ({vocab}); resident: the hand-over copy of the model and optimiser state "
             f"({kept / 1e6:.3g} MB)" + (f"; dry: batch {batch}" if dry else "")),
        Part("held-out loss", f"one chunk of {EVAL_WINDOWS} held-out windows of {context} characters (no gradient)",
             eval_step, steps=evals * chunks, parameters=parameter_count(model), resident_bytes=kept,
             note=f"{chunks} chunks cover the held-out tenth ({held_out:,} characters); the first seed's runs "
             f"evaluate every 20 steps (the curve: train()'s default eval_every), the others at the end only; "
             f"{n_schedules} schedules (an upper bound: muon_then_adamw starts at the hand-over)"
             + (f"; dry: {windows} windows" if dry else "")),
    ]
    paper_scale = ("partly: the paper's river-valley matrix sensing at 200 x 200, and a small character-level "
                   f"language model ({cfg.n_lm_layers} layers, {cfg.lm_d_model} wide) instead of its GPT-2-size runs")
    return found, paper_scale, "the sensing code is numpy on the CPU at every scale: its rows are CPU projections"
