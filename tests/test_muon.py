"""Muon (chapter 16): Newton–Schulz against the SVD and torch.optim.Muon; the river valley."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorables.core.checkpoint import read_checkpoint
from explorables.muon import make_problem, newton_schulz, optimize, oscillation, polar_factor


@pytest.mark.parametrize("shape", [(8, 8), (20, 12), (12, 20), (3, 40)])
def test_newton_schulz_approaches_the_polar_factor(shape):
    G = torch.randn(*shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    X = newton_schulz(G)
    s = torch.linalg.svdvals(X)
    assert 0.6 < s.min() and s.max() < 1.2  # the quintic's known band, not exactly 1
    # same singular vectors as the polar factor: X = U diag(s') V^T with s' > 0
    P = polar_factor(G)
    assert torch.trace(P.T @ X) / torch.linalg.matrix_norm(X) / torch.linalg.matrix_norm(P) > 0.97
    # many steps of the classical cubic (a, b, c) = (1.5, -0.5, 0) converge to the polar factor itself
    exact = newton_schulz(G, steps=60, coefficients=(1.5, -0.5, 0.0))
    torch.testing.assert_close(exact, P, atol=1e-8, rtol=0)


def test_newton_schulz_refuses_coefficients_whose_iteration_grows_without_bound():
    """The coefficients' rule (issue 53 item 5): accepted ones keep 99 steps finite and bounded by the rule's
    B = max(1, max |p| on [0, 1]); refused ones (a repeated coefficient, a huge one) are the ones that blow up."""
    from explorables.muon.orthogonalize import Coefficients, _largest_abs

    G = torch.randn(12, 8, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    for coefficients in [(3.4445, -4.775, 2.0315), (1.5, -0.5, 0.0), (2.0, -1.5, 0.5), (-1.0, 0.0, 0.0)]:
        X = newton_schulz(G, steps=99, coefficients=coefficients)
        bound = max(1.0, _largest_abs(*coefficients, 1.0))
        assert torch.isfinite(X).all() and torch.linalg.svdvals(X).max() <= bound + 1e-9
    for coefficients in [(3.4445, 3.4445, 2.0315), (1e12, 0.0, 0.0), (1.1, 0.0, 0.0)]:
        X = newton_schulz.__wrapped__(G, steps=99, coefficients=coefficients)  # unchecked: it does grow
        assert not (torch.isfinite(X).all() and X.abs().max() < 100)
        with pytest.raises(ValueError, match="coefficients must be three finite numbers"):
            newton_schulz(G, coefficients=coefficients)
    assert "bounded" in Coefficients().describe()


def test_batched_equals_one_at_a_time():
    G = torch.randn(4, 6, 9, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    batched = newton_schulz(G)
    for b in range(4):
        torch.testing.assert_close(batched[b], newton_schulz(G[b]), atol=1e-12, rtol=0)


def test_matches_torch_optim_muon():
    from torch.optim._muon import _zeropower_via_newtonschulz

    G = torch.randn(30, 20, generator=torch.Generator().manual_seed(2))
    ours = newton_schulz(G, dtype=torch.bfloat16)
    assert torch.equal(ours, _zeropower_via_newtonschulz(G, (3.4445, -4.775, 2.0315), 5, 1e-7))
    W = torch.nn.Parameter(torch.randn(30, 20, generator=torch.Generator().manual_seed(3)))
    start = W.detach().clone()
    opt = torch.optim.Muon([W], lr=0.1, weight_decay=0.0, momentum=0.0)
    W.grad = G.clone()
    opt.step()
    expected = start - 0.1 * np.sqrt(30 / 20) * ours.float()  # torch scales lr by sqrt(max(1, rows/cols))
    torch.testing.assert_close(W.detach(), expected, atol=1e-6, rtol=0)


def test_problem_geometry():
    p = make_problem(m=10, n=8, rank=2, spikes=2, seed=0)
    torch.testing.assert_close(p.U.T @ p.U, torch.eye(10, dtype=torch.float64))
    assert float(p.loss(p.W_star)) == 0.0
    # the gradient is the derivative of the loss (finite differences)
    W = p.W0
    E = torch.randn_like(W) * 1e-6
    assert float(p.loss(W + E) - p.loss(W)) == pytest.approx(float((p.gradient(W) * E).sum()), rel=1e-4)


@pytest.fixture(scope="module")
def runs():
    p = make_problem(seed=0)
    steps = 3000
    return {
        "gd": optimize(p, "gd", steps),
        "muon": optimize(p, "muon", steps),
        "muon_momentum": optimize(p, "muon", steps, momentum=0.9),
        "switch": optimize(p, "switch", steps, switch_step=300),
    }


def test_muon_runs_down_the_river_faster_early(runs):
    assert runs["muon"].river[100] < 0.5 * runs["gd"].river[100]


def test_gd_ends_below_muon_near_the_bottom(runs):
    assert runs["gd"].loss[-1] < runs["muon"].loss[-1]


def test_muon_oscillates_and_momentum_overshoots(runs):
    assert oscillation(runs["muon"].spike) > 0.5  # zig-zags at the bottom
    m = runs["muon_momentum"].loss
    assert m[-1] > 10 * m.min()  # it got much lower than where it ends: overshoot


def test_switching_beats_both(runs):
    final = {k: r.loss[-1] for k, r in runs.items()}
    assert final["switch"] < 0.1 * min(final["gd"], final["muon"])


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: newton_schulz(torch.ones(3)), "G must have shape"),
        (lambda: newton_schulz(torch.ones(3, 3), steps=-1), "steps"),
        (lambda: optimize(make_problem(), "sgd", 10), "method"),
        (lambda: optimize(make_problem(), "muon", 10, muon_lr=-1.0), "muon_lr"),
        (lambda: optimize(make_problem(), "adam", 10, adam_lr=0.0), "adam_lr"),
        (lambda: optimize(make_problem(), "switch", 10), "switch_step"),
        (lambda: make_problem(rank=20), "rank"),
        (lambda: make_problem(lam_spike=0.0), "lam_spike"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --- the optimiser class and the language model ------------------------------------------------------


def test_muon_class_matches_torch_in_bfloat16_with_momentum():
    from explorables.muon import Muon

    torch.manual_seed(0)
    a = torch.nn.Parameter(torch.randn(12, 8))
    b = torch.nn.Parameter(a.detach().clone())
    ours = Muon([a], lr=0.05, momentum=0.9, ns_dtype=torch.bfloat16)
    ref = torch.optim.Muon([b], lr=0.05, weight_decay=0.0, momentum=0.9)
    for step in range(3):
        g = torch.randn(12, 8, generator=torch.Generator().manual_seed(step))
        a.grad, b.grad = g.clone(), g.clone()
        ours.step()
        ref.step()
    torch.testing.assert_close(a.detach(), b.detach(), atol=1e-5, rtol=0)


def test_muon_rejects_non_matrices_and_bad_rates():
    from explorables.muon import Muon

    with pytest.raises(ValueError, match="2-D"):
        Muon([torch.nn.Parameter(torch.zeros(3))])
    with pytest.raises(ValueError, match="lr"):
        Muon([torch.nn.Parameter(torch.zeros(3, 3))], lr=-0.1)


@pytest.mark.parametrize(
    "group, message",
    [
        ({"lr": float("nan")}, "lr"),
        ({"lr": 0.0}, "lr"),
        ({"momentum": 1.0}, "momentum"),
        ({"momentum": float("nan")}, "momentum"),
        ({"ns_steps": -1}, "ns_steps"),
        ({"ns_steps": 2.5}, "ns_steps"),
        ({"nesterov": "yes"}, "nesterov"),
    ],
)
def test_muon_checks_each_param_group_like_its_constructor(group, message):
    """A group's own settings are checked like the constructor's, at construction and in add_param_group
    (a group with lr=nan used to be accepted and turned every weight into nan at the first step)."""
    from explorables.muon import Muon

    w = torch.nn.Parameter(torch.ones(3, 3))
    with pytest.raises(ValueError, match=message):
        Muon([{"params": [w], **group}])
    opt = Muon([torch.nn.Parameter(torch.ones(2, 2))])
    with pytest.raises(ValueError, match=message):
        opt.add_param_group({"params": [w], **group})
    assert len(opt.param_groups) == 1  # the refused group was not added
    with pytest.raises(ValueError, match="2-D"):
        opt.add_param_group({"params": [torch.nn.Parameter(torch.ones(3))]})
    assert len(opt.param_groups) == 1
    opt.add_param_group({"params": [w], "lr": 0.01})  # a valid group with its own rate is taken
    assert opt.param_groups[-1]["lr"] == 0.01 and opt.param_groups[-1]["momentum"] == opt.defaults["momentum"]


def test_the_switch_rows_seed_list_names_non_consecutive_draws():
    from explorables.muon.claims import _seed_list

    assert _seed_list([0, 1, 2, 3]) == "0–3"
    assert _seed_list([2, 5, 6, 7]) == "2, 5, 6, 7"
    assert _seed_list([4]) == "4"


def test_smoke_experiment_shows_the_claimed_directions():
    from explorables.muon import MuonConfig, headline, run

    r = run(MuonConfig.preset("smoke", n_sensing_steps=3000))
    sen = r.summary["sensing"]
    assert sen["early_ratio_muon_over_gd"] < 0.5
    tail = sen["by_seed"]["tail_loss"]
    assert len(tail["GD"]) == len(r.config.seeds) >= 3
    assert all(g < m for g, m in zip(tail["GD"], tail["Muon"], strict=True))
    assert all(x < g / 3 for x, g in zip(tail["Muon → GD"], tail["GD"], strict=True))
    assert all(np.isfinite(v) for v in r.summary["lm"]["final_val_loss"].values())
    lines = headline(r)  # the command line's summary quotes the run's own numbers
    assert f"Muon/GD = {sen['early_ratio_muon_over_gd']:.2f}" in lines[0]
    assert all(name in lines[2] for name in r.summary["lm"]["final_val_loss"])


def test_an_overflowing_step_size_is_refused_naming_it():
    problem = make_problem(m=6, n=6)
    with pytest.raises(ValueError, match="gd_lr is too large"):
        optimize(problem, "gd", 400, gd_lr=1.0)  # |1 - 1.0 x 100| ** 400 overflows float64


def test_config_cross_checks_name_the_fields():
    from explorables.muon import MuonConfig

    base = MuonConfig.preset("smoke")
    for changes, name in [
        (dict(n_river=base.matrix_size - 1), "n_river"),
        (dict(n_spikes=base.matrix_size), "n_spikes"),
        (dict(switch_step=base.n_sensing_steps + 1), "switch_step"),
        (dict(early_step=base.n_sensing_steps + 1), "early_step"),
        (dict(switch_grid=(10, base.n_sensing_steps + 1)), "switch_grid"),
        (dict(lm_d_model=26), "lm_d_model"),
        (dict(n_tail_steps=base.n_sensing_steps + 1), "n_tail_steps"),
    ]:
        with pytest.raises(ValueError, match=name):
            base.replace(**changes)


# --- verdicts, on constructed numbers -------------------------------------------------------------------


def test_criteria_reach_every_branch():
    from explorables.core.verdicts import drive
    from explorables.muon.claims import CRITERIA

    assert drive(CRITERIA) == []
    assert {c.kind for c in CRITERIA} == {"check", "gate", "claim"}


def test_verdicts_read_the_interval_over_seeds():
    from explorables.muon.claims import early_verdict, late_verdict, overshoot_verdict, switch_verdict

    assert early_verdict([0.34, 0.3, 0.4]).startswith("yes")
    assert early_verdict([0.6, 0.7, 0.65]).startswith("no")
    assert early_verdict([0.3, 0.5, 0.2]).startswith("unclear")  # one seed near the threshold widens the interval
    assert late_verdict([1e-3, 1.1e-3, 0.9e-3], [1e-2, 1e-2, 1.2e-2]).startswith("yes")
    assert late_verdict([1e-2, 1.1e-2, 1e-2], [1e-3, 1e-3, 1.2e-3]).startswith("no")  # GD above Muon
    assert late_verdict([1e-3, 1e-1], [1e-2, 1e-2]).startswith("unclear")
    assert late_verdict([float("nan")], [1e-2]).startswith("unclear")  # a diverged GD is no evidence
    assert overshoot_verdict([11.0, 50.0, 30.0], [0.1, 0.1, 0.1]).startswith("yes")
    assert overshoot_verdict([2.0, 3.0, 2.5], [1.0, 1.0, 1.0]).startswith("no")
    assert overshoot_verdict([11.0, 10.0], [1.0, 1.0]).startswith("unclear")
    # the switch against the best decayed-LR Muon: yes when it ends lower (interval above 0), no when higher
    assert switch_verdict([0.1, 0.05, 0.08], [1.0, 1.0, 1.0]).startswith("yes")
    assert switch_verdict([2.0, 3.0, 2.5], [1.0, 1.0, 1.0]).startswith("no")
    assert switch_verdict([0.5, 2.0], [1.0, 1.0]).startswith("unclear")  # one seed each way
    assert switch_verdict([float("nan")] * 3, [1.0] * 3).startswith("unclear")


def test_decay_gate_and_the_one_baseline_schedule():
    from explorables.muon.claims import baseline_tail, decay_gate
    from explorables.muon.experiment import BASELINE, DECAYED

    tail = dict(zip(DECAYED, ([1e-4, 3e-5], [2e-5, 5e-5], [4e-5, 1e-5]), strict=True))
    assert baseline_tail(tail) == tail[BASELINE]  # one schedule for every seed, not the best per seed
    assert baseline_tail(tail, "Muon, WSD") == [4e-5, 1e-5]
    with pytest.raises(ValueError, match="baseline"):
        baseline_tail(tail, "Adam")
    assert decay_gate([1e-2, 2e-2, 1.5e-2], [1e-5, 2e-5, 1e-5]).startswith("pass")
    assert decay_gate([1e-2] * 3, [5e-3, 6e-3, 4e-3]).startswith("fail")  # only 2x: the baseline does not work
    assert decay_gate([1e-2] * 3, [float("inf")] * 3).startswith("fail")


def _valley_tails() -> dict[str, list[float]]:
    """Tail losses of a valley run where every gate passes: GD-like arms lowest, decayed Muon next, constant Muon
    and Muon with momentum far above."""
    tail = {k: [1e-6, 2e-6, 1.5e-6] for k in ("GD", "Muon → GD", "GD + momentum", "Adam")}
    tail |= {k: [1e-5, 2e-5, 1.5e-5] for k in ("Muon, cosine", "Muon, linear → 0", "Muon, WSD")}
    tail |= {"Muon": [1e-3, 2e-3, 1.5e-3], "Muon + momentum": [1e-2, 2e-2, 1.5e-2]}
    return tail


def _switch_draws(tail: dict[str, list[float]], extra: int = 0) -> dict:
    """The summary's switch comparison: the switch and the baseline on the seeds' draws, then ``extra`` more."""
    from explorables.muon.experiment import BASELINE

    pairs = {"Muon → GD": tail["Muon → GD"], BASELINE: tail[BASELINE]}
    return {"seeds": list(range(3 + extra)), "tail_loss": {k: v + v[:1] * extra for k, v in pairs.items()}}


def test_the_switch_comparison_runs_on_more_draws_than_the_other_rows():
    """The switch and its baseline run on ``switch_seeds`` valley draws: the seeds' own (the same tail losses as the
    other rows read) and then the next ones; the claims table's switch row reads all of them."""
    from explorables.muon import MuonConfig
    from explorables.muon.experiment import BASELINE, _sensing, switch_draws

    small = dict(n_sensing_steps=60, n_tail_steps=10, switch_step=20, early_step=5, switch_grid=(10,))
    cfg = MuonConfig.preset("smoke", seeds=(2, 5), switch_seeds=4, **small)
    assert switch_draws(cfg) == [2, 5, 6, 7]  # the seeds first, then the integers after the largest
    assert switch_draws(MuonConfig.preset("smoke", seeds=(0, 1, 2), switch_seeds=1)) == [0, 1, 2]  # never fewer
    book = MuonConfig.preset("book")
    assert len(switch_draws(book)) == book.switch_seeds > len(book.seeds)
    summary, _ = _sensing(cfg)
    drawn = summary["switch_draws"]
    assert drawn["seeds"] == [2, 5, 6, 7] and set(drawn["tail_loss"]) == {"Muon → GD", BASELINE}
    for name, tails in drawn["tail_loss"].items():
        assert len(tails) == 4 and tails[:2] == summary["by_seed"]["tail_loss"][name]
        assert len(set(tails)) == 4  # each draw is its own valley
    with pytest.raises(ValueError, match="switch_seeds"):
        MuonConfig(switch_seeds=0)


