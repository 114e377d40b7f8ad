"""Chapter 11 (uggrh): retrieval metrics against hand-made cases and brute force, the missing-data
discipline (no labels and no hidden value ever reach training), the modules, and a seeded smoke run."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest
import torch

from explorables.uggrh import (
    Config,
    IncompletePairs,
    Modules,
    TrainSettings,
    average_precision,
    digits_with_tags,
    hamming_distances,
    hamming_ranking,
    headline,
    make_incomplete,
    map_at_all,
    mean_average_precision,
    pack_codes,
    packed_hamming,
    prepare,
    run,
    similarity_target,
    split,
    train_hashing,
)
from explorables.uggrh import claims as C
from explorables.uggrh import method as M
from explorables.uggrh.data import load_features
from explorables.uggrh.experiment import evaluate

from .smoke_runs import smoke_run
from .trees import assert_same_tree

FAST = TrainSettings(n_hidden=32, n_epochs=15, n_completion_steps=15, k_neighbours=5)


# ---------------------------------------------------------------- retrieval


def test_average_precision_on_hand_made_rankings():
    assert average_precision([1, 0, 1, 0]) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert average_precision([0, 0, 1]) == pytest.approx(1 / 3)
    assert average_precision([1, 1, 1]) == 1.0
    assert average_precision([0, 0, 0]) == 0.0  # no relevant item: AP 0


def test_map_matches_brute_force_definition():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n_q, n_d, bits = 5, 17, 6
        q = np.where(rng.random((n_q, bits)) < 0.5, 1, -1)
        d = np.where(rng.random((n_d, bits)) < 0.5, 1, -1)
        ql, dl = np.eye(3)[rng.integers(0, 3, n_q)], np.eye(3)[rng.integers(0, 3, n_d)]
        brute = []
        for i in range(n_q):  # the definition, written out: sort by (distance, index), average precision@hits
            dist = [sum(a != b for a, b in zip(q[i], d[j], strict=True)) for j in range(n_d)]
            order = sorted(range(n_d), key=lambda j: (dist[j], j))
            rel = [bool(ql[i] @ dl[j]) for j in order]
            precisions = [sum(rel[: r + 1]) / (r + 1) for r in range(n_d) if rel[r]]
            brute.append(np.mean(precisions) if precisions else 0.0)
        assert map_at_all(q, d, ql, dl) == pytest.approx(np.mean(brute), abs=1e-12)


def test_hamming_distance_inner_product_identity_and_ranking_ties():
    q = np.array([[1, 1, -1, -1]])
    d = np.array([[1, 1, -1, -1], [-1, 1, -1, -1], [1, -1, -1, -1], [-1, -1, 1, 1]])
    assert hamming_distances(q, d).tolist() == [[0, 1, 1, 4]]
    assert hamming_ranking(q, d).tolist() == [[0, 1, 2, 3]]  # tie between 1 and 2: by index
    rng = np.random.default_rng(1)
    a, b = np.where(rng.random((7, 40)) < 0.5, 1, -1), np.where(rng.random((9, 40)) < 0.5, 1, -1)
    packed = packed_hamming(pack_codes(a), pack_codes(b))
    assert np.array_equal(packed, hamming_distances(a, b))
    assert np.array_equal(hamming_distances(a, b), (40 - a @ b.T) // 2)


def test_mean_average_precision_perfect_and_reversed():
    relevant = np.array([[True, True, False, False]])
    assert mean_average_precision(np.array([[0, 1, 2, 3]]), relevant) == 1.0
    assert mean_average_precision(np.array([[3, 2, 1, 0]]), relevant) == pytest.approx((1 / 3 + 2 / 4) / 2)


def test_retrieval_refuses_bad_codes():
    with pytest.raises(ValueError, match="query"):
        hamming_distances(np.array([[0, 1]]), np.array([[1, 1]]))
    with pytest.raises(ValueError, match="n_bits"):
        hamming_distances(np.array([[1, 1]]), np.array([[1, 1, 1]]))


# ---------------------------------------------------------------- data and missingness


def test_bad_missing_rates_and_mismatched_counts_are_refused():
    rng = np.random.default_rng(0)
    x, t = rng.random((10, 4)), rng.random((10, 3))
    for rate in (-0.1, 1.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="missing_rate"):
            make_incomplete(x, t, rate, rng=rng)
    with pytest.raises(ValueError, match="image_missing_share"):
        make_incomplete(x, t, 0.5, 1.2, rng=rng)
    with pytest.raises(ValueError, match="text must have shape"):
        make_incomplete(x, t[:9], 0.5, rng=rng)
    with pytest.raises(ValueError, match="at least one modality"):
        IncompletePairs(x, t, np.zeros(10, bool), np.ones(10, bool) & (np.arange(10) > 0))
    data = digits_with_tags(rng=rng)
    with pytest.raises(ValueError, match="n_query"):
        split(data, 1000, 700, 200, rng)


def test_missing_pattern_rate_share_and_nan():
    rng = np.random.default_rng(0)
    x, t = rng.random((200, 4)), rng.random((200, 3))
    pairs = make_incomplete(x, t, 0.6, 0.25, rng=rng)
    assert (~pairs.complete).sum() == 120 and (~pairs.has_image).sum() == 30 and (~pairs.has_text).sum() == 90
    assert np.isnan(pairs.image[~pairs.has_image]).all() and np.isnan(pairs.text[~pairs.has_text]).all()
    assert np.isfinite(pairs.image[pairs.has_image]).all()


def test_the_share_moves_which_half_is_lost_not_which_pairs_are_incomplete():
    """The imbalance part relies on it: the same rng gives the same incomplete pairs at every share, so the control
    (the baseline on the complete pairs) is the same for every share and share 0.5 is the main run's pattern."""
    x, t = np.random.default_rng(0).random((50, 4)), np.random.default_rng(1).random((50, 3))
    by_share = {a: make_incomplete(x, t, 0.7, a, rng=np.random.default_rng(5)) for a in (0.0, 0.5, 1.0)}
    for pairs in by_share.values():
        assert (pairs.complete == by_share[0.5].complete).all()
    assert by_share[0.0].has_image.all() and by_share[1.0].has_text.all()


