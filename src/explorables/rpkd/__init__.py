"""Chapter 01: random prototype knowledge distillation (RPKD), at the scale of scikit-learn's digits.

A CNN teacher and a heterogeneous student (an MLP-mixer over pixel tokens, or a narrow CNN) are
projected onto a shared set of frozen random prototypes; the student matches the teacher's
global prototype distribution and its per-prototype activation maps. Compared with CE, Hinton KD
and OFA at 10, 5 and 2 super-classes, with a probe of the targets' fine-label information.
"""

from .claims import headline
from .data import load_digits_task, make_split, student_labels, super_labels
from .experiment import RPKDConfig, RPKDResults, run
from .losses import (
    RandomPrototypes,
    activation_maps,
    as_tokens,
    cross_entropy,
    feature_match_loss,
    global_distribution,
    kd_loss,
    ofa_loss,
    prototype_scores,
    rpkd_losses,
)
from .models import make_student, make_teacher
from .probe import distillation_targets, probe_accuracy
from .training import ARM_LABELS, ARMS, CONTROL, LossWeights, train_students, train_teachers

Config = RPKDConfig

__all__ = [
    "ARMS", "ARM_LABELS", "CONTROL", "Config", "LossWeights", "RPKDConfig", "RPKDResults", "RandomPrototypes",
    "activation_maps", "as_tokens", "cross_entropy", "distillation_targets", "feature_match_loss",
    "global_distribution", "headline", "kd_loss", "load_digits_task", "make_split", "make_student", "make_teacher",
    "ofa_loss", "probe_accuracy", "prototype_scores", "rpkd_losses", "run", "student_labels", "super_labels",
    "train_students", "train_teachers",
]
