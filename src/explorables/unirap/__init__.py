"""Chapter 10: UniRAP, part-level affordance from language, at the scale of 32-pixel procedural scenes.

An image and an instruction ("grasp the mug by its handle", "something to cut with") go in; the
tool's box, the named part's mask and a 4-DoF grasp on that part come out, from one interface
token decoded by a Unified Affordance Decoder whose pose head reads the segmentation. Gated first on
competence (the model does the three tasks), then compared: the staged curriculum (general parsing, then
interaction) against the same model trained without any parsing data (its transfer) and against joint training on
the same data (its order), at few instruction-labelled scenes; separate task decoders whose pose head reads the
mask decoder's predicted mask; and a pose head that reads an attention map of its own instead of the mask.
"""

from .experiment import UniRAPConfig, UniRAPResults, run
from .metrics import box_iou, grasp_rectangle, grasp_success, mask_iou, polygon_iou
from .model import ARCHS, UniRAP, decode, mask_statistics
from .scenes import PARTS, TOOLS, VOCAB, make_dataset, make_scene, parse_instruction, resolve, tokenize
from .training import LABELS, REGIMES, Member, losses, schedule, train

Config = UniRAPConfig

__all__ = [
    "ARCHS",
    "LABELS",
    "PARTS",
    "REGIMES",
    "TOOLS",
    "VOCAB",
    "Config",
    "Member",
    "UniRAP",
    "UniRAPConfig",
    "UniRAPResults",
    "box_iou",
    "decode",
    "grasp_rectangle",
    "grasp_success",
    "losses",
    "make_dataset",
    "make_scene",
    "mask_iou",
    "mask_statistics",
    "parse_instruction",
    "polygon_iou",
    "resolve",
    "run",
    "schedule",
    "tokenize",
    "train",
]
