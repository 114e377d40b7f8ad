"""Plan of sensory's ``paper`` preset: the language model's prompt prefill and its greedy decoding steps (no
training), on torch's meta device: SmolLM2-135M built from its own config at full size."""

from __future__ import annotations

import math

import torch

from ..core.plan import Part, dry_note
from ..sensory.llm import _cached_folder, default_cache_dir, load_language_model

#: tokens of one prompt (caption, instruction and the cue's opening words); an assumption, stated in the plan
PROMPT_TOKENS = 64
#: prompts per seed: every cue and the opening-only control (the config's batch_size doc)
PROMPTS_PER_ITEM = 5


def _config(cfg):
    from transformers import AutoConfig

    if cfg.model_path:
        return AutoConfig.from_pretrained(cfg.model_path)
    folder = _cached_folder(cfg.cache_dir or default_cache_dir())
    if (folder / "config.json").is_file():
        return AutoConfig.from_pretrained(folder)
    return load_language_model(cfg.model, cache_dir=cfg.cache_dir).model.config


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    from transformers import AutoModelForCausalLM

    config = _config(cfg)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    n_params = sum(p.numel() for p in model.parameters())
    batch = 2 if dry else cfg.batch_size
    batches = math.ceil(PROMPTS_PER_ITEM * cfg.n_stimuli / cfg.batch_size) * len(cfg.seeds)

    def forward(length: int):
        @torch.no_grad()
        def run():
            ids = torch.zeros(batch, length, dtype=torch.long, device="meta")
            return model(input_ids=ids, output_hidden_states=True).hidden_states[-1]

        return run

    found = [
        Part("prefill", f"one forward pass of {cfg.batch_size} prompts of {PROMPT_TOKENS} tokens (all hidden states)",
             forward(PROMPT_TOKENS), steps=batches, device="meta", parameters=n_params),
        Part("decode", f"one greedy decoding step of {cfg.batch_size} prompts", forward(1),
             steps=batches * cfg.n_new_tokens, device="meta", parameters=n_params,
             note="counted without the KV cache's attention over earlier tokens (small next to the products at "
             "this length)"),
    ]
    dry_note(found, dry, f"batch {batch}")
    paper_scale = ("partly: the paper's prompting protocol on SmolLM2-135M (a local larger model via model_path); "
                   "the paper measures larger LLMs and real image / audio encoders")
    return found, paper_scale, f"prompts taken as {PROMPT_TOKENS} tokens; the encoders' side is not in the plan"
