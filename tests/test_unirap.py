"""Chapter 10 (UniRAP): the scene generator, the metrics, the model's inputs, the schedules, the
smoke run's direction, and the verdicts on constructed numbers."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch

from explorables.unirap import claims as C
from explorables.unirap import metrics
from explorables.unirap.experiment import UniRAPConfig, datasets, run
from explorables.unirap.model import UniRAP, decode, mask_statistics, mask_weights
from explorables.unirap.scenes import (
    PARTS,
    make_dataset,
    make_scene,
    parse_instruction,
    resolve,
    sample_instruction,
    tokenize,
)
from explorables.unirap.training import Member, losses, schedule, targets, train

from .smoke_runs import smoke_run

# --- the generator ---------------------------------------------------------------------------


def test_same_seed_same_scene_and_other_seed_other_scene():
    a, b, c = make_scene(7), make_scene(7), make_scene(8)
    assert np.array_equal(a.image, b.image)
    assert [t.name for t in a.tools] == [t.name for t in b.tools]
    assert not np.array_equal(a.image, c.image)


def test_clutter_changes_the_background_not_the_tools():
    a, b = make_scene(5, n_clutter=0), make_scene(5, n_clutter=8)
    assert [t.name for t in a.tools] == [t.name for t in b.tools]
    assert all(np.array_equal(s.mask, t.mask) for s, t in zip(a.tools, b.tools, strict=True))
    assert not np.array_equal(a.image, b.image)


def test_masks_lie_inside_boxes_and_grasps_on_their_part():
    for seed in range(40):
        scene = make_scene(seed, n_clutter=3)
        assert scene.tools
        for tool in scene.tools:
            rows, cols = np.nonzero(tool.mask)
            x0, y0, x1, y1 = tool.box
            assert cols.min() >= x0 and cols.max() < x1 and rows.min() >= y0 and rows.max() < y1
            for part, mask in tool.parts.items():
                assert not (mask & ~tool.mask).any()  # parts are inside the tool
                x, y, theta, width = tool.grasps[part]
                assert mask[int(y), int(x)], f"grasp of the {tool.name}'s {part} is off the part"
                assert 0 <= theta < math.pi and width > 0
        for i, s in enumerate(scene.tools):  # tools do not overlap
            for t in scene.tools[i + 1:]:
                assert not (s.mask & t.mask).any()


def test_dataset_targets_match_the_instruction_and_lie_in_the_box():
    data = make_dataset(60, seed=3)
    for i in range(60):
        mask = data["masks"][i].astype(bool)
        rows, cols = np.nonzero(mask)
        x0, y0, x1, y1 = data["boxes"][i]
        assert mask.any() and cols.min() >= x0 and cols.max() < x1 and rows.min() >= y0 and rows.max() < y1
        x, y = data["grasps"][i][:2]
        assert mask[int(y), int(x)]


def test_instructions_refer_to_objects_present():
    rng = np.random.default_rng(0)
    for seed in range(60):
        scene = make_scene(seed)
        text = sample_instruction(rng, scene)
        tool, part = resolve(scene, text)
        assert tool in scene.tools and part in PARTS[tool.name]


def test_instruction_parsing():
    assert parse_instruction("grasp the mug by its handle") == ("mug", "handle")
    assert parse_instruction("something to cut with") == ("knife", "handle")
    assert parse_instruction("touch the head of the hammer") == ("hammer", "head")
    assert parse_instruction("pick up the spatula") == ("spatula", "handle")


def test_absent_object_or_part_is_a_clear_error():
    scene = next(s for s in (make_scene(k) for k in range(100)) if "knife" not in [t.name for t in s.tools])
    with pytest.raises(ValueError, match="no knife"):
        resolve(scene, "something to cut with")
    with pytest.raises(ValueError, match=r"text asks for a part a .* does not have: 'blade'"):
        parse_instruction("grasp the mug by its blade")
    with pytest.raises(ValueError, match="vocabulary"):
        tokenize("grasp the teapot")
    with pytest.raises(ValueError, match="names no object"):
        parse_instruction("grasp the handle")


# --- the metrics, on hand-made cases -----------------------------------------------------------


def test_box_and_mask_iou_by_hand():
    assert metrics.box_iou(np.array([0, 0, 2, 2]), np.array([0, 0, 2, 2])) == pytest.approx(1.0)
    assert metrics.box_iou(np.array([0, 0, 2, 2]), np.array([1, 0, 3, 2])) == pytest.approx(1 / 3)
    assert metrics.box_iou(np.array([0, 0, 1, 1]), np.array([2, 2, 3, 3])) == 0.0
    a = np.zeros((4, 4), bool)
    b = np.zeros((4, 4), bool)
    a[:2], b[1:3] = True, True
    assert metrics.mask_iou(a, b) == pytest.approx(4 / 12)


def test_rectangle_iou_by_hand():
    r = metrics.grasp_rectangle(np.array([5.0, 5.0, 0.0, 4.0]), jaw=2.0)
    assert metrics.polygon_iou(r, r) == pytest.approx(1.0)
    shifted = metrics.grasp_rectangle(np.array([7.0, 5.0, 0.0, 4.0]), jaw=2.0)  # half the opening along x
    assert metrics.polygon_iou(r, shifted) == pytest.approx(1 / 3)
    square = metrics.grasp_rectangle(np.array([0.0, 0.0, 0.3, 2.0]), jaw=2.0)
    turned = metrics.grasp_rectangle(np.array([0.0, 0.0, 0.3 + math.pi / 2, 2.0]), jaw=2.0)
    assert metrics.polygon_iou(square, turned) == pytest.approx(1.0)
    far = metrics.grasp_rectangle(np.array([50.0, 5.0, 0.0, 4.0]), jaw=2.0)
    assert metrics.polygon_iou(r, far) == 0.0


def test_rectangle_iou_matches_a_fine_raster_and_the_corners_match_grasp_rectangle():
    rng = np.random.default_rng(5)
    ys, xs = np.mgrid[0:400, 0:400] / 20 + 1 / 40  # a 0.05-pixel grid over [0, 20)^2

    def inside(r):  # convex, counter-clockwise: left of every edge
        e = np.roll(r, -1, 0) - r
        return np.all([(e[i, 0] * (ys - r[i, 1]) - e[i, 1] * (xs - r[i, 0])) >= 0 for i in range(4)], 0)

    for _ in range(12):
        g = np.array([rng.uniform(7, 13), rng.uniform(7, 13), rng.uniform(0, np.pi), rng.uniform(2, 6)])
        h = g + rng.normal(0, 1, 4) * [1.5, 1.5, 0.5, 1]
        h[3] = abs(h[3]) + 0.5
        r, q = metrics.grasp_rectangle(g, 3.0), metrics.grasp_rectangle(h, 3.0)
        assert np.array_equal(np.array(metrics._corners(g, 3.0)), r)
        a, b = inside(r), inside(q)
        assert metrics.polygon_iou(r, q) == pytest.approx((a & b).sum() / (a | b).sum(), abs=0.02)
        assert metrics.polygon_iou(r, q) == pytest.approx(metrics.polygon_iou(q, r), abs=1e-12)


def test_grasp_success_by_hand():
    true = np.array([10.0, 10.0, math.radians(1), 5.0])
    assert metrics.grasp_success(true, true, 4.0).all()
    assert metrics.grasp_success(np.array([10.0, 10.0, math.radians(179), 5.0]), true, 4.0).all()  # modulo 180
    assert not metrics.grasp_success(np.array([10.0, 10.0, math.radians(41), 5.0]), true, 4.0).any()  # 40 degrees
    assert not metrics.grasp_success(np.array([20.0, 10.0, math.radians(1), 5.0]), true, 4.0).any()  # IoU 0
    assert metrics.grasp_success(np.array([10.5, 10.0, math.radians(20), 6.0]), true, 4.0).all()


# --- the model and the schedules ----------------------------------------------------------------


def test_forward_takes_only_image_and_instruction():
    """The only other input is the positive control's ``pose_mask`` (off by default); training never passes it, so
    no true mask reaches a trained prediction except in that control."""
    from explorables.unirap import training

    params = inspect.signature(UniRAP.forward).parameters
    assert list(params) == ["self", "images", "tokens", "pose_mask"] and params["pose_mask"].default is None
    assert "pose_mask" not in inspect.getsource(training.train)


@pytest.mark.parametrize("arch", ["unified", "pose_direct", "separate"])
def test_ensemble_members_are_independent(arch):
    torch.manual_seed(0)
    x, tok = torch.rand(2, 3, 3, 16, 16), torch.randint(1, 10, (2, 3, 8))
    both = UniRAP([4, 9], arch=arch, image_size=16, width=4, d_model=8)
    alone = UniRAP([4], arch=arch, image_size=16, width=4, d_model=8)
    with torch.no_grad():
        a, b = both(x, tok), alone(x[:1], tok[:1])
    for k in a:
        torch.testing.assert_close(a[k][:1], b[k], rtol=1e-4, atol=1e-5)


def test_the_untrained_mask_starts_near_the_parsing_scenes_foreground_fraction():
    """The mask head's bias starts at the prior (the fraction of pixels a tool covers where the mask is first
    trained), not at one half: an untrained model calls most pixels background."""
    data = make_dataset(200, 5, 32, "parsing", 0, 2)
    fraction = float(data["masks"].mean())
    model = UniRAP([0, 1, 2])
    images = torch.as_tensor(data["images"][:16])[None].expand(3, -1, -1, -1, -1)
    tokens = torch.as_tensor(data["tokens"][:16])[None].expand(3, -1, -1)
    with torch.no_grad():
        prob = torch.sigmoid(model(images, tokens)["mask_logits"])
    assert torch.allclose(torch.sigmoid(model.mask_bias), torch.tensor(fraction), atol=0.02)
    assert fraction / 2 < float(prob.mean()) < 2 * fraction  # near the prior, far from one half


def test_a_pixel_channel_that_is_negative_everywhere_still_learns():
    """The pixel features' last activation is leaky: a channel pushed below zero at every pixel (a ReLU's dead
    channel) still passes a gradient to its weights, and still varies across the pixels."""
    torch.manual_seed(2)
    x, tok = torch.rand(2, 3, 3, 16, 16), torch.randint(1, 10, (2, 3, 8))
    model = UniRAP([5, 6], image_size=16, width=4, d_model=8)
    with torch.no_grad():
        model.pix_mid.bias[:, 0] = -1e3  # channel 0 of both members: negative at every pixel
        _, pixels, _, _ = model.encode(x, tok)
    assert (pixels[:, :, 0] < 0).all()
    assert (pixels[:, :, 0].std(-1) > 0).all()  # not a constant
    model(x, tok)["mask_logits"].square().sum().backward()
    assert (model.pix_mid.bias.grad[:, 0].abs() > 0).all()


def test_mask_statistics_of_a_uniform_and_a_one_pixel_mask():
    features = torch.arange(2 * 16, dtype=torch.float32).reshape(2, 16)  # (D, h*w) on a 4x4 grid
    pooled, geometry = mask_statistics(torch.ones(4, 4), features)
    torch.testing.assert_close(geometry[:2], torch.tensor([0.5, 0.5]), rtol=0, atol=1e-4)  # the centroid
    torch.testing.assert_close(pooled, features.mean(-1) * 16 / (16 + 1e-3), rtol=1e-4, atol=1e-4)
    one = torch.zeros(4, 4)
    one[1, 2] = 1.0
    _, geometry = mask_statistics(one, features)
    torch.testing.assert_close(geometry[:2], torch.tensor([2.5 / 4, 1.5 / 4]), rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(geometry[2:], torch.zeros(3), rtol=0, atol=1e-3)  # no spread


def test_train_lowers_the_loss_and_decode_gives_pixel_predictions():
    data = make_dataset(24, seed=3, size=16)
    pool = {k: torch.as_tensor(data[k]) for k in ("images", "tokens", "boxes", "masks", "grasps")}
    members = [Member("joint", 24, 0), Member("joint", 24, 1)]
    # pool index 0 plays the parsing scene, 1..23 the instruction scenes
    rngs = [np.random.default_rng(k) for k in range(len(members))]
    plans = [schedule(m, 40, 6, 1, np.arange(23), (0.0, 0.0), rng) for m, rng in zip(members, rngs, strict=True)]
    idx = torch.as_tensor(np.stack([p[0] for p in plans], 1))
    weights = torch.as_tensor(np.stack([p[1] for p in plans], 1))
    torch.manual_seed(0)
    model = UniRAP([0, 1], image_size=16, width=4, d_model=8)
    curve = train(model, pool, idx, weights, lr=0.01)
    assert curve.shape == (40, 2) and np.all(np.isfinite(curve))  # each member's loss per step
    assert np.all(curve[-10:].mean(0) < curve[:10].mean(0))  # Adam on the training batches lowers their loss
    with torch.no_grad():
        out = model(pool["images"][:5].expand(2, -1, -1, -1, -1), pool["tokens"][:5].expand(2, -1, -1))
    per = losses(out, {k: v[:5].expand(2, *v[:5].shape) for k, v in targets(pool, 16).items()})
    assert per.shape == (2, 5, 3) and bool((per >= 0).all())
    pred = decode(out, 16)
    assert pred["boxes"].shape == (2, 5, 4) and pred["grasps"].shape == (2, 5, 4)
    assert pred["masks"].shape == (2, 5, 16, 16)
    assert pred["masks"].dtype == bool and np.all((pred["grasps"][..., 2] >= 0) & (pred["grasps"][..., 2] < math.pi))


def test_schedules_follow_their_regime():
    rng = np.random.default_rng(0)
    labelled = np.arange(5)
    n_parsing = 50
    idx, w = schedule(Member("curriculum", 5, 0), 40, 6, n_parsing, labelled, (0.25, 0.25), rng)
    assert (idx[:20] < n_parsing).all() and (idx[20:] >= n_parsing).all() and (idx[20:] < n_parsing + 5).all()
    assert (w[:10] == (1, 0, 0)).all() and (w[10:20] == (1, 1, 0)).all() and (w[20:] == 1).all()
    idx, w = schedule(Member("joint", 5, 0), 40, 6, n_parsing, labelled, (0.25, 0.25), rng)
    assert (idx >= n_parsing).all() and (w == 1).all()
    idx, w = schedule(Member("joint_parsing", 5, 0), 40, 6, n_parsing, labelled, (0.25, 0.25), rng)
    assert (idx[:, :3] < n_parsing).all() and (idx[:, 3:] >= n_parsing).all() and (w[:, :3, 2] == 0).all()


def test_test_scenes_are_not_training_scenes():
    cfg = UniRAPConfig.preset("smoke")
    parsing, pool, test = datasets(cfg)
    train_images = np.concatenate([parsing["images"], pool["images"]]).reshape(-1, 3 * cfg.image_size ** 2)
    seen = {row.tobytes() for row in train_images}
    assert not any(row.tobytes() in seen for row in test["images"].reshape(len(test["images"]), -1))


def test_test_labels_never_reach_the_model(monkeypatch):
    """Scrambling the test scenes' boxes, masks and grasps changes the scores but not a single prediction of
    any part (both phases run on the scrambled data)."""
    from dataclasses import replace

    from explorables.unirap import experiment

    cfg = replace(UniRAPConfig.preset("smoke"), n_steps=8, n_test=12, n_parsing=24, labelled_grid=(8,), n_labelled=8)
    parsing, pool, test = datasets(cfg)
    rng = np.random.default_rng(0)
    scrambled = dict(test, boxes=test["boxes"][rng.permutation(12)], masks=1 - test["masks"],
                     grasps=test["grasps"][rng.permutation(12)])
    clean = run(cfg).curves
    monkeypatch.setattr(experiment, "datasets", lambda c: (parsing, pool, scrambled))
    dirty = run(cfg).curves
    for part in ("unified", "separate"):
        for regime, pred in clean[part]["shown"].items():
            for key, value in pred.items():
                assert np.array_equal(value, dirty[part]["shown"][regime][key]), (part, regime, key)


def test_every_model_gets_the_same_steps_and_forks_start_where_phase_one_left():
    from dataclasses import replace

    from explorables.unirap import experiment as X

    cfg = replace(UniRAPConfig.preset("smoke"), labelled_grid=(8, 16), n_labelled=16, seeds=(0, 1), n_steps=20,
                  stage_fractions=(0.2, 0.3))
    assert X.phase_steps(cfg) == 10
    first, second = X.members_of(cfg, "pretrain"), X.members_of(cfg, "unified")
    rows = X._source_rows(cfg, "unified")
    for m, r in zip(second, rows, strict=True):
        src = first[r]
        assert src.seed == m.seed  # a member continues a phase-1 member of its own seed ...
        if m.regime == "curriculum":  # ... the curriculum's shared stages 1-2 ...
            assert src.regime == "curriculum"
        else:  # ... or the control (or the no-parsing arm) itself, on the same labelled scenes
            assert (src.regime, src.n_labelled) == (m.regime, m.n_labelled)
    assert {m.regime for m in second} == {"curriculum", "joint_parsing", "joint"}
    # phase 1 of the curriculum is parsing scenes only; phase 2 is its stage 3 on instruction scenes
    idx, w = X.member_schedule(cfg, second[0])
    assert (idx[:10] < cfg.n_parsing).all() and (idx[10:] >= cfg.n_parsing).all() and (w[10:] == 1).all()
    with pytest.raises(ValueError, match="stage_fractions"):
        replace(UniRAPConfig.preset("smoke"), n_steps=10, stage_fractions=(0.0, 0.01)).validated()


def test_the_worker_process_gives_the_serial_numbers():
    """With 2 processes the worker trains the second chunk of phase 1 and of phase 2 and the separate arm: the
    numbers are those of one process, bit for bit (the same chunks, the same computations)."""
    from dataclasses import replace

    from explorables.unirap import experiment as X

    cfg = replace(UniRAPConfig.preset("smoke"), n_steps=12, n_test=12, n_parsing=24, labelled_grid=(8,),
                  n_labelled=8, seeds=(0, 1))
    pre, uni = len(X.members_of(cfg, "pretrain")) * cfg.phase1_starts, len(X.members_of(cfg, "unified"))
    assert len(X.chunk_rows(cfg, pre)) == len(X.chunk_rows(cfg, uni)) == 2  # the worker trains a chunk of each
    serial, parallel = run(cfg.replace(processes=1)), run(cfg.replace(processes=2))
    drop = ("timings",)
    assert {k: v for k, v in serial.summary.items() if k not in drop} == {
        k: v for k, v in parallel.summary.items() if k not in drop}
    assert list(serial.summary) == list(parallel.summary)
    for key, value in serial.curves["separate"]["shown"]["separate"].items():
        assert np.array_equal(value, parallel.curves["separate"]["shown"]["separate"][key]), key
    assert serial.curves["pretrain"]["chosen_start"] == parallel.curves["pretrain"]["chosen_start"]
    for part in ("pretrain", "unified"):
        np.testing.assert_array_equal(serial.curves[part]["loss"], parallel.curves[part]["loss"])
    for key, value in serial.curves["pretrain"]["state"].items():
        assert torch.equal(value, parallel.curves["pretrain"]["state"][key]), key
    for name, state in serial.curves["unified"]["lab_models"].items():
        for key, value in state.items():
            assert torch.equal(value, parallel.curves["unified"]["lab_models"][name][key]), (name, key)


def test_chunks_cover_the_rows_in_even_chunks():
    """``member_chunk`` 0: two chunks of an even number of rows from SPLIT_ROWS rows on (one below); otherwise
    ``member_chunk`` rows at a time; the chunks never depend on the process count."""
    from explorables.unirap import experiment as X

    book = UniRAPConfig.preset("book")
    for n in range(1, 60):
        chunks = X.chunk_rows(book, n)
        assert [i for c in chunks for i in range(c.start, c.stop)] == list(range(n))
        assert len(chunks) == (1 if n < X.SPLIT_ROWS else 2)
        if len(chunks) == 2:
            assert all(c.start % 2 == 0 and c.stop - c.start > 0 for c in chunks)
            assert chunks[0].stop % 2 == 0 and abs(chunks[0].stop - (n - chunks[0].stop)) <= 3  # halves
    assert X.chunk_rows(book.replace(member_chunk=3), 7) == [slice(0, 3), slice(3, 6), slice(6, 7)]
    assert X.chunk_rows(book.replace(processes=1), 38) == X.chunk_rows(book.replace(processes=2), 38)
    assert X.chunk_rows(book, 38) == [slice(0, 20), slice(20, 38)]
    # unified: this process takes more (the worker then trains separate); 16/12 is exact too (unirap_parallel.md)
    assert X.chunk_rows(book, 28, X.UNIFIED_SHARE) == [slice(0, 16), slice(16, 28)]
    for n in range(X.SPLIT_ROWS, 60):
        first = X.chunk_rows(book, n, X.UNIFIED_SHARE)[0].stop
        assert first % 2 == 0 and 2 <= n - first <= n // 2


def test_a_fork_starts_as_its_source_and_separate_decoders_as_the_shared_one():
    from explorables.unirap.experiment import fork

    torch.manual_seed(0)
    x, tok = torch.rand(1, 2, 3, 16, 16), torch.randint(1, 10, (1, 2, 8))
    source = UniRAP([3, 5], image_size=16, width=4, d_model=8)
    with torch.no_grad():  # make the pose map differ from the mask, so the check below means something
        source.pose_embed.weight.mul_(3.0)
        ref = source(x.expand(2, -1, -1, -1, -1), tok.expand(2, -1, -1))
    for arch in ("unified", "pose_direct", "separate"):
        model = UniRAP([5], arch=arch, image_size=16, width=4, d_model=8)
        model.load_state_dict(fork(source.state_dict(), [1], arch))
        with torch.no_grad():
            out = model(x, tok)
        torch.testing.assert_close(out["box"], ref["box"][1:])  # same decoder, same box and mask
        torch.testing.assert_close(out["mask_logits"], ref["mask_logits"][1:])
        same_pose = torch.allclose(out["pose"], ref["pose"][1:])
        # at the fork the separate pose decoder is the shared one (same mask read); pose_direct reads its own map
        assert same_pose == (arch != "pose_direct")


def test_in_no_arm_does_the_pose_loss_train_the_mask_head():
    """Stop-gradient, symmetric across the arms: in "unified" (and its members of a mixed ensemble) and in
    "separate" the pose loss reaches neither the mask head's weights nor its bias; it still reaches the token(s)
    the pose reads (q, or the separate arm's q_pose) and the pixel features F(p)."""
    torch.manual_seed(1)
    x, tok = torch.rand(2, 3, 3, 16, 16), torch.randint(1, 10, (2, 3, 8))

    def grads(arch):
        model = UniRAP([3, 4], arch=arch, image_size=16, width=4, d_model=8)
        out = model(x, tok)
        out["pose"].square().sum().backward()
        mask_params = [model.mask_embed.weight, model.mask_embed.bias, model.mask_bias]
        reached = [p.grad is not None and bool(p.grad.abs().sum() > 0) for p in mask_params]
        return model, reached

    for arch in ("unified", ("unified", "pose_direct"), "separate"):
        model, reached = grads(arch)
        assert not any(reached), arch
        assert model.pix_low.weight.grad.abs().sum() > 0  # the pixel features still learn from the pose
        # the token the pose reads: the shared decoder's, or the separate arm's pose decoder (every third member)
        aff = model.decoder.aff.grad[2::3] if arch == "separate" else model.decoder.aff.grad
        assert (aff.abs().sum(1) > 0).all()
    # the mask loss still reaches the mask head, in both arms
    for arch in ("unified", "separate"):
        model = UniRAP([3, 4], arch=arch, image_size=16, width=4, d_model=8)
        model(x, tok)["mask_logits"].sum().backward()
        assert (model.mask_embed.weight.grad.flatten(1).abs().sum(1) > 0).all()
        assert (model.mask_bias.grad.abs().sum(1) > 0).all()


def test_study_directions_counts_the_base_seeds():
    from explorables.unirap.claims import study_directions

    def row(claim, measured):
        return {"claim": claim, "measured": measured}

    study = {"rows": [
        row("one unified decoder ...", ["unified box 0.8 ± 0.1, mIoU 0.7 ± 0.1, grasp 0.60 ± 0.1; separate box 0.8 ± "
                                        "0.1, mIoU 0.7 ± 0.1, grasp 0.50 ± 0.1; unified minus separate box +0.00 "
                                        f"[-0.1, +0.1], mIoU +0.00 [-0.1, +0.1], grasp {g} [-0.1, +0.3]"
                                        for g in ("+0.10", "-0.05")]),
        row("the pose is better decoded ...", ["grasp success from the mask 0.60 ± 0.1, from its own map 0.70 ± 0.1; "
                                               "gain -0.10 [-0.3, +0.1]"] * 2),
        row("the staged curriculum ...", ["lead on the mean of the three metrics: n = 16 -0.10 [-0.3, +0.1]",
                                        "lead on the mean of the three metrics: n = 16 +0.10 [-0.3, +0.1]"]),
        row("curriculum transfer ...", [f"curriculum box 0.4 ± 0.1, mIoU 0.3 ± 0.1, grasp 0.2 ± 0.1; no parsing "
                                        f"data box 0.2 ± 0.1, mIoU 0.1 ± 0.1, grasp 0.1 ± 0.1; lead on the mean of "
                                        f"the three metrics: n = 16 {g} [-0.1, +0.3]" for g in ("+0.10", "+0.20")]),
    ]}
    text = study_directions(study)
    assert "ahead of separate heads on 1 of 2" in text  # unified: one lead, one loss
    assert "(which read their own predicted mask) on 2 of 2" in text  # own map 0.70 above separate 0.50 on both
    assert "trails the own-map ablation on 2 of 2" in text
    assert "n = 16" in text and "control on 1 of 2" in text
    assert "ahead of the same model without parsing data on 2 of 2" in text
    with pytest.raises(ValueError, match="lacks the row"):
        study_directions({"rows": study["rows"][:2]})


def test_initial_weights_depend_on_base_and_member_seed_not_on_regime():
    from explorables.unirap.experiment import make_model

    cfg0, cfg1 = UniRAPConfig.preset("smoke"), UniRAPConfig.preset("smoke", seed=1)
    a = make_model(cfg0, [0, 1], ("unified", "pose_direct")).state_dict()
    again = make_model(cfg0, [0], "unified").state_dict()
    other_base = make_model(cfg1, [0], "unified").state_dict()
    w = "conv1.weight"
    torch.testing.assert_close(a[w][0], again[w][0])  # same base and member seed: same start, whatever the regime
    assert not torch.equal(a[w][0], a[w][1])  # another member seed
    assert not torch.equal(a[w][0], other_base[w][0])  # another base seed: the base seeds do not share weights


def test_phase_one_goes_on_from_each_members_start_with_the_lowest_late_training_loss(monkeypatch):
    """Best of ``phase1_starts``: start 0 is the one-start run's initialisation; each phase-1 member (curriculum and
    control) goes on from the start whose own training loss over phase 1's last steps is lowest, and that start's
    weights are what phase 2 receives."""
    from dataclasses import replace

    from explorables.core.checkpoint import Checkpointer
    from explorables.unirap import experiment as X

    assert X.weight_seed(3, 1) == X.weight_seed(3, 1, 0) != X.weight_seed(3, 1, 1)
    cfg = replace(UniRAPConfig.preset("smoke"), n_steps=20, n_test=12, n_parsing=24, labelled_grid=(8, 16),
                  n_labelled=16, seeds=(0, 1), phase1_starts=2).validated()
    seen = []
    real = X.train
    monkeypatch.setattr(X, "train", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
    monkeypatch.setattr(X, "START_WINDOW", 2)  # shorter than phase 1, so the window's slice is what is tested
    _, two = X.train_part(cfg, "pretrain", Checkpointer(None), False)
    members = X.members_of(cfg, "pretrain")
    n = len(members)
    curve = np.concatenate(seen, 1)  # the ensemble's chunks (X.chunk_rows), in order
    assert {m.regime for m in members} == {"curriculum", "joint_parsing", "joint"} and curve.shape[1] == 2 * n
    assert len(curve) > X.START_WINDOW
    late = curve[-X.START_WINDOW:].mean(0).reshape(2, n)
    assert two["chosen_start"] == late.argmin(0).tolist()
    _, one = X.train_part(cfg.replace(phase1_starts=1), "pretrain", Checkpointer(None), False)
    w = "conv1.weight"
    for i, k in enumerate(two["chosen_start"]):
        assert two["state"][w][i].shape == one["state"][w][i].shape
        if k == 0:  # the one-start run's member, trained on the same batches
            torch.testing.assert_close(two["state"][w][i], one["state"][w][i])
        else:
            assert not torch.equal(two["state"][w][i], one["state"][w][i])
    with pytest.raises(ValueError, match="phase1_starts"):
        UniRAPConfig.preset("smoke", phase1_starts=0).validated()


def test_the_book_gives_phase_two_three_quarters_of_the_steps_and_every_model_the_same_steps():
    """Rule 7 (``benchmarks/unirap_rule7.md``): the book's stage 1 is 40 of 400 steps, stage 2 60, phase 2 300; the
    paper preset keeps its (0.15, 0.15); the control and the curriculum share the phase boundary."""
    from explorables.unirap import experiment as X
    from explorables.unirap.training import Member as M

    book = UniRAPConfig.preset("book")
    assert book.stage_fractions == (0.10, 0.15) and X.phase_steps(book) == 100
    assert UniRAPConfig.preset("paper").stage_fractions == (0.15, 0.15)
    idx, w = X.member_schedule(book, M("curriculum", book.n_labelled, 0))
    assert len(idx) == book.n_steps and (w[:40, :, 1] == 0).all() and (w[40:100, :, 1] == 1).all()
    assert (idx[:100] < book.n_parsing).all() and (idx[100:] >= book.n_parsing).all()
    idx, _ = X.member_schedule(book, M("joint_parsing", min(book.labelled_grid), 0))
    assert len(idx) == book.n_steps


# --- the smoke run ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smoke():
    return smoke_run("unirap")


def test_smoke_run_unified_model_beats_chance_on_all_three_heads(smoke):
    chance = smoke.summary["unified"]["chance"]
    unified = C.scores(smoke, "curriculum")
    for key in C.METRICS:
        assert unified[key]["mean"] > chance[key], key
    rows = C.claims(smoke)
    assert [r.kind for r in rows].count("claim") == 4 and [r.kind for r in rows].count("check") == 2
    gates = {r.name for r in rows if r.kind == "gate"}
    assert gates == {"competence", "instruction", "true mask", "labels", "parsing"}
    assert all(set(r.gates) <= gates for r in rows)


def test_smoke_run_reads_the_instruction(smoke):
    """The control: the same models given another test scene's instruction score lower on average."""
    shuffled = C.scores(smoke, "shuffled")
    assert C.composite(shuffled).mean() < C.composite(C.scores(smoke, "curriculum")).mean()
    assert "another scene's instruction" in C.regime_table(smoke)


def test_smoke_run_true_mask_control_scores_the_curriculum_models(smoke):
    """The positive control scores the same models as the curriculum row; only the grasp can move (box and mask
    come from heads that do not read ``pose_mask``)."""
    fed, cur = C.scores(smoke, "true_mask"), C.scores(smoke, "curriculum")
    assert fed["box_accuracy"]["per_seed"] == cur["box_accuracy"]["per_seed"]
    assert fed["mask_iou"]["per_seed"] == cur["mask_iou"]["per_seed"]


def test_reference_checks_hold_on_the_smoke_run(smoke):
    ref = smoke.summary["reference"]
    assert ref["truth"] == pytest.approx(dict.fromkeys(C.METRICS, 1.0)) and ref["repeated_test_scenes"] == 0
    assert ref["mask_oracle_grasp"] > 0.8  # the true mask's geometry holds most grasps


def test_grasps_from_masks_recover_a_bar_across_its_narrow_axis():
    mask = np.zeros((1, 16, 16), bool)
    mask[0, 7:10, 2:14] = True  # a horizontal bar, 3 px high: close vertically
    x, y, theta, width = metrics.grasps_from_masks(mask)[0]
    assert (x, y) == pytest.approx((8.0, 8.5)) and theta == pytest.approx(math.pi / 2) and width == pytest.approx(5)
    assert metrics.grasps_from_masks(np.zeros((2, 4, 4))).shape == (2, 4)  # empty masks do not fail


# --- verdicts on constructed numbers (synthetic per-seed values through every branch) -------------


def test_criteria_reach_every_branch():
    from explorables.core.verdicts import drive

    assert drive(C.CRITERIA) == []
    assert {c.kind for c in C.CRITERIA} == {"check", "gate", "claim"}


def test_gates():
    good = {"mask_iou": [0.7, 0.65, 0.8], "grasp_success": [0.55, 0.6, 0.9]}
    assert C.competence_gate(good).startswith("pass")
    one_bad_seed = dict(good, grasp_success=[0.55, 0.45, 0.9])  # every seed must clear the bar
    assert C.competence_gate(one_bad_seed).startswith("fail") and "grasp" in C.competence_gate(one_bad_seed)
    assert C.instruction_gate([0.10, 0.12, 0.11]).startswith("pass")
    assert C.instruction_gate([0.02, 0.12, 0.20]).startswith("fail")  # mean above, interval not
    assert C.true_mask_gate([0.8, 0.85, 0.82]).startswith("pass")
    assert C.true_mask_gate([0.8, 0.85, 0.6]).startswith("fail")  # every seed must reach the bar
    assert C.labels_gate([0.1, 0.09, 0.11]).startswith("pass") and C.labels_gate([0.0, 0.01, 0.02]).startswith("fail")
    assert C.parsing_gate([0.1, 0.09, 0.11]).startswith("pass")
    assert C.parsing_gate([0.02, 0.12, 0.20]).startswith("fail")  # mean above 0.05, interval not


def _diffs(box, miou, grasp):
    return {"box_accuracy": box, "mask_iou": miou, "grasp_success": grasp}


def test_unified_verdict_is_decided_per_metric_on_the_interval():
    level, behind, noisy = [0.0, 0.005, -0.005], [-0.1, -0.12, -0.09], [-0.3, 0.0, 0.3]
    assert C.unified_verdict(_diffs(level, level, level)).startswith("yes")  # not worse within 0.02
    assert C.unified_verdict(_diffs(level, behind, level)).startswith("partly")
    assert C.unified_verdict(_diffs(behind, behind, behind)).startswith("no")  # behind on every metric: no
    assert C.unified_verdict(_diffs(noisy, noisy, behind)).startswith("unclear")


def test_gain_verdicts():
    verdict = C.pose_verdict
    assert verdict([0.10, 0.12, 0.11]).startswith("yes")
    assert verdict([0.0, 0.005, -0.005]).startswith("no")
    assert verdict([-0.05, 0.01, 0.20]).startswith("unclear")  # the interval straddles 0.02
    assert verdict([0.03, 0.04, 0.03], margin=0.05).startswith("no")


def test_efficiency_verdict_is_decided_per_labelled_count():
    ahead, level, noisy = [0.10, 0.12, 0.11], [0.0, 0.005, -0.005], [-0.05, 0.01, 0.20]
    assert C.efficiency_verdict({"n = 16": ahead, "n = 64": ahead}).startswith("yes")
    text = C.efficiency_verdict({"n = 16": ahead, "n = 64": level})
    assert text.startswith("partly") and "yes: n = 16" in text and "no: n = 64" in text
    assert C.efficiency_verdict({"n = 16": level, "n = 64": level}).startswith("no")
    assert C.efficiency_verdict({"n = 16": noisy, "n = 64": level}).startswith("unclear")


def test_transfer_verdict_is_decided_per_labelled_count_and_never_rewards_a_straddle():
    ahead, level, noisy = [0.10, 0.12, 0.11], [0.0, 0.005, -0.005], [-0.05, 0.01, 0.20]
    assert C.transfer_verdict({"n = 16": ahead}).startswith("yes")
    assert C.transfer_verdict({"n = 16": level}).startswith("no")
    assert C.transfer_verdict({"n = 16": noisy}).startswith("unclear")
    text = C.transfer_verdict({"n = 16": ahead, "n = 64": level})
    assert text.startswith("partly") and "without parsing data" in text


def test_the_no_parsing_arm_never_draws_a_parsing_scene():
    """Property, over many random schedules: a ``joint`` member's batches index only its instruction-labelled scenes
    (pool rows ``n_parsing + labelled``), at every step and stage, so no parsing loss term ever exists for it; the
    control, on the same arguments, does draw parsing scenes (the property is not vacuous)."""
    gen = np.random.default_rng(2026)
    for _ in range(200):
        n_steps, batch = int(gen.integers(3, 60)), int(gen.integers(2, 12))
        n_parsing, n_pool = int(gen.integers(1, 80)), int(gen.integers(1, 40))
        labelled = gen.permutation(n_pool)[: int(gen.integers(1, n_pool + 1))]
        f1 = float(gen.uniform(0, 0.5))
        fractions = (f1, float(gen.uniform(0, 1 - f1)))
        seed = int(gen.integers(0, 2**31))
        idx, w = schedule(Member("joint", len(labelled), 0), n_steps, batch, n_parsing, labelled, fractions,
                          np.random.default_rng(seed))
        assert np.isin(idx, n_parsing + labelled).all() and (w == 1).all()
        idx, _ = schedule(Member("joint_parsing", len(labelled), 0), n_steps, batch, n_parsing, labelled, fractions,
                          np.random.default_rng(seed))
        assert (idx < n_parsing).any()


def test_no_parsing_gradient_ever_reaches_the_no_parsing_arm(monkeypatch):
    """Replacing every parsing scene (image, query, box, mask) by other values leaves the no-parsing members' trained
    weights bit-identical through both phases, and changes those of the curriculum and of the control."""
    from dataclasses import replace

    from explorables.core.checkpoint import Checkpointer
    from explorables.unirap import experiment as X

    cfg = replace(UniRAPConfig.preset("smoke"), n_steps=10, n_test=12, n_parsing=24, labelled_grid=(8, 16),
                  n_labelled=16, seeds=(0, 1), stage_fractions=(0.2, 0.2)).validated()
    parsing, pool, test = X.datasets(cfg)
    other = dict(make_dataset(24, 777, cfg.image_size, "parsing", 0, 3))  # other scenes, queries, boxes, masks
    other["images"] = 1 - other["images"]
    assert all(not np.array_equal(other[k], parsing[k]) for k in X.ARRAYS if k != "grasps")

    def states(data):
        monkeypatch.setattr(X, "datasets", lambda c: data)
        X.training_pool.cache_clear()  # the training scenes are cached per config: drop the other data's
        _, first = X.train_part(cfg, "pretrain", Checkpointer(None), False)
        model_states = {}
        real = X.train_chunks

        def spy(c, model, *a, **k):  # the whole ensemble once its chunks are trained
            out = real(c, model, *a, **k)
            model_states.update({kk: v.detach().clone() for kk, v in model.state_dict().items()})
            return out

        monkeypatch.setattr(X, "train_chunks", spy)
        X.train_part(cfg, "unified", Checkpointer(None), False, start=first["state"])
        monkeypatch.setattr(X, "train_chunks", real)
        X.training_pool.cache_clear()
        return first["state"], model_states

    p1, p2 = states((parsing, pool, test))
    q1, q2 = states((other, pool, test))
    for part, a, b in (("pretrain", p1, q1), ("unified", p2, q2)):
        members = X.members_of(cfg, part)
        bare = [i for i, m in enumerate(members) if m.regime == "joint"]
        rest = [i for i, m in enumerate(members) if m.regime != "joint" and m.arch == "unified"]
        assert len(bare) == 2 and rest
        for key in a:
            assert torch.equal(a[key][bare], b[key][bare]), (part, key)
        assert not torch.equal(a["conv1.weight"][rest], b["conv1.weight"][rest]), part


def test_composite_is_the_per_seed_mean_of_the_three_metrics():
    st = {k: {"per_seed": v} for k, v in zip(C.METRICS, ([0.1, 0.4], [0.2, 0.5], [0.3, 0.6]), strict=True)}
    assert C.composite(st) == pytest.approx([0.2, 0.5])


def test_gradient_clipping_is_per_member():
    from explorables.unirap.training import clip_members

    for arch in ("unified", "separate"):
        torch.manual_seed(0)
        model = UniRAP([0, 1], arch=arch, image_size=16, width=4, d_model=8)
        x, tok = torch.rand(2, 3, 3, 16, 16), torch.randint(1, 10, (2, 3, 8))
        out = model(x, tok)
        (out["mask_logits"][0].sum() * 1e-6 + out["mask_logits"][1].sum() * 1e4).backward()
        params = [p for p in model.parameters() if p.grad is not None]
        before = [p.grad.clone() for p in params]
        norms = clip_members(model, 1.0)
        assert norms[0] < 1.0 < norms[1]  # a small and a huge gradient
        for p, g in zip(params, before, strict=True):
            rows = p.shape[0] // 2  # the rows of member 0 (three per member for the separate decoders)
            torch.testing.assert_close(p.grad[:rows], g[:rows])  # member 0 is untouched by member 1's spike
        torch.testing.assert_close(clip_members(model, 1.0)[1], torch.tensor(1.0), rtol=1e-4, atol=1e-4)


def test_pose_mask_replaces_only_what_the_pose_reads():
    """Feeding the pose head a mask changes the pose and nothing else (in both arms whose pose reads a predicted
    mask); ``pose_direct`` refuses a mask (it reads no mask)."""
    torch.manual_seed(0)
    images, tokens = torch.rand(2, 3, 3, 16, 16), torch.randint(1, 5, (2, 3, 4))
    mask = (torch.rand(2, 3, 16, 16) > 0.5).float()
    for arch in ("unified", "separate"):
        model = UniRAP([0, 1], arch=arch, image_size=16, width=4, d_model=8)
        with torch.no_grad():
            own, fed = model(images, tokens), model(images, tokens, pose_mask=mask)
        assert torch.equal(own["box"], fed["box"]) and torch.equal(own["mask_logits"], fed["mask_logits"])
        assert not torch.allclose(own["pose"], fed["pose"])
        with pytest.raises(ValueError, match="pose_mask"):
            model(images, tokens, pose_mask=mask[:, :2])
    direct = UniRAP([0, 1], arch="pose_direct", image_size=16, width=4, d_model=8)
    with pytest.raises(ValueError, match="pose_direct"):
        direct(images, tokens, pose_mask=mask)


def test_both_arms_pose_read_their_own_predicted_mask():
    """Feeding the unified model, or the separate one, its own predicted mask's weights (``mask_weights(logits)``,
    the squared probability) as ``pose_mask`` changes nothing: in both arms the pose reads the predicted mask (the
    separate arm's mask decoder's; the review's like-for-like fix)."""
    torch.manual_seed(1)
    images, tokens = torch.rand(2, 3, 3, 16, 16), torch.randint(1, 5, (2, 3, 4))
    model = UniRAP([0, 1], image_size=16, width=4, d_model=8)
    with torch.no_grad():
        out = model(images, tokens)
        again = model(images, tokens, pose_mask=mask_weights(out["mask_logits"]))
    assert torch.allclose(out["pose"], again["pose"], atol=1e-6)
    sep = UniRAP([0, 1], arch="separate", image_size=16, width=4, d_model=8)
    with torch.no_grad():
        out = sep(images, tokens)
        via_mask_decoder = sep(images, tokens, pose_mask=mask_weights(out["mask_logits"]))
    assert torch.allclose(out["pose"], via_mask_decoder["pose"], atol=1e-6)


# --- the batched implementation -----------------------------------------------------------------


def test_member_convolutions_match_grouped_conv2d_with_and_without_shared_channels():
    from torch.nn import functional as F

    from explorables.unirap.model import EConv

    gens = [torch.Generator().manual_seed(i) for i in range(3)]
    for c_in, c_out, k, stride, pad, size in [(5, 6, 4, 4, 0, 16), (4, 5, 3, 1, 1, 8), (5, 6, 3, 1, 1, 12),
                                              (4, 4, 1, 1, 0, 8)]:
        conv = EConv(gens, c_in, c_out, k, stride, pad)
        torch.nn.init.normal_(conv.bias)
        x = torch.randn(2, 3 * c_in, size, size)
        ref = F.conv2d(x, conv.weight.flatten(0, 1), conv.bias.flatten(), stride=stride, padding=pad, groups=3)
        torch.testing.assert_close(conv(x), ref)
        # the last two input channels shared by every image and member, passed once
        shared = torch.randn(2, size, size)
        full = torch.cat([x.reshape(2, 3, c_in, size, size)[:, :, : c_in - 2],
                          shared[None, None].expand(2, 3, 2, size, size)], 2).reshape(2, 3 * c_in, size, size)
        ref = F.conv2d(full, conv.weight.flatten(0, 1), conv.bias.flatten(), stride=stride, padding=pad, groups=3)
        part = x.reshape(2, 3, c_in, size, size)[:, :, : c_in - 2].reshape(2, 3 * (c_in - 2), size, size)
        torch.testing.assert_close(conv(part, shared), ref)


def test_mask_statistics_of_several_maps_are_those_of_each_map():
    torch.manual_seed(1)
    prob, features = torch.rand(2, 3, 2, 6, 6), torch.randn(2, 3, 5, 36)
    pooled, geometry = mask_statistics(prob, features)
    assert pooled.shape == (2, 3, 2, 5) and geometry.shape == (2, 3, 2, 5)
    for k in range(2):
        p1, g1 = mask_statistics(prob[:, :, k], features)
        torch.testing.assert_close(pooled[:, :, k], p1)
        torch.testing.assert_close(geometry[:, :, k], g1)
    with pytest.raises(ValueError, match="one axis"):
        mask_statistics(prob, features[0])


def test_a_mixed_ensemble_member_is_the_same_model_as_alone():
    """Mixing ``unified`` and ``pose_direct`` members in one ensemble changes nothing for any member; a mix
    with ``separate``, or an arch per member of the wrong length, is refused."""
    torch.manual_seed(0)
    x, tok = torch.rand(1, 3, 3, 16, 16), torch.randint(1, 10, (1, 3, 8))
    mixed = UniRAP([3, 5], arch=("unified", "pose_direct"), image_size=16, width=4, d_model=8)
    assert mixed.arch == "mixed"
    with torch.no_grad():
        mixed.pose_embed.weight.mul_(3.0)
        out = mixed(x.expand(2, -1, -1, -1, -1), tok.expand(2, -1, -1))
    for i, arch in enumerate(("unified", "pose_direct")):
        alone = UniRAP([(3, 5)[i]], arch=arch, image_size=16, width=4, d_model=8)
        alone.load_state_dict({k: v[i: i + 1] for k, v in mixed.state_dict().items()})
        with torch.no_grad():
            ref = alone(x, tok)
        for key in ("box", "mask_logits", "pose"):
            torch.testing.assert_close(out[key][i: i + 1], ref[key])
    with pytest.raises(ValueError, match="separate"):
        UniRAP([0, 1], arch=("unified", "separate"))
    with pytest.raises(ValueError, match="one architecture per member"):
        UniRAP([0, 1], arch=("unified",))
    with pytest.raises(ValueError, match="arch must be one of"):
        UniRAP([0], arch="both")


def test_the_control_is_trained_below_the_largest_count_and_the_ablations_are_paired():
    from dataclasses import replace

    from explorables.unirap import experiment as X

    cfg = replace(UniRAPConfig.preset("smoke"), labelled_grid=(8, 16, 32), n_labelled=32, seeds=(0, 1))
    assert X.control_counts(cfg) == (8,)  # the smallest only, by default (the book's middle count: curriculum only)
    assert X.control_counts(replace(cfg, n_control_counts=5)) == (8, 16)  # never at the largest
    assert {m.n_labelled for m in X.members_of(cfg, "unified") if m.regime == "curriculum"} == {8, 16, 32}
    cfg = replace(cfg, n_control_counts=2)
    assert X.control_counts(cfg) == (8, 16)
    members = X.members_of(cfg, "unified")
    assert {m.n_labelled for m in members if m.regime == "joint_parsing"} == {8, 16}
    direct = [m for m in members if m.arch == "pose_direct"]
    assert [m.seed for m in direct] == list(cfg.seeds) and {m.n_labelled for m in direct} == {32}
    for m in direct + X.members_of(cfg, "separate"):  # an ablation trains on its curriculum pair's very batches
        pair = X.Member("curriculum", m.n_labelled, m.seed)
        for a, b in zip(X.member_schedule(cfg, m), X.member_schedule(cfg, pair), strict=True):
            assert np.array_equal(a, b)
    assert X.control_counts(replace(cfg, labelled_grid=(32,))) == (32,)


def test_tables_figures_and_claims_of_a_run_with_three_label_counts():
    """With three labelled counts (the book's shape) the control is trained at the smallest only: every table,
    figure and claim of the page still builds, and says so where the control is missing."""
    from dataclasses import replace

    from explorables.unirap import figures
    from explorables.unirap.lab import UniRAPLab
    from explorables.unirap.training import LABELS

    cfg = replace(UniRAPConfig.preset("smoke"), labelled_grid=(8, 12, 16), n_labelled=16, seeds=(0, 1), n_steps=12,
                  n_parsing=24, n_test=12, n_shown=2)
    res = run(cfg)
    assert C.control_counts(res) == [8]
    assert set(res.summary["unified"]["curriculum"]) == {"8", "12", "16"}
    assert LABELS["joint_parsing"] not in C.regime_table(res)
    table = C.efficiency_table(res)
    assert "n = 12" in table and "not run" in table
    claims = C.claims(res)
    assert len(claims) == 11 and set(C.leads(res)) == set(C.transfer_leads(res)) == {8}
    assert "the control at n = 8 only" in claims[-2].setting
    assert claims[-1].gates == ("competence", "labels", "parsing") and "n = 8" in claims[-1].measured
    assert LABELS["joint"] in table and "(the control) " in C.transfer_sentence(res)
    bare = C.paired(res, "joint", 8)  # the sentence's no-parsing score is over the transfer row's paired members
    said = C.transfer_sentence(res)
    assert f"scores {C.fmt_mean_sd(bare)} " in said and f"its {len(bare)} members" in said
    sentence = C.curve_sentence(res)
    assert all(f" at {n}" in sentence for n in (8, 12, 16)) and "trained at 8 only" in sentence
    figures.all_figures(res)
    lab = UniRAPLab(res)
    assert len(lab.regime.options) == 3


def test_chunked_training_gives_the_numbers_of_one_ensemble():
    """``member_chunk`` trains a part's members a few rows at a time (the paper preset's memory); members never
    interact, so the same seed gives the same numbers as the whole ensemble at once: every metric of every member
    and the chosen phase-1 starts are identical; the phase-1 loss curves, the weights and phase 2's loss agree to
    float rounding (a batched product's rounding depends on its batch size: ulps, which Adam turns into up to ~2e-4
    on the attention's key and query biases, whose gradient is nearly zero since a softmax ignores them)."""
    from dataclasses import replace

    cfg = replace(UniRAPConfig.preset("smoke"), n_steps=16, n_test=12, n_parsing=24, labelled_grid=(8, 16),
                  n_labelled=16, seeds=(0, 1), arm_seeds=(5,), processes=1, stage_fractions=(0.25, 0.25))
    whole, chunked = run(cfg), run(cfg.replace(member_chunk=3))
    assert whole.config.member_chunk == 0 and chunked.config.member_chunk == 3
    drop = ("timings",)
    a = {k: v for k, v in whole.summary.items() if k not in drop}
    b = {k: v for k, v in chunked.summary.items() if k not in drop}
    assert a == b
    pre_a, pre_b = whole.curves["pretrain"], chunked.curves["pretrain"]
    assert pre_a["chosen_start"] == pre_b["chosen_start"]
    # phase 1's loss curve (a mean over members) to float32 rounding: a row's loss is summed in another batch size
    np.testing.assert_allclose(pre_a["loss"], pre_b["loss"], rtol=1e-6)
    np.testing.assert_allclose(whole.curves["unified"]["loss"], chunked.curves["unified"]["loss"], rtol=1e-5)
    for key, value in pre_a["state"].items():
        torch.testing.assert_close(value, pre_b["state"][key], rtol=0, atol=1e-3)
    # the arms carry the extra seed; the paired claims read the curriculum's seeds only
    assert len(whole.summary["unified"]["joint"]["8"]["mask_iou"]["per_seed"]) == 3
    assert len(C.leads(whole)[8]) == len(C.transfer_leads(whole)[8]) == 2 and len(C.parsing_gains(whole)[8]) == 3
    assert [c.verdict for c in C.claims(whole)] == [c.verdict for c in C.claims(chunked)]


def test_arm_seeds_may_not_repeat_a_member_seed():
    with pytest.raises(ValueError, match="arm_seeds"):
        UniRAPConfig.preset("smoke").replace(arm_seeds=(0,)).validated()
    # the book's value (benchmarks/unirap_members2_rule.md); the paper preset and smoke keep every arm at `seeds`
    assert UniRAPConfig.preset("book").arm_seeds == (3, 4, 5, 6, 7)
    assert UniRAPConfig.preset("paper").arm_seeds == UniRAPConfig.preset("smoke").arm_seeds == ()
    assert UniRAPConfig.preset("paper").member_chunk == 35 and UniRAPConfig.preset("book").member_chunk == 0


def test_the_curriculums_further_members_come_last_and_pair_with_the_arms_seeds():
    """``curriculum_arm_seeds`` (``benchmarks/unirap_pairs_rule.md``): the curriculum at the control's counts below
    ``n_labelled`` also trains the first k arm seeds: its phase-1 members and its stage-3 members at those counts are
    appended after every other member (the rows before them keep their layout), each continues its own seed's phase 1,
    and the k + len(seeds) curriculum members at the count are in the control's member order (seed by seed)."""
    from explorables.unirap import experiment as X

    book = UniRAPConfig.preset("book")
    assert book.curriculum_arm_seeds == 2 and X.paired_counts(book) == (16,)
    assert UniRAPConfig.preset("paper").curriculum_arm_seeds == UniRAPConfig.preset("smoke").curriculum_arm_seeds == 0
    without = book.replace(curriculum_arm_seeds=0)
    for part, extra in (("pretrain", [X.Member("curriculum", 512, s) for s in (3, 4)]),
                        ("unified", [X.Member("curriculum", 16, s) for s in (3, 4)])):
        assert X.members_of(book, part) == X.members_of(without, part) + extra
    assert X.members_of(book, "separate") == X.members_of(without, "separate")
    first, second = X.members_of(book, "pretrain"), X.members_of(book, "unified")
    for m, r in zip(second, X._source_rows(book, "unified"), strict=True):
        assert first[r].seed == m.seed and (first[r].regime == "curriculum") == (m.regime == "curriculum")
    at16 = [m.seed for m in second if m.regime == "curriculum" and m.n_labelled == 16 and m.arch == "unified"]
    control = [m.seed for m in second if m.regime == "joint_parsing"]
    assert at16 == [0, 1, 2, 3, 4] and control[: len(at16)] == at16
    assert [m.seed for m in second if m.regime == "curriculum" and m.n_labelled in (64, 512)] == [0, 1, 2] * 2 + [
        0, 1, 2]  # n = 64, 512 and the pose_direct pairs: seeds only
    # both ensembles stay in even chunks (this process takes the 2 further rows of unified: the worker then trains
    # separate), and 16 of 28 rows without them
    assert X.chunk_rows(book, 2 * len(first)) == [slice(0, 22), slice(22, 42)]
    assert X.chunk_rows(book, len(second), X.UNIFIED_SHARE) == [slice(0, 18), slice(18, 30)]
    assert X.chunk_rows(without, len(X.members_of(without, "unified")), X.UNIFIED_SHARE) == [slice(0, 16),
                                                                                              slice(16, 28)]
    with pytest.raises(ValueError, match="curriculum_arm_seeds"):
        book.replace(curriculum_arm_seeds=6).validated()
    assert book.replace(curriculum_arm_seeds=5).validated().curriculum_arm_seeds == 5
    assert X.paired_counts(book.replace(labelled_grid=(16, 512), n_control_counts=2)) == (16,)  # never n_labelled


def test_further_curriculum_members_reach_the_paired_rows_only():
    """A run with a further curriculum member at the fewest labels: the staged-vs-mixed and transfer rows pair every
    curriculum member there with the control's and the no-parsing arm's member of the same seed; the labels gate (and
    every gate) reads the curriculum's seeds; the members before it give the numbers of a run without it."""
    from dataclasses import replace

    cfg = replace(UniRAPConfig.preset("smoke"), n_steps=12, n_test=12, n_parsing=24, labelled_grid=(8, 16),
                  n_labelled=16, seeds=(0, 1), arm_seeds=(5, 6), processes=1, stage_fractions=(0.25, 0.25))
    base, more = run(cfg), run(cfg.replace(curriculum_arm_seeds=1))
    assert more.summary["n_pairs"] == 3 and base.summary["n_pairs"] == 2
    cur = lambda r: C.composite(C.scores(r, "curriculum", 8))  # noqa: E731
    assert len(cur(more)) == 3 and len(cur(base)) == 2
    ctl, bare = C.composite(C.scores(more, "joint_parsing", 8)), C.composite(C.scores(more, "joint", 8))
    np.testing.assert_array_equal(C.leads(more)[8], cur(more) - ctl[:3])
    np.testing.assert_array_equal(C.transfer_leads(more)[8], cur(more) - bare[:3])
    assert len(C.parsing_gains(more)[8]) == 4  # the parsing gate keeps every arm member
    # the earlier members: the same numbers (the extra rows come last; chunks stay even)
    np.testing.assert_array_equal(cur(more)[:2], cur(base))
    for regime, n in (("curriculum", 16), ("joint_parsing", 8), ("joint", 8), ("pose_direct", 16)):
        assert C.scores(more, regime, n) == C.scores(base, regime, n), regime
    rows_b, rows_m = C.claims(base), C.claims(more)
    for a, b in zip(rows_b[:9], rows_m[:9], strict=True):  # every check, gate, and the unified and pose rows
        assert (a.measured, a.verdict) == (b.measured, b.verdict), a.claim
    assert "3 pairs at n = 8" in rows_m[-2].setting and "pairs at" not in rows_b[-2].setting
    # the member counts come from the summary: n_pairs at the paired count, n_seeds elsewhere
    assert C.curriculum_members(more, 8) == 3 and C.curriculum_members(more, 16) == 2
    # every point of the curves averages the curriculum's seeds alone, whatever further members a count has
    for regime in ("curriculum", "joint_parsing", "joint"):
        st = C.curve_scores(more, regime, 8)
        assert all(len(st[k]["per_seed"]) == 2 for k in C.METRICS)
        first = C.scores(more, regime, 8)["mask_iou"]["per_seed"][:2]
        np.testing.assert_allclose(st["mask_iou"]["mean"], np.mean(first))
    assert C.curve_scores(more, "curriculum", 8) == C.curve_scores(base, "curriculum", 8)
    assert C.efficiency_table(more) == C.efficiency_table(base)
    # the sentence says what the curves read whenever some rows read more members: further curriculum members
    # (more), or further members of the control and the no-parsing arm alone (base: arm_seeds, no curriculum_arm_seeds)
    assert "over the same 2 member seeds" in C.curve_sentence(more) and "3 pairs" in C.curve_sentence(more)
    assert "over the same 2 member seeds" in C.curve_sentence(base) and "pairs" not in C.curve_sentence(base)
    assert all("gate reads the control and the arm without parsing data over 4 members" in C.curve_sentence(r)
               for r in (base, more))
    # the transfer row shows both arms over the members its lead pairs
    assert "(the same 3 member seeds)" in rows_m[-1].measured and "(the same 2 member seeds)" in rows_b[-1].measured
    # the curves figure plots curve_scores (the curriculum's seeds), not the arms' means over all their members
    from explorables.unirap import figures
    from explorables.unirap.training import LABELS

    fig = figures.efficiency_figure(more)
    for col, key in enumerate(C.METRICS):
        axis = "x" if col == 0 else f"x{col + 1}"
        for regime in ("curriculum", "joint_parsing", "joint"):
            trace = next(t for t in fig.data if t.name == LABELS[regime] and t.xaxis == axis)
            st = [C.curve_scores(more, regime, n) for n in trace.x]
            assert list(trace.y) == [x[key]["mean"] for x in st], (regime, key)
            assert list(trace.error_y.array) == [x[key]["sd"] for x in st], (regime, key)
    all_members = C.composite(C.scores(more, "joint", 8)).mean()  # over 4 members: the figure must not show it
    assert all_members != C.composite(C.curve_scores(more, "joint", 8)).mean()
