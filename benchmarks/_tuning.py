"""The shared harness of the tuning scripts that load a preset, run it on tuning base seeds and write a table.

Two families use it:

- TopoPrune (``topoprune_power.py``, ``topoprune_stability.py``, ``topoprune_offsets.py``): one cached run of
  the book preset per tuning base seed, candidates read off that run, every claims row's word per base seed in a
  Markdown report (:func:`tuning_args`, :func:`cached`, :func:`timed_run`, :func:`first_seeds_table`,
  :func:`agreement`, :func:`summary_rows`, :func:`word_sections`, :func:`write_report`).
- VirtualFlow (``virtualflow_reference.py``, ``virtualflow_input.py``, ``virtualflow_scene.py``): one book-preset
  run per candidate and tuning base, each recorded under ``"<candidate>/<base>"`` in a JSON file that doubles as
  the cache (:func:`cpu_seconds`, :func:`load_record`, :func:`record_run`, :func:`room_text`,
  :func:`candidate_main`).

Every helper keeps the scripts' command lines, printed lines and recorded formats as they were before the
harness: the reports and JSON files in ``benchmarks/`` are records of committed rules.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import resource
import time
from collections.abc import Callable
from pathlib import Path

# -- TopoPrune: Markdown reports over tuning base seeds ----------------------------------------------------------


def tuning_args(doc: str, bases: list[int], cache: str, out: Path, seeds: int | None = None) -> argparse.Namespace:
    """Parse ``--base-seeds`` (only tuning seeds >= 100), ``--seeds`` (when ``seeds`` is given), ``--cache`` and
    ``--out``; the cache folder is made."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--base-seeds", type=int, nargs="+", default=bases)
    if seeds is not None:
        parser.add_argument("--seeds", type=int, default=seeds)
    parser.add_argument("--cache", type=Path, default=Path(cache))
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args()
    if min(args.base_seeds) < 100:
        raise ValueError(f"base-seeds must be >= 100 (0-4 are the seed study's), got {args.base_seeds}")
    args.cache.mkdir(parents=True, exist_ok=True)
    return args


def timed_run(run: Callable, cfg) -> dict:
    """``{"summary": run(cfg).summary, "seconds": wall seconds}``."""
    t = time.perf_counter()
    summary = run(cfg).summary
    return {"summary": summary, "seconds": time.perf_counter() - t}


def cached(path: Path, compute: Callable[[], dict]) -> list:
    """The values of ``compute()``, read from ``path`` when it exists, else computed and written there."""
    if path.exists():
        return list(json.loads(path.read_text()).values())
    record = compute()
    path.write_text(json.dumps(record, default=float))
    return list(record.values())


def claims_table(cfg, summary: dict) -> list:
    """TopoPrune's claims table (gates applied) of a run's summary under ``cfg``."""
    from explorables.core.tables import apply_gates
    from explorables.topoprune.claims import claims
    from explorables.topoprune.experiment import TopoPruneResults

    return apply_gates(claims(TopoPruneResults(cfg, summary, {})))


def first_seeds_table(cfg, summary: dict, n: int) -> list:
    """The claims table (gates applied) of the first ``n`` seeds of a run's parts."""
    from explorables.topoprune.experiment import aggregate

    cfg_n = cfg.replace(seeds=tuple(cfg.seeds[:n]))
    sub = {**summary, "methods": aggregate(cfg_n, [summary[f"seed_{s}"] for s in cfg_n.seeds])}
    return claims_table(cfg_n, sub)


def seeds_per_run_study(args: argparse.Namespace, candidates: tuple[int, ...], **preset) -> tuple[dict, list]:
    """One cached book-preset run of ``args.seeds`` seeds per base seed; every candidate (seeds per run, at most
    ``args.seeds``) read off its first seeds: ``({n: {base: claims table}}, [seconds per run])``."""
    from explorables.topoprune.experiment import TopoPruneConfig, run

    words: dict[int, dict[int, list]] = {n: {} for n in candidates if n <= args.seeds}
    seconds = []
    for base in args.base_seeds:
        cfg = TopoPruneConfig.preset("book", seed=base, seeds=tuple(range(args.seeds)), diagnose=False, **preset)
        summary, secs = cached(args.cache / f"base_{base}_{args.seeds}.json", lambda cfg=cfg: timed_run(run, cfg))
        seconds.append(secs)
        for n in words:
            words[n][base] = first_seeds_table(cfg, summary, n)
        print(f"base seed {base}: {secs:.0f} s", flush=True)
    return words, seconds


