"""The chapter kit in ``explorables.core``: declarative rules, the run preamble, figure and lab helpers."""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import plotly.graph_objects as go
import pytest

from explorables.cli import main
from explorables.core.checkpoint import Checkpointer
from explorables.core.config import ExperimentConfig
from explorables.core.experiment import Results, run_parts_timed, start_run
from explorables.core.figures import PALETTE, SEQUENCE, add_frame, color, frame_slider, style
from explorables.core.labs import interactions
from explorables.core.params import (
    Bool,
    Choice,
    Device,
    Float,
    Int,
    Positive,
    Probability,
    Seeds,
    Text,
    Tuple,
    field_doc,
    field_rule,
    param,
)

# --- rules ---------------------------------------------------------------------------------------

RULES = [
    Int(1),
    Int(0, 5),
    Float(0.0, 1.0),
    Float(0.0, 1.0, low_inclusive=False, high_inclusive=False),
    Positive(),
    Probability(open_low=True),
    Bool(),
    Choice(("a", "b")),
    Text(nonempty=True),
    Device(),
    Tuple(Int(1)),
    Tuple(Float(0.0, 1.0), min_len=2, increasing=True),
    Seeds(),
]


@pytest.mark.parametrize("rule", RULES, ids=repr)
def test_every_rule_refuses_its_own_bad_values_naming_the_field(rule):
    bad = rule.bad_values()
    assert bad
    for value in bad:
        with pytest.raises(ValueError, match=r"^the_field"):
            rule.check("the_field", value)


@pytest.mark.parametrize(
    ("rule", "good", "normalised"),
    [
        (Int(1), 3.0, 3),
        (Int(0, 5), 5, 5),
        (Float(0.0, 1.0), 1, 1.0),
        (Positive(), 1e-300, 1e-300),
        (Bool(), True, True),
        (Choice(("a", "b")), "b", "b"),
        (Device(), "cuda:1", "cuda:1"),
        (Tuple(Int(1)), [1, 2.0], (1, 2)),
        (Tuple(Float(0.0, 1.0), min_len=2, increasing=True), (0.1, 0.5), (0.1, 0.5)),
        (Seeds(), [0, 1, 2], (0, 1, 2)),
    ],
)
def test_rules_accept_and_normalise_good_values(rule, good, normalised):
    out = rule.check("x", good)
    assert out == normalised and type(out) is type(normalised)


@pytest.mark.parametrize(
    ("rule", "value", "message"),
    [
        (Int(1), 0, r"x must be an integer >= 1, got 0"),
        (Int(0, 5), 6, r"x must be an integer in \[0, 5\], got 6"),
        (Float(0.0, 1.0, low_inclusive=False), 0.0, r"x must be a finite number in \(0, 1\], got 0.0"),
        (Positive(), float("nan"), r"x must be a finite number > 0, got nan"),
        (Seeds(), (1, 1), r"x must be .*distinct.*repeated"),
        (Tuple(Int(1)), (1, 0), r"x\[1\] must be an integer >= 1"),
        (Tuple(Float(0.0, 1.0), increasing=True), (0.5, 0.2), r"strictly increasing"),
        (Choice(("a", "b")), "c", r"x must be one of 'a', 'b', got 'c'"),
    ],
)
def test_errors_say_what_is_allowed(rule, value, message):
    with pytest.raises(ValueError, match=message):
        rule.check("x", value)


def test_param_needs_a_rule_and_a_doc():
    with pytest.raises(TypeError, match="Rule"):
        param(1, int, "a count")
    with pytest.raises(ValueError, match="doc"):
        param(1, Int(1), "  ")
    f = param([1, 2], Tuple(Int(1)), "a grid")
    assert f.default == (1, 2)