def test_gates_and_the_rows_they_turn_untested():
    from explorables.core.tables import apply_gates
    from explorables.muon import MuonConfig
    from explorables.muon.claims import claims, gd_gate, lm_gate, lm_verdict
    from explorables.muon.experiment import MuonResults

    assert gd_gate([1e-5, 2e-5, 1e-5], [1.0, 1.0, 1.0]).startswith("pass")
    assert gd_gate([0.5, 0.4, 0.6], [1.0, 1.0, 1.0]).startswith("fail")
    assert gd_gate([float("nan")] * 3, [1.0] * 3).startswith("fail")
    from explorables.muon.experiment import LM_BASELINE

    apart = {"adamw": [2.0, 2.1, 2.05], "muon": [2.5, 2.6, 2.55], "muon_then_adamw": [2.2, 2.3, 2.25]}
    apart[LM_BASELINE] = [2.4, 2.5, 2.45]
    close = {"adamw": [2.0, 2.1, 2.05], "muon": [2.01, 2.1, 2.06], "muon_then_adamw": [2.0, 2.11, 2.05]}
    close[LM_BASELINE] = [2.0, 2.1, 2.06]
    assert lm_gate(apart).startswith("pass") and lm_gate(close).startswith("fail")
    assert lm_verdict(apart).startswith("yes")
    assert lm_verdict({**apart, "muon_then_adamw": [2.7, 2.8, 2.75]}).startswith("no")
    # the LM claim is judged against the decayed baseline, not constant Muon: beating only constant Muon is a no
    assert lm_verdict({**apart, LM_BASELINE: [2.1, 2.2, 2.15]}).startswith("no")
    assert lm_verdict({**apart, LM_BASELINE: [float("nan")] * 3}).startswith("unclear")
    with pytest.raises(ValueError, match="baseline"):
        lm_verdict(apart, "muon")
    tail = _valley_tails()
    sensing = {
        "torch_muon_max_difference": 0.0,
        "spike_oscillation": {"Muon": 0.9},
        "by_seed": {
            "start_loss": [1.0, 1.0, 1.0],
            "early_ratio_muon_over_gd": [0.3, 0.32, 0.31],
            "tail_loss": tail,
            "min_loss": {k: [x / 100 for x in v] for k, v in tail.items()} | {"GD + momentum": tail["GD + momentum"]},
        },
        "switch_draws": _switch_draws(tail),
    }
    lm = {"chars": 1000, "held_out_chars": 100, "run_seeds": [0, 1, 2], "final_val_loss_by_seed": close}
    lm["switch_step"] = 12
    summary = {"sensing": sensing, "switch": {"rows": [{"lam_spike": 100.0, "best_switch": 2800}]}, "lm": lm}
    rows = claims(MuonResults(MuonConfig.preset("smoke"), summary))
    kinds = ["check", "gate", "gate", "gate", "gate", "claim", "claim", "gate", "claim", "claim", "claim"]
    assert [r.kind for r in rows] == kinds
    words = [r.outcome for r in apply_gates(rows)]
    assert words == ["pass", "pass", "pass", "fail", "fail", "yes", "yes", "pass", "yes", "yes", "untested"]
    assert "decaying learning rate" in rows[2].claim
    # when decaying Muon's step does not escape constant Muon's floor, the switch claim is untested
    sensing["by_seed"]["tail_loss"] = tail | {
        k: tail["Muon"] for k in ("Muon, cosine", "Muon, linear → 0", "Muon, WSD")
    }
    words = [r.outcome for r in apply_gates(claims(MuonResults(MuonConfig.preset("smoke"), summary)))]
    assert words[2] == "fail" and words[9] == "untested"
    sensing["by_seed"]["tail_loss"] = tail
    assert "early speed" in rows[3].claim
    # the overshoot's control: when GD + momentum overshoots too, the claim is untested
    sensing["by_seed"]["min_loss"]["GD + momentum"] = [x / 100 for x in tail["GD + momentum"]]
    words = [r.outcome for r in apply_gates(claims(MuonResults(MuonConfig.preset("smoke"), summary)))]
    assert words[7:9] == ["fail", "untested"]