def agreement(per_base: dict) -> tuple[bool, int, int]:
    """(every gate passes on every base seed, claim rows with one word on every base seed, claim rows)."""
    rows = list(zip(*per_base.values(), strict=True))
    gates_ok = all(r.outcome == "pass" for row in rows for r in row if r.kind == "gate")
    claim_rows = [row for row in rows if row[0].kind == "claim"]
    return gates_ok, sum(len({r.outcome for r in row}) == 1 for row in claim_rows), len(claim_rows)


def summary_rows(words: dict, page: Callable[[int], float]) -> tuple[list[str], dict]:
    """Per candidate the summary table's row ``| n | projected page s | gates pass | claims agreeing |`` and its
    numbers ``{n: (page s, gates pass, claim rows agreeing, claim rows)}``."""
    lines, stats = [], {}
    for n, per_base in words.items():
        gates_ok, agree, n_claims = agreement(per_base)
        stats[n] = (page(n), gates_ok, agree, n_claims)
        lines.append(f"| {n} | {page(n):.0f} | {'yes' if gates_ok else 'NO'} | {agree} of {n_claims} |")
    return lines, stats


def verdict_tail(base: int, r) -> str:
    """A claim's detail line: its verdict's start and its measured text's end."""
    return f"- base {base}, {r.claim[:40]}: {r.verdict[:110]} … measured: …{r.measured[-60:]}"


def word_sections(words: dict, title: Callable[[int], str], detail: Callable = verdict_tail) -> list[str]:
    """Per candidate, a section with every row's word per base seed and a detail line per claim and base seed."""
    lines: list[str] = []
    for n, per_base in words.items():
        lines += [f"## {title(n)}", "", "| row | " + " | ".join(f"base {b}" for b in per_base) + " |",
                  "|---|" + "---|" * len(per_base)]  # fmt: skip
        for row in zip(*per_base.values(), strict=True):
            lines.append(f"| {row[0].kind} {row[0].name}: {row[0].claim[:50]} | "
                         + " | ".join(r.outcome for r in row) + " |")  # fmt: skip
        lines.append("")
        for b, rows in per_base.items():
            lines += [detail(b, r) for r in rows if r.kind == "claim"]
        lines.append("")
    return lines


def write_report(out: Path, lines: list[str]) -> None:
    """Write the report and print its head."""
    out.write_text("\n".join(lines))
    print("\n".join(lines[:12]))


# -- VirtualFlow: a JSON record per candidate and tuning base ------------------------------------------------------