# --- a toy config, to test the generic validation -------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ToyConfig(ExperimentConfig):
    n_steps: int = param(10, Int(1), "steps of the toy loop")
    n_burn_in: int = param(2, Int(0), "steps discarded at the start")
    lr_grid: tuple[float, ...] = param((0.1, 0.2), Tuple(Positive()), "learning rates tried")
    use_momentum: bool = param(False, Bool(), "whether to use momentum")

    PRESETS: ClassVar = {"smoke": {"n_steps": 4}, "book": {}, "paper": {"n_steps": 1000, "device": "auto"}}

    def cross_checks(self) -> None:
        if self.n_burn_in >= self.n_steps:
            raise ValueError(f"n_burn_in must be < n_steps ({self.n_steps}), got {self.n_burn_in}")


def test_validated_applies_every_rule_and_normalises():
    config = ToyConfig.preset("book", n_steps=5.0, lr_grid=[0.5])
    assert config.n_steps == 5 and isinstance(config.n_steps, int) and config.lr_grid == (0.5,)
    with pytest.raises(ValueError, match="n_steps must be an integer >= 1"):
        ToyConfig.preset("book", n_steps=0)
    with pytest.raises(ValueError, match="use_momentum must be True or False"):
        ToyConfig.preset("book", use_momentum=1)
    with pytest.raises(ValueError, match=r"lr_grid\[0\] must be a finite number > 0"):
        ToyConfig.preset("book").replace(lr_grid=(math.nan,))
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 4294967295\]"):
        ToyConfig.preset("book", seed=-1)


def test_cross_checks_run_after_the_field_rules():
    with pytest.raises(ValueError, match=r"n_burn_in must be < n_steps \(4\)"):
        ToyConfig.preset("smoke", n_burn_in=4)


def test_describe_fields_lists_every_field_with_its_rule_and_doc():
    rows = {name: (value, allowed, doc) for name, value, allowed, doc in ToyConfig.describe_fields("smoke")}
    assert set(rows) == {f.name for f in dataclasses.fields(ToyConfig)}
    assert rows["n_steps"] == (4, "an integer >= 1", "steps of the toy loop")
    assert all(field_doc(f) and field_rule(f) for f in dataclasses.fields(ToyConfig))


def test_with_strings_goes_through_the_rules():
    config = ToyConfig.preset("smoke").with_strings(["lr_grid=0.1,0.3", "use_momentum=true"])
    assert config.lr_grid == (0.1, 0.3) and config.use_momentum is True
    with pytest.raises(ValueError, match="n_steps must be an integer >= 1"):
        ToyConfig.preset("smoke").with_strings(["n_steps=-3"])


# --- the run preamble -----------------------------------------------------------------------------


class ToyResults(Results[ToyConfig]):
    """Results of the toy run."""


def toy_run(config=None, *, checkpoint=None, progress=False) -> ToyResults:
    import torch

    cfg, checkpoint = start_run(ToyConfig, config, checkpoint)
    parts = {"draw": lambda: ({"value": float(torch.rand(()).item())}, {"steps": list(range(cfg.n_steps))})}
    summary, curves = run_parts_timed(checkpoint, parts, progress)
    return ToyResults(cfg, summary, curves)


def test_start_run_validates_seeds_and_binds_the_checkpoint(tmp_path):
    a, b = toy_run(ToyConfig.preset("smoke")), toy_run(ToyConfig.preset("smoke"))
    assert a.summary["draw"] == b.summary["draw"]  # seeded from config.seed
    assert "draw_s" in a.summary["timings"] and a.curves["draw"]["steps"] == [0, 1, 2, 3]
    assert toy_run(ToyConfig.preset("smoke", seed=1)).summary["draw"] != a.summary["draw"]
    assert toy_run().config == ToyConfig.preset("book")
    with pytest.raises(ValueError, match="config must be a ToyConfig"):
        toy_run(object())
    toy_run(ToyConfig.preset("smoke"), checkpoint=Checkpointer(tmp_path, every_s=0))
    with pytest.raises(ValueError, match="other settings"):
        toy_run(ToyConfig.preset("smoke", n_steps=7), checkpoint=Checkpointer(tmp_path, resume=True))


# --- figures and labs ----------------------------------------------------------------------------