def test_imbalance_part_reuses_the_main_run_at_the_default_share_and_carries_the_control():
    cfg = Config.preset("smoke", missing_rate_grid=(0.0, 0.5), n_epochs=5, n_completion_steps=5, use_examples=False,
                        timing_n_database=200, timing_n_queries=1, imbalance_share_grid=(0.0, 0.5, 1.0))  # fmt: skip
    results = run(cfg)
    s = results.summary
    rows = {r["image_missing_share"]: r for r in s["imbalance"]["rows"]}
    assert [r["reused"] for r in rows.values()] == [False, True, False]
    assert rows[0.5]["uggrh"] == s["missing_50"]["uggrh"]["16"]["mean"]
    assert rows[0.5]["baseline"] == s["missing_50"]["baseline"]["16"]["mean"]
    assert all(r["control"] == s["ablations"]["drop_incomplete"] for r in rows.values())
    assert rows[0.0]["uggrh"]["values"] != rows[1.0]["uggrh"]["values"]
    table = C.imbalance_table(results)
    assert len(table.splitlines()) == 2 + 3 and "UGGRH minus control" in table
    names = [r.claim for r in C.claims(results)]
    assert "UGGRH is robust to modality imbalance" in names
    assert any(n.startswith("More robust than the control") for n in names)


def test_training_functions_never_receive_labels():
    for fn in (prepare, train_hashing, M.train_completion, M.fill_missing, M.similarity_target):
        params = inspect.signature(fn).parameters
        assert not any("label" in p or "class" in p for p in params), fn.__name__
    assert not any("label" in f.name for f in dataclasses.fields(IncompletePairs))
    with pytest.raises(ValueError, match="IncompletePairs"):
        prepare(digits_with_tags(rng=np.random.default_rng(0)), Modules(), FAST, seed=0)


