"""Chapter 02: sensory prompts and the alignment of a text-only language model with vision and audio encoders.

Alignment metrics (:mod:`.alignment`), the synthetic world of captions, pictures and sounds
(:mod:`.stimuli`), the two specialist encoders (:mod:`.encoders`), the offline language model and
its representations (:mod:`.llm`), the experiment (:mod:`.experiment`), its claims
(:mod:`.claims`), figures (:mod:`.figures`) and the live lab (:mod:`.lab`, imported on demand).
"""

from .alignment import chance_level, knn_indices, linear_cka, mutual_knn_alignment, normalise
from .encoders import audio_features, random_cnn, vision_features
from .experiment import ENCODERS, SensoryConfig, SensoryResults, cell, headline, run
from .llm import LanguageModel, default_cache_dir, load_language_model, representations
from .stimuli import (
    CUES,
    PHRASINGS,
    Stimuli,
    attribute_features,
    captions,
    prompt,
    render_image,
    sample_stimuli,
    synth_sound,
)

Config = SensoryConfig

__all__ = [
    "CUES",
    "ENCODERS",
    "PHRASINGS",
    "Config",
    "LanguageModel",
    "SensoryConfig",
    "SensoryResults",
    "Stimuli",
    "attribute_features",
    "audio_features",
    "captions",
    "cell",
    "chance_level",
    "default_cache_dir",
    "headline",
    "knn_indices",
    "linear_cka",
    "load_language_model",
    "mutual_knn_alignment",
    "normalise",
    "prompt",
    "random_cnn",
    "render_image",
    "representations",
    "run",
    "sample_stimuli",
    "synth_sound",
    "vision_features",
]
