"""Chapter 01 (rpkd): properties of the losses, the ensembles, the probe, the leak guard and the claims."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from explorables.core.datasets import write_cifar
from explorables.core.tables import apply_gates
from explorables.core.verdicts import drive
from explorables.rpkd import (
    RandomPrototypes,
    activation_maps,
    as_tokens,
    cross_entropy,
    feature_match_loss,
    global_distribution,
    headline,
    kd_loss,
    make_student,
    make_teacher,
    ofa_loss,
    probe_accuracy,
    prototype_scores,
    rpkd_losses,
    student_labels,
    super_labels,
)
from explorables.rpkd.claims import (
    CRITERIA,
    HEADROOM,
    below_ce_sentence,
    best_logit_arm,
    claims,
    comparison_verdict,
    control_sentence,
    control_verdict,
    dead_channels_verdict,
    distill_verdict,
    headroom_verdict,
    learns_verdict,
    logit_sentence,
    pooled,
    probe_verdict,
    rpkd_kd_sentence,
    teacher_info_verdict,
    transfer_verdict,
    untested_sentence,
)
from explorables.rpkd.data import _translate, load_cifar_task, load_digits_task, make_split, shifted_task
from explorables.rpkd.experiment import (
    STANDARD_ARMS,
    RPKDConfig,
    RPKDResults,
    _split,
    labelled_count,
    load_task,
    run,
    run_protocols,
    standard_protocol,
    transfer_size,
)
from explorables.rpkd.models import EnsembleBatchNorm, EnsembleConv2d, EnsembleLinear, _pool2
from explorables.rpkd.probe import distillation_targets
from explorables.rpkd.training import (
    ARMS,
    TERMS,
    LossWeights,
    member_losses,
    teacher_targets,
    train_students,
    train_teachers,
)


def _z(m=2, b=5, length=16, d=8, seed=0):
    return torch.randn(m, b, length, d, generator=torch.Generator().manual_seed(seed))


def test_every_distillation_loss_is_zero_when_student_equals_teacher():
    z = _z()
    prototypes = RandomPrototypes(32, 8, 12, seed=0).prototypes
    glob, maps = rpkd_losses(z, z.clone(), prototypes, tau=0.2)
    assert torch.allclose(glob, torch.zeros(2), atol=1e-6) and torch.allclose(maps, torch.zeros(2), atol=1e-6)
    assert torch.allclose(feature_match_loss(z, z.clone()), torch.zeros(2), atol=1e-6)
    logits = torch.randn(2, 5, 3)
    assert torch.allclose(kd_loss(logits, logits.clone(), 4.0), torch.zeros(2), atol=1e-6)
    # OFA is a cross-entropy: with eps = 1 and no label it is KL + the teacher's entropy, so minus the entropy it is 0
    p = F.softmax(logits, dim=-1)
    entropy = -(p * p.log()).sum(-1).mean(1)
    assert torch.allclose(ofa_loss(logits, logits.clone(), torch.zeros_like(p), 1.0) - entropy, torch.zeros(2),
                          atol=1e-6)
    # and they are positive when the student differs
    glob2, maps2 = rpkd_losses(_z(seed=1), z, prototypes, tau=0.2)
    assert (glob2 > 0).all() and (maps2 > 0).all()


def test_ofa_matches_its_formula_with_a_label():
    s, t = torch.randn(1, 4, 3), torch.randn(1, 4, 3)
    y = F.one_hot(torch.tensor([[0, 2, 1, 1]]), 3).float()
    p_t, log_p_s = F.softmax(t, -1), F.log_softmax(s, -1)
    expected = -(((p_t + y) ** 1.5 - y) * log_p_s).sum(-1).mean()
    assert torch.allclose(ofa_loss(s, t, y, 1.5), expected.reshape(1))


def _tiny_distillation(n_classes: int, teacher_steps: int):
    """300 digits, a width-4 teacher of ``n_classes`` super-classes trained ``teacher_steps`` steps, its targets on
    a 4 x 4 grid and 16 random prototypes: the set-up of the small training tests."""
    task = load_digits_task()
    split = make_split(len(task.fine), 200, 20, seed=0)
    x, fine = task.images[split.train][:300], task.fine[split.train][:300]
    teacher = train_teachers(x[None], super_labels(fine, n_classes)[None], n_classes, width=4, n_steps=teacher_steps,
                             batch_size=16, lr=1e-2, seed=0, device=torch.device("cpu"))  # fmt: skip
    logits, tokens = teacher_targets(teacher, x[None], 4)
    return x, fine, logits, tokens, RandomPrototypes(16, 8, tokens.shape[-1], seed=3)


def test_prototypes_are_frozen_and_unchanged_by_training():
    x, fine, logits, tokens, protos = _tiny_distillation(2, 3)
    before = {k: v.clone() for k, v in protos.state_dict().items()}
    assert list(protos.parameters()) == []  # buffers, not parameters: no optimizer can see them
    model, _ = train_students("mixer", ("rpkd",), x[None], student_labels(fine, 20, 2)[None], logits, tokens, protos,
                              LossWeights(), width=8, grid=4, n_steps=3, batch_size=16, lr=1e-2, temperature=4.0,
                              tau=0.2, ofa_eps=1.5, seed=0, device=torch.device("cpu"))
    for k, v in protos.state_dict().items():
        assert torch.equal(v, before[k]) and not v.requires_grad
    assert all(not any(p is b for b in protos.buffers()) for p in model.parameters())


@pytest.mark.parametrize("kind", ["mixer", "cnn"])
def test_shapes_for_cnn_maps_and_token_sequences_of_different_widths(kind):
    x = torch.rand(3, 5, 1, 8, 8)
    student = make_student(kind, 3, 4, 12, seed=0)
    logits, features, _ = student(x)
    assert logits.shape == (3, 5, 4)
    tokens = as_tokens(features, 4)
    assert tokens.shape == (3, 5, 16, student.d_feature)
    teacher = make_teacher(3, 4, 6, seed=0)
    t_tokens = as_tokens(teacher(x)[1], 2)  # a coarser common grid works too
    assert t_tokens.shape == (3, 5, 4, 12)
    protos = RandomPrototypes(10, 7, t_tokens.shape[-1], seed=0)
    z_s = EnsembleLinear(3, student.d_feature, 7, torch.Generator().manual_seed(0))(as_tokens(features, 2))
    glob, maps = rpkd_losses(z_s, protos.project_teacher(t_tokens), protos.prototypes, 0.3)
    assert glob.shape == maps.shape == (3,)
    with pytest.raises(ValueError, match="square"):
        as_tokens(torch.rand(1, 2, 15, 4), 2)


def test_ensemble_members_are_independent_networks():
    g = torch.Generator().manual_seed(0)
    conv = EnsembleConv2d(3, 2, 4, g)
    x = torch.rand(3, 5, 2, 6, 6)
    out = conv(x)
    w, b = conv.weight.reshape(3, 4, 2, 3, 3), conv.bias.reshape(3, 4)
    for m in range(3):
        assert torch.allclose(out[m], F.conv2d(x[m], w[m], b[m], padding=1), atol=1e-6)
    # a gradient of member 1's output reaches member 1's weights only
    out[1].sum().backward()
    grad = conv.weight.grad.reshape(3, -1).abs().sum(1)
    assert grad[1] > 0 and grad[0] == 0 and grad[2] == 0


def test_ensemble_batch_norm_is_one_batch_norm_per_member_and_uses_running_statistics_in_eval():
    norm = EnsembleBatchNorm(3, 4)
    with torch.no_grad():
        norm.weight.copy_(torch.arange(12.0) / 6 + 0.5)
        norm.bias.copy_(torch.arange(12.0) / 10)
    x = torch.randn(3, 5, 4, 3, 3, generator=torch.Generator().manual_seed(0)) * 2 + 1
    out = norm(x)
    for m in range(3):  # member m: an ordinary batch norm of its own channels, with its own scale and shift
        ref = torch.nn.BatchNorm2d(4)
        with torch.no_grad():
            ref.weight.copy_(norm.weight[4 * m: 4 * m + 4])
            ref.bias.copy_(norm.bias[4 * m: 4 * m + 4])
        assert torch.allclose(out[m], ref(x[m]), atol=1e-5)
        assert torch.allclose(norm.running_mean[4 * m: 4 * m + 4], ref.running_mean, atol=1e-6)
        ref.eval()
        norm.eval()
        assert torch.allclose(norm(x)[m], ref(x[m]), atol=1e-5)  # eval: the running statistics, per member
        norm.train()


def test_the_teacher_norm_leaves_the_teacher_without_it_unchanged_and_keeps_every_channel_alive():
    x = torch.rand(1, 6, 1, 8, 8, generator=torch.Generator().manual_seed(1))
    plain, normed = make_teacher(1, 3, 4, seed=0, norm=False), make_teacher(1, 3, 4, seed=0)
    assert isinstance(plain.norm3, torch.nn.Identity) and isinstance(normed.norm3, EnsembleBatchNorm)
    for name, p in plain.named_parameters():  # the same seeded draws: the norm adds parameters, takes no draw
        assert torch.equal(p, dict(normed.named_parameters())[name])
    _, features, _ = normed(x)  # in training mode, each channel is centred over the batch: none is 0 everywhere
    assert bool((features > 0).flatten(start_dim=3).any(dim=(1, 3)).all())


def test_a_trained_teacher_is_in_eval_mode_with_the_statistics_of_its_whole_training_set():
    """``train_teachers`` returns the teacher in ``eval()`` mode, its batch-norm running statistics recomputed in
    one pass over its training set with its final weights: in eval mode it computes what it computes in training
    mode on that whole set as one batch (its training accuracy does not depend on stale statistics)."""
    task = load_digits_task()
    x, y = task.images[None, :300], super_labels(task.fine[:300], 5)[None]
    teacher = train_teachers(x.expand(2, -1, -1, -1, -1), y.expand(2, -1), 5, width=4, n_steps=30, batch_size=16,
                             lr=1e-2, seed=0, device="cpu")
    assert not any(m.training for m in teacher.modules())
    with torch.no_grad():
        h = _pool2(F.relu(teacher.conv2(F.relu(teacher.conv1(x.expand(2, -1, -1, -1, -1))))))
        pre = teacher.conv3(h)  # (M, N, c, h, w): the batch norm's input
        mean, var = pre.mean(dim=(1, 3, 4)).flatten(), pre.var(dim=(1, 3, 4), unbiased=True).flatten()
        assert torch.allclose(teacher.norm3.running_mean, mean, atol=1e-5)
        assert torch.allclose(teacher.norm3.running_var, var, rtol=1e-4, atol=1e-6)
        evaluated = teacher(x.expand(2, -1, -1, -1, -1))[0]
        as_batch = copy.deepcopy(teacher).train()(x.expand(2, -1, -1, -1, -1))[0]
    assert torch.allclose(evaluated, as_batch, rtol=1e-3, atol=1e-3)  # eval: the unbiased variance
    assert teacher.norm3.momentum == 0.1  # training mode (a later fine-tuning) keeps the usual momentum


def test_the_teacher_is_in_eval_mode_whenever_it_teaches(monkeypatch):
    """Every target, accuracy and dead-channel count of ``teacher_part``, and the fresh views' targets of the
    standard protocol, come from the teacher in ``eval()`` mode (running statistics, not the batch's)."""
    from explorables.rpkd import experiment, models

    modes = []
    real_forward = models.CNN.forward

    def spy(self, x):
        modes.append(self.training)
        return real_forward(self, x)

    cfg = RPKDConfig.preset("smoke", class_grid=(2,), seeds=(0, 1), n_teacher_steps=4, n_student_steps=3)
    real_train = experiment.train_teachers

    def trained(*args, **kwargs):  # count only the forwards after training: where the teacher teaches
        teacher = real_train(*args, **kwargs)
        monkeypatch.setattr(models.CNN, "forward", spy)
        return teacher

    monkeypatch.setattr(experiment, "train_teachers", trained)
    shared = experiment.teacher_part(cfg, 2)
    assert len(modes) >= 4 and not any(modes)  # test and transfer accuracy, targets, dead channels
    modes.clear()
    experiment.students(dataclasses.replace(standard_protocol(cfg), standard_augment=1), 2, shared)
    assert modes and not any(modes)  # the fresh views' targets


def test_a_disjoint_transfer_set_is_the_second_half_of_the_same_training_split():
    cfg = RPKDConfig.preset("smoke")
    task = load_task(cfg)
    shared = _split(cfg, task, 2, torch.device("cpu"))
    cut = dataclasses.replace(cfg, transfer="disjoint")
    n_labelled, x_tr, fine_tr, x_test, y_test, x_teach, fine_teach = _split(cut, task, 2, torch.device("cpu"))
    n = len(shared[2])
    assert torch.equal(x_teach, shared[1][: n // 2]) and torch.equal(x_tr, shared[1][n // 2:])
    assert torch.equal(fine_teach, shared[2][: n // 2]) and torch.equal(fine_tr, shared[2][n // 2:])
    assert torch.equal(x_test, shared[3]) and torch.equal(y_test, shared[4])  # the test split is the same
    assert torch.equal(shared[5], shared[1])  # shared: the teacher trains on the transfer set itself
    assert n_labelled == cfg.n_labelled and transfer_size(cut) == n - n // 2 == len(fine_tr)
    assert standard_protocol(cut).n_labelled == n - n // 2  # every label of the (halved) transfer set
    few, std = run_protocols(dataclasses.replace(cut, class_grid=(2,), seeds=(0, 1)), workers=1)
    assert std.summary["n_labelled"] == n - n // 2 and few.summary["transfer"] == "disjoint"


def test_labels_reach_only_cross_entropy_and_ofa():
    """The leak guard: the student sees labels only on its labelled subset, and only through CE and OFA."""
    fine = torch.arange(40) % 10
    labels = student_labels(fine, 12, 5)
    assert (labels[:12] >= 0).all() and (labels[12:] == -1).all()
    torch.manual_seed(0)
    student = make_student("mixer", 2, 5, 8, seed=0)
    from explorables.rpkd.training import Distiller

    model = Distiller(student, 2, 8, 5, 6, seed=0)
    protos = RandomPrototypes(12, 6, 10, seed=0)
    x = torch.rand(2, 40, 1, 8, 8)
    t_logits, t_tokens = torch.randn(2, 40, 5), torch.randn(2, 40, 16, 10)
    hidden = member_losses(model, protos, x, torch.full((2, 40), -1), t_logits, t_tokens, grid=4, temperature=4.0,
                           tau=0.2, ofa_eps=1.5)
    shown = member_losses(model, protos, x, super_labels(fine, 5).expand(2, -1), t_logits, t_tokens, grid=4,
                          temperature=4.0, tau=0.2, ofa_eps=1.5)
    changed = ~torch.isclose(hidden, shown).all(dim=0)
    assert [t for t, c in zip(TERMS, changed.tolist(), strict=True) if c] == ["ce", "ofa"]


def test_skipping_the_terms_of_weight_zero_changes_no_number():
    """The training loop computes each term on the members that weigh it: the loss and every gradient are the
    same, bit for bit, as with every term on every member (one weight 0 too: the lab's beta = 0)."""
    from explorables.rpkd.training import Distiller

    n_seeds, weights = 2, LossWeights(glob=0.0)
    weight = weights.matrix(ARMS, n_seeds)
    members = {t: torch.nonzero(weight[:, j]).flatten() for j, t in enumerate(TERMS)}
    m = len(ARMS) * n_seeds
    x = torch.rand(m, 30, 1, 8, 8, generator=torch.Generator().manual_seed(1))
    labels = (torch.arange(30) % 5).expand(m, -1).clone()
    labels[:, 10:] = -1
    t_logits = torch.randn(m, 30, 5, generator=torch.Generator().manual_seed(2))
    t_tokens = torch.randn(m, 30, 16, 10, generator=torch.Generator().manual_seed(3))
    protos = RandomPrototypes(12, 6, 10, seed=0)
    out = []
    for subset in (None, members):
        model = Distiller(make_student("mixer", m, 5, 8, seed=0), m, 8, 5, 6, seed=0)
        terms = member_losses(model, protos, x, labels, t_logits, t_tokens, grid=4, temperature=4.0, tau=0.2,
                              ofa_eps=1.5, members=subset)
        loss = (weight * terms).sum()
        loss.backward()
        out.append((loss, [p.grad for p in model.parameters()]))
    (full, full_grads), (skipped, skipped_grads) = out
    assert torch.equal(full, skipped)
    assert all(torch.equal(a, b) for a, b in zip(full_grads, skipped_grads, strict=True))


def test_probe_information_gap_between_prototypes_and_two_class_logits():
    task = load_digits_task()
    split = make_split(len(task.fine), 297, 50, seed=0)
    x, fine = task.images[split.train], task.fine[split.train]
    teacher = train_teachers(x[None], super_labels(fine, 2)[None], 2, width=8, n_steps=80, batch_size=64, lr=1e-2,
                             seed=0, device=torch.device("cpu"))
    logits, tokens = teacher_targets(teacher, x[None], 4)
    protos = RandomPrototypes(64, 32, tokens.shape[-1], seed=7)
    targets = distillation_targets(logits[0], protos.project_teacher(tokens[0]), protos.prototypes,
                                   temperature=4.0, tau=0.2)
    acc = {k: probe_accuracy(v, fine.numpy(), seed=0, n_probe=600) for k, v in targets.items()}
    assert acc["logits"] < 0.45  # two numbers per image cannot name ten digits
    assert acc["prototypes"] > acc["logits"] + 0.2
    assert acc["maps"] > acc["logits"] + 0.2


def test_seeded_smoke_run_every_method_beats_chance():
    cfg = RPKDConfig.preset("smoke")
    results = run(cfg)
    for c in cfg.class_grid:
        part = results.summary[f"C={c}"]
        assert part["teacher_accuracy"] > 1.0 / c + 0.1
        for arm in ARMS:
            assert part["accuracy"][arm]["mean"] > 1.0 / c, (c, arm)


def test_standard_protocol_labels_every_training_image_and_adds_its_rows():
    cfg = RPKDConfig.preset("smoke")
    std = standard_protocol(cfg)
    assert std.n_labelled == 1797 - cfg.n_test and std.arms == STANDARD_ARMS
    labels = student_labels(torch.arange(std.n_labelled) % 10, std.n_labelled, 2)
    assert (labels >= 0).all()  # no image is unlabelled: CE sees every label, as in the usual KD protocol
    small = RPKDConfig.preset("smoke", n_student_steps=3, n_teacher_steps=3)
    rows = claims(run(small), run(standard_protocol(small)))
    assert sum("standard protocol" in r.claim for r in rows if r.kind == "claim") == 2


def test_the_two_protocols_side_by_side_equal_the_runs_one_after_the_other():
    # run_protocols trains each teacher once for both protocols; run trains its own: the numbers agree
    small = RPKDConfig.preset("smoke", n_student_steps=3, n_teacher_steps=3)
    parallel = run_protocols(small, workers=2)
    sequential = (run(small), run(standard_protocol(small)))
    for a, b in zip(parallel, sequential, strict=True):
        assert a.summary["protocol"] == b.summary["protocol"]
        for c in small.class_grid:
            assert a.summary[f"C={c}"]["accuracy"] == b.summary[f"C={c}"]["accuracy"]
            assert a.summary[f"C={c}"]["probe"] == b.summary[f"C={c}"]["probe"]
            assert a.summary[f"C={c}"]["teacher_accuracy"] == b.summary[f"C={c}"]["teacher_accuracy"]
    with pytest.raises(ValueError, match="workers"):
        run_protocols(small, workers=-1)


def test_verdicts_on_constructed_numbers_reach_every_branch():
    up, flat, down, noisy = [0.30, 0.31, 0.29], [0.0, 0.01, -0.01], [-0.05, -0.04, -0.06], [0.0, 0.2, 0.1]
    assert drive(CRITERIA) == []
    assert headroom_verdict({10: [0.2, 0.3], 2: [0.06, 0.1]}).startswith("pass")
    assert headroom_verdict({10: [0.2, 0.3], 2: [0.04, 0.3]}).startswith("fail: the teacher does not beat CE by 0.05 "
                                                                          "on every seed at C = 2")
    assert teacher_info_verdict([0.9, 0.91, 0.92]).startswith("pass")
    assert teacher_info_verdict([0.3, 0.31, 0.29]).startswith("fail")
    assert learns_verdict({"CE, C = 2": [0.3, 0.04]}).startswith("fail: below chance + 0.05 on some seed: CE, C = 2")
    assert probe_verdict(up, down, up).startswith("yes")
    assert probe_verdict(up, up, up).startswith("partly")  # richer at few classes, but not more than at many
    # richer than the logits, but not than the same projection without prototypes: partly, naming that part
    assert probe_verdict(up, down, flat).startswith("partly")
    assert "unclear: prototypes ≥ the same projection without them" in probe_verdict(up, down, flat)
    assert "no: prototypes ≥ the same projection without them" in probe_verdict(up, down, down)
    assert probe_verdict(down, down, up).startswith("no")
    assert probe_verdict(flat, up, up).startswith("no")  # no richer target at few classes: the rest does not rescue it
    assert probe_verdict(noisy, down, up).startswith("unclear")  # lead within noise: its growth does not count
    assert dead_channels_verdict({10: 0, 5: 0, 2: 0}).startswith("pass")
    assert dead_channels_verdict({10: 1, 5: 0, 2: 3}) == ("fail: more than 0 dead channels in the teacher's last "
                                                          "convolution at C = 10: 1, C = 2: 3")
    assert comparison_verdict({"KD": up, "OFA": up}, up).startswith("yes")
    assert comparison_verdict({"KD": up, "OFA": down}, up).startswith("partly")
    assert comparison_verdict({"KD": up, "OFA": up}, down).startswith("partly")
    assert comparison_verdict({"KD": noisy, "OFA": noisy}, noisy).startswith("unclear")
    # behind every logit method at the fewest classes: no, even when the gap narrows as C shrinks
    assert comparison_verdict({"KD": down, "OFA": down}, up).startswith("no")
    # ahead of no rival (behind one, level with the other within noise): the narrowing does not make it partly
    assert comparison_verdict({"KD": [-0.08, 0.0, -0.01], "OFA": down}, up).startswith("unclear")
    assert probe_verdict(noisy, up, up).startswith("unclear")
    assert transfer_verdict(up).startswith("yes") and transfer_verdict(down).startswith("no")
    assert transfer_verdict(noisy).startswith("unclear")
    assert control_verdict(up).startswith("yes") and control_verdict(down).startswith("no")
    assert control_verdict(noisy).startswith("unclear")


def test_a_gain_within_the_seed_spread_reads_unclear_and_a_clear_loss_reads_no():
    # mean gain +0.02 over the control, but the seeds disagree (0.08, 0.0, -0.02): the interval straddles 0.01
    assert control_verdict([0.08, 0.0, -0.02]).startswith("unclear")
    assert control_verdict([-0.03, -0.02, -0.025]).startswith("no")
    # the same mean with seeds that agree decides
    assert control_verdict([0.021, 0.02, 0.019]).startswith("yes")


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="kind"):
        make_student("vit", 1, 2, 4, seed=0)
    with pytest.raises(ValueError, match="n_classes"):
        super_labels(torch.arange(5), 11)
    with pytest.raises(ValueError, match="tau"):
        rpkd_losses(_z(), _z(), RandomPrototypes(4, 8, 8, 0).prototypes, tau=0.0)
    with pytest.raises(ValueError, match="n_labelled"):
        make_split(100, 20, 90, seed=0)
    with pytest.raises(ValueError, match="features"):
        probe_accuracy(np.zeros((3, 2)), np.zeros(4), seed=0)


def test_paper_code_path_runs_on_a_tiny_fake_cifar(tmp_path):
    write_cifar(tmp_path, "cifar100", n_train=60, n_test=20, n_classes=20)
    cfg = RPKDConfig.preset("smoke", dataset="cifar100", data_root=str(tmp_path), image_size=8, n_test=10,
                            n_labelled=6, n_teacher_steps=2, n_student_steps=2, batch_size=8, n_probe=20)
    results = run(cfg)
    assert set(results.summary["C=2"]["accuracy"]) == set(cfg.arms)
    with pytest.raises(ValueError, match="data_root"):
        run(RPKDConfig.preset("smoke", dataset="cifar100"))


def test_cifar_reader_on_a_tiny_fake_dataset(tmp_path):
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for name, n in (("train", 30), ("test", 10)):
        data = {"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8), "fine_labels": list(rng.integers(0, 20, n))}
        (folder / name).write_bytes(pickle.dumps(data))
    (folder / "meta").write_bytes(pickle.dumps({"fine_label_names": [f"c{i}" for i in range(20)]}))
    task = load_cifar_task(str(tmp_path), "cifar100", size=8, n_fine=10)
    assert task.images.shape[1:] == (1, 8, 8) and (task.fine < 10).all() and len(task.fine) == len(task.images)
    assert 0.0 <= float(task.images.min()) and float(task.images.max()) <= 1.0


def _constructed(acc: dict[str, dict[int, tuple[float, float]]], protocol: str = "few_label",
                 probe: dict[int, tuple[float, float]] | None = None, teacher: float = 0.95) -> RPKDResults:
    """Results with made-up accuracies ``{arm: {C: (mean, sd)}}`` (per seed: mean - sd, mean, mean + sd, the same
    offsets for every arm, so paired differences are exact) and probe accuracies ``{C: (logits, prototypes)}``."""
    grid = sorted(next(iter(acc.values())), reverse=True)
    probe = probe or {c: (0.3, 0.9) for c in grid}
    summary = {"class_grid": grid, "arms": list(acc), "control": "feature_match", "protocol": protocol,
               "n_labelled": 1300 if protocol == "standard" else 50}
    for c in grid:
        lg, pr = probe[c]
        summary[f"C={c}"] = {
            "teacher_accuracy": teacher, "dead_channels": 0, "teacher_channels": 16,
            "probe": {"logits": lg, "prototypes": pr, "maps": pr, "teacher_features": pr, "pooled_projection": pr,
                      "control_target": pr},
            "probe_per_seed": {"logits": [lg - 0.01, lg, lg + 0.01], "prototypes": [pr - 0.01, pr, pr + 0.02],
                               "maps": [pr] * 3, "teacher_features": [pr - 0.01, pr, pr + 0.01],
                               "pooled_projection": [pr - 0.01, pr, pr + 0.01], "control_target": [pr] * 3},
            "accuracy": {a: {"mean": v[c][0], "sd": v[c][1],
                             "per_seed": [v[c][0] - v[c][1], v[c][0], v[c][0] + v[c][1]]} for a, v in acc.items()},
        }
    return RPKDResults(RPKDConfig(protocol=protocol), summary, {})


def _arms(**means: float) -> dict[str, dict[int, tuple[float, float]]]:
    """Every arm at C = 10 and 2 with sd 0.005; ``<arm>=x`` sets its mean at C = 2 (0.8 elsewhere)."""
    arms = ("ce", "kd", "ofa", "rpkd", "rpkd_kd", "feature_match")
    return {a: {10: (0.8, 0.005), 2: (means.get(a, 0.8), 0.005)} for a in arms}


def test_result_sentences_follow_the_numbers():
    wins = _constructed(_arms(rpkd=0.9, kd=0.85, ofa=0.82))
    assert best_logit_arm(wins, 2) == "kd"
    assert logit_sentence(wins).startswith("At the fewest classes RPKD beats every logit method")
    assert logit_sentence(_constructed(_arms(rpkd=0.84, kd=0.86))).startswith("At the fewest classes RPKD beats one")
    assert logit_sentence(_constructed(_arms(kd=0.9, ofa=0.9))).startswith("At the fewest classes RPKD trails every")
    assert rpkd_kd_sentence(_constructed(_arms(rpkd_kd=0.83))).startswith("Adding RPKD's branches to KD improves "
                                                                           "on KD at some")
    assert rpkd_kd_sentence(_constructed(_arms(rpkd_kd=0.7))).endswith("at any class count.")
    assert control_sentence(_constructed(_arms(feature_match=0.85))).startswith("The control does as well")
    strong = _arms()
    strong["rpkd"] = {10: (0.9, 0.005), 2: (0.9, 0.005)}
    assert control_sentence(_constructed(strong)).startswith("The prototypes, not the random projection")
    noisy = _constructed(_arms())
    for c, values in ((10, [0.88, 0.80, 0.78]), (2, [0.78, 0.80, 0.78])):  # RPKD − control per seed: +0.08, 0, -0.02
        noisy.summary[f"C={c}"]["accuracy"]["rpkd"]["per_seed"] = values
        noisy.summary[f"C={c}"]["accuracy"]["feature_match"]["per_seed"] = [0.80] * 3
    assert pooled(noisy, "rpkd", "feature_match") == pytest.approx([0.03, 0.0, -0.02])
    assert control_sentence(noisy).startswith("RPKD's lead over the control is within the seed-to-seed spread")


def test_a_failed_headroom_gate_makes_the_comparisons_untested_not_no():
    few = _constructed(_arms(kd=0.9, ofa=0.9))  # RPKD behind both: "no" while the teacher has room
    std = _constructed(_arms(kd=0.9, ofa=0.9), protocol="standard", teacher=0.81)  # teacher barely above CE
    rows = {(r.kind, r.claim): r for r in apply_gates(claims(few, std))}
    gates = {r.name: r for r in rows.values() if r.kind == "gate"}
    assert gates["headroom"].outcome == "pass" and gates["headroom_standard"].outcome == "fail"
    assert gates["teacher_info"].outcome == "pass"
    by_claim = {r.claim: r for r in rows.values() if r.kind == "claim"}
    assert by_claim["RPKD beats logit-based distillation (OFA), most where the label space is small "
                    "(few labels)"].outcome == "no"
    standard_rows = [r for r in by_claim.values() if "standard protocol" in r.claim]
    assert len(standard_rows) == 2 and all(r.outcome == "untested" for r in standard_rows)
    assert all("headroom_standard" in r.verdict for r in standard_rows)
    assert {r.kind for r in rows.values()} == {"check", "gate", "claim"}
    assert headroom_verdict({10: [HEADROOM - 0.001] * 3}).startswith("fail")
    sentence = untested_sentence(claims(few, std))  # the page says which rows are untested and why
    assert sentence.count("standard protocol") >= 3 and "headroom" not in sentence.split("because")[0]
    assert "the teacher knows more than CE alone teaches (standard protocol)" in sentence
    assert untested_sentence(claims(few)) == "No claim row is untested in this run: every gate passed."


def test_the_page_says_where_rpkd_trails_ce():
    few = _constructed(_arms(rpkd=0.70))  # RPKD below CE at C = 2 only, beyond the spread
    std = _constructed({**_arms(), "rpkd": {10: (0.798, 0.005), 2: (0.8, 0.005)}}, protocol="standard")
    sentence = below_ce_sentence([std, few])
    assert sentence == ("RPKD is below CE alone (mean over seeds) at C = 10 (standard protocol) and C = 2 "
                        "(few labels); beyond the seed-to-seed spread at C = 10 (standard protocol) and C = 2 "
                        "(few labels).")
    assert below_ce_sentence([_constructed(_arms())]).startswith("RPKD's mean accuracy is not below")


def test_claims_of_a_standard_protocol_run_and_of_a_run_without_some_arms():
    std = _constructed(_arms(), protocol="standard")
    rows = [r for r in claims(std) if r.kind == "claim"]
    assert rows[0].claim.startswith("with few classes") and all("few labels" not in r.claim for r in rows)
    assert sum("standard protocol" in r.claim for r in rows) == 2 and "1300 labels" in rows[1].setting
    few = {a: v for a, v in _arms().items() if a in ("ce", "rpkd")}
    rows = [r for r in claims(_constructed(few)) if r.kind == "claim"]  # no KD, OFA or control: what these arms fill
    assert len(rows) == 2 and "RPKD − CE" in rows[1].measured and "; KD − CE" not in rows[1].measured


def test_standard_protocol_field_labels_every_training_image():
    assert labelled_count(RPKDConfig(protocol="standard", n_labelled=50), 1300) == 1300
    assert labelled_count(RPKDConfig(n_labelled=50), 1300) == 50
    assert RPKDConfig.preset("paper").protocol == "standard"  # the paper's benchmarks are fully labelled
    assert standard_protocol(RPKDConfig.preset("smoke")).protocol == "standard"
    smoke = RPKDConfig.preset("smoke")  # the standard run's own schedule, when given; the few-label run keeps its own
    assert standard_protocol(smoke).n_student_steps == smoke.n_student_steps
    assert standard_protocol(dataclasses.replace(smoke, standard_steps=7)).n_student_steps == 7
    # KD's temperature of the standard run: standard_temperature when given (0: temperature); the few-label run and
    # the probe (teacher_part reads the config's own temperature) keep theirs
    assert standard_protocol(smoke).temperature == smoke.temperature
    assert standard_protocol(dataclasses.replace(smoke, standard_temperature=1.0)).temperature == 1.0
    with pytest.raises(ValueError, match="standard_temperature"):
        dataclasses.replace(smoke, standard_temperature=-1.0).validated()


def test_shifted_digits_are_each_image_moved_by_at_most_the_shift_with_zero_fill():
    task = load_digits_task()
    same = shifted_task(task, 0)
    assert torch.equal(same.images, task.images)
    moved = shifted_task(task, 1)
    assert torch.equal(moved.fine, task.fine) and moved.images.shape == task.images.shape
    assert torch.equal(moved.images, shifted_task(task, 1).images)  # one fixed data set, not a fresh draw
    pad = torch.nn.functional.pad(task.images, (1, 1, 1, 1))
    n_moved = 0
    for i in range(40):  # each image is some window of its own zero-padded picture: a shift in [-1, 1]^2
        windows = [pad[i, 0, 1 - dy:9 - dy, 1 - dx:9 - dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
        assert any(torch.equal(moved.images[i, 0], w) for w in windows)
        n_moved += not torch.equal(moved.images[i], task.images[i])
    assert n_moved > 20  # most images move (8 of 9 offsets are not zero)
    with pytest.raises(ValueError, match="max_shift"):
        shifted_task(task, 9)
    assert RPKDConfig.preset("book", shift=1).shift == 1


def test_teacher_targets_standardise_other_images_with_the_transfer_set_statistics():
    x = load_digits_task().images[:64][None]
    teacher = make_teacher(1, 2, 4, seed=0)
    teacher.eval()
    logits, tokens = teacher_targets(teacher, x, 4)
    few_logits, few = teacher_targets(teacher, x[:, :4], 4, reference=x)
    assert torch.allclose(few, tokens[:, :4], atol=1e-5) and torch.allclose(few_logits, logits[:, :4])
    assert not torch.allclose(teacher_targets(teacher, x[:, :4], 4)[1], tokens[:, :4], atol=1e-3)


def test_prototype_scores_are_cosines_over_tau_and_both_branches_are_distributions():
    protos = RandomPrototypes(6, 5, 3, seed=1).prototypes
    tau = 0.25
    z = _z(m=2, b=3, length=4, d=5)
    scores = prototype_scores(z, protos, tau)
    assert scores.shape == (2, 3, 4, 6) and float(scores.abs().max()) <= 1 / tau + 1e-5
    # a location pointing along prototype k (any length) scores cos = 1 there: 1 / tau
    along = prototype_scores(3.0 * protos, protos, tau)
    assert torch.allclose(torch.diagonal(along), torch.full((6,), 1 / tau), atol=1e-5)
    glob = global_distribution(z, protos, tau)  # over the K prototypes
    maps = activation_maps(z, protos, tau)  # each prototype over the L locations
    assert glob.shape == (2, 3, 6) and maps.shape == (2, 3, 6, 4)
    assert torch.allclose(glob.exp().sum(-1), torch.ones(2, 3), atol=1e-5)
    assert torch.allclose(maps.exp().sum(-1), torch.ones(2, 3, 6), atol=1e-5)
    # the global branch reads the mean location: moving locations around it changes nothing
    assert torch.allclose(global_distribution(z.flip(-2), protos, tau), glob, atol=1e-6)


def test_cross_entropy_skips_unknown_labels_per_member():
    logits = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(0))
    labels = torch.tensor([[0, 2, -1, 1, -1], [-1, -1, -1, -1, -1]])
    loss = cross_entropy(logits, labels)
    known = labels[0] >= 0
    assert torch.allclose(loss[0], F.cross_entropy(logits[0][known], labels[0][known]))
    assert loss[1] == 0  # no label known: no cross-entropy
    with pytest.raises(ValueError, match="labels"):
        cross_entropy(logits, torch.full((2, 5), 3))


def test_as_tokens_pools_maps_and_keeps_a_token_grid_of_its_own_size():
    maps = torch.rand(2, 3, 4, 6, 6)
    pooled = as_tokens(maps, 1)
    assert torch.allclose(pooled[:, :, 0], maps.mean(dim=(-2, -1)), atol=1e-6)
    tokens = torch.rand(2, 3, 16, 5)  # a 4x4 token sequence on its own 4x4 grid: unchanged
    assert torch.allclose(as_tokens(tokens, 4), tokens)
    with pytest.raises(ValueError, match="grid"):
        as_tokens(tokens, 0)


def test_headline_has_one_line_per_claim_with_its_verdict():
    results = _constructed(_arms(rpkd=0.9))
    lines = headline(results)
    rows = apply_gates(claims(results))
    assert len(lines) == len(rows) and all(line.endswith(row.verdict) for line, row in zip(lines, rows, strict=True))
    std = _constructed(_arms(), protocol="standard")
    assert len(headline(results, std)) == len(claims(results, std))


def test_a_failed_distill_gate_makes_the_protocols_claims_untested():
    few = _constructed(_arms(kd=0.9, ofa=0.9))  # KD and OFA gain over CE: the gate passes, RPKD reads no
    std = _constructed(_arms(), protocol="standard")  # nobody gains over CE: no usable room
    rows = apply_gates(claims(few, std))
    gates = {r.name: r.outcome for r in rows if r.kind == "gate"}
    assert gates["distill"] == "pass" and gates["distill_standard"] == "fail" and gates["headroom_standard"] == "pass"
    standard_rows = [r for r in rows if r.kind == "claim" and "standard protocol" in r.claim]
    assert len(standard_rows) == 2 and all(r.outcome == "untested" and "distill_standard" in r.verdict
                                           for r in standard_rows)
    assert distill_verdict([0.30, 0.31, 0.29]).startswith("pass")
    assert distill_verdict([0.0, 0.2, 0.1]).startswith("fail")
    dead = next(r for r in claims(few) if r.claim == "the teacher has no dead channels")
    assert dead.kind == "check" and dead.outcome == "pass" and "dead channels of 16" in dead.measured


def test_a_run_killed_inside_the_teacher_and_the_student_loops_resumes_bit_for_bit(tmp_path):
    """Issue 53: the smoke run (one class count, so one part) once made no save before its part ended, so a kill
    anywhere lost the whole part (and the all-chapter kill test had no save to kill after). Both training loops
    now save their state: killed once in the teacher's loop and once in the students', the run resumes to the
    uninterrupted run's numbers, bit for bit."""
    from .test_resume_kills import Killed, KillingCheckpointer, _differences, _without_timings

    cfg = RPKDConfig.preset("smoke")
    recorder = KillingCheckpointer(tmp_path / "whole")
    whole = run(cfg, checkpoint=recorder)
    c = cfg.class_grid[0]
    teacher = [i + 1 for i, name in enumerate(recorder.names) if name == f"C={c}/teacher"]
    students = [i + 1 for i, name in enumerate(recorder.names) if name == f"C={c}/students"]
    assert len(teacher) > 2 and len(students) > 2, recorder.names[-3:]
    folder, done = tmp_path / "killed", 0
    for kill in (teacher[len(teacher) // 2], students[len(students) // 2]):
        with pytest.raises(Killed):
            run(cfg, checkpoint=KillingCheckpointer(folder, kill_after=kill - done, resume=done > 0))
        done = kill
        torch.manual_seed(12345)  # whatever the process did before it died
    resumed = run(cfg, checkpoint=KillingCheckpointer(folder, resume=True))
    assert _differences(_without_timings(whole.summary), _without_timings(resumed.summary)) == []
    assert _differences(_without_timings(whole.curves), _without_timings(resumed.curves)) == []


def _spy_training(monkeypatch, teacher):
    """Record, every step of ``train_students``, the members' inputs and targets and the teacher's inputs."""
    from explorables.rpkd import training

    steps, seen = [], []
    real = training.member_losses

    def spy(model, prototypes, x, labels, t_logits, t_tokens, **kw):
        steps.append((x.clone(), labels.clone(), t_logits.clone(), t_tokens.clone()))
        return real(model, prototypes, x, labels, t_logits, t_tokens, **kw)

    monkeypatch.setattr(training, "member_losses", spy)
    teacher.register_forward_pre_hook(lambda _, args: seen.append(args[0].clone()))
    return steps, seen


def test_consistent_augmentation_gives_every_arm_and_the_teacher_the_same_fresh_view(monkeypatch):
    """Beyer et al. (2022): every step draws fresh views (one random offset per seed and image, within the
    range), every arm of a seed and the teacher see the same one, and the targets are the teacher's on it."""
    n_seeds, n_arms, a = 2, 3, 1
    base = torch.rand(1, 1, 8, 8, generator=torch.Generator().manual_seed(0)) + 0.1  # every shift a new picture
    images = base.expand(n_seeds, 12, 1, 8, 8).contiguous()  # one image: every view's offset can be read off
    labels = torch.zeros(n_seeds, 12, dtype=torch.long)  # every label known (standard protocol)
    teacher = make_teacher(1, 2, 4, seed=0)
    teacher.eval()
    logits, tokens = teacher_targets(teacher, images[:1], 4)
    logits, tokens = logits.expand(n_seeds, -1, -1), tokens.expand(n_seeds, -1, -1, -1)
    protos = RandomPrototypes(8, 4, tokens.shape[-1], seed=1)
    steps, seen = _spy_training(monkeypatch, teacher)
    train_students("mixer", ("ce", "kd", "rpkd"), images, labels, logits, tokens, protos, LossWeights(), width=4,
                   grid=4, n_steps=3, batch_size=16, lr=1e-2, temperature=4.0, tau=0.2, ofa_eps=1.5, seed=0,
                   device="cpu", augment=a, teacher=teacher)
    assert len(steps) == 3
    shifts = {(dy, dx): _translate(base, torch.tensor([[dy, dx]]), a)[0] for dy in (-a, 0, a) for dx in (-a, 0, a)}
    offsets = []
    for (x, _, t_logits, t_tokens), view in zip(steps, seen[1:], strict=True):  # seen[0]: the statistics pass
        x = x.view(n_arms, n_seeds, *x.shape[1:])
        assert all(torch.equal(x[k], x[0]) for k in range(n_arms))  # every arm of a seed: the same view
        assert torch.equal(view.view(x[0].shape), x[0])  # the teacher saw exactly the students' views
        own_logits, own_tokens = teacher_targets(teacher, view, 4, reference=images[:1])  # the transfer set's stats
        assert torch.allclose(t_logits[:n_seeds].flatten(0, 1), own_logits[0])  # targets: the teacher's on them
        assert torch.allclose(t_tokens[:n_seeds].flatten(0, 1), own_tokens[0], atol=1e-5)
        offsets.append([next(k for k, s in shifts.items() if torch.equal(v, s)) for v in x[0].flatten(0, 1)])
    drawn = {o for step in offsets for o in step}
    assert len(drawn) > 4 and all(max(map(abs, o)) <= a for o in drawn)  # random offsets within [-a, a]^2
    assert offsets[0] != offsets[1] != offsets[2]  # fresh every step, not a fixed shifted copy
    # without augmentation the students see the stored images and the stored targets
    steps.clear()
    train_students("mixer", ("ce",), images, labels, logits, tokens, protos, LossWeights(), width=4, grid=4,
                   n_steps=1, batch_size=16, lr=1e-2, temperature=4.0, tau=0.2, ofa_eps=1.5, seed=0, device="cpu")
    assert all(torch.equal(v, base[0]) for v in steps[0][0].flatten(0, 1))
    with pytest.raises(ValueError, match="teacher"):
        train_students("mixer", ("ce",), images, labels, logits, tokens, protos, LossWeights(), width=4, grid=4,
                       n_steps=1, batch_size=16, lr=1e-2, temperature=4.0, tau=0.2, ofa_eps=1.5, seed=0,
                       device="cpu", augment=1)
    with pytest.raises(ValueError, match="augment"):
        train_students("mixer", ("ce",), images, labels, logits, tokens, protos, LossWeights(), width=4, grid=4,
                       n_steps=1, batch_size=16, lr=1e-2, temperature=4.0, tau=0.2, ofa_eps=1.5, seed=0,
                       device="cpu", augment=9, teacher=teacher)


def test_standard_augment_changes_only_the_standard_protocol_and_resumes_bit_for_bit(tmp_path):
    """The few-label run is the same bit for bit whatever ``standard_augment``; the standard run changes; a
    standard run with fresh views killed inside its students' loop resumes to the same numbers."""
    from .test_resume_kills import Killed, KillingCheckpointer, _differences, _without_timings

    small = RPKDConfig.preset("smoke", n_student_steps=6, n_teacher_steps=5)
    few0, std0 = run_protocols(small, workers=1)
    few1, std1 = run_protocols(dataclasses.replace(small, standard_augment=1), workers=1)
    assert _differences(_without_timings(few0.summary), _without_timings(few1.summary)) == []
    assert std0.summary["C=2"]["accuracy"] != std1.summary["C=2"]["accuracy"]
    cfg = standard_protocol(dataclasses.replace(small, standard_augment=1))
    recorder = KillingCheckpointer(tmp_path / "whole")
    whole = run(cfg, checkpoint=recorder)
    assert whole.summary["C=2"]["accuracy"] == std1.summary["C=2"]["accuracy"]
    students = [i + 1 for i, name in enumerate(recorder.names) if name == "C=2/students"]
    with pytest.raises(Killed):
        run(cfg, checkpoint=KillingCheckpointer(tmp_path / "killed", kill_after=students[2]))
    torch.manual_seed(12345)
    resumed = run(cfg, checkpoint=KillingCheckpointer(tmp_path / "killed", resume=True))
    assert _differences(_without_timings(whole.summary), _without_timings(resumed.summary)) == []
    assert _differences(_without_timings(whole.curves), _without_timings(resumed.curves)) == []


@pytest.mark.parametrize("n_labelled", [20, 300])
def test_the_teacher_rows_computed_once_give_the_per_step_numbers_bit_for_bit(n_labelled, monkeypatch):
    """RPKD's and the control's teacher side, computed once over the transfer set (TeacherRows) and gathered per
    batch, trains every arm to the same loss curve and weights as computing it every step from the batch's tokens;
    a transfer set too large for the tables (TEACHER_ROWS_BYTES) takes the per-step path."""
    from explorables.rpkd import training

    x, fine, logits, tokens, protos = _tiny_distillation(3, 5)
    orders = [torch.randperm(300, generator=torch.Generator().manual_seed(s)) for s in range(2)]
    order = torch.stack(orders)
    labels = torch.stack([student_labels(fine[o], n_labelled, 3) for o in orders])
    built = []

    class Counted(training.TeacherRows):
        def __init__(self, *args):
            built.append(1)
            super().__init__(*args)

    monkeypatch.setattr(training, "TeacherRows", Counted)

    def train(rows: bool):
        return train_students("mixer", ARMS, x[order], labels, logits[0][order], tokens[0][order], protos,
                              LossWeights(map=0.5), width=6, grid=4, n_steps=6, batch_size=16, lr=1e-2,
                              temperature=4.0, tau=0.2, ofa_eps=1.5, seed=0, device=torch.device("cpu"),
                              teacher_rows=rows)

    (per_step, per_step_curve), (gathered, gathered_curve) = train(False), train(True)
    assert built == [1]
    assert per_step_curve == gathered_curve
    assert all(torch.equal(a, b) for a, b in zip(per_step.state_dict().values(), gathered.state_dict().values(),
                                                 strict=True))
    monkeypatch.setattr(training, "TEACHER_ROWS_BYTES", 0)
    _, too_large_curve = train(True)
    assert built == [1] and too_large_curve == per_step_curve


def test_with_two_workers_this_process_runs_jobs_beside_one_joblib_worker(monkeypatch):
    """run_protocols' scheduler: this process (already imported) is one of the ``workers`` and starts only
    ``workers - 1`` joblib processes. ``id(cfg)`` tells where a job ran: here it is the id of this very config,
    in a worker that of an unpickled copy."""
    import joblib.executor

    from explorables.rpkd.experiment import _run_jobs

    asked = []
    real = joblib.executor.get_memmapping_executor
    monkeypatch.setattr(joblib.executor, "get_memmapping_executor", lambda n, **kw: asked.append(n) or real(n, **kw))
    cfg = RPKDConfig.preset("smoke")
    jobs = {("job", i): (id, (), lambda: (cfg,)) for i in range(4)}
    jobs[("after", 0)] = (id, (("job", 3),), lambda: (cfg,))
    done: dict = {}
    _run_jobs(jobs, done, 2)
    assert asked == [1] and set(done) == set(jobs)
    where = [done[name][0] == id(cfg) for name in jobs]
    assert any(where) and not all(where)


@pytest.mark.parametrize("skip", [False, True])
def test_member_losses_read_the_same_numbers_from_teacher_rows_as_from_the_batch_tokens(skip):
    """member_losses with the teacher's side gathered from TeacherRows equals computing it from the batch's
    tokens: every term, the loss and every gradient, with every member computed or only those that weigh a term."""
    from explorables.rpkd.training import Distiller, TeacherRows, _take

    n_seeds, n, weights = 2, 40, LossWeights(map=0.5)
    weight = weights.matrix(ARMS, n_seeds)
    members = {t: torch.nonzero(weight[:, j]).flatten() for j, t in enumerate(TERMS)} if skip else None
    m = len(ARMS) * n_seeds
    gen = torch.Generator().manual_seed(4)
    images = torch.rand(n_seeds, n, 1, 8, 8, generator=gen)
    labels = torch.randint(5, (n_seeds, n), generator=gen)
    labels[:, 10:] = -1
    t_logits, t_tokens = torch.randn(n_seeds, n, 5, generator=gen), torch.randn(n_seeds, n, 16, 10, generator=gen)
    idx = torch.randint(n, (n_seeds, 12), generator=gen)
    protos = RandomPrototypes(12, 6, 10, seed=0)
    batch = [_take(t, idx, len(ARMS)) for t in (images, labels, t_logits, t_tokens)]
    out = []
    for rows in (None, TeacherRows(protos, t_tokens, 0.2).batch(idx)):
        model = Distiller(make_student("mixer", m, 5, 8, seed=0), m, 8, 5, 6, seed=0)
        terms = member_losses(model, protos, *batch[:3], batch[3] if rows is None else None, grid=4,
                              temperature=4.0, tau=0.2, ofa_eps=1.5, members=members, teacher_rows=rows)
        loss = (weight * terms).sum()
        loss.backward()
        out.append((terms, [p.grad for p in model.parameters()]))
    (tokens_terms, tokens_grads), (rows_terms, rows_grads) = out
    assert torch.equal(tokens_terms, rows_terms) and bool((rows_terms[:, TERMS.index("map")] != 0).any())
    assert all(torch.equal(a, b) for a, b in zip(tokens_grads, rows_grads, strict=True))


def test_a_worker_error_reaches_the_caller_without_waiting_for_the_job_running_here():
    """_run_jobs with two workers: the first job runs on this process's thread and blocks until released; the
    second, in the joblib worker, raises. The error must come back while the first is still blocked (the thread is
    a daemon: the interpreter does not wait for it either)."""
    import operator
    import threading

    from explorables.rpkd.experiment import _run_jobs

    cfg = RPKDConfig.preset("smoke")
    release, finished = threading.Event(), threading.Event()

    def slow(c):
        release.wait(60)  # a scheduler that waits for this job gets it back only after 60 s, and then finished
        finished.set()

    jobs = {("slow", 0): (slow, (), lambda: (cfg,)), ("fails", 0): (operator.truediv, (), lambda: (cfg, 0))}
    try:
        with pytest.raises(TypeError):
            _run_jobs(jobs, {}, 2)
        assert not finished.is_set()  # the error came back while the job here was still running
    finally:
        release.set()
