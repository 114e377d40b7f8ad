"""Tests of chapter 12's budget changes on the Intel host: the members trained in two processes give the numbers of
one ensemble, and the last task's Fisher (which anchors nothing) is skipped without moving any random draw."""

from __future__ import annotations

import torch

import explorables.trust_region_cl.continual as continual
import explorables.trust_region_cl.experiment as experiment
from explorables.trust_region_cl import Config, Member, Net, Strengths, init_params, make_schedule, run
from explorables.trust_region_cl.continual import eval_batch

from .trees import assert_same_tree, without_timings


def test_pooled_and_in_process_runs_give_the_same_numbers_to_the_bit_at_eight_seeds():
    cfg = Config.preset("smoke", seeds=tuple(range(8)), n_steps_per_task=20, reconverge_max_steps=10, maml_steps=5)
    here, pooled = run(cfg.replace(processes=1)), run(cfg.replace(processes=2))
    assert_same_tree(without_timings(here.summary), without_timings(pooled.summary))
    assert_same_tree(without_timings(here.curves), without_timings(pooled.curves))


def test_a_pooled_run_splits_the_members_into_the_two_method_groups_and_merges_them_back_in_order():
    setup = experiment._Setup(Config.preset("smoke"), swd=False, pool=object())
    groups = setup.groups()
    assert len(groups) == 2 and sorted(groups[0] + groups[1]) == list(range(len(setup.members)))
    trcl = {i for i, mem in enumerate(setup.members) if mem.method in ("trcl", "trcl_iso")}
    assert trcl <= set(groups[0])  # the projection's rows stay together
    full = torch.arange(len(setup.members) * 3.0).view(len(setup.members), 3)
    parts = [full[groups[0]], full[groups[1]]]
    assert torch.equal(experiment._merge(parts, groups), full)
    assert torch.equal(experiment._merge([p.T for p in parts], groups, dim=1), full.T)
    assert experiment._Setup(Config.preset("smoke"), swd=False).groups() == [list(range(len(setup.members)))]


def test_the_last_tasks_fisher_is_skipped_and_its_draws_still_made(monkeypatch):
    tasks = ("gaussians", "moons", "circles", "spiral")
    net, schedule = Net(2, 4, width=8, depth=1), make_schedule(10)
    members = [Member(m, s) for m in ("trcl", "ewc", "replay") for s in (0, 1)]
    calls = []
    real = continual._diagonal_fisher
    monkeypatch.setattr(continual, "_diagonal_fisher", lambda *a, **k: calls.append(1) or real(*a, **k))

    def train(n_tasks):
        return continual.train_sequence(
            init_params(net, [0, 1] * 3), net, schedule, tasks[:n_tasks], members, Strengths(trust_radius=0.05),
            n_seeds=2, n_steps_per_task=6, batch_size=8, lr=1e-2, n_fisher=4, n_samples=6,
            eval_set=eval_batch(tasks, 2, 4, 10, 0, "cpu"), seed=3,
        )  # fmt: skip

    short = train(3)
    assert len(calls) == 2  # after tasks 1 and 2, not after the last
    longer = train(4)  # computes the Fisher after task 3: the samples drawn after it must be the same
    for a, b in zip(short.samples, longer.samples[:3], strict=True):
        assert torch.equal(a, b)
    for a, b in zip(short.eval_losses, longer.eval_losses[:3], strict=True):
        assert torch.equal(a, b)


def test_the_run_stays_in_one_process_where_the_split_would_move_the_last_digits(monkeypatch):
    def no_pool(*args, **kwargs):
        raise AssertionError("a worker process was started where the split is not exact")

    monkeypatch.setattr(experiment, "ProcessPoolExecutor", no_pool)
    eight = Config.preset("smoke", seeds=tuple(range(8)))
    assert experiment.split_is_exact(eight)
    assert not experiment.split_is_exact(eight.replace(seeds=(0, 1, 2)))
    assert not experiment.split_is_exact(eight.replace(iso_radius=float("inf")))
    cfg = Config.preset("smoke", n_steps_per_task=5, reconverge_max_steps=3, maml_steps=2, processes=2)
    assert len(cfg.seeds) % 8 and run(cfg).summary  # three seeds: one process, no worker


def test_a_run_resumed_after_the_sequence_gives_the_pooled_relearning_the_serial_numbers(tmp_path):
    """Resumed with the continual sequence stored (no early worker job), the re-learning curves are still split
    between this process and the worker, from the checkpointed state: the numbers are the serial run's to the bit."""
    from explorables.core.checkpoint import Checkpointer

    cfg = Config.preset("smoke", seeds=tuple(range(8)), n_steps_per_task=20, reconverge_max_steps=10, maml_steps=5,
                        processes=2)  # fmt: skip
    serial = run(cfg.replace(processes=1))
    run(cfg, checkpoint=Checkpointer(tmp_path, every_s=0))
    stored = Checkpointer(tmp_path, resume=True)
    later = [k for k in stored.entries if k.startswith(("relearning/", "part/reconvergence", "part/maml"))]
    assert "part/reconvergence" in later and stored.get("part/sequence") is not None
    stored.save("run", stored.entries["run"], drop=tuple(later))
    resumed = run(cfg, checkpoint=Checkpointer(tmp_path, resume=True))
    assert_same_tree(without_timings(serial.summary), without_timings(resumed.summary))
    assert_same_tree(without_timings(serial.curves), without_timings(resumed.curves))
