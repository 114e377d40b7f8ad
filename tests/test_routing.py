"""Chapter 05 (routing): collisions, routing statistics, RA-FFN, the RRT, surveys, the runner."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import torch
from scipy.linalg import null_space

from explorables.core.tables import apply_gates
from explorables.core.verdicts import drive
from explorables.routing import (
    RouteAwareFFN,
    RouteReader,
    RoutingConfig,
    dominant_pieces,
    fibre_dimension,
    find_collision,
    headline,
    make_rrt,
    rounding_accuracy,
    routing_statistics,
    run,
    segment_in_triangle,
    survey_bert_checkpoint,
    survey_values,
    train_model,
)
from explorables.routing.claims import (
    CRITERIA,
    bert_rank_check,
    bert_suppressed_verdict,
    collision_check,
    control_meaning,
    control_reading,
    gap_gate,
    hop_gap_gate,
    hop_ratio_verdict,
    overhead_verdict,
    ra_gain_verdict,
    rank_check,
    rrt_verdict,
)
from explorables.routing.survey import load_state_dict, read_safetensors

from .cli_runs import cli, kill_mid_run
from .smoke_runs import smoke_run
from .trees import assert_same_tree

# --- collisions ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_lp_finds_a_collision_with_another_dominant_token_when_rank_is_at_most_n_minus_2(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 20))
    d = int(rng.integers(1, n - 1))  # rank V = d <= n - 2
    V = rng.standard_normal((d, n))
    alpha = rng.dirichlet(np.full(n, 50.0))  # near the centre: the collision line must cross a boundary
    c = find_collision(V, alpha)
    assert c is not None
    assert c.residual < 1e-9
    np.testing.assert_allclose(V @ c.alpha_prime, V @ alpha, atol=1e-9)
    assert np.all(c.alpha_prime >= 0) and abs(c.alpha_prime.sum() - 1) < 1e-9
    assert int(np.argmax(c.alpha_prime)) == c.source != c.original_source == int(np.argmax(alpha))
    assert c.margin > 0


@pytest.mark.parametrize("seed", range(4))
def test_full_column_rank_leaves_a_single_point(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    V = rng.standard_normal((n - 1, n))  # [V; 1^T] is n x n and invertible
    alpha = rng.dirichlet(np.ones(n))
    assert fibre_dimension(V) == 0
    assert find_collision(V, alpha) is None


@pytest.mark.parametrize(("d", "n"), [(1, 3), (2, 7), (4, 16), (6, 8), (9, 9)])
def test_fibre_dimension_matches_scipy_null_space(d, n):
    V = np.random.default_rng(d * n).standard_normal((d, n))
    A = np.vstack([V, np.ones(n)])
    assert fibre_dimension(V) == null_space(A).shape[1] == max(n - 1 - d, 0)


def test_repeated_value_vectors_raise_the_fibre_dimension():
    v = np.random.default_rng(0).standard_normal((3, 1))
    V = np.hstack([v, v, v, np.eye(3)])  # three tokens with one value: rank 3, n = 6
    assert fibre_dimension(V) == 6 - 4
    alpha = np.array([0.3, 0.05, 0.05, 0.2, 0.2, 0.2])  # token 1 dominates; tokens 2, 3 share its value
    c = find_collision(V, alpha)
    assert c is not None and c.source in (1, 2)  # mass moves to a twin of token 1


def test_three_token_segment_lies_on_the_simplex_and_the_level_set():
    v = np.array([0.0, 1.0, 0.4])
    for o in np.linspace(0.01, 0.99, 15):
        ends = segment_in_triangle(v, o)
        assert ends is not None
        np.testing.assert_allclose(ends @ v, o, atol=1e-10)
        np.testing.assert_allclose(ends.sum(1), 1)
        assert np.all(ends >= 0)
        pieces = dominant_pieces(ends)
        assert 1 <= len(pieces) <= 3
    assert segment_in_triangle(v, 1.5) is None
    # an output between 0.4 and 0.6 is reached with token 2 or token 3 dominant
    assert {t for t, _, _ in dominant_pieces(segment_in_triangle(v, 0.5))} == {1, 2}


# --- routing statistics and RA-FFN ---------------------------------------------------------------


def test_routing_statistics_on_hand_made_weights():
    m = 5
    one_hot = torch.zeros(m, dtype=torch.float64)
    one_hot[3] = 1
    np.testing.assert_allclose(routing_statistics(one_hot).numpy(), [1, 1, 0.75, 0.75])
    uniform = torch.full((m,), 1 / m, dtype=torch.float64)
    np.testing.assert_allclose(routing_statistics(uniform).numpy(), [0.2, 0, 0.5, 0.5], atol=1e-12)
    two = torch.tensor([0.5, 0, 0, 0, 0.5], dtype=torch.float64)
    np.testing.assert_allclose(routing_statistics(two).numpy(), [0.5, 0, 0.5, 0.5], atol=1e-12)
    skew = torch.tensor([0.6, 0.0, 0.0, 0.0, 0.4], dtype=torch.float64)
    np.testing.assert_allclose(
        routing_statistics(skew).numpy(), [0.6, 0.2, 0.4, 0.16 / 0.52], atol=1e-12
    )  # c2 = (0.36*0 + 0.16*1) / (0.36 + 0.16)


def test_routing_statistics_invariances():
    g = torch.Generator().manual_seed(0)
    alpha = torch.softmax(torch.randn(6, 10, generator=g, dtype=torch.float64) * 2, -1)
    positions = torch.arange(10, dtype=torch.float64) / 9
    perm = torch.randperm(10, generator=g)
    base = routing_statistics(alpha, positions)
    shuffled = routing_statistics(alpha[:, perm], positions)
    torch.testing.assert_close(shuffled[:, :2], base[:, :2])  # max and margin: any reordering
    joint = routing_statistics(alpha[:, perm], positions[perm])
    torch.testing.assert_close(joint, base)  # weights and positions permuted together: all four
    assert not torch.allclose(shuffled[:, 2], base[:, 2])  # the centroid does see positions


@pytest.mark.parametrize(("d_model", "d_ff", "heads"), [(32, 64, 1), (16, 48, 3), (768, 3072, 12)])
def test_ra_ffn_adds_exactly_four_statistics_per_head_times_d_ff(d_model, d_ff, heads):
    with torch.device("meta"):
        count = {k: sum(p.numel() for p in RouteAwareFFN(d_model, d_ff, heads, k, 20).parameters()) for k in
                 ("standard", "route_aware", "oracle")}  # fmt: skip
    assert count["route_aware"] - count["standard"] == 4 * heads * d_ff == RouteAwareFFN.extra_parameters(d_ff, heads)
    assert count["oracle"] - count["standard"] == 20 * heads * d_ff
    assert count["standard"] == 2 * d_model * d_ff + d_ff + d_model


def test_ra_ffn_uses_only_the_statistics():
    torch.manual_seed(0)
    ffn = RouteAwareFFN(8, 16, 1, "route_aware")
    x = torch.randn(4, 8)
    alpha = torch.softmax(torch.randn(4, 1, 6), -1)
    same_stats = alpha.flip(-1)  # reversed: max and margin equal, centroids mirrored
    assert not torch.allclose(ffn(x, alpha), ffn(x, same_stats))
    perm = torch.tensor([1, 0, 2, 3, 4, 5])
    alpha = torch.tensor([[[0.3, 0.3, 0.1, 0.1, 0.1, 0.1]]]).expand(4, 1, 6)  # swap two equal weights: no change
    torch.testing.assert_close(ffn(x, alpha), ffn(x, alpha[..., perm]))


# --- the RRT ---------------------------------------------------------------------------------------


def test_rrt_labels_are_the_reference_heads_dominant_sources():
    b = make_rrt(300, length=12, vocab=5, hops=2, beta=3.0, generator=torch.Generator().manual_seed(1))
    assert b.keys.shape == b.pointers.shape == (300, 12) and b.query.shape == (300,)
    assert len(b.alphas) == 2 and b.alphas[1].shape == (300, 1, 12)
    torch.testing.assert_close(b.alphas[0].sum(-1), torch.ones(300, 1))
    assert torch.equal(b.label, b.alphas[1][:, 0].argmax(1))
    again = make_rrt(300, length=12, vocab=5, hops=2, beta=3.0, generator=torch.Generator().manual_seed(1))
    assert torch.equal(again.label, b.label) and torch.equal(again.keys, b.keys)
    single = make_rrt(300, length=12, vocab=5, hops=1, beta=3.0, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(single.alphas[0], b.alphas[0])  # hop 1 is the same head
    assert (single.label != b.label).any()


def test_values_carry_position_only_when_asked():
    """Same content everywhere, one-hot attention at two positions: only positional values tell them apart."""
    keys = torch.zeros(2, 6, dtype=torch.long)
    query = torch.zeros(2, dtype=torch.long)
    alpha = torch.zeros(2, 1, 6)
    alpha[0, 0, 1] = alpha[1, 0, 4] = 1.0
    for value_positions in (False, True):
        torch.manual_seed(0)
        model = RouteReader(4, 6, d_model=8, d_head=2, d_ff=8, value_positions=value_positions)
        out = model(keys, keys, query, [alpha])
        assert torch.allclose(out[0], out[1]) != value_positions
    extra = sum(p.numel() for p in model.parameters()) - sum(
        p.numel() for p in RouteReader(4, 6, d_model=8, d_head=2, d_ff=8).parameters()
    )
    assert extra == 6 * 2  # one learned d_head vector per position (layers = heads = 1)


def test_rounding_a_centroid_names_one_hot_sources_and_less_for_soft_ones():
    soft = make_rrt(400, length=10, vocab=4, beta=1.0, generator=torch.Generator().manual_seed(2))
    b = soft[:]
    b.alphas = [torch.nn.functional.one_hot(b.label, 10).float()[:, None]]  # one-hot on the label
    assert rounding_accuracy(b, 3) == rounding_accuracy(b, 2) == 1.0  # then a centroid is the source
    assert rounding_accuracy(soft, 2) <= rounding_accuracy(soft, 3) < 1.0  # squaring leans toward the winner
    with pytest.raises(ValueError, match="statistic"):
        rounding_accuracy(b, 4)


def test_bert_base_parameter_count_from_its_shapes():
    from explorables.routing.experiment import bert_base_parameters

    assert bert_base_parameters() == 109_482_240  # bert-base-uncased's published parameter count
    # one more layer adds exactly one encoder layer: attention (4 d^2 + 4 d), FFN (2 d f + f + d), 2 LayerNorms
    d, f = 768, 3072
    assert bert_base_parameters(layers=13) - bert_base_parameters() == 4 * d * d + 4 * d + 2 * d * f + f + d + 4 * d


def test_worked_collision_example_gives_up_cleanly_when_none_exists(monkeypatch):
    """When the LP never finds a harmful collision: a bounded number of tries, and no endless loop."""
    from explorables.routing import experiment
    from explorables.routing.experiment import EXAMPLE_TRIES, _collisions
    from explorables.routing.figures import example_figure

    calls = []
    monkeypatch.setattr(experiment, "find_collision", lambda V, alpha: calls.append(1))  # always None
    cfg = RoutingConfig.preset("smoke", n_collision_trials=1, beta_grid=(1.0,), d_head_grid=(2,))
    summary, curves = _collisions(cfg)
    assert len(calls) == 2 + EXAMPLE_TRIES  # one per rate trial, then the bounded search
    assert summary["example"]["found"] is False and summary["example"]["tries"] == EXAMPLE_TRIES
    assert curves["example_alpha_prime"] is None
    fake = type("R", (), {"summary": {"collisions": summary}, "curves": {"collisions": curves}})()
    assert len(example_figure(fake).data) == 1


def test_training_is_deterministic_and_resumes_from_its_checkpoint(tmp_path):
    from explorables.core.checkpoint import Checkpointer

    data = make_rrt(2_000, generator=torch.Generator().manual_seed(0))
    test = make_rrt(300, generator=torch.Generator().manual_seed(1))

    def fresh():
        torch.manual_seed(0)
        return RouteReader(8, 16, kind="route_aware", sharpness=4.0)

    full = train_model(fresh(), data, test, steps=40, batch=32, record_every=10)
    again = train_model(fresh(), data, test, steps=40, batch=32, record_every=10)
    assert full.loss == again.loss and full.accuracy == again.accuracy
    ck = Checkpointer(tmp_path, every_s=0)
    train_model(fresh(), data, test, steps=20, batch=32, record_every=10, checkpoint=ck, name="m")
    saved = ck.get("m")
    assert saved["step"] == 20
    ck.entries["m"]["step"] = 20  # resume as if killed after step 20 of 40
    resumed = train_model(fresh(), data, test, steps=40, batch=32, record_every=10,
                          checkpoint=Checkpointer(tmp_path, resume=True), name="m")  # fmt: skip
    assert resumed.loss == full.loss and resumed.accuracy == full.accuracy


def test_smoke_run_shows_the_claimed_directions():
    """Seeded smoke run: oracle above the standard FFN, RA-FFN strictly between (both tasks); the controls:
    without collisions (d_head = n) the standard model does better, without positions in the values worse."""
    r = smoke_run("routing")
    for part in ("single", "multi"):
        acc, controls = r.summary[part]["accuracy"], r.summary[part]["controls"]
        assert acc["standard"] < acc["route_aware"] < acc["oracle"], acc
        assert acc["standard"] > r.summary[part]["chance"]
        assert controls["no_collision"]["d_head"] == r.config.n_tokens
        assert controls["no_collision"]["accuracy"] > acc["standard"]
        assert ("content_only" in controls) == (part == "single")  # values without position: one hop only
        assert set(r.summary[part]["validation_accuracy"]) == set(acc)
    content_only = r.summary["single"]["controls"]["content_only"]["accuracy"]
    assert r.summary["single"]["accuracy"]["standard"] > content_only
    assert r.summary["overhead"]["ours_extra"] == r.summary["overhead"]["formula_extra"]
    lines = headline(r)
    assert all(isinstance(line, str) and line for line in lines)
    assert f"standard {r.summary['single']['accuracy']['standard']:.3f}" in lines[0]
    assert len(lines) == 2 + 2 + 2  # accuracies and controls per hop, the gain ratio, the overhead (no BERT)
    for row in r.summary["single"]["survey"]:
        assert row["max_rank"] <= r.config.d_head and row["min_suppressed"] >= r.config.n_tokens - 1 - r.config.d_head
    from explorables.routing.claims import claims, survey_table

    rows = apply_gates(claims(r))
    assert [row.kind for row in rows].count("gate") == 1 and [row.kind for row in rows].count("check") == 3
    # routing given (the book's): the hop gate is not run and the 6x row is paper scale only, whatever the gains
    assert all(row.name != "hop gaps" for row in rows)
    hop = next(row for row in rows if row.claim.startswith("Gains are about 6×"))
    assert hop.outcome == "unclear" and "paper scale only" in hop.verdict and "paper scale only" in hop.setting
    assert hop.gates == ("gap",)
    bert = next(row for row in rows if row.claim.startswith("Value-rank deficiency"))
    assert bert.outcome == "unclear" and "paper scale only" in bert.verdict  # no checkpoint: never yes or no
    assert "paper scale only" in bert.setting
    assert next(row for row in rows if row.claim.startswith("rank(V)")).kind == "check"  # decided by n
    rrt = next(row for row in rows if row.claim.startswith("RRT:"))
    assert "width-matched" in rrt.verdict and "capped" not in rrt.verdict  # the width-matched control was run
    from explorables.routing.claims import sentences

    meaning = sentences(r)["control_meaning"]
    assert ("gate failed" in meaning) == (rrt.outcome == "untested")
    assert survey_table(r).count("\n") == 1 + len(r.summary["single"]["survey"]) + len(r.summary["multi"]["survey"])


# --- rank surveys and checkpoint reading -----------------------------------------------------------


@pytest.mark.parametrize("d_head", [2, 4])
def test_value_survey_ranks_are_bounded_by_the_head_width(d_head):
    """rank V <= d_head for every sequence, so at least n - 1 - d_head routing dimensions are suppressed."""
    data = make_rrt(30, length=10, vocab=4, hops=2, generator=torch.Generator().manual_seed(3))
    torch.manual_seed(0)
    model = RouteReader(4, 10, d_model=8, d_head=d_head, d_ff=8, layers=2, value_positions=True)
    rows = survey_values(model, data, sequences=12)
    assert [(r["layer"], r["head"]) for r in rows] == [(0, 0), (1, 0)]
    for r in rows:
        assert r["n"] == 10 and r["d_head"] == d_head
        assert r["max_rank"] <= d_head and r["fraction_rank_le_n_minus_2"] == 1.0
        assert r["min_suppressed"] >= 10 - 1 - d_head and r["mean_suppressed"] >= r["min_suppressed"]
    with pytest.raises(ValueError, match="sequences"):
        survey_values(model, data, sequences=31)


def _fake_bert_state(layers=2, hidden=8, heads=2):
    g = torch.Generator().manual_seed(0)
    state = {}
    for i in range(layers):
        W = torch.randn(hidden, hidden, generator=g)
        W[: hidden // heads] = torch.randn(hidden // heads, 1, generator=g) @ torch.randn(1, hidden, generator=g)
        state[f"bert.encoder.layer.{i}.attention.self.value.weight"] = W  # head 0 has rank 1
        state[f"bert.encoder.layer.{i}.attention.self.query.weight"] = torch.randn(hidden, hidden, generator=g)
    return state


def test_bert_survey_reads_a_local_pytorch_checkpoint(tmp_path):
    torch.save(_fake_bert_state(), tmp_path / "pytorch_model.bin")
    (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 2}))
    out = survey_bert_checkpoint(tmp_path, sequence_length=6)
    ranks = [(r["layer"], r["head"], r["rank_W_V"]) for r in out["heads"]]
    assert ranks == [(0, 0, 1), (0, 1, 4), (1, 0, 1), (1, 1, 4)]
    assert out["fraction_rank_le_n_minus_2"] == 1.0 and out["min_suppressed_bound"] == 6 - 1 - 4
    assert survey_bert_checkpoint(tmp_path, sequence_length=5)["fraction_rank_le_n_minus_2"] == 0.5


def test_safetensors_reader_matches_the_written_tensors(tmp_path):
    state = _fake_bert_state(layers=1)
    header, blobs, offset = {}, [], 0
    for name, t in state.items():
        raw = t.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header).encode()
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", len(head)) + head + b"".join(blobs))
    loaded = read_safetensors(tmp_path / "model.safetensors")
    for name, t in state.items():
        assert torch.equal(loaded[name], t)
    assert set(load_state_dict(tmp_path)) == set(state)  # the folder form finds the file
    assert survey_bert_checkpoint(tmp_path, heads=2)["heads"][0]["rank_W_V"] == 1


def _safetensors_bytes(header: dict, data: bytes) -> bytes:
    head = json.dumps(header).encode()
    return struct.pack("<Q", len(head)) + head + data


_GOOD_HEADER = {"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\x01\x02",
        struct.pack("<Q", 2**40) + b"{}",  # header length beyond the file
        struct.pack("<Q", 5) + b"nojson",
        _safetensors_bytes({"w": {"dtype": "Q7", "shape": [2, 2], "data_offsets": [0, 16]}}, bytes(16)),
        _safetensors_bytes({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 64]}}, bytes(16)),
        _safetensors_bytes({"w": {"dtype": "F32", "shape": [3, 3], "data_offsets": [0, 16]}}, bytes(16)),
        _safetensors_bytes(_GOOD_HEADER, bytes(8)),  # truncated data
        _safetensors_bytes({"w": {"dtype": "F32"}}, bytes(16)),  # fields missing
        bytes(range(256)) * 4,
    ],
    ids=["empty", "short", "huge-header", "not-json", "dtype", "offsets", "shape", "truncated", "fields", "random"],
)
def test_malformed_safetensors_give_one_clear_error(tmp_path, content):
    path = tmp_path / "model.safetensors"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not a readable safetensors file"):
        read_safetensors(path)
    with pytest.raises(ValueError, match="safetensors"):
        survey_bert_checkpoint(tmp_path, heads=2)


@pytest.mark.parametrize("content", [b"", b"garbage" * 10, None], ids=["empty", "random", "not-tensors"])
def test_malformed_pytorch_checkpoints_give_one_clear_error(tmp_path, content):
    path = tmp_path / "pytorch_model.bin"
    if content is None:
        torch.save({"w": [1, 2, 3]}, path)  # loads, but is not a state dict of tensors
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=r"pytorch_model\.bin"):
        load_state_dict(tmp_path)


_NOT_A_FILE_SCRIPT = """
import json, os, sys
from pathlib import Path
import torch
from explorables.routing import survey
root, out = Path(sys.argv[1]), {}
for name in ("model.safetensors", "pytorch_model.bin", "config.json"):
    for kind in ("fifo", "folder", "link to /dev/zero", "oversized"):
        d = root / f"{name}-{kind}".replace(" ", "_").replace("/", "_")
        d.mkdir()
        if name == "config.json":
            torch.save({"x": torch.zeros(2)}, d / "pytorch_model.bin")
        p = d / name
        if kind == "fifo":
            os.mkfifo(p)
        elif kind == "folder":
            p.mkdir()
        elif kind == "link to /dev/zero":
            p.symlink_to("/dev/zero")
        else:
            p.write_bytes(b"{}" if name == "config.json" else b"x" * 100)
        limit = "MAX_CONFIG_BYTES" if name == "config.json" else "MAX_CHECKPOINT_BYTES"
        saved, limits = getattr(survey, limit, None), {"MAX_CONFIG_BYTES": 1, "MAX_CHECKPOINT_BYTES": 99}
        if kind == "oversized":
            setattr(survey, limit, limits[limit])
        try:
            survey.survey_bert_checkpoint(d)
            out[f"{name} {kind}"] = "accepted"
        except ValueError as exc:
            out[f"{name} {kind}"] = str(exc)
        except Exception as exc:
            out[f"{name} {kind}"] = f"TRACEBACK {type(exc).__name__}"
        if saved is not None:
            setattr(survey, limit, saved)