@pytest.mark.parametrize(
    "modules", [None, Modules(), Modules(use_completion=False)], ids=["baseline", "uggrh", "meanfill"]
)
def test_missing_values_never_reach_training(modules):
    """The same training run with two different hidden contents (NaN vs the true values): identical codes."""
    rng = np.random.default_rng(3)
    data = digits_with_tags(rng=rng)
    train, query, _ = split(data, 50, 120, 100, rng)
    pairs = make_incomplete(train.image, train.text, 0.5, rng=rng)
    revealed = dataclasses.replace(
        pairs,
        image=np.where(pairs.has_image[:, None], pairs.image, train.image),
        text=np.where(pairs.has_text[:, None], pairs.text, 1e6),  # garbage where hidden
    )
    codes = []
    for p in (pairs, revealed):
        h = train_hashing(prepare(p, modules, FAST, seed=0), 16, modules, FAST, seed=0)
        codes.append((h.image_codes(query.image), h.text_codes(query.text)))
    assert np.array_equal(codes[0][0], codes[1][0]) and np.array_equal(codes[0][1], codes[1][1])
    assert np.isin(codes[0][0], (-1, 1)).all()


def test_load_features_reads_the_documented_npz(tmp_path):
    rng = np.random.default_rng(0)
    labels = (rng.random((30, 5)) < 0.3).astype(float)
    labels[0] = 0  # a sample without labels is dropped
    np.savez(tmp_path / "mirflickr.npz", image=rng.random((30, 12)), text=rng.random((30, 7)), labels=labels)
    data = load_features(tmp_path, "mirflickr")
    assert data.image.shape == (int((labels.sum(1) > 0).sum()), 12) and data.text.shape[1] == 7
    with pytest.raises(ValueError, match=r"coco\.npz"):
        load_features(tmp_path, "coco")
    np.savez(tmp_path / "nuswide.npz", image=rng.random((30, 12)))
    with pytest.raises(ValueError, match="lacks"):
        load_features(tmp_path, "nuswide")


# ---------------------------------------------------------------- the method


def test_similarity_target_reduces_to_djsrh_joint_without_confidences():
    rng = np.random.default_rng(0)
    x, t = torch.tensor(rng.standard_normal((20, 5))), torch.tensor(rng.standard_normal((20, 4)))
    fx, ft = torch.nn.functional.normalize(x, dim=1), torch.nn.functional.normalize(t, dim=1)
    joint = 0.5 * (fx @ fx.T + ft @ ft.T)
    expected = ((1 - 0.3) * joint + 0.3 * joint @ joint.T / 20) * 1.2
    got = similarity_target(x, t, eta=0.3, scale=1.2)
    assert torch.allclose(got, expected.clamp(-1, 1), atol=1e-12)
    ones = torch.ones(20, dtype=x.dtype)
    assert torch.allclose(similarity_target(x, t, ones, ones, eta=0.3, scale=1.2), got, atol=1e-12)


def test_confidence_zero_removes_a_modality_from_the_target():
    """A row whose text has confidence 0 gets its similarities from the images alone (eq. refined-similarity)."""
    rng = np.random.default_rng(1)
    x, t = torch.tensor(rng.standard_normal((6, 5))), torch.tensor(rng.standard_normal((6, 4)))
    c_t = torch.ones(6, dtype=x.dtype)
    c_t[0] = 0.0
    s = similarity_target(x, t, None, c_t, eta=0.0, scale=1.0)
    fx = torch.nn.functional.normalize(x, dim=1)
    assert torch.allclose(s[0, 1:], (fx @ fx.T)[0, 1:], atol=1e-12)


def test_graph_attention_only_mixes_neighbours():
    torch.manual_seed(0)
    layer = M.HashGraphAttention(4)
    h = torch.randn(6, 4)
    neighbours = torch.tensor([[i, (i + 1) % 6] for i in range(6)])
    out = layer(h, neighbours, torch.tanh(h))
    h2 = h.clone()
    h2[3] += 10.0  # node 3 is a neighbour of node 2 only
    out2 = layer(h2, neighbours, torch.tanh(h2))
    changed = (out2 - out).abs().sum(1) > 1e-9
    assert changed.tolist() == [False, False, True, True, False, False]


