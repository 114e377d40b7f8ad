"""Chapter 06: Virtual-Flow, virtual microphones by flow matching without ground truth.

Speech sources (:mod:`.audio`), rooms and recordings (:mod:`.scenes`, pyroomacoustics), the
pseudo-target (:mod:`.pseudo`), frames for the networks (:mod:`.data`), flow matching, samplers
and reflow (:mod:`.flow`), scores and beamforming (:mod:`.downstream`), the experiment
(:mod:`.experiment`), its claims (:mod:`.claims`), figures (:mod:`.figures`) and the live lab
(:mod:`.lab`, imported on demand: it needs ipywidgets).
"""

from .audio import harmonic_source, source_kind, speech_signal
from .data import Example, make_example, supervised_data, unsupervised_data
from .downstream import band_errors, mvdr, si_sdr, stoi
from .experiment import BEAMFORMING, METHOD_LABELS, METHODS, VirtualFlowConfig, VirtualFlowResults, headline, run
from .flow import Regressor, VelocityNet, cfm_loss, reflow_pairs, sample, train_flow, train_regression
from .pseudo import estimate_azimuth, inverse_distance_weights, istft, plane_wave_delays, pseudo_target, stft
from .scenes import Scene, circular_array, random_scene, simulate

Config = VirtualFlowConfig

__all__ = [
    "BEAMFORMING",
    "METHODS",
    "METHOD_LABELS",
    "Config",
    "Example",
    "Regressor",
    "Scene",
    "VelocityNet",
    "VirtualFlowConfig",
    "VirtualFlowResults",
    "band_errors",
    "cfm_loss",
    "circular_array",
    "estimate_azimuth",
    "harmonic_source",
    "headline",
    "inverse_distance_weights",
    "istft",
    "make_example",
    "mvdr",
    "plane_wave_delays",
    "pseudo_target",
    "random_scene",
    "reflow_pairs",
    "run",
    "sample",
    "si_sdr",
    "simulate",
    "source_kind",
    "speech_signal",
    "stft",
    "stoi",
    "supervised_data",
    "train_flow",
    "train_regression",
    "unsupervised_data",
]
