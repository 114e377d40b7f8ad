"""Chapter 11: UGGRH, unsupervised incomplete cross-modal hashing (our reconstruction from the abstract).

Images and texts are hashed to ±1 codes in one Hamming space; some training pairs lack one
modality. UGGRH fills it with generative translators, refines the similarity target with the
critics' confidence, and learns codes with hash-aware graph attention and cross-modal fusion.
"""

from .data import IncompletePairs, Modalities, digits_with_tags, load_features, make_incomplete, split
from .experiment import UGGRHConfig, UGGRHResults, headline, run
from .method import (
    HashGraphAttention,
    HashNet,
    Modules,
    TrainSettings,
    fill_missing,
    prepare,
    similarity_target,
    train_completion,
    train_hashing,
    uggrh_loss,
)
from .retrieval import (
    average_precision,
    hamming_distances,
    hamming_ranking,
    map_at_all,
    mean_average_precision,
    pack_codes,
    packed_hamming,
)

Config = UGGRHConfig

__all__ = [
    "Config",
    "HashGraphAttention",
    "HashNet",
    "IncompletePairs",
    "Modalities",
    "Modules",
    "TrainSettings",
    "UGGRHConfig",
    "UGGRHResults",
    "average_precision",
    "digits_with_tags",
    "fill_missing",
    "hamming_distances",
    "hamming_ranking",
    "headline",
    "load_features",
    "make_incomplete",
    "map_at_all",
    "mean_average_precision",
    "pack_codes",
    "packed_hamming",
    "prepare",
    "run",
    "similarity_target",
    "split",
    "train_completion",
    "train_hashing",
    "uggrh_loss",
]