def test_frame_slider_shows_one_frame_at_a_time_and_keeps_fixed_traces():
    fig = go.Figure()
    fixed = add_frame(fig, [go.Scatter(x=[0], y=[0])])
    frames = [add_frame(fig, [go.Scatter(x=[k], y=[k]), go.Scatter(x=[k], y=[-k])]) for k in range(3)]
    frame_slider(fig, frames, ["a", "b", "c"], prefix="k = ", active=1, layouts=[{"title.text": t} for t in "abc"])
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["a", "b", "c"] and fig.layout.sliders[0].active == 1
    for k, s in enumerate(steps):
        visible = s.args[0]["visible"]
        assert visible[fixed[0]] is True
        assert [visible[i] for f in frames for i in f] == [j == k for j in range(3) for _ in range(2)]
        assert s.args[1] == {"title.text": "abc"[k]}
    assert [fig.data[i].visible for i in frames[1]] == [True, True] and fig.data[frames[0][0]].visible is False
    assert fig.layout.title.text == "b"


@pytest.mark.parametrize(
    ("frames", "labels", "kwargs", "message"),
    [
        ([[0]], ["a", "b"], {}, "same length"),
        ([], [], {}, "at least one frame"),
        ([[0]], ["a"], {"active": 3}, "active must lie"),
        ([[5]], ["a"], {}, "indices must lie"),
    ],
)
def test_frame_slider_refuses_inconsistent_frames(frames, labels, kwargs, message):
    fig = go.Figure(go.Scatter(x=[0], y=[0]))
    with pytest.raises(ValueError, match=message):
        frame_slider(fig, frames, labels, **kwargs)


def test_palette_and_style():
    assert len(set(SEQUENCE)) == len(SEQUENCE) and color(len(SEQUENCE)) == SEQUENCE[0]
    assert all(v.startswith("#") and len(v) == 7 for v in PALETTE.values())
    fig = style(go.Figure(), height=300, legend_below=True)
    assert fig.layout.height == 300 and fig.layout.legend.orientation == "h"


def test_interactions_move_the_widget_to_each_value():
    class Widget:
        value = 0

    w = Widget()
    calls = interactions(redraw=[(w, [1, 2])], rerun=[(w, [3])])
    assert set(calls) == {"redraw", "rerun"} and len(calls["redraw"]) == 2
    seen = []
    for call in calls["redraw"] + calls["rerun"]:
        call()
        seen.append(w.value)
    assert seen == [1, 2, 3]


def test_show_prints_every_field_with_values_range_and_doc(capsys):
    assert main(["show", "omwu"]) == 0
    out = capsys.readouterr().out
    assert "eta:" in out and "accepts a finite number > 0" in out and "smoke" in out and "paper" in out
    assert main(["list", "omwu"]) == 0
    assert main(["show", "nosuch"]) == 2


def test_one_cpu_thread_restores_the_count_even_on_errors():
    import torch

    from explorables.core.threads import one_cpu_thread

    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="boom"), one_cpu_thread("cpu"):
        assert torch.get_num_threads() == 1
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with one_cpu_thread(torch.device("meta")):  # not the CPU: left alone
        assert torch.get_num_threads() == before


def test_threads_for_gives_tiny_loops_one_thread():
    import torch

    from explorables.core.threads import TORCH_GRAIN_SIZE, threads_for

    before = torch.get_num_threads()
    with threads_for(TORCH_GRAIN_SIZE - 1, "cpu"):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with threads_for(TORCH_GRAIN_SIZE, "cpu"):  # large enough to split: the count as it is
        assert torch.get_num_threads() == before


def test_worker_count_never_exceeds_the_tasks_or_the_cpus(monkeypatch):
    from explorables.core import threads

    monkeypatch.setattr(threads, "available_cpus", lambda: 3)
    assert threads.worker_count(0, 10) == 3  # 0: every usable CPU
    assert threads.worker_count(0, 2) == 2  # never more than the tasks
    assert threads.worker_count(8, 5) == 5
    assert threads.worker_count(2, 5) == 2
    assert threads.worker_count(0, 0) == 1  # at least one
    with pytest.raises(ValueError, match="n_tasks"):
        threads.worker_count(1, -1)