print(json.dumps(out))
"""


def test_a_bert_checkpoint_that_is_not_a_regular_file_is_refused_before_it_is_opened(tmp_path):
    """Issue 53: a FIFO named model.safetensors hung the run (safetensors blocks holding the GIL, so SIGTERM
    did not end it); pytorch_model.bin and config.json as FIFOs hung too. Each is refused, in one line naming
    the file, before it is opened, and so is a file over the stated size limit. The run is a child process,
    so a hang fails the test (its guard) instead of hanging the suite."""
    import subprocess
    import sys

    try:
        proc = subprocess.run([sys.executable, "-c", _NOT_A_FILE_SCRIPT, str(tmp_path)], capture_output=True,
                              text=True, timeout=120)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("reading a checkpoint that is not a regular file waited (the child was killed)")
    assert proc.returncode == 0, proc.stderr[-2000:]
    outcomes = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(outcomes) == 12
    for case, message in outcomes.items():
        name, kind = case.split(" ", 1)
        assert "\n" not in message and name in message, (case, message)
        expected = "more than" if kind == "oversized" else "not a regular file"
        assert expected in message, (case, message)


def test_bert_survey_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="neither"):
        load_state_dict(tmp_path)
    torch.save({"x": torch.zeros(2)}, tmp_path / "pytorch_model.bin")
    with pytest.raises(ValueError, match=r"value\.weight"):
        survey_bert_checkpoint(tmp_path)


# --- bad input -------------------------------------------------------------------------------------


def test_bad_input_is_a_clear_error():
    V = np.random.default_rng(0).standard_normal((2, 5))
    with pytest.raises(ValueError, match="alpha must have shape"):
        find_collision(V, np.ones(4) / 4)
    with pytest.raises(ValueError, match="simplex"):
        find_collision(V, np.array([0.5, 0.6, 0, 0, -0.1]))
    with pytest.raises(ValueError, match="V must"):
        find_collision(np.ones(5), np.ones(5) / 5)
    with pytest.raises(ValueError, match="floating dtype"):
        routing_statistics(torch.ones(3, dtype=torch.long))
    with pytest.raises(ValueError, match="m >= 2"):
        routing_statistics(torch.ones(1))
    with pytest.raises(ValueError, match="positions"):
        RouteAwareFFN(8, 16, 1, "oracle")
    with pytest.raises(ValueError, match="kind"):
        RouteAwareFFN(8, 16, 1, "magic")
    model = RouteReader(8, 16)
    b = make_rrt(4)
    with pytest.raises(ValueError, match="needs alphas"):
        model(b.keys, b.pointers, b.query)
    with pytest.raises(ValueError, match="shape"):
        model(b.keys[:, :10], b.pointers[:, :10], b.query, b.alphas)
    with pytest.raises(ValueError, match="int64"):
        model(b.keys.float(), b.pointers, b.query, b.alphas)
    with pytest.raises(ValueError, match="given alpha"):
        model(b.keys, b.pointers, b.query, [b.alphas[0][:, :, :8]])
    with pytest.raises(ValueError, match="model is on meta"):  # a device mismatch is named, not a deep traceback
        RouteReader(8, 16).to("meta")(b.keys, b.pointers, b.query, b.alphas)
    with pytest.raises(ValueError, match="vocab"):
        make_rrt(4, vocab=1)
    with pytest.raises(ValueError, match="hops"):
        make_rrt(4, hops=3)


def test_config_cross_checks_name_the_fields():
    """Rules between fields (each field's own rule is checked by tests/test_contract.py)."""
    for changes, message in [
        (dict(n_tokens=16, d_head=15), r"d_head must be <= n_tokens - 2 = 14"),  # rank V <= n - 2: the collision regime
        (dict(n_heads=2), "routing='given'"),
        (dict(n_extra_layers=1), "routing='given'"),
        (dict(n_train=100, batch_size=256), "n_train must be >= batch_size"),
        (dict(n_tokens=16, d_head_grid=(2, 17)), "d_head_grid"),
        (dict(n_survey_sequences=2_000), "n_survey_sequences"),
    ]:
        with pytest.raises(ValueError, match=message):
            RoutingConfig.preset("smoke", **changes)


# --- the runner --------------------------------------------------------------------------------------


def test_kill_and_resume_matches_an_uninterrupted_run(tmp_path):
    args = ["run", "routing", "--scale", "smoke", "--quiet", "--no-figures",
            "--set", "n_steps=150", "--set", "batch_size=64", "--set", "n_train=2000", "--set", "n_test=200",
            "--set", "n_collision_trials=1", "--set", "n_survey_sequences=10"]  # fmt: skip
    full, killed = tmp_path / "full", tmp_path / "killed"
    assert cli(*args, "--out", str(full)).returncode == 0
    # killed while a single-hop model is in mid-training
    kill_mid_run(args, killed, ready=lambda entries: any(k.startswith("single/") for k in entries))
    assert cli(*args, "--out", str(killed), "--resume").returncode == 0
    a = json.loads((full / "results.json").read_text())
    b = json.loads((killed / "results.json").read_text())
    for part in ("collisions", "single", "multi", "overhead"):
        assert a[part] == b[part]


def test_bert_survey_joins_the_run_when_a_checkpoint_is_given(tmp_path, capsys):
    from explorables.routing.survey import main

    torch.save(_fake_bert_state(), tmp_path / "pytorch_model.bin")
    (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 2}))
    cfg = RoutingConfig.preset("smoke", n_steps=2, n_collision_trials=1, bert_checkpoint=str(tmp_path),
                               bert_n_tokens=6)  # fmt: skip
    r = run(cfg)
    assert r.summary["bert"]["heads"][0]["rank_W_V"] == 1
    main([str(tmp_path), "--heads", "2", "--length", "6"])
    assert json.loads(capsys.readouterr().out)["fraction_rank_le_n_minus_2"] == 1.0


