"""Plan of uggrh's ``paper`` preset: the generative completion's loop and the hash network's loop."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.plan import Part, dry_note, parameter_count
from ..uggrh.data import make_incomplete
from ..uggrh.experiment import ABLATIONS, load_data
from ..uggrh.method import HashNet, _mlp, prepare, train_hashing

#: MIRFlickr-25K's feature widths in the standard .npz layout (VGG fc7 image features, 1386-tag text)
D_IMAGE, D_TEXT = 4096, 1386


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    n = 64 if dry else cfg.n_train
    if cfg.data_root:
        train, _, _ = load_data(cfg, cfg.seeds[0])
        image, text = train.image[:n], train.text[:n]
        source = f"{cfg.dataset} from {cfg.data_root}"
    else:
        rng = np.random.default_rng(0)
        image = rng.normal(size=(n, D_IMAGE)).astype(np.float32)
        text = (rng.random((n, D_TEXT)) < 0.01).astype(np.float32)
        source = f"synthetic features of MIRFlickr's widths ({D_IMAGE} image, {D_TEXT} text)"
    rate = cfg.missing_rate_grid[-1]
    pairs = make_incomplete(image, text, rate, cfg.image_missing_share, rng=np.random.default_rng(1))
    one = dataclasses.replace(cfg.settings(), n_completion_steps=1, n_epochs=1)
    modules = ABLATIONS["uggrh"]
    prepared = prepare(pairs, modules, one, seed=0)
    bits = max(cfg.bits_grid)
    seeds, rates = len(cfg.seeds), len(cfg.missing_rate_grid)
    with_completion = sum(1 for m in ABLATIONS.values() if m.use_completion) - 1  # ablations that still complete
    completions = seeds * (rates + with_completion + len(cfg.imbalance_share_grid))
    fits = seeds * (2 * rates * len(cfg.bits_grid) + len(ABLATIONS) + 2 * len(cfg.imbalance_share_grid))
    net = HashNet(D_IMAGE, D_TEXT, bits, cfg.n_hidden, modules)
    h = one.n_hidden  # the translators and critics of train_completion
    completion_nets = (_mlp(D_IMAGE, h, D_TEXT, "cpu"), _mlp(D_TEXT, h, D_IMAGE, "cpu"),
                       _mlp(D_IMAGE, h // 2, 1, "cpu"), _mlp(D_TEXT, h // 2, 1, "cpu"))

    def completing(k: int):
        return lambda: prepare(pairs, modules, dataclasses.replace(one, n_completion_steps=k), seed=0)

    def hashing(k: int):
        return lambda: train_hashing(prepared, bits, modules, dataclasses.replace(one, n_epochs=k), seed=0)

    found = [
        Part("completion", f"one Adam step of the translators and critics on {cfg.n_train} pairs", None,
             step_loop=completing, steps=cfg.n_completion_steps * completions, repeat=1,
             parameters=parameter_count(*completion_nets),
             note=f"{completions} completions (rates, ablations, imbalance x seeds); the similarity target and "
             "k-NN graph prepare() builds once per completion cancel in the difference; " + source),
        Part("hashing", f"one full-batch Adam step of the {bits}-bit hash network on {cfg.n_train} pairs", None,
             step_loop=hashing, steps=cfg.n_epochs * fits, repeat=1,
             parameters=parameter_count(net), note=f"{fits} hash networks (methods, code lengths, ablations x "
             "seeds), each measured at the largest code length"),
    ]
    dry_note(found, dry, f"{n} pairs")
    paper_scale = ("partly: MIRFlickr-25K features from --data-root with the paper's missing rates and code lengths; "
                   "NUS-WIDE and MS-COCO read the same layout but are not in the preset")
    return found, paper_scale, "retrieval scoring (mAP@all) and the speed comparison are not in the plan"