def test_readme_and_contributing_list_every_registered_chapter():
    from pathlib import Path

    from explorables.chapters import CHAPTERS

    root = Path(__file__).resolve().parents[1]
    readme, contributing = (root / "README.md").read_text(), (root / "CONTRIBUTING.md").read_text()
    for slug in CHAPTERS:
        assert f"`{slug}`" in readme, f"README.md does not list {slug}"
        assert f"`{slug}`" in contributing, f"CONTRIBUTING.md does not list {slug}"


# --- core.checkpoint.LoopState and core.diffusion ------------------------------------------------------


def _toy_loop(checkpoint, n_steps: int, stop_after: int | None = None):
    """A loop that uses every kind of state LoopState keeps: a module, Adam, a scheduler, a free tensor, two own
    generators and torch's global generator. Returns its final state (or ``None`` if stopped)."""
    import torch

    from explorables.core.checkpoint import LoopState

    torch.manual_seed(7)
    net = torch.nn.Linear(3, 2)
    centre = torch.zeros(2, requires_grad=True)
    opt = torch.optim.Adam([*net.parameters(), centre], lr=0.05)
    sched = torch.optim.lr_scheduler.StepLR(opt, 3, 0.5)
    gens = [torch.Generator().manual_seed(1), torch.Generator().manual_seed(2)]
    loop = LoopState(checkpoint, "toy/loop", modules={"net": net}, optimizers={"opt": opt}, schedulers={"sched": sched},
                     tensors={"centre": centre}, generators=gens, global_rng=True)  # fmt: skip
    start, extra = loop.restore()
    losses = list(extra.get("losses", []))
    for step in range(start, n_steps):
        x = torch.randn(4, 3, generator=gens[0]) + torch.randn(4, 3, generator=gens[1]) + torch.randn(4, 3)
        loss = (net(x) - centre).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        loop.save(step + 1, {"losses": losses}, final=step + 1 == stop_after)
        if step + 1 == stop_after:
            return None
    return {"net": net.state_dict(), "centre": centre.detach(), "gens": [g.get_state() for g in gens],
            "global": torch.get_rng_state(), "losses": losses, "lr": sched.get_last_lr()}  # fmt: skip


def test_a_loop_state_resumes_a_loop_to_the_bit(tmp_path):
    from .trees import assert_same_tree

    whole = _toy_loop(Checkpointer(None), 10)
    stopped = Checkpointer(tmp_path)
    assert _toy_loop(stopped, 10, stop_after=4) is None
    assert stopped.get("toy/loop")["step"] == 4
    resumed = _toy_loop(Checkpointer(tmp_path, resume=True), 10)
    assert_same_tree(whole, resumed)
    # the state is what makes it so: resuming with the step but fresh generators gives other numbers
    fresh = Checkpointer(tmp_path, resume=True)
    fresh.entries["toy/loop"]["generators"] = {k: g for k, g in zip(("0", "1"), whole["gens"], strict=True)}
    assert _toy_loop(fresh, 10)["losses"] != whole["losses"]


def test_a_stored_loop_state_is_a_copy_and_a_foreign_one_is_refused_before_anything_loads(tmp_path):
    import torch

    from explorables.core.checkpoint import LoopState

    net = torch.nn.Linear(2, 2)
    opt = torch.optim.Adam(net.parameters(), lr=0.1)
    net(torch.ones(1, 2)).sum().backward()
    opt.step()
    checkpoint = Checkpointer(None)
    loop = LoopState(checkpoint, "loop", modules={"net": net}, optimizers={"opt": opt}, generators=[torch.Generator()])
    loop.save(1, {"losses": [1.0]}, final=True)
    stored = checkpoint.get("loop")
    moment = stored["optimizers"]["opt"]["state"][0]["exp_avg"].clone()
    opt.step()  # the live optimiser moves on; the stored state must not
    assert torch.equal(stored["optimizers"]["opt"]["state"][0]["exp_avg"], moment)
    old_layout = {"model": net.state_dict(), "optimizer": opt.state_dict(), "step": 1}  # a closure's entry of old
    two_generators = {"0": torch.Generator().get_state(), "1": torch.Generator().get_state()}
    foreign = [(old_layout, "not a loop state"), ({**stored, "generators": two_generators}, "generators"),
               ({**stored, "step": -1}, "step"), ({**stored, "rng": {"torch": 1}}, "global random state")]
    for entry, words in foreign:
        checkpoint.entries["loop"] = entry
        before = net.weight.detach().clone()
        with pytest.raises(ValueError, match=f"(?s){words}.*--restart"):
            loop.restore()
        assert torch.equal(net.weight, before)
    with pytest.raises(TypeError, match="extra"):
        loop.state(2, [1.0])