def test_tail_loss_is_the_median_of_the_last_steps():
    from explorables.muon.experiment import tail_loss

    orbit = np.array([9.0, 9.0, 1.0, 5.0, 3.0])
    assert tail_loss(orbit, 3) == 3.0 and tail_loss(orbit, 1) == 3.0 and tail_loss(orbit, 5) == 5.0


def test_lm_fields_are_refused_before_any_work(monkeypatch):
    """The reported lm_layers=-1, lm_width=-8 / 7, lm_context=0 (now n_lm_layers, lm_d_model,
    lm_context_size) must fail at config time, before the sensing part runs."""
    from explorables.muon import MuonConfig, experiment

    def boom(*args, **kwargs):  # pragma: no cover - reached only if validation comes too late
        raise AssertionError("work started before the config was validated")

    monkeypatch.setattr(experiment, "optimize", boom)
    monkeypatch.setattr(experiment, "train_schedules", boom)
    for changes, name in [
        (dict(n_lm_layers=-1), "n_lm_layers"),
        (dict(lm_d_model=-8), "lm_d_model"),
        (dict(lm_d_model=7), "lm_d_model"),
        (dict(lm_context_size=0), "lm_context_size"),
        (dict(n_tail_steps=0), "n_tail_steps"),
        (dict(seeds=(0, 0)), "seeds"),
    ]:
        with pytest.raises(ValueError, match=name):
            experiment.run(MuonConfig.preset("smoke", **changes))