def test_paper_code_path_with_learned_routing_runs_on_cpu_at_toy_size():
    """The paper preset (learned routing, several heads, extra layers), shrunk to a few steps."""
    cfg = RoutingConfig.preset("paper", device="cpu", n_tokens=8, d_model=16, d_head=4, d_ff=16, n_extra_layers=1,
                               n_train=256, n_test=64, n_steps=3, batch_size=32, n_collision_trials=1,
                               d_head_grid=(2,), n_survey_sequences=4)  # fmt: skip
    assert cfg.routing == "learned" and cfg.n_heads == 4
    r = run(cfg)
    assert set(r.models[2]) == {"standard", "route_aware", "oracle"}
    assert len(r.models[2]["oracle"].ffns) == 3  # two hops + one extra layer
    assert len(r.summary["multi"]["survey"]) == 3 * 4  # every layer and head surveyed
    p = r.summary["single"]["parameters"]
    assert p["route_aware"] - p["standard"] == 2 * RouteAwareFFN.extra_parameters(16, 4)  # 2 layers
    from explorables.routing.claims import claims

    # learned routing: the hop gate runs and the 6x row is judged on the gains (or untested when the gate fails)
    rows = apply_gates(claims(r))
    assert any(row.kind == "gate" and row.name == "hop gaps" for row in rows)
    hop = next(row for row in rows if row.claim.startswith("Gains are about 6×"))
    assert hop.gates == ("gap", "hop gaps") and "paper scale only" not in hop.verdict