def test_unified_codes_lie_in_the_open_cube_and_refuse_a_neighbour_out_of_range():
    torch.manual_seed(0)
    net = M.HashNet(5, 7, 4, 8, Modules())
    z_image, z_text = torch.randn(6, 4), torch.randn(6, 4)
    neighbours = torch.tensor([[i, (i + 1) % 6] for i in range(6)])
    u = net.unified(z_image, z_text, neighbours)
    assert u.shape == (6, 4) and bool((u.abs() < 1).all())  # tanh: relaxed codes in (-1, 1)
    with pytest.raises(ValueError, match=r"\bz_text must have shape \(n, b\) with b = 4"):
        net.unified(z_image, z_text[:, :3], neighbours)
    with pytest.raises(ValueError, match=r"\bneighbours must hold row indices in \[0, 5\]"):
        net.unified(z_image, z_text, neighbours + 1)
    with pytest.raises(ValueError, match=r"\bz_image must have shape \(n, n_bits=4\)"):
        net.unified(z_image[:, :3], z_text[:, :3], neighbours)


def test_knn_graph_puts_self_first():
    s = torch.tensor([[1.0, 0.9, -0.5], [0.9, 1.0, 0.2], [-0.5, 0.2, 1.0]])
    g = M.knn_graph(s, 1)
    assert g.tolist() == [[0, 1], [1, 0], [2, 1]]


@pytest.mark.parametrize("modules", [None, *[Modules(**{k: False}) for k in dataclasses.asdict(Modules())]])
def test_every_variant_trains_to_pm_one_codes(modules):
    rng = np.random.default_rng(0)
    data = digits_with_tags(rng=rng)
    train, query, database = split(data, 30, 80, 60, rng)
    pairs = make_incomplete(train.image, train.text, 0.5, rng=rng)
    h = train_hashing(prepare(pairs, modules, FAST, seed=0), 8, modules, FAST, seed=0)
    codes = h.image_codes(query.image)
    assert codes.shape == (30, 8) and set(np.unique(codes)) <= {-1, 1}
    assert 0.0 <= evaluate(h, query, database)["i2t"] <= 1.0


def test_every_network_follows_the_inputs_device_not_the_default_one():
    """A GPU smoke run (benchmarks/gpu_smoke.py) found the completion networks left on the CPU with inputs
    on CUDA. With the default device set to ``meta``, a network not built on its inputs' device would land
    on ``meta`` and fail against these CPU inputs."""
    gen = torch.Generator().manual_seed(0)
    image, text = torch.randn(40, 12, generator=gen), torch.randn(40, 9, generator=gen)
    complete = torch.arange(40) % 3 != 0
    torch.set_default_device("meta")
    try:
        completion = M.train_completion(image, text, complete, dataclasses.replace(FAST, n_completion_steps=3))
    finally:
        torch.set_default_device(None)
    nets = (completion.image_to_text, completion.text_to_image, completion.image_critic, completion.text_critic)
    assert all(p.device.type == "cpu" for net in nets for p in net.parameters())


def test_bad_method_inputs_are_refused():
    rng = np.random.default_rng(0)
    x, t = rng.random((10, 4)), rng.random((10, 3))
    pairs = make_incomplete(x, t, 0.0, rng=rng)
    prepared = prepare(pairs, None, FAST, seed=0)
    with pytest.raises(ValueError, match="n_bits"):
        train_hashing(prepared, 0, None, FAST, seed=0)
    with pytest.raises(ValueError, match="p_tag"):
        digits_with_tags(p_tag=0.0, rng=rng)


# ---------------------------------------------------------------- verdicts


def test_criteria_reach_every_branch():
    from explorables.core.verdicts import drive

    assert drive(C.CRITERIA) == []
    assert {c.kind for c in C.CRITERIA} == {"check", "gate", "claim"}