def test_a_loop_state_without_a_checkpoint_or_name_keeps_nothing(tmp_path):
    import torch

    from explorables.core.checkpoint import LoopState

    net = torch.nn.Linear(2, 2)
    for checkpoint, name in ((None, "loop"), (Checkpointer(tmp_path), ""), (Checkpointer(tmp_path), None)):
        loop = LoopState(checkpoint, name, modules={"net": net})
        assert loop.restore() == (0, {})
        loop.save(3, {"x": 1}, final=True)
    assert not (tmp_path / Checkpointer.FILENAME).exists()
    throttled = Checkpointer(tmp_path, every_s=3600.0)
    LoopState(throttled, "loop", modules={"net": net}).save(1, lambda: pytest.fail("made while throttled"))
    assert throttled.get("loop") is None


def _switching_loop(checkpoint, n_steps: int, switch_at: int, stop_after: int | None = None, start_state=None):
    """A loop whose optimisers change at ``switch_at``: SGD with momentum on the weight and Adam on the bias, then
    Adam on both. Returns its final state and its state at the top of step ``switch_at`` (``None`` if stopped)."""
    import torch

    from explorables.core.checkpoint import LoopState

    torch.manual_seed(3)
    net = torch.nn.Linear(3, 2)
    gen = torch.Generator().manual_seed(5)

    def optimisers(step: int) -> dict:
        if step <= switch_at:  # a state stored at the top of step switch_at still holds the first stage's set
            return {"sgd": torch.optim.SGD([net.weight], lr=0.1, momentum=0.9),
                    "adam": torch.optim.Adam([net.bias], lr=0.05)}  # fmt: skip
        return {"adam": torch.optim.Adam(net.parameters(), lr=0.01)}

    loop = LoopState(checkpoint, "switch/loop", modules={"net": net}, optimizers=optimisers, generators={"g": gen})
    start, extra = loop.restore(start_state)
    losses, handover = list(extra.get("losses", [])), None
    for step in range(start, n_steps):
        if step == switch_at:
            handover = loop.state(step, {"losses": list(losses)})
            loop.optimizers = {"adam": torch.optim.Adam(net.parameters(), lr=0.01)}
        loss = net(torch.randn(4, 3, generator=gen)).pow(2).mean()
        for opt in loop.optimizers.values():
            opt.zero_grad()
        loss.backward()
        for opt in loop.optimizers.values():
            opt.step()
        losses.append(float(loss.detach()))
        loop.save(step + 1, {"losses": losses}, final=step + 1 == stop_after)
        if step + 1 == stop_after:
            return None
    return {"net": net.state_dict(), "losses": losses, "optimisers": sorted(loop.optimizers)}, handover