# --- the live lab -------------------------------------------------------------------------------------


def test_lab_reruns_on_head_settings_and_only_redraws_on_output_and_hops():
    from explorables.routing.lab import RoutingLab

    lab = RoutingLab()
    assert lab.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    collision, img = lab.collision, lab.image.value
    lab.output.value = 0.3
    assert lab.collision is collision and lab.image.value != img  # redraw only
    lab.d_head.value = 15  # n = 16: [V; 1^T] is invertible, no collision
    assert lab.fibre == 0 and lab.collision is None and "dimension 0" in lab.status.value
    lab.d_head.value = 2
    assert lab.fibre == 13 and lab.collision is not None and lab.collision.residual < 1e-9


# --- the verdicts of the claims table follow from the numbers (Claims kit 3) -------------------------

HI, LO, MID = [0.90, 0.85, 0.88], [0.3, 0.2, 0.25], [0.2, 1.3, 0.8]


def test_every_criterion_reaches_every_branch():
    assert drive(CRITERIA) == []


def test_gap_gate_needs_a_quarter_on_every_seed_and_hop():
    assert gap_gate({"single": [0.3, 0.4, 0.26], "multi": [0.5, 0.3, 0.4]}).startswith("pass")
    failed = gap_gate({"single": [0.07, 0.06, 0.4], "multi": [0.5, 0.3, 0.4]})  # one seed without room
    assert failed.startswith("fail") and "single" in failed and "multi" not in failed
    assert hop_gap_gate([0.1, 0.12, 0.11]).startswith("pass")
    assert hop_gap_gate([0.01, -0.02, 0.0]).startswith("fail") and hop_gap_gate([0.1]).startswith("fail")