def test_verdict_functions_on_the_interval_over_seeds():
    assert C.speed_verdict(1e-4, 1e-2).startswith("pass") and C.speed_verdict(1e-3, 2e-3).startswith("fail")
    with pytest.raises(ValueError, match="timings"):
        C.speed_verdict(0.0, 1e-3)
    assert C.learns_gate([0.3, 0.32, 0.31]).startswith("pass") and C.learns_gate([0.3, 0.0, 0.31]).startswith("fail")
    assert C.room_gate([0.1, 0.12, 0.11]).startswith("pass") and C.room_gate([0.0, 0.01, 0.02]).startswith("fail")
    # gain: per code length, the interval of the paired gains against 0.03
    assert C.gain_verdict({"16": [0.06, 0.065, 0.07], "32": [0.1, 0.09, 0.08]}).startswith("yes")
    assert C.gain_verdict({"16": [0.0, 0.01, 0.0], "32": [0.1, 0.09, 0.08]}).startswith("partly")
    assert C.gain_verdict({"16": [0.09, 0.01, 0.01]}).startswith("unclear")  # mean 0.037 > margin, within spread
    assert C.gain_verdict({"16": [0.01, 0.01, 0.011]}).startswith("no")
    assert C.gain_verdict({"16": [-0.1, -0.11, -0.09], "32": [0.0, 0.0, 0.01]}).startswith("no")  # behind: no
    assert C.gain_verdict({"16": [0.1]}).startswith("unclear")  # one seed decides nothing
    # robustness: (baseline drop, UGGRH drop, start difference) per seed
    zero = [0.0, 0.0, 0.0]
    assert C.robustness_verdict({"16": ([0.2, 0.21, 0.2], [0.1, 0.1, 0.11], zero)}).startswith("yes")
    assert C.robustness_verdict({"16": ([0.2, 0.21, 0.2], [0.1, 0.1, 0.11], zero),
                                 "32": ([0.1, 0.1, 0.1], [0.1, 0.1, 0.1], zero)}).startswith("partly")
    lower_start = C.robustness_verdict({"16": ([0.2, 0.21, 0.2], [0.1, 0.1, 0.11], [-0.1, -0.1, -0.09])})
    assert lower_start.startswith("no")  # falls less only because it starts lower
    assert C.robustness_part([0.2, 0.21, 0.2], [0.1, 0.1, 0.11], [-0.1, 0.05, 0.0]) == "unclear"
    assert C.module_verdict([0.8, 0.8, 0.8], [0.7, 0.72, 0.71]).startswith("yes")
    assert C.module_verdict([0.8, 0.8, 0.8], [0.7, 0.85, 0.81]).startswith("unclear")
    assert C.module_verdict([0.8, 0.8, 0.8], [0.8, 0.801, 0.8]).startswith("no")
    assert C.control_verdict([0.8, 0.8], [0.7, 0.71]).startswith("yes")
    assert C.control_verdict([0.8, 0.8, 0.8], [0.79, 0.78, 0.79]).startswith("no")  # ahead, but within the margin
    assert C.control_verdict([0.8, 0.9], [0.81, 0.8]).startswith("unclear")
    assert C.imbalance_verdict({"0%": [0.1, 0.1, 0.11], "100%": [0.05, 0.06, 0.05]}).startswith("yes")
    assert C.imbalance_verdict({"0%": [0.1, 0.1, 0.11], "100%": [0.0, 0.01, 0.0]}).startswith("partly")
    with pytest.raises(ValueError, match="same seeds"):
        C.module_verdict([0.8, 0.8], [0.7])


def test_reading_sentences_follow_the_verdicts():
    """The page's sentences about the control, the lower start and the ablations follow the verdict functions."""
    assert "more than avoiding mean-fill" in C.control_reading([0.8, 0.8], [0.7, 0.71])
    assert "cannot tell" in C.control_reading([0.8, 0.9], [0.81, 0.8])
    short = C.control_reading([0.7, 0.7, 0.7], [0.75, 0.75, 0.76])
    assert "short of the 0.03 margin" in short and "mean-fill hurts" in short
    starts = {"16": [-0.09, -0.1, -0.08], "32": [0.01, 0.0, 0.01]}
    assert "16 bits" in C.lower_start_reading(starts) and "32" not in C.lower_start_reading(starts)
    assert C.lower_start_reading({"16": [-0.01, 0.0, -0.02]}).startswith("With complete data")
    yes, no, unclear = "yes: ...", "no: ...", "unclear: ..."
    text = C.ablation_reading({"completion": yes, "fusion": no}, 0.44, 0.58, no)
    assert "credit completion with" in text and "fusion" not in text and "do not lift" in text
    assert "below the mean-fill" in text
    text = C.ablation_reading({"completion": yes, "refinement": yes}, 0.6, 0.58, yes)
    assert "completion and refinement" in text and "lift UGGRH above" in text and "below the mean-fill" not in text
    assert C.ablation_reading({"fusion": no}, 0.6, 0.58, unclear).startswith("No ablation")
    assert "cannot tell" in C.ablation_reading({"fusion": no}, 0.6, 0.58, unclear)


