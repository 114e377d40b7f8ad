"""The shape every chapter's ``run(config)`` shares: validate, seed, bind the checkpoint, run parts.

A chapter writes its science as *parts*, callables that return ``(summary, curves)``, and its
``run`` is then three lines::

    def run(config=None, *, checkpoint=None, progress=False) -> OMWUResults:
        cfg, checkpoint = start_run(OMWUConfig, config, checkpoint)
        summary, curves = run_parts_timed(checkpoint, parts(cfg, checkpoint, progress), progress)
        return OMWUResults(cfg, summary, curves)

:class:`Results` is the common return type: the validated config, a JSON-able ``summary`` (what
the claims, tables and the command line read) and ``curves`` (arrays the figures draw).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .arguments import checked
from .checkpoint import Checkpointer, run_parts
from .config import ExperimentConfig
from .seeding import seed_everything

C = TypeVar("C", bound=ExperimentConfig)


@checked()
@dataclass
class Results(Generic[C]):
    """What a chapter's ``run`` returns: its config, a JSON-able ``summary`` and the figures' arrays."""

    config: C
    summary: dict[str, Any]
    curves: dict[str, Any] = field(default_factory=dict, repr=False)


def start_run(
    config_cls: type[C], config: C | None, checkpoint: Checkpointer | None, *, seed: bool = True
) -> tuple[C, Checkpointer]:
    """The preamble of every ``run``: the config validated (the ``book`` preset if none), global
    random states seeded from ``config.seed`` (``seed=False`` for chapters that pass generators
    explicitly and must not touch the global state), and a checkpointer bound to the config.

    A checkpoint written with other settings is refused here, before any work is done.
    """
    if config is None:
        config = config_cls.preset("book")
    elif not isinstance(config, config_cls):
        raise ValueError(f"config must be a {config_cls.__name__}, got {type(config).__name__}")
    cfg = config.validated()
    if seed:
        seed_everything(cfg.seed)
    checkpoint = checkpoint if checkpoint is not None else Checkpointer(None)
    checkpoint.bind(cfg.identity())
    return cfg, checkpoint


def run_parts_timed(
    checkpoint: Checkpointer, parts: dict[str, Any], progress: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`~explorables.core.checkpoint.run_parts`, with the timings stored as ``summary["timings"]``."""
    summary, curves, timings = run_parts(checkpoint, parts, progress)
    summary["timings"] = timings
    return summary, curves