def test_checks_pass_and_fail():
    assert collision_check([0.5, 0.2], 1e-15) == "pass: exact collisions exist (and get rarer as attention sharpens)"
    assert collision_check([0.5, 0.5], 1e-15) == "pass: exact collisions exist"
    assert collision_check([0.0, 0.3], 1e-15).startswith("fail")  # none at the lowest sharpness
    assert collision_check([0.5, 0.2], 1e-6).startswith("fail")  # not exact
    assert collision_check([], 0.0).startswith("fail")
    assert rank_check(1.0).startswith("pass") and rank_check(0.99).startswith("fail")
    # BERT-Base: rank ≤ 64 ≤ n − 2 by construction once n ≥ 66; a survey, if any, must agree
    assert bert_rank_check(64, 128, 0.0, 0).startswith("pass") and bert_rank_check(64, 65, 0.0, 0).startswith("fail")
    assert bert_rank_check(64, 128, 1.0, 144).startswith("pass")
    assert bert_rank_check(64, 128, 0.9, 144).startswith("fail")


def test_rrt_verdict_reads_the_gap_and_the_control_per_hop_and_is_capped_without_a_width_matched_control():
    big, small = {"one": [0.6, 0.62, 0.65], "two": [0.6, 0.62, 0.65]}, {"one": [0.07, 0.06, 0.08], "two": [0.07, 0.06]}
    narrow = {"one": [0.05, 0.1, 0.08]}  # a width-matched control that closes little: the gap is the rank's
    assert rrt_verdict(big, {"one": HI, "two": HI}, narrow).startswith("yes")
    assert rrt_verdict(big, {"one": HI, "two": LO}, narrow).startswith("partly")
    assert rrt_verdict(small, {"one": LO, "two": LO}, {"one": HI}).startswith("no")  # no, never partly
    assert rrt_verdict({"one": [0.0, 0.7, 0.3]}, {"one": MID}, {"one": MID}).startswith("unclear")
    # without the width-matched control, yes and partly are capped at unclear, and the reason says so
    capped = rrt_verdict(big, {"one": HI, "two": HI})
    assert capped.startswith("unclear: capped from yes") and "width-matched" in capped
    assert rrt_verdict(big, {"one": HI, "two": LO}).startswith("unclear: capped from partly")
    assert rrt_verdict(small, {"one": LO, "two": LO}).startswith("no")  # no stays no
    # the gap itself is a part: a control that closes all of a tiny gap is not a yes
    assert "no: gap ≥ 32%, one" in rrt_verdict(small, {"one": HI, "two": HI}, narrow)
    assert rrt_verdict(small, {"one": HI, "two": HI}, narrow).startswith("partly")
    assert rrt_verdict(big, {"one": [0.9, float("nan")], "two": LO}).startswith("unclear")  # a seed without a gap