# ---------------------------------------------------------------- seeded smoke run


def test_smoke_run_beats_random_codes_and_claims_build():
    results = smoke_run("uggrh")
    s = results.summary
    for part in ("missing_0", "missing_70"):
        chance = s[part]["random"]["mean"]
        for method in ("baseline", "uggrh"):
            assert s[part][method]["16"]["mean"]["mean"] > chance + 0.05, (part, method)
    rows = C.claims(results)
    kinds = [r.kind for r in rows]
    assert kinds.count("check") == 1 and kinds.count("gate") == 2 and kinds.count("claim") >= 7
    assert all(set(r.gates) <= {"learns", "room"} for r in rows)
    sentence = C.gain_sentence(results)
    assert "mAP" in sentence and any(w in sentence for w in ("rises", "falls", "clearly"))
    assert len(C.sweep_table(results).splitlines()) == 2 + 2 * 2  # header + 2 methods x 2 rates (16 bits)
    for sentence in (C.control_sentence, C.lower_start_sentence, C.ablation_sentence):
        assert sentence(results).endswith(".")
    lines = headline(results)  # one line per (method, bits, rate), then the speed and the ablations
    assert len(lines) == 2 * 1 * 2 + 2 and lines[-2].startswith("search per query") and "ablations" in lines[-1]
    assert f"{s['missing_0']['uggrh']['16']['i2t']['mean']:.3f}" in lines[1]