def test_lm_training_resumes_after_a_kill_with_the_same_loss(tmp_path):
    import json
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "OMP_NUM_THREADS": "1"}  # this checkout's package
    args = [
        sys.executable,
        "-m",
        "explorables",
        "run",
        "muon",
        "--scale",
        "smoke",
        "--quiet",
        "--no-figures",
        "--set",
        "n_lm_steps=200",
        "--set",
        "n_sensing_steps=200",
        "--set",
        "switch_grid=100",
        "--set",
        "n_tail_steps=50",
    ]
    full, killed = tmp_path / "full", tmp_path / "killed"
    assert subprocess.run([*args, "--out", str(full)], env=env, cwd=root).returncode == 0
    proc = subprocess.Popen(
        [*args, "--out", str(killed), "--checkpoint-every", "0"],
        env=env,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ckpt = killed / "checkpoint.pt"
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:  # wait until the LM itself has checkpointed
        if ckpt.exists() and any(k.startswith("lm/") for k in read_checkpoint(ckpt)["entries"]):
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert subprocess.run([*args, "--out", str(killed), "--resume"], env=env, cwd=root).returncode == 0
    a = json.loads((full / "results.json").read_text())["lm"]
    b = json.loads((killed / "results.json").read_text())["lm"]
    assert a == b  # same final losses, to the bit


def test_corpus_does_not_depend_on_what_else_is_imported():
    import subprocess
    import sys

    code = (
        "from explorables.muon.lm import stdlib_corpus; import hashlib; "
        "print(hashlib.sha1(stdlib_corpus(50_000).encode()).hexdigest())"
    )
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    busy = subprocess.run(
        [sys.executable, "-c", "import json.tool, logging.handlers, unittest.mock, asyncio; " + code],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert plain == busy and len(plain.strip()) == 40


def test_momentum_gd_matches_gd_in_the_limit_and_adam_moves_every_coordinate():
    p = make_problem(m=6, n=6, seed=1)
    gd = optimize(p, "gd", 50)
    gdm0 = optimize(p, "gd_momentum", 50, momentum=0.0)
    np.testing.assert_allclose(gd.loss, gdm0.loss, rtol=1e-12)  # beta = 0 is plain GD
    adam = optimize(p, "adam", 200, adam_lr=0.02)
    assert adam.loss[-1] < adam.loss[0]


def test_lab_reruns_on_settings_and_only_redraws_on_time():
    from explorables.muon.lab import MuonLab

    lab = MuonLab(steps=300, size=6)
    runs, image = lab.runs, lab.image.value
    lab.window.value = 100
    assert lab.runs is runs and lab.image.value != image and "t = 100" in lab.status.value
    lab.lam_spike.value = 300
    assert lab.runs is not runs


def test_newton_schulz_refuses_non_finite_input():
    """Issue 28: NaN used to pass straight through to the update."""
    import torch

    from explorables.muon.orthogonalize import newton_schulz

    G = torch.randn(4, 3)
    G[1, 2] = float("nan")
    with pytest.raises(ValueError, match="finite"):
        newton_schulz(G)
    G[1, 2] = float("inf")
    with pytest.raises(ValueError, match="finite"):
        newton_schulz(G)


# --- the decayed-learning-rate baselines -----------------------------------------------------------


@pytest.mark.parametrize("steps", [20, 100, 3000])
def test_lr_schedules_follow_their_closed_forms(steps):
    from explorables.muon.optimizers import WSD_DECAY, WSD_WARMUP, lr_factors

    t = np.arange(steps)
    assert lr_factors("constant", steps).tolist() == [1.0] * steps
    np.testing.assert_allclose(lr_factors("cosine", steps), (1 + np.cos(np.pi * t / steps)) / 2, atol=1e-12)
    np.testing.assert_allclose(lr_factors("linear", steps), 1 - t / steps, atol=1e-12)
    wsd = lr_factors("wsd", steps)
    n_warm, n_decay = max(1, round(WSD_WARMUP * steps)), max(1, round(WSD_DECAY * steps))
    n_stable = steps - n_warm - n_decay
    expected = np.r_[(np.arange(n_warm) + 1) / (n_warm + 1), np.ones(n_stable), 1 - np.arange(n_decay) / n_decay]
    np.testing.assert_allclose(wsd, expected, atol=1e-12)
    for name in ("cosine", "linear", "wsd"):  # every schedule peaks at 1 and decays toward 0 at the end
        f = lr_factors(name, steps)
        assert len(f) == steps and f.max() == pytest.approx(1.0) and f[-1] <= 1 / (0.2 * steps) + 1e-12


def test_a_decayed_schedule_scales_muons_step():
    p = make_problem(m=6, n=6, rank=2, spikes=1, seed=3)
    const = optimize(p, "muon", 40, muon_lr=0.02)
    half = optimize(p, "muon", 40, muon_lr=0.01)
    assert optimize(p, "muon", 40, muon_lr=0.02, schedule="constant").loss.tolist() == const.loss.tolist()
    cos = optimize(p, "muon", 40, muon_lr=0.02, schedule="cosine")
    assert cos.loss[1] == const.loss[1] and cos.loss[1] != half.loss[1]  # the first step is at the peak
    with pytest.raises(ValueError, match="schedule"):
        optimize(p, "gd", 10, schedule="cosine")
    with pytest.raises(ValueError, match="schedule"):
        optimize(p, "muon", 10, schedule="step")


def test_every_arm_runs_the_same_number_of_steps():
    from explorables.muon import MuonConfig
    from explorables.muon.experiment import TUNED, _sensing

    cfg = MuonConfig.preset(
        "smoke", seeds=(0,), n_sensing_steps=60, n_tail_steps=10, switch_step=20, early_step=5, switch_grid=(10,)
    )
    _, curves = _sensing(cfg)
    assert set(TUNED) <= set(curves) and {"GD", "Muon", "Adam"} <= set(curves)
    assert {len(c["loss"]) for c in curves.values()} == {cfg.n_sensing_steps + 1}


def test_tuning_gives_every_arm_the_same_grid_and_picks_its_best():
    from explorables.muon import MuonConfig
    from explorables.muon.experiment import DECAYED, TUNED, tune_lrs

    cfg = MuonConfig.preset(
        "smoke", seeds=(0, 1), n_sensing_steps=80, n_tail_steps=10, switch_step=20, early_step=5, switch_grid=(10,)
    )
    grid, steps = (0.01, 0.04), (20, 60)
    out = tune_lrs(cfg, grid=grid, base_seed=7, switch_steps=steps)
    assert set(out["picks"]) == set(TUNED.values()) | {"switch_step"} and set(out["table"]) == set(DECAYED)
    assert all(len(v) == len(grid) for v in [*out["table"].values(), *out["switch_table"].values()])  # same grid
    assert [int(k) for k in out["switch_table"]] == list(steps)
    for name in DECAYED:
        assert out["picks"][TUNED[name]] == grid[int(np.argmin(out["table"][name]))]
    flat = {(int(k), lr): v for k, row in out["switch_table"].items() for lr, v in zip(grid, row, strict=True)}
    assert (out["picks"]["switch_step"], out["picks"]["switch_lr"]) == min(flat, key=flat.get)  # joint argmin
    assert out["baseline"] == min(DECAYED, key=lambda n: min(out["table"][n]))
    assert all(s // 1000 == 7 for s in out["run_seeds"])  # tuning draws are the tuning base seed's
    with pytest.raises(ValueError, match="grid"):
        tune_lrs(cfg, grid=())
    with pytest.raises(ValueError, match="switch_steps"):
        tune_lrs(cfg, switch_steps=(cfg.n_sensing_steps + 1,))


def test_the_book_picks_are_the_committed_tuning_tables_argmin():
    import json
    from pathlib import Path

    from explorables.muon import MuonConfig
    from explorables.muon.experiment import BASELINE, DECAYED, LR_GRID, SWITCH_STEP_GRID, TUNED, TUNING_TABLE

    out = json.loads((Path(__file__).resolve().parents[1] / TUNING_TABLE).read_text(encoding="utf-8"))
    book = MuonConfig.preset("book")
    assert out["grid"] == list(LR_GRID) and out["switch_steps"] == list(SWITCH_STEP_GRID)
    assert all(len(v) == len(LR_GRID) for v in [*out["table"].values(), *out["switch_table"].values()])
    assert not {s // 1000 for s in out["run_seeds"]} & set(range(5))  # tuning draws disjoint from base seeds 0-4
    for name in DECAYED:
        assert getattr(book, TUNED[name]) == LR_GRID[int(np.argmin(out["table"][name]))]
    flat = {(int(k), lr): v for k, row in out["switch_table"].items() for lr, v in zip(LR_GRID, row, strict=True)}
    assert (book.switch_step, book.switch_lr) == min(flat, key=flat.get)
    assert BASELINE == min(DECAYED, key=lambda n: min(out["table"][n])) == out["baseline"]


# --- speed-ups that must not change a number ------------------------------------------------------------


def test_the_switch_sweep_equals_one_switch_run_per_step_to_the_bit():
    from explorables.muon.optimizers import switch_sweep

    p = make_problem(m=8, n=8, rank=2, spikes=2, seed=5)
    steps, grid = 300, (0, 1, 40, 150, 299, 300)
    swept = switch_sweep(p, steps, grid, muon_lr=0.03, gd_lr=0.018)
    one_by_one = [optimize(p, "switch", steps, 0.03, 0.018, switch_step=s).loss[-1] for s in grid]
    assert swept.tolist() == [float(x) for x in one_by_one]
    with pytest.raises(ValueError, match="switch_steps"):
        switch_sweep(p, steps, (10, steps + 1))


def test_optimize_runs_the_textbook_muon_step_to_the_bit():
    """optimize's Muon (without momentum, shortcut included) is W <- W - lr NS5(grad) with the public newton_schulz."""
    p = make_problem(m=7, n=9, rank=2, spikes=1, seed=6)
    W, losses = p.W0.clone(), [p.loss(p.W0)]
    for _ in range(60):
        W = W - 0.02 * newton_schulz(p.gradient(W))
        losses.append(p.loss(W))
    ours = optimize(p, "muon", 60, muon_lr=0.02).loss
    assert ours[-1] == float(p.loss(torch.stack([p.W0, W]))[-1])  # the same last iterate, to the bit
    np.testing.assert_allclose(ours, torch.stack(losses).numpy(), rtol=1e-12, atol=0)


def _small_lm():
    from explorables.muon.lm import stdlib_corpus

    return stdlib_corpus(12_000), dict(steps=30, switch_fraction=0.5, batch=4, context=16, d_model=16, eval_every=10)


def test_the_lm_switch_arm_continues_the_muon_run_to_the_bit(tmp_path):
    from explorables.core.checkpoint import Checkpointer
    from explorables.muon.lm import BOOK_SCHEDULES, SCHEDULES, train, train_schedules

    text, kw = _small_lm()
    alone = {s: train(text, s, seed=3, **kw) for s in BOOK_SCHEDULES}
    together = train_schedules(text, seed=3, **kw)
    assert together == alone  # every record of every schedule, to the bit
    every = train_schedules(text, seed=3, schedules=SCHEDULES, **kw)
    assert {s: every[s] for s in BOOK_SCHEDULES} == alone and list(every) == list(SCHEDULES)
    assert every["muon_linear"] == train(text, "muon_linear", seed=3, **kw)
    assert together["muon_then_adamw"].val_loss[:1] == together["muon"].val_loss[:1]  # shared before the hand-over
    # with a checkpoint the hand-over state is stored as the switch run's entry, and a run resumed from it agrees
    ckpt = Checkpointer(tmp_path, every_s=1e9)
    ckpt.bind({"test": 1})
    assert train_schedules(text, seed=3, checkpoint=ckpt, **kw) == alone
    handover = ckpt.get("lm/muon_then_adamw/3")
    assert handover is not None and handover["step"] == 15
    resumed = Checkpointer(tmp_path, every_s=1e9, resume=True)
    resumed.bind({"test": 1})
    assert train(text, "muon_then_adamw", seed=3, checkpoint=resumed, **kw) == alone["muon_then_adamw"]


def test_an_lm_run_killed_before_at_or_after_its_optimiser_switch_resumes_to_the_bit(tmp_path):
    """The switch run's optimisers change at its hand-over step (Muon + AdamW, then AdamW): a run stopped right after
    a stored state, before the switch, at it (stored before the switch happens) or after it, resumes to the bit."""
    from explorables.core.checkpoint import Checkpointer
    from explorables.muon.lm import train

    text, kw = _small_lm()
    kw = dict(kw, eval_every=5)  # states stored at steps 5, 10, ...; the hand-over is at step 15
    whole = train(text, "muon_then_adamw", seed=3, **kw)
    for stop, stage in ((10, ["adamw", "muon"]), (15, ["adamw", "muon"]), (20, ["adamw"])):

        class Killed(Checkpointer):
            def save(self, name, value, *, drop=(), stop=stop):
                super().save(name, value, drop=drop)
                if value["step"] == stop:
                    raise KeyboardInterrupt

        folder = tmp_path / str(stop)
        with pytest.raises(KeyboardInterrupt):
            train(text, "muon_then_adamw", seed=3, checkpoint=Killed(folder, every_s=0.0), **kw)
        resumed = Checkpointer(folder, resume=True)
        assert sorted(resumed.get("lm/muon_then_adamw/3")["optimizers"]) == stage
        assert train(text, "muon_then_adamw", seed=3, checkpoint=resumed, **kw) == whole


def test_lm_curve_off_keeps_the_training_and_the_final_loss():
    from explorables.muon.lm import train

    text, kw = _small_lm()
    full, end = train(text, "muon", seed=4, **kw), train(text, "muon", seed=4, curve=False, **kw)
    assert end.steps == [kw["steps"]] and end.val_loss == full.val_loss[-1:] and end.train_loss == full.train_loss[-1:]


@pytest.mark.parametrize(("n", "context"), [(100, 16), (97, 16), (1_960, 48), (17, 16)])
def test_held_out_windows_tile_the_split(n, context):
    from explorables.muon.lm import held_out_windows

    starts = held_out_windows(n, context).tolist()
    targets = [i + 1 + k for i in starts for k in range(context)]
    assert len(targets) == len(set(targets)) and max(targets) <= n - 1  # each predicted once, inside the split
    assert n - 1 - len(targets) < context  # all but fewer than one window of characters


def test_lm_seeds_is_the_committed_tuning_rules_pick():
    import json
    from pathlib import Path

    from explorables.core.verdicts import interval
    from explorables.muon import MuonConfig
    from explorables.muon.claims import LM_ROOM

    out = json.loads((Path(__file__).resolve().parents[1] / "data" / "muon_lm_tuning.json").read_text())
    assert out["base_seed"] not in range(5) and not {s // 1000 for s in out["run_seeds"]} & set(range(5))
    v = {k: np.asarray(x) for k, x in out["final_val_loss_by_seed"].items()}
    ok = []
    for row in out["candidates"]:  # recompute each candidate's half-widths from the stored per-seed losses
        n = row["n"]
        room = interval(v[row["worst"]][:n] - v[row["best"]][:n]).half_width
        claim = interval(v["muon"][:n] - v["muon_then_adamw"][:n]).half_width
        if max(room, claim) <= LM_ROOM / 5:
            ok.append(n)
    assert MuonConfig.preset("book").lm_seeds == min(ok) == out["lm_seeds"]


@pytest.mark.parametrize(("momentum", "switch_step"), [(0.0, 37), (0.9, 0), (0.5, 120), (0.9, 120)])
def test_muon_and_switch_equal_their_separate_runs_to_the_bit(momentum, switch_step):
    from explorables.muon.optimizers import muon_and_switch

    p = make_problem(m=6, n=8, rank=2, spikes=2, seed=8)
    muon, switch = muon_and_switch(p, 120, switch_step, muon_lr=0.03, gd_lr=0.018, momentum=momentum)
    for ours, method in ((muon, "muon"), (switch, "switch")):
        ref = optimize(
            p, method, 120, 0.03, 0.018, momentum=momentum, switch_step=switch_step if method == "switch" else None
        )
        assert ours.method == method
        for field in ("loss", "river", "spike"):
            assert getattr(ours, field).tolist() == getattr(ref, field).tolist()


# --- the language model's decayed-step Muon, its tuning, and the parallel valley --------------------------


def test_lm_decayed_step_starts_at_its_peak_and_ends_near_zero():
    from explorables.muon.lm import DECAYED, SCHEDULES, muon_step_sizes
    from explorables.muon.optimizers import lr_factors

    for schedule, kind in DECAYED.items():
        sizes = np.asarray(muon_step_sizes(schedule, 120, muon_lr=0.02, decayed_lr=0.04))
        assert sizes.shape == (120,) and np.array_equal(sizes, 0.04 * lr_factors(kind, 120))
        assert sizes.max() == 0.04 and sizes[-1] == sizes.min() <= 0.05 * 0.04  # ~0 (under 5% of the peak) at the end
        assert np.all(np.diff(sizes[sizes.argmax() :]) <= 0)  # decays after its peak (WSD warms up first)
    assert muon_step_sizes("muon_cosine", 120, 0.02)[0] == 0.02  # the peak defaults to Muon's step
    for schedule in set(SCHEDULES) - set(DECAYED):
        assert muon_step_sizes(schedule, 120, 0.02, 0.04) is None  # constant Muon step (or none)
    with pytest.raises(ValueError, match="decayed_lr"):
        muon_step_sizes("muon_cosine", 120, 0.02, -1.0)
    with pytest.raises(ValueError, match="schedule"):
        muon_step_sizes("muon_exp", 120, 0.02)


def test_lm_decayed_arm_starts_from_the_same_weights_and_runs_its_schedule(tmp_path):
    from explorables.core.checkpoint import Checkpointer
    from explorables.muon.lm import _train, muon_step_sizes, train

    text, kw = _small_lm()
    args = (kw["steps"], 0.5, kw["batch"], kw["context"], kw["d_model"], 2, 3e-3, 0.02, 10, 5, "cpu", None)
    starts = {s: _train(text, s, *args, keep={0: None}, decayed_lr=0.04)[1][0] for s in ("muon", "muon_cosine")}
    a, b = (starts[s]["modules"]["model"] for s in ("muon", "muon_cosine"))
    assert all(torch.equal(a[k], b[k]) for k in a)  # the same initial weights
    a, b = (starts[s]["generators"]["batches"] for s in ("muon", "muon_cosine"))
    assert torch.equal(a, b)  # and the same batches
    # one step at the schedule's first factor (1) is constant Muon's step
    one = dict(kw, steps=1, eval_every=1)
    c, m = train(text, "muon_cosine", seed=5, **one), train(text, "muon", seed=5, **one)
    assert (c.steps, c.train_loss, c.val_loss) == (m.steps, m.train_loss, m.val_loss)
    # the Muon step the run last took is the schedule's last one (saved with the run's state)
    ckpt = Checkpointer(tmp_path, every_s=0.0)
    ckpt.bind({"test": 2})
    run_ = train(text, "muon_cosine", seed=5, checkpoint=ckpt, decayed_lr=0.04, **kw)
    last = ckpt.get("lm/muon_cosine/5")
    assert last["step"] == kw["steps"] and last["extra"]["val"] == run_.val_loss
    lr = last["optimizers"]["muon"]["param_groups"][0]["lr"]
    assert lr == muon_step_sizes("muon_cosine", kw["steps"], 0.02, 0.04)[-1]
    assert len(run_.val_loss) == len(run_.steps) == kw["steps"] // kw["eval_every"]


def test_lm_tuning_gives_every_arm_the_same_grid_and_picks_its_best():
    from explorables.muon import MuonConfig
    from explorables.muon.experiment import tune_lm_lrs
    from explorables.muon.lm import DECAYED

    cfg = MuonConfig.preset("smoke", n_lm_steps=6, n_lm_chars=8_000, lm_seeds=3)
    grid, fractions = (0.01, 0.04), (0.5, 1.0)
    out = tune_lm_lrs(cfg, grid=grid, fractions=fractions, base_seed=7)
    assert set(out["table"]) == set(DECAYED) and list(out["switch_table"]) == ["0.5", "1"]
    assert all(len(v) == len(grid) for v in [*out["table"].values(), *out["switch_table"].values(), out["muon"]])
    flat = {(float(f), lr): v for f, row in out["switch_table"].items() for lr, v in zip(grid, row, strict=True)}
    assert (out["picks"]["lm_switch_fraction"], out["picks"]["lm_muon_lr"]) == min(flat, key=flat.get)
    assert out["baseline"] == min(DECAYED, key=lambda n: min(out["table"][n]))
    for name, row in out["table"].items():
        assert out["decayed_picks"][name] == grid[int(np.argmin(row))]
    assert out["picks"]["lm_decayed_lr"] == out["decayed_picks"][out["baseline"]]
    assert out["run_seeds"] == [7_000, 7_001, 7_002]  # the tuning base seed's draws
    # a switch at share 1 never hands over: it is constant Muon, to the bit
    assert out["final_val_loss_by_seed"]["switch 1"] == out["final_val_loss_by_seed"]["muon"]
    for bad, name in [
        (dict(grid=()), "grid"),
        (dict(fractions=(1.5,)), "fractions"),
        (dict(decayed=("adam",)), "decayed"),
    ]:
        with pytest.raises(ValueError, match=name):
            tune_lm_lrs(cfg, **bad)


def test_the_lm_picks_are_the_committed_tuning_tables_argmin():
    import json
    from pathlib import Path

    from explorables.muon import MuonConfig
    from explorables.muon.experiment import LM_BASELINE, LM_LR_GRID, LM_SWITCH_FRACTIONS, LM_TUNING_TABLE

    out = json.loads((Path(__file__).resolve().parents[1] / LM_TUNING_TABLE).read_text(encoding="utf-8"))
    book = MuonConfig.preset("book")
    assert out["grid"] == list(LM_LR_GRID) and out["fractions"] == list(LM_SWITCH_FRACTIONS)
    assert out["n_lm_steps"] == book.n_lm_steps and len(out["run_seeds"]) == book.lm_seeds
    assert not {s // 1000 for s in out["run_seeds"]} & set(range(5))  # disjoint from base seeds 0-4
    per_seed = out["final_val_loss_by_seed"]

    def mean(arm, lr):
        return float(np.mean(per_seed[arm][str(lr)]))

    table = {name: [mean(name, lr) for lr in LM_LR_GRID] for name in out["table"]}  # recomputed from the seeds
    switch = {(f, lr): mean(f"switch {f:g}", lr) for f in LM_SWITCH_FRACTIONS for lr in LM_LR_GRID}
    assert (book.lm_switch_fraction, book.lm_muon_lr) == min(switch, key=switch.get)
    assert LM_BASELINE == min(table, key=lambda n: min(table[n])) == out["baseline"]
    assert book.lm_decayed_lr == LM_LR_GRID[int(np.argmin(table[LM_BASELINE]))]
    from explorables.muon.experiment import LM_SCHEDULES
    from explorables.muon.lm import BOOK_SCHEDULES

    assert LM_SCHEDULES == BOOK_SCHEDULES and LM_BASELINE in LM_SCHEDULES  # the book runs the chosen schedule


def test_the_valley_in_a_worker_process_gives_the_serial_numbers():
    from explorables.muon import MuonConfig, run

    cfg = MuonConfig.preset("smoke", n_sensing_steps=300, n_tail_steps=50, switch_step=100, switch_grid=(100,),
                            n_lm_steps=8, lm_seeds=3)  # fmt: skip
    serial, parallel = run(cfg.replace(processes=1)), run(cfg.replace(processes=2))
    for r in (serial, parallel):
        assert set(r.summary["cpu_s"]) == {"sensing", "switch", "lm"}
        assert all(v > 0 for v in r.summary["cpu_s"].values())
    drop = ("timings", "cpu_s")
    assert {k: v for k, v in serial.summary.items() if k not in drop} == {
        k: v for k, v in parallel.summary.items() if k not in drop
    }
    assert list(serial.summary) == list(parallel.summary)
    np.testing.assert_equal(serial.curves, parallel.curves)  # every curve, to the bit


def test_lm_late_phase_gate():
    """The language model's late-phase gate passes only when decaying Muon's step ends clearly below constant
    Muon; when it fails the language-model claim reads untested, whatever the switch did."""
    from explorables.core.tables import apply_gates
    from explorables.muon import MuonConfig
    from explorables.muon.claims import LM_LATE, claims, lm_decay_gate
    from explorables.muon.experiment import LM_BASELINE, MuonResults

    assert LM_LATE == 0.0  # the weakest threshold: a decay must end lower at all
    base = [2.40, 2.50, 2.45, 2.42]
    above = {"muon": [b + 0.1 + 0.01 * i for i, b in enumerate(base)], LM_BASELINE: base}
    assert lm_decay_gate(above).startswith("pass")
    below = {"muon": [b - 0.01 - 0.002 * i for i, b in enumerate(base)], LM_BASELINE: base}
    assert lm_decay_gate(below).startswith("fail")  # constant Muon lowest: no late phase
    assert lm_decay_gate({"muon": list(base), LM_BASELINE: base}).startswith("fail")  # equal
    straddle = {"muon": [b + d for b, d in zip(base, [0.05, -0.05, 0.04, -0.04], strict=True)], LM_BASELINE: base}
    assert lm_decay_gate(straddle).startswith("fail")
    assert lm_decay_gate({"muon": [float("nan")] * 4, LM_BASELINE: base}).startswith("fail")
    with pytest.raises(ValueError, match="baseline"):
        lm_decay_gate(above, "muon")

    tail = _valley_tails()
    by_seed = {
        "start_loss": [1.0] * 3,
        "early_ratio_muon_over_gd": [0.3, 0.32, 0.31],
        "tail_loss": tail,
        "min_loss": {k: [x / 100 for x in v] for k, v in tail.items()} | {"GD + momentum": tail["GD + momentum"]},
    }
    sensing = {"torch_muon_max_difference": 0.0, "spike_oscillation": {"Muon": 0.9}, "by_seed": by_seed}
    sensing["switch_draws"] = _switch_draws(tail)
    switch = [b - 0.05 for b in base]  # the switch clearly below the decayed baseline: a "yes" if tested
    adamw = [b + 0.3 for b in base]  # room for early speed: the room gate passes

    def lm_words(muon):
        v = {"adamw": adamw, "muon": muon, "muon_then_adamw": switch, LM_BASELINE: base}
        lm = {"chars": 1000, "held_out_chars": 100, "run_seeds": [0, 1, 2, 3], "final_val_loss_by_seed": v}
        summary = {"sensing": sensing, "switch": {"rows": [{"lam_spike": 100.0, "best_switch": 2800}]},
                   "lm": lm | {"switch_step": 12}}  # fmt: skip
        rows = apply_gates(claims(MuonResults(MuonConfig.preset("smoke"), summary)))
        by_name = {r.name: r.outcome for r in rows if r.kind == "gate"}
        return by_name["LM room"], by_name["LM late phase"], rows[-1].outcome

    room, late, claim = lm_words(below["muon"])  # constant Muon ends lowest, as on our short run
    assert (room, late) == ("pass", "fail") and claim.startswith("untested")
    room, late, claim = lm_words(above["muon"])  # a late phase: the claim is read
    assert (room, late) == ("pass", "pass") and claim.startswith("yes")