def test_ra_gain_verdict_per_hop_and_the_hop_ratio():
    assert ra_gain_verdict({"one": HI, "two": HI}).startswith("yes")
    assert ra_gain_verdict({"one": [0.56, 0.53, 0.58], "two": HI}).startswith("partly")
    assert ra_gain_verdict({"one": [0.56, 0.53, 0.58], "two": [0.53, 0.5, 0.6]}).startswith("no")
    assert ra_gain_verdict({"one": MID, "two": LO}).startswith("unclear")
    # the hop claim is judged on the paired difference gain₂ − 3·gain₁, never on a ratio of small gains
    assert hop_ratio_verdict([0.3, 0.25, 0.35], [0.05, 0.05, 0.05]).startswith("yes")
    assert hop_ratio_verdict([0.04, 0.05, 0.04], [0.04, 0.04, 0.05]).startswith("no")  # equal gains
    assert hop_ratio_verdict([0.3, 0.0, 0.2], [0.05, 0.05, 0.05]).startswith("unclear")
    assert hop_ratio_verdict([0.01, 0.012, 0.011], [0.0, 0.0, 0.0]).startswith("yes")  # no division by a zero gain
    # routing given by the task: paper scale only, whatever the gains
    for multi, single in (([0.3, 0.25, 0.35], [0.05, 0.05, 0.05]), ([0.04, 0.05, 0.04], [0.04, 0.04, 0.05])):
        given = hop_ratio_verdict(multi, single, learned_routing=False)
        assert given.startswith("unclear") and "paper scale only" in given


def test_overhead_and_bert_verdicts():
    assert overhead_verdict(0.0109, 0.001).startswith("yes")
    assert overhead_verdict(0.016, 0.0014).startswith("unclear")  # depends on the layout the paper does not give
    assert overhead_verdict(0.02, 0.011).startswith("no")
    assert bert_suppressed_verdict(107, 144).startswith("yes") and bert_suppressed_verdict(63, 144).startswith("no")
    assert bert_suppressed_verdict(120, 0).startswith("unclear: paper scale only")


def test_control_sentences_follow_the_share_closed():
    assert control_reading({"single": 1.2, "multi": 0.8}) == (
        "closes all (one hop) and 80% (two hops) of the gap to the oracle"
    )
    assert control_reading({"single": -0.1, "multi": 0.0}) == (
        "closes none (one hop) and none (two hops) of the gap to the oracle"
    )
    # the meaning follows the claims table's gated verdict, never the means against 75%
    assert "gate failed" in control_meaning("untested")
    assert "straddle" in control_meaning("unclear")
    assert "some parts of the claim hold" in control_meaning("partly")
    assert "no gap closed" in control_meaning("no")
    assert "width-matched" in control_meaning("yes")


# --- issue 28: the RRT over several seeds --------------------------------------------------------