def test_a_loop_state_whose_optimisers_change_resumes_on_either_side_of_the_switch_to_the_bit(tmp_path):
    from .trees import assert_same_tree

    whole, handover = _switching_loop(Checkpointer(None), 10, switch_at=4)
    assert whole["optimisers"] == ["adam"] and sorted(handover["optimizers"]) == ["adam", "sgd"]
    for stop in (2, 4, 7):  # before the switch, at it (stored with the first stage's set), after it
        folder = tmp_path / str(stop)
        stopped = Checkpointer(folder)
        assert _switching_loop(stopped, 10, switch_at=4, stop_after=stop) is None
        stored = stopped.get("switch/loop")
        assert stored["step"] == stop and sorted(stored["optimizers"]) == (["adam"] if stop > 4 else ["adam", "sgd"])
        assert_same_tree(whole, _switching_loop(Checkpointer(folder, resume=True), 10, switch_at=4)[0])
    # a hand-over state: another loop continues from the state this one had at the top of its switch step
    assert_same_tree(whole, _switching_loop(Checkpointer(None), 10, switch_at=4, start_state=handover)[0])
    stored = Checkpointer(tmp_path / "7", resume=True)  # the checkpoint's entry wins over a default state
    assert_same_tree(whole, _switching_loop(stored, 10, switch_at=4, start_state=handover)[0])
    # a state of one stage is refused where the step says the other
    stored.entries["switch/loop"] = {**handover, "step": 6}
    with pytest.raises(ValueError, match=r"(?s)optimizers.*--restart"):
        _switching_loop(stored, 10, switch_at=4)
    # a default that does not fit is the calling code's error: no checkpoint to blame, no --restart to suggest
    with pytest.raises(ValueError, match="default state") as refused:
        _switching_loop(Checkpointer(None), 10, switch_at=4, start_state={**handover, "step": 6})
    assert "--restart" not in str(refused.value)


def test_a_loop_state_stores_a_snapshot_of_its_extra_values_and_builds_its_optimisers_first(tmp_path):
    import torch

    from explorables.core.checkpoint import LoopState

    net = torch.nn.Linear(2, 1)
    checkpoint = Checkpointer(tmp_path)
    loop = LoopState(checkpoint, "loop", modules={"net": net})
    losses, kept = [0.5], {"t": torch.zeros(2)}
    loop.save(1, {"losses": losses, "kept": kept}, final=True)
    losses.append(0.25)  # the loop goes on changing its own values after the save
    kept["t"] += 1
    stored = checkpoint.get("loop")["extra"]
    assert stored["losses"] == [0.5] and torch.equal(stored["kept"]["t"], torch.zeros(2))
    _, restored = LoopState(checkpoint, "loop", modules={"net": net}).restore()
    restored["losses"].append(0.125)  # a resumed loop goes on appending: the stored entry stays as it was
    assert checkpoint.get("loop")["extra"]["losses"] == [0.5]
    # optimisers as a function of the step exist only after restore() built them
    staged = LoopState(checkpoint, "staged", modules={"net": net},
                       optimizers=lambda step: {"sgd": torch.optim.SGD(net.parameters(), lr=0.1)})
    with pytest.raises(RuntimeError, match="restore"):
        staged.state(0)
    assert staged.restore() == (0, {}) and sorted(staged.optimizers) == ["sgd"]
    assert sorted(staged.state(0)["optimizers"]) == ["sgd"]


def test_the_cosine_schedule_and_step_features_have_their_closed_forms():
    import torch

    from explorables.core.diffusion import NoiseSchedule, time_features

    s = NoiseSchedule.cosine(40, max_beta=0.999)
    f = lambda u: math.cos((u + 0.008) / 1.008 * math.pi / 2) ** 2  # noqa: E731
    closed = torch.tensor([f((t + 1) / 40) / f(0) for t in range(39)], dtype=torch.float64)  # the last beta clamps
    assert torch.allclose(s.alpha_bars[:39].double(), closed, atol=1e-6)
    assert torch.allclose(s.alphas, 1 - s.betas) and float(s.betas.max()) == pytest.approx(0.999)
    assert float(NoiseSchedule.cosine(40, max_beta=0.5).betas.max()) == pytest.approx(0.5)
    x0, eps, t = torch.randn(5, 3), torch.randn(5, 3), torch.tensor([0, 3, 9, 20, 39])
    ab = s.alpha_bars[t][:, None]
    assert torch.allclose(s.noise(x0, t, eps), ab.sqrt() * x0 + (1 - ab).sqrt() * eps)
    feats = time_features(torch.tensor([0, 10]), 40, d=6)
    assert feats.shape == (2, 6) and torch.equal(feats[0], torch.tensor([0.0, 0, 0, 1, 1, 1]))
    assert math.isclose(float(feats[1, 2]), math.sin(0.25 * 200.0), abs_tol=1e-5)
