"""The small shared core: validation, seeding, devices, presets, run outputs and figure display."""

from .config import SCALES, ExperimentConfig
from .device import resolve_device
from .seeding import seed_everything

__all__ = ["SCALES", "ExperimentConfig", "resolve_device", "seed_everything"]
