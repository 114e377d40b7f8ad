"""Chapter 05: attention routing collisions and the Route-Aware FFN.

Collisions of attention weightings and the LP that finds them (:mod:`.collisions`), the routing
statistics, the Route-Aware FFN and a small Transformer read-out (:mod:`.model`), the Routing
Reconstruction Task (:mod:`.rrt`, our reconstruction), training (:mod:`.train`), rank surveys
including a local BERT checkpoint (:mod:`.survey`), the experiment (:mod:`.experiment`), figures,
claims and the live lab (:mod:`.lab`, on demand).
"""

from .collisions import Collision, dominant_pieces, fibre_dimension, find_collision, segment_in_triangle
from .experiment import RoutingConfig, RoutingResults, headline, run
from .model import FFN_KINDS, STAT_NAMES, RouteAwareFFN, RouteReader, routing_statistics
from .rrt import ReferenceHeads, RRTBatch, make_rrt
from .survey import load_state_dict, survey_bert_checkpoint, survey_values
from .train import accuracy, rounding_accuracy, train_model

Config = RoutingConfig

__all__ = [
    "FFN_KINDS",
    "STAT_NAMES",
    "Collision",
    "Config",
    "RRTBatch",
    "ReferenceHeads",
    "RouteAwareFFN",
    "RouteReader",
    "RoutingConfig",
    "RoutingResults",
    "accuracy",
    "dominant_pieces",
    "fibre_dimension",
    "find_collision",
    "headline",
    "load_state_dict",
    "make_rrt",
    "rounding_accuracy",
    "routing_statistics",
    "run",
    "segment_in_triangle",
    "survey_bert_checkpoint",
    "survey_values",
    "train_model",
]