def test_an_interrupted_run_resumes_from_the_last_finished_seed(tmp_path, monkeypatch):
    """Each seed of a part is checkpointed: a run stopped inside a part resumes there with the same numbers."""
    from explorables.core.checkpoint import Checkpointer
    from explorables.uggrh import experiment as E

    cfg = Config.preset("smoke", missing_rate_grid=(0.0, 0.5), n_epochs=5, n_completion_steps=5, use_examples=False,
                        timing_n_database=200, timing_n_queries=1)  # fmt: skip
    full = run(cfg).summary
    real, calls = E._fit_eval, []

    def stop_at_the_second_seed_of_the_second_part(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2 * 2 + 2 + 1:  # part 1: 2 seeds x 2 methods; part 2: seed 0's two methods, then stop
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(E, "_fit_eval", stop_at_the_second_seed_of_the_second_part)
    with pytest.raises(KeyboardInterrupt):
        run(cfg, checkpoint=Checkpointer(tmp_path))
    recomputed = []
    monkeypatch.setattr(E, "_fit_eval", lambda *a, **k: recomputed.append(1) or real(*a, **k))
    resumed_from = Checkpointer(tmp_path, resume=True)
    assert resumed_from.get("part/missing_0") is not None and resumed_from.get("missing_50/seed_0") is not None
    assert resumed_from.get("missing_50/seed_1") is None
    resumed = run(cfg, checkpoint=resumed_from).summary
    assert len(recomputed) == 2 + 2 * 5  # only missing_50's seed 1 (2 methods), then the ablations (5 per seed)
    for part in ("missing_0", "missing_50", "ablations"):
        assert resumed[part] == full[part]
    assert not any(k.startswith("missing_50/") for k in resumed_from.entries)  # dropped once the part is done


def test_a_worker_process_gives_the_serial_numbers():
    """With two processes a spawned worker takes seeds from the end of the task list: every number, the
    checkpointed seeds and the figures' arrays are those of the serial run."""
    from explorables.core.checkpoint import Checkpointer

    cfg = Config.preset("smoke", n_epochs=8, n_completion_steps=8, imbalance_share_grid=(0.0, 0.5),
                        timing_n_database=200, timing_n_queries=1)  # fmt: skip
    serial = run(cfg.replace(processes=1))
    shared = run(cfg.replace(processes=2), checkpoint=Checkpointer(None))
    for results in (serial, shared):
        results.summary.pop("timings")
        results.summary["speed"]["retrieval_speed"] = {
            k: v for k, v in results.summary["speed"]["retrieval_speed"].items() if not k.endswith("_query_s")
        }
    assert_same_tree(serial.summary, shared.summary)
    assert_same_tree(serial.curves, shared.curves)


def test_config_cross_checks():
    with pytest.raises(ValueError, match="ablation_bits"):
        Config.preset("smoke", ablation_bits=64)
    with pytest.raises(ValueError, match="missing_rate_grid"):
        Config.preset("smoke", missing_rate_grid=(0.3, 0.7))
    with pytest.raises(ValueError, match="data_root"):
        run(Config.preset("smoke", dataset="coco"))


def test_uggrh_loss_matches_its_equation_and_vanishes_at_a_perfect_fit():
    """Eq. (uggrh-loss) against a direct evaluation, and zero when binary codes reproduce S exactly."""
    gen = torch.Generator().manual_seed(0)
    n, k = 12, 8
    u_i, u_t, u_f = (torch.tanh(torch.randn(n, k, generator=gen)) for _ in range(3))
    s = torch.rand(n, n, generator=gen) * 2 - 1

    def rec(a, b):
        return ((a @ b.T / k - s) ** 2).mean()

    baseline = rec(u_i, u_i) + rec(u_t, u_t) + rec(u_i, u_t)
    assert torch.allclose(M.uggrh_loss(u_i, u_t, None, s, 0.5), baseline, atol=1e-6)
    b = torch.sign(u_f)
    full = baseline + rec(u_f, u_f) + 0.5 * (((u_i - b) ** 2).mean() + ((u_t - b) ** 2).mean())
    assert torch.allclose(M.uggrh_loss(u_i, u_t, u_f, s, 0.5), full, atol=1e-6)
    codes = torch.sign(torch.randn(n, k, generator=gen))
    assert M.uggrh_loss(codes, codes, codes, codes @ codes.T / k, 0.5).item() < 1e-10


def test_stability_sentence_counts_gates_and_claims_and_names_each_that_moves():
    row = {"kind": "claim", "claim": "moves", "verdicts": ["yes", "no", "yes"], "agree": False}
    study = {
        "seeds": [0, 1, 2],
        "rows": [
            {"kind": "check", "claim": "a check that moves", "verdicts": ["pass", "fail", "pass"], "agree": False},
            {"kind": "gate", "claim": "steady", "verdicts": ["pass"] * 3, "agree": True},
            row,
        ],
    }
    text = C.stability_sentence(study)
    assert text.startswith("Of the 2 gates and claims, 1 read the same word on every base seed (0, 1, 2)")
    assert "“moves” (yes, no, yes)" in text and "a check" not in text
    row["verdicts"], row["agree"] = ["yes"] * 3, True
    assert C.stability_sentence(study).endswith("(0, 1, 2).")
    committed = C.stability_sentence()  # the chapter's own seed study
    assert committed.startswith("Of the ") and committed.endswith(".")


def test_the_relations_refuse_what_no_single_rule_can():
    """uggrh's relations (checked after the rules): confidences in [0, 1], at least two complete pairs, one dtype."""
    image, text = torch.randn(6, 5), torch.randn(6, 7)
    with pytest.raises(ValueError, match=r"\bc_image must hold confidences in \[0, 1\]"):
        M.similarity_target(image, text, c_image=torch.full((6,), 1.5))
    complete = torch.zeros(6, dtype=torch.bool)
    complete[0] = True
    with pytest.raises(ValueError, match=r"\bcomplete must mark at least 2 complete pairs"):
        M.train_completion(image, text, complete, M.TrainSettings())
    with pytest.raises(ValueError, match=r"\btext must have the dtype of image"):
        M.train_completion(image, text.double(), complete | True, M.TrainSettings())
    u = torch.tanh(torch.randn(6, 4))
    with pytest.raises(ValueError, match=r"\bu_text must have the float dtype of s"):
        M.uggrh_loss(u, u.double(), None, torch.eye(6), 0.1)
