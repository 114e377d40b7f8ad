"""Plan of muon's ``paper`` preset: the matrix-sensing runs (CPU) and the character-level language model."""

from __future__ import annotations

import torch
from torch import nn

from ..core.plan import Part, parameter_count
from ..muon.experiment import LM_SCHEDULES, TUNED, _problem, switch_draws
from ..muon.lm import CharTransformer, _optimizers, stdlib_corpus
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
             note=f"{len(LM_SCHEDULES)} schedules x {cfg.lm_seeds} seeds; random characters of the corpus's "
             f"alphabet ({vocab}); the held-out evaluation is not in the plan" + (f"; dry: batch {batch}" if dry
                                                                                   else "")),
    ]
    paper_scale = ("partly: the paper's river-valley matrix sensing at 200 x 200, and a small character-level "
                   f"language model ({cfg.n_lm_layers} layers, {cfg.lm_d_model} wide) instead of its GPT-2-size runs")
    return found, paper_scale, "the sensing code is numpy on the CPU at every scale: its rows are CPU projections"
