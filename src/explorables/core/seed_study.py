"""Seed studies, executed and committed (Claims kit 3): do the verdicts survive a change of base seed?

``python -m explorables seeds <slug> --seeds 0,1,2,3,4`` runs the chapter's ``book`` preset once
per base seed (the config's ``seed``, from which every draw of the run derives), computes its
claims table (``claims.claims(run(config))``, or ``claims.page_claims(config)`` where the page
runs more than one experiment for its table), and writes ``data/seed_studies/<slug>.json``:
every row's kind and verdict word per base seed, with the measured numbers. The file is stamped
with a hash of the chapter's package source (:func:`source_hash`); a test fails when the stamp
is stale, so a page never shows a study of code that has changed since. The page glues
:func:`study_table` from the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .tables import apply_gates, markdown_table

#: the repository's root (``src/explorables/core/`` is three levels below it)
ROOT = Path(__file__).resolve().parents[3]
STUDY_DIR = ROOT / "data" / "seed_studies"
STUDY_SEEDS: tuple[int, ...] = (0, 1, 2, 3, 4)


def _package_dir(slug: str) -> Path:
    from ..chapters import get_chapter

    return Path(get_chapter(slug).module().__file__).parent


#: the book-wide rules every chapter's verdicts are decided by: a change to them makes every study stale
RULE_FILES: tuple[str, ...] = ("verdicts.py", "tables.py")


def source_hash(slug: str) -> str:
    """SHA-256 over the chapter package's ``.py`` files and the verdict rules (:data:`RULE_FILES`).

    Each file enters as its path (relative to its package) and bytes, in sorted order.
    """
    folder = _package_dir(slug)
    core = Path(__file__).parent
    files = [(path.relative_to(folder), path) for path in sorted(folder.rglob("*.py"))]
    files += [(Path("core") / name, core / name) for name in RULE_FILES]
    digest = hashlib.sha256()
    for relative, path in files:
        digest.update(str(relative).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def machine() -> dict[str, Any]:
    """What computed a study: the CPU, the CPUs this process may use and the numeric libraries' versions.

    Training rounds differently on another CPU (other vector instructions, other BLAS kernels), and
    training amplifies the difference: the same seed gives the same numbers on the same machine,
    not necessarily on another one. A study records where it ran so that a reader can tell.
    ``torch_threads`` is the calling process's count; a chapter sets its own threads per part and per worker
    process (often one), so the page states the CPUs, not this count.
    """
    import numpy
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:  # not Linux: platform's answer stands
        pass
    return {"cpu": cpu, "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "numpy": numpy.__version__,
            "python": platform.python_version()}  # fmt: skip


def study_path(slug: str, folder: Path | None = None) -> Path:
    return (folder or STUDY_DIR) / f"{slug}.json"


def run_study(slug: str, seeds: Sequence[int] = STUDY_SEEDS, scale: str = "book", progress: bool = False) -> dict:
    """Run the preset once per base seed and collect every row's verdict word and measured number."""
    from ..chapters import get_chapter

    if len(seeds) < 1 or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct base seeds, at least one, got {list(seeds)!r}")
    chapter = get_chapter(slug)
    module, claims_module = chapter.module(), chapter.submodule("claims")
    rows: list[dict[str, Any]] = []
    seconds = []
    for i, seed in enumerate(seeds):
        start = time.perf_counter()
        config = module.Config.preset(scale, seed=int(seed))
        if hasattr(claims_module, "page_claims"):  # the page runs more than ``run`` (e.g. a second protocol)
            table = apply_gates(claims_module.page_claims(config))
        else:
            table = apply_gates(claims_module.claims(module.run(config)))
        seconds.append(round(time.perf_counter() - start, 1))
        if progress:
            print(f"{slug}: base seed {seed} done in {seconds[-1]:.1f} s", flush=True)
        if i == 0:
            rows = [{"kind": r.kind, "claim": r.claim, "name": r.name, "setting": r.setting, "verdicts": [],
                     "measured": []} for r in table]  # fmt: skip
        if [(r["kind"], r["claim"]) for r in rows] != [(r.kind, r.claim) for r in table]:
            raise ValueError(f"{slug}: the claims table has different rows on base seed {seed}")
        for row, r in zip(rows, table, strict=True):
            row["verdicts"].append(r.outcome)
            row["measured"].append(r.measured)
    for row in rows:
        row["agree"] = len(set(row["verdicts"])) == 1
    return {
        "slug": slug,
        "scale": scale,
        "seeds": [int(s) for s in seeds],
        "source_hash": source_hash(slug),
        "run_seconds": seconds,
        "machine": machine(),
        "rows": rows,
    }


def write_study(study: dict, folder: Path | None = None) -> Path:
    path = study_path(study["slug"], folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(study, indent=1, ensure_ascii=False) + "\n")
    return path


def load_study(slug: str, folder: Path | None = None) -> dict:
    """The committed study of ``slug`` (``ValueError`` naming the command that makes it, when missing)."""
    path = study_path(slug, folder)
    if not path.is_file():
        raise ValueError(f"no seed study for {slug!r} at {path}: run `python -m explorables seeds {slug}`")
    return json.loads(path.read_text())


def is_fresh(slug: str, folder: Path | None = None) -> bool:
    """The committed study was made from the chapter's current source."""
    return load_study(slug, folder)["source_hash"] == source_hash(slug)


def study_table(slug: str, folder: Path | None = None) -> str:
    """Markdown: each gate and claim's verdict word per base seed, and whether they agree."""
    study = load_study(slug, folder)
    header = ["row", "claim", *(f"seed {s}" for s in study["seeds"]), "same on all?"]
    shown = [r for r in study["rows"] if r["kind"] != "check"]
    texts = [r["claim"] for r in shown]
    rows = []
    for r in shown:
        label = r["claim"]
        if texts.count(label) > 1:  # rows that share a text (one per dataset): tell them apart
            label += f" ({r.get('name') or r.get('setting', '')[:40] or f'row {shown.index(r) + 1}'})"
        rows.append([r["kind"], label, *r["verdicts"], "yes" if r["agree"] else "**no**"])
    table = markdown_table(header, rows)
    where = study.get("machine")
    if where:  # studies made before machines were recorded say nothing rather than guess
        # the CPU count, not torch's thread count: the chapters set their own threads per part and per worker
        table += (f"\n\nComputed on {where['cpu']} ({where['cpus']} CPUs, torch {where['torch']}, "
                  f"numpy {where['numpy']}). On another CPU a trained run rounds differently, so its numbers, "
                  "and a word that sits near its threshold, can differ there.")
    return table


def disagreements(slug: str, folder: Path | None = None) -> list[str]:
    """The gates and claims whose verdict word differs between base seeds."""
    return [r["claim"] for r in load_study(slug, folder)["rows"] if not r["agree"] and r["kind"] != "check"]