def test_rrt_seeds_pool_to_means_and_the_first_seed_is_the_single_seed_run():
    """Every seed is its own run (the first one equals a run on that seed alone), the summary's accuracies
    are the seeds' means, and the claims table names the seeds and decides on the interval over them."""
    from explorables.routing.claims import claims

    tiny = dict(n_steps=3, n_train=512, batch_size=64, n_collision_trials=1, n_test=100, n_validation=50,
                n_survey_sequences=10, beta_grid=(1.0,), d_head_grid=(2,))  # fmt: skip
    two = run(RoutingConfig.preset("smoke", seeds=(0, 1), **tiny))
    one = run(RoutingConfig.preset("smoke", seeds=(0,), **tiny))
    for part in ("single", "multi"):
        s, by = two.summary[part], two.summary[part]["by_seed"]
        assert s["seeds"] == [0, 1] and len(by["gap"]) == 2
        for kind, values in by["accuracy"].items():
            assert values[0] == one.summary[part]["accuracy"][kind]
            assert s["accuracy"][kind] == pytest.approx(np.mean(values))
        for name, values in by["controls"].items():
            assert s["controls"][name]["accuracy"] == pytest.approx(np.mean(values))
        assert s["gap"] == pytest.approx(s["accuracy"]["oracle"] - s["accuracy"]["standard"])
        assert by["gap"] != [by["gap"][0]] * 2 or by["accuracy"]["standard"][0] != by["accuracy"]["standard"][1]
    assert len(two.summary["multi_over_single_gain_by_seed"]) == 2
    rows = [row for row in claims(two) if "gap" in row.gates or row.name == "gap"]
    assert len(rows) == 4 and all("seeds 0, 1" in row.setting for row in rows)  # the gate, RRT, RA share, hops


def test_spread_is_mean_and_sample_sd():
    from explorables.routing.claims import spread

    assert spread([0.5]) == "50.0%" and spread([0.4, 0.6]) == "50.0% ± 14.1% (40.0% to 60.0%)"  # sample sd
    assert spread([-0.1, 0.1], "+.2f") == "+0.00 ± 0.14 (-0.10 to +0.10)"


# --- issue 45: the width-matched control and the oracle's scale ------------------------------------------


@pytest.mark.parametrize(("hops", "n_tokens", "d_model"), [(1, 32, 32), (2, 32, 32), (1, 12, 16), (2, 20, 8)])
def test_matched_d_ff_is_the_smallest_ffn_width_at_least_as_large_as_the_no_collision_control(hops, n_tokens, d_model):
    from explorables.routing.experiment import _count, _reader, matched_d_ff

    cfg = RoutingConfig.preset("smoke", n_tokens=n_tokens, d_model=d_model, d_head_grid=(2, 4))
    d_ff = matched_d_ff(cfg, hops)
    target = _count(_reader(cfg, hops, d_head=n_tokens))
    assert _count(_reader(cfg, hops, d_ff=d_ff)) >= target > _count(_reader(cfg, hops, d_ff=d_ff - 1))
    assert _reader(cfg, hops, d_ff=d_ff).d_head == cfg.d_head  # the narrow head: the rank bottleneck stays


def test_the_oracle_reads_m_alpha_and_ra_ffn_the_unscaled_statistics():
    alpha = torch.softmax(torch.randn(5, 2, 7, generator=torch.Generator().manual_seed(0)), -1)
    oracle = RouteAwareFFN(8, 16, 2, "oracle", positions=7)
    assert torch.allclose(oracle.side_input(alpha), (7 * alpha).flatten(-2))
    assert torch.allclose(oracle.side_input(torch.full((1, 2, 7), 1 / 7)), torch.ones(1, 14))  # uniform reads 1
    ra = RouteAwareFFN(8, 16, 2, "route_aware")
    assert torch.allclose(ra.side_input(alpha), routing_statistics(alpha).flatten(-2))


def test_the_width_matched_control_is_the_narrow_head_in_a_model_as_large_as_the_no_collision_control():
    tiny = dict(n_steps=3, n_train=512, batch_size=64, n_collision_trials=1, n_test=100, n_validation=50,
                n_survey_sequences=10, beta_grid=(1.0,), d_head_grid=(2,))  # fmt: skip
    r = run(RoutingConfig.preset("smoke", **tiny))
    for part in ("single", "multi"):
        c = r.summary[part]["controls"]
        assert c["width_matched"]["d_head"] == r.config.d_head < c["no_collision"]["d_head"] == r.config.n_tokens
        assert (
            c["width_matched"]["parameters"]
            >= c["no_collision"]["parameters"]
            > r.summary[part]["parameters"]["standard"]
        )
        assert c["width_matched"]["d_ff"] > r.config.d_ff == c["no_collision"]["d_ff"]
        by = r.summary[part]["by_seed"]
        gap = by["gap"][0]
        want = (by["controls"]["width_matched"][0] - by["accuracy"]["standard"][0]) / gap if gap > 0 else None
        if want is not None:
            assert by["width_matched_gap_closed"][0] == pytest.approx(want)


def test_the_second_hop_queries_with_what_the_first_retrieved_relative_to_the_average_pointer():
    from explorables.routing import ReferenceHeads

    heads = ReferenceHeads(vocab=5, length=12, hops=2, head_seed=3)
    g = torch.Generator().manual_seed(0)
    keys, pointers, query = (
        torch.randint(5, (50, 12), generator=g),
        torch.randint(5, (50, 12), generator=g),
        torch.randint(5, (50,), generator=g),
    )
    a1, a2 = heads.route(keys, pointers, query, beta=1.0)
    u2 = (a1[:, :, None] * heads.e_ptr[pointers]).sum(1) - heads.e_ptr.mean(0)
    assert torch.allclose(a2, torch.softmax(heads.scores(u2, keys, pointers, 1), dim=1))
    # the tokens given or recomputed give the same scores; a symbol outside the vocabulary is refused, naming it
    tokens = heads.tokens(keys, pointers)
    assert torch.equal(heads.scores(u2, keys, pointers, 1, tokens), heads.scores(u2, keys, pointers, 1))
    with pytest.raises(ValueError, match=r"\bkeys must hold symbols in \[0, 4\]"):
        heads.tokens(keys + 5, pointers)
    # a uniform first hop over a sequence holding every pointer equally often retrieves the average: query 0
    flat = torch.arange(10).remainder(5)[None]
    u_avg = (torch.full((1, 10), 0.1)[:, :, None] * ReferenceHeads(5, 10, 2).e_ptr[flat]).sum(1)
    assert torch.allclose(u_avg - ReferenceHeads(5, 10, 2).e_ptr.mean(0), torch.zeros(1, 16, dtype=torch.float64))