def cpu_seconds() -> float:
    """Process CPU time: this process plus its finished children (the spawned worker)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def load_record(path: Path) -> dict:
    """The JSON record written so far (the cache), or an empty one."""
    return json.loads(path.read_text()) if path.exists() else {}


def record_run(cfg, measured_chars: int, stamp: bool = False) -> tuple[dict, float, float]:
    """Run ``cfg`` as the package runs it and read every verdict with ``claims`` + ``apply_gates``: (the record's
    entry, CPU seconds, wall seconds). ``stamp`` adds the finishing time (UTC) to the entry."""
    from explorables.core.tables import apply_gates
    from explorables.virtualflow import claims as vc
    from explorables.virtualflow.experiment import run

    c0, t0 = cpu_seconds(), time.perf_counter()
    res = run(cfg)
    cpu, wall = cpu_seconds() - c0, time.perf_counter() - t0
    rows = apply_gates(vc.claims(res))
    sup, pse = vc.per_seed(res, "sisdr/supervised"), vc.per_seed(res, "sisdr/pseudo")
    entry: dict = {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1)}
    if stamp:
        entry["finished_utc"] = dt.datetime.now(dt.UTC).strftime("%H:%M:%S")
    entry["room_per_seed"] = [a - b for a, b in zip(sup, pse, strict=True)]
    entry["pseudo_per_seed"] = pse
    entry["rows"] = {(r.name or r.claim[:40]): [r.outcome, r.measured[:measured_chars]] for r in rows}
    return entry, cpu, wall


def save_record(path: Path, record: dict) -> None:
    path.write_text(json.dumps(record, indent=1) + "\n")


def room_text(entry: dict) -> str:
    """The room per seed, as printed: ``[+0.12, -0.03, …]``."""
    return f"[{', '.join(f'{v:+.2f}' for v in entry['room_per_seed'])}]"


def _bases_and_out(ap: argparse.ArgumentParser, floor: int) -> argparse.Namespace:
    """Add ``--bases B… --out F`` to ``ap``, parse, and refuse any base below the pass's tuning ``floor``."""
    ap.add_argument("--bases", type=int, nargs="+", required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if min(args.bases) < floor:
        raise SystemExit(f"this pass's tuning bases only (>= {floor})")
    return args


def candidate_main(candidates: dict[str, dict], floor: int) -> None:
    """``--cand C --bases B… --out F``: run candidate ``C`` (the book preset with its fields) on every tuning base
    (>= ``floor``) not yet in ``F``, record each and print its gates."""
    from explorables.virtualflow.experiment import VirtualFlowConfig

    ap = argparse.ArgumentParser()
    ap.add_argument("--cand", required=True, choices=sorted(candidates))
    args = _bases_and_out(ap, floor)
    out = load_record(args.out)
    for base in args.bases:
        key = f"{args.cand}/{base}"
        if key in out:
            continue
        out[key], cpu, wall = record_run(VirtualFlowConfig.preset("book", seed=base).replace(**candidates[args.cand]),
                                         measured_chars=200)  # fmt: skip
        save_record(args.out, out)
        r = out[key]["rows"]
        print(
            f"{key} cpu {cpu:.0f} s wall {wall:.0f} s room {r['room'][0]} {room_text(out[key])}; "
            + "; ".join(f"{g} {r[g][0]}" for g in ("physical", "useful", "headroom", "curved")),
            flush=True,
        )


def ladder_main(candidates: dict[str, dict], gates: tuple[str, ...], floor: int, deadline: dt.time) -> None:
    """``--cands C… --bases B… --out F``: the candidate ladder of a VirtualFlow rule. Each candidate (the book preset
    with its fields) runs on the tuning bases (>= ``floor``) in order and stops at its first base with a gate other than
    pass; the next candidate runs only if every earlier one failed; the first that passes on every base is the pick.
    A run that would start after ``deadline`` (UTC) counts as not passed. Runs are cached in ``F``."""
    from explorables.virtualflow.experiment import VirtualFlowConfig

    ap = argparse.ArgumentParser()
    ap.add_argument("--cands", nargs="+", required=True, choices=sorted(candidates))
    args = _bases_and_out(ap, floor)
    out = load_record(args.out)
    for cand in args.cands:
        passed = True
        for base in args.bases:
            key = f"{cand}/{base}"
            if key not in out:
                if dt.datetime.now(dt.UTC).time() > deadline:
                    print(f"{key}: past the rule's deadline, the candidate counts as not passed", flush=True)
                    passed = False
                    break
                cfg = VirtualFlowConfig.preset("book", seed=base).replace(**candidates[cand])
                out[key] = record_run(cfg, measured_chars=300, stamp=True)[0]
                save_record(args.out, out)
            r = out[key]["rows"]
            print(
                f"{key} cpu {out[key]['cpu_s']:.0f} s wall {out[key]['wall_s']:.0f} s room {room_text(out[key])}; "
                + "; ".join(f"{g} {r[g][0]}" for g in gates)
                + " | claims: "
                + "; ".join(f"{k[:30]} {v[0]}" for k, v in r.items() if k not in gates),
                flush=True,
            )
            if any(r[g][0] != "pass" for g in gates):
                passed = False
                break
        print(f"{cand}: {'PASSES on every base' if passed else 'not passed'}", flush=True)
        if passed:
            print(f"Rule picks {cand}: {candidates[cand]}", flush=True)
            return
    print("No candidate passes: the rule keeps what we have", flush=True)
