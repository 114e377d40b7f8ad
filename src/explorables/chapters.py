"""The registry of chapters: slug -> the module that holds its experiment.

The chapter contract (``tests/test_contract.py`` checks it for every chapter registered here):

* the subpackage exposes ``Config`` (an :class:`~explorables.core.config.ExperimentConfig` whose
  every field is declared with :func:`~explorables.core.params.param`, with ``smoke``/``book``/
  ``paper`` presets) and ``run(config, *, checkpoint=None, progress=False)`` returning a
  :class:`~explorables.core.experiment.Results` with a JSON-able ``summary``;
* ``claims.claims(results)`` returns :class:`~explorables.core.tables.Claim` rows whose verdicts
  start with yes / partly / no;
* ``figures.all_figures(results)`` returns the chapter's figures by name;
* ``lab.benchmark_interactions()`` returns ``{"redraw": [...], "rerun": [...]}`` callables
  (:func:`~explorables.core.labs.interactions`).

Modules are imported lazily so that one chapter's dependencies never load for another.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Chapter:
    number: int
    slug: str
    title: str
    package: str = ""  # default: explorables.<slug>

    @property
    def package_name(self) -> str:
        return self.package or f"explorables.{self.slug}"

    def module(self) -> ModuleType:
        """The chapter's subpackage (imported on first use)."""
        return importlib.import_module(self.package_name)

    def figures_module(self) -> ModuleType | None:
        try:
            return importlib.import_module(f"{self.package_name}.figures")
        except ModuleNotFoundError:
            return None

    def submodule(self, name: str) -> ModuleType:
        """``explorables.<slug>.<name>``: every chapter has ``experiment``, ``claims``, ``figures`` and ``lab``."""
        return importlib.import_module(f"{self.package_name}.{name}")


CHAPTERS: dict[str, Chapter] = {
    c.slug: c
    for c in (
        Chapter(1, "rpkd", "Random prototype knowledge distillation"),
        Chapter(2, "sensory", "Sensory prompts: perceptual alignment in a text-only language model"),
        Chapter(3, "omwu", "Optimistic multiplicative weights: energy dissipation"),
        Chapter(4, "rashomon", "Noise, Rashomon sets and simpler models"),
        Chapter(5, "routing", "Attention routing collisions and the Route-Aware FFN"),
        Chapter(6, "virtualflow", "Virtual-Flow: virtual microphones by flow matching"),
        Chapter(7, "dcdm", "Dirichlet concept diffusion: concepts discovered while learning to generate"),
        Chapter(8, "stable_nde", "Stable training of neural differential equations"),
        Chapter(9, "ucca", "Unpaired CCA through the quadratic assignment problem"),
        Chapter(10, "unirap", "UniRAP: part-level affordance from language"),
        Chapter(11, "uggrh", "UGGRH: incomplete cross-modal hashing"),
        Chapter(12, "trust_region_cl", "Trust-region continual learning"),
        Chapter(13, "tree_search", "Learning-augmented search on trees"),
        Chapter(14, "trac", "TrAC: tracing all actual causes"),
        Chapter(15, "jeffrey", "Jeffrey guidance for diffusion models"),
        Chapter(16, "muon", "Muon in the river valley"),
        Chapter(17, "crl", "Causal representation learning with changing causal influences"),
        Chapter(18, "topoprune", "TopoPrune: topological data pruning"),
        Chapter(19, "tomato_mp", "ToMATo and ToMAToMP: multi-parameter topological clustering"),
    )
}


def get_chapter(slug: str) -> Chapter:
    """The chapter registered under ``slug``, or a ``ValueError`` listing the known slugs."""
    if slug not in CHAPTERS:
        raise ValueError(f"unknown chapter {slug!r}; known chapters: {', '.join(sorted(CHAPTERS))}")
    return CHAPTERS[slug]