@pytest.mark.parametrize("hops", [1, 2])
def test_book_setting_labels_are_spread_over_positions(hops):
    """A guard against degenerate draws (one two-hop draw once made one position the label of 73% of
    sequences): on the book setting no position is the label of more than a quarter of the examples, for
    the base seeds the seed study uses."""
    import dataclasses

    from explorables.routing import RoutingConfig, make_rrt
    from explorables.routing.experiment import run_seed

    cfg = RoutingConfig.preset("book")
    for base_seed in range(5):
        for seed in cfg.seeds:  # the test split of every run of the seed study (experiment._rrt_on's seeds)
            sub = run_seed(dataclasses.replace(cfg, seed=base_seed), seed)
            batch = make_rrt(2_000, length=cfg.n_tokens, vocab=cfg.vocab_size, hops=hops, beta=cfg.beta,
                             head_seed=sub, generator=torch.Generator().manual_seed(sub * 1_000 + 500))
            share = torch.bincount(batch.label, minlength=cfg.n_tokens).max().item() / len(batch.label)
            assert share < 0.25, (base_seed, seed, hops, share)


def test_the_one_hop_task_is_the_first_hop_of_the_two_hop_task(monkeypatch):
    """The two tasks are paired: every split of a run draws the same sequences at one hop and at two, the first
    reference head is the same, and the one-hop label is the two-hop task's first-hop source."""
    from explorables.routing import experiment

    seen: dict[int, list[tuple[int, torch.Tensor, torch.Tensor]]] = {1: [], 2: []}

    def recording(size, **kwargs):
        seed = kwargs["generator"].initial_seed()
        batch = make_rrt(size, **kwargs)
        seen[kwargs["hops"]].append((seed, batch.keys, batch.alphas[0]))
        if kwargs["hops"] == 2:
            seen[2][-1] = (*seen[2][-1], batch)
        return batch

    monkeypatch.setattr(experiment, "make_rrt", recording)
    cfg = RoutingConfig.preset("smoke", n_steps=1, n_train=128, batch_size=64, n_test=40, n_validation=20,
                               n_collision_trials=1, n_survey_sequences=4, use_controls=False,
                               beta_grid=(1.0,), d_head_grid=(2,))  # fmt: skip
    run(cfg)
    assert len(seen[1]) == len(seen[2]) == 3  # train, validation, test
    for (seed1, keys1, alpha1), (seed2, keys2, alpha2, _) in zip(seen[1], seen[2], strict=True):
        assert seed1 == seed2 and torch.equal(keys1, keys2)
        torch.testing.assert_close(alpha1, alpha2)
    single = make_rrt(40, length=cfg.n_tokens, vocab=cfg.vocab_size, hops=1, beta=cfg.beta,
                      head_seed=0, generator=torch.Generator().manual_seed(seen[1][-1][0]))  # fmt: skip
    assert torch.equal(single.label, seen[2][-1][3].alphas[0][:, 0].argmax(1))


# --- worker processes ------------------------------------------------------------------------------


def test_a_worker_process_gives_the_serial_numbers():
    """With two processes a spawned worker takes RRT runs from the end of the list (the last seed's two-hop run
    at least): every number, curve and the first seed's trained weights are those of the run in one process."""
    from explorables.core.checkpoint import Checkpointer
    from explorables.routing.experiment import RRTRuns

    cfg = RoutingConfig.preset("smoke", seeds=(0, 1), n_steps=20, n_train=512, batch_size=64, n_test=100,
                               n_validation=50, n_collision_trials=1, n_survey_sequences=10,
                               beta_grid=(1.0,), d_head_grid=(2,))  # fmt: skip
    assert cfg.processes == 1  # the smoke preset runs in this process
    runs = RRTRuns(cfg, Checkpointer(None), "cpu")
    assert runs.pending == [(1, 0), (1, 1), (2, 0), (2, 1)]
    serial = run(cfg)
    shared = run(cfg.replace(processes=2))
    for results in (serial, shared):
        results.summary.pop("timings")
    assert_same_tree(serial.summary, shared.summary)
    assert_same_tree(serial.curves, shared.curves)
    assert set(serial.models) == set(shared.models) == {1, 2}
    for hops, by_kind in serial.models.items():
        assert set(by_kind) == set(shared.models[hops])
        for kind, model in by_kind.items():
            assert_same_tree(model.state_dict(), shared.models[hops][kind].state_dict())


def test_processes_is_checked():
    with pytest.raises(ValueError, match="processes"):
        RoutingConfig.preset("smoke", processes=-1)


def test_a_run_resumed_with_a_worker_gives_the_serial_numbers(tmp_path):
    """Resumed with the one-hop part stored, the two-hop runs are shared between this process and a worker
    (``RRTRuns`` then lists only those): every number and curve is that of an uninterrupted run in one process."""
    from explorables.core.checkpoint import Checkpointer
    from explorables.routing.experiment import RRTRuns

    cfg = RoutingConfig.preset("smoke", seeds=(0, 1), n_steps=20, n_train=512, batch_size=64, n_test=100,
                               n_validation=50, n_collision_trials=1, n_survey_sequences=10,
                               beta_grid=(1.0,), d_head_grid=(2,), processes=2)  # fmt: skip
    serial = run(cfg.replace(processes=1))
    run(cfg, checkpoint=Checkpointer(tmp_path, every_s=0))
    stored = Checkpointer(tmp_path, resume=True)
    assert stored.get("part/single") is not None
    later = [k for k in stored.entries if k.startswith(("part/multi", "part/overhead", "multi/"))]
    assert "part/multi" in later
    stored.save("run", stored.entries["run"], drop=tuple(later))
    resumed_ck = Checkpointer(tmp_path, resume=True)
    assert RRTRuns(cfg, resumed_ck, "cpu").pending == [(2, 0), (2, 1)]
    resumed = run(cfg, checkpoint=resumed_ck)
    for results in (serial, resumed):
        results.summary.pop("timings")
    assert_same_tree(serial.summary, resumed.summary)
    assert_same_tree(serial.curves, resumed.curves)
