"""Plan of unirap's ``paper`` preset: the three ensembles :func:`train_part` trains (phase 1 ``pretrain``, phase 2
``unified`` and ``separate``), one Adam step of each on the largest chunk of ``cfg.member_chunk`` rows that
:func:`~explorables.unirap.experiment.train_chunks` trains at once (every row when it is 0), with the steps counted
once per chunk, and the test-set predictions."""

from __future__ import annotations

import numpy as np
import torch

from ..core.plan import Part, parameter_count
from ..unirap.experiment import ARRAYS, PARTS, make_model, member_schedule, members_of, phase_steps
from ..unirap.scenes import make_dataset
from ..unirap.training import predict, train

#: scenes generated for the measured steps (a step reads one batch per member; the rest counts as resident)
STEP_SCENES = 64


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    size = cfg.image_size
    scenes = make_dataset(STEP_SCENES, 0, size, "instruction", cfg.max_clutter, cfg.max_tools)
    pool = {k: torch.as_tensor(scenes[k]) for k in ARRAYS}
    per_scene = sum(v[0].numel() * v.element_size() for v in pool.values())
    n_pool = cfg.n_parsing + max(cfg.labelled_grid)
    # train() also holds targets(pool): every pool scene's mask as float32, its box (4) and pose (5) targets
    per_target = 4 * (size * size + 4 + 5)
    resident = per_scene * (n_pool + cfg.n_test - STEP_SCENES) + per_target * (n_pool - STEP_SCENES)
    split = phase_steps(cfg)
    # scenes per member of the two measured steps: at 1 and 2 the peak is the step's batch-independent part
    # (parameters, Adam's state), so the line through them missed the activations' growth (16 GB at 64 scenes
    # against 46 GB through 4 and 8, measured); 4 and 8 are past that point
    few = (1, 2) if dry else (4, 8)
    found = []
    for part in PARTS[2:] if dry else PARTS:  # dry: the smallest ensemble only (the others are the same train())
        members = members_of(cfg, part)
        starts = cfg.phase1_starts if part == "pretrain" else 1
        plans = [member_schedule(cfg, m) for m in members] * starts
        row = split - 1 if part == "pretrain" else split  # one step of the part's phase
        idx = torch.as_tensor(np.stack([i[row : row + 1] for i, _ in plans], 1)) % STEP_SCENES  # onto the scenes here
        weights = torch.as_tensor(np.stack([w[row : row + 1] for _, w in plans], 1))
        arch = tuple(m.arch for m in members) * starts
        rows = len(arch)
        size = min(cfg.member_chunk or rows, rows)  # train_chunks: the largest chunk holds the peak
        chunks = -(-rows // size)
        idx, weights, arch = idx[:, :size], weights[:, :size], arch[:size]
        model = make_model(cfg, ([m.seed for m in members] * starts)[:size], arch)
        lr = cfg.lr if part == "pretrain" else cfg.phase2_lr
        # every chunk runs the part's whole schedule; a smaller last chunk is counted at the largest one's cost
        steps = (split if part == "pretrain" else cfg.n_steps - split) * chunks

        def step_at(b, model=model, idx=idx, weights=weights, lr=lr):
            i, w = idx[:, :, :b].contiguous(), weights[:, :, :b].contiguous()
            return lambda: train(model, pool, i, w, lr=lr)

        found.append(Part(part, f"one Adam step of {model.n_members} members ({part}) on {cfg.batch_size} scenes "
                          f"each ({size} px)", None, step_at=step_at, batch=cfg.batch_size, small_batches=few,
                          steps=steps, parameters=parameter_count(model), resident_bytes=resident,
                          note=f"{len(members)} members x {starts} start(s) = {rows} rows, trained {size} at a time "
                          f"({chunks} chunk(s), steps counted per chunk); the batch indices are folded onto "
                          f"{STEP_SCENES} generated scenes of the preset's shape; measured at {few[0]} and {few[1]} "
                          "scenes per member"))
    unified = make_model(cfg, [m.seed for m in members_of(cfg, "unified")], "unified")

    def predict_at(b):
        images, tokens = pool["images"][:b], pool["tokens"][:b]
        return lambda: predict(unified, images, tokens)

    chunk = 100  # predict()'s chunk: the scenes one forward pass holds
    found.append(Part("test predictions", f"every phase-2 member's predictions on {chunk} test scenes (one chunk)",
                      None, step_at=predict_at, batch=chunk, small_batches=few, steps=2 * -(-cfg.n_test // chunk),
                      parameters=parameter_count(unified),
                      note="the unified ensemble, counted twice (the separate ensemble and the shuffled-instruction "
                      f"control are smaller) over the test scenes in predict()'s chunks; measured at {few[0]} and "
                      f"{few[1]} scenes; scoring (numpy) is not in the plan"))
    paper_scale = ("no: synthetic 96-pixel tabletop scenes with a small CNN + transformer per member (d_model "
                   f"{cfg.d_model}, {cfg.n_layers} layers); the paper's vision-language model is evaluated on "
                   "referring-segmentation, affordance-grounding and pose benchmarks and on video")
    notes = "generated scenes (not the paper's data); each step is a train() call over one row of the schedule"
    if dry:
        notes += "; dry: the separate part and the predictions only"
    return found, paper_scale, notes
