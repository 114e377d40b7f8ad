"""rpkd: CE on the original images, distillation terms on fresh views, with a 2 x 2 grid per distiller.

The candidates, grid, seeds, criteria and decision rule: ``rpkd_views_ce_rule.md`` (committed before any run), as
amended by ``rpkd_views_ce_rule2.md`` (W2 only, two grid points, no C0 on the selection seeds).

    PYTHONPATH=src python benchmarks/rpkd_views_ce.py select 133      # one selection seed (the grid runs)
    PYTHONPATH=src python benchmarks/rpkd_views_ce.py choose          # grid points from the selection rows
    PYTHONPATH=src python benchmarks/rpkd_views_ce.py confirm 136     # C0, W2 (waits for the choice file)
    PYTHONPATH=src python benchmarks/rpkd_views_ce.py --summary
    PYTHONPATH=src python benchmarks/rpkd_views_ce.py select -1       # a quick test on the smoke preset (no rows)

Rows are appended to ``rpkd_views_ce.jsonl`` (one per run); the choice is ``rpkd_views_ce_choice.json``.

Nothing was adopted, so the package option this script sets (``standard_ce_original`` and the ``standard_*`` loss
fields) was taken out again (commit ``c431af8e``): to rerun it, check out ``993c17c4``, where the option and its
tests live.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from explorables.core.threads import one_cpu_thread
from explorables.rpkd.claims import _protocol_claims, learns_check, per_seed, pooled
from explorables.rpkd.experiment import RPKDConfig, _results, standard_protocol, students, teacher_part

HERE = Path(__file__).parent
OUT = HERE / "rpkd_views_ce.jsonl"
CHOICE = HERE / "rpkd_views_ce_choice.json"
SELECTION, CONFIRMATION = (133, 134, 135), (136, 137, 138)
DISTILLERS = ("kd", "ofa", "rpkd")
#: point i of each distiller's grid: (temperature-like setting, weight); 0 is today's
GRID = {
    "kd": [(4.0, 1.0), (1.0, 1.0)],
    "ofa": [(1.5, 1.0), (1.0, 1.0)],
    "rpkd": [(0.2, 1.0), (0.1, 1.0)],
}
#: the view settings judged (amendment 1, ``rpkd_views_ce_rule2.md``: W1 dropped, two grid points, no C0 in selection)
AUGMENTS = (2,)
TIE = 0.005


def fields_of(points: dict[str, int]) -> dict:
    """The config fields of the standard run with grid point ``points[d]`` for every distiller d."""
    (t, alpha), (eps, w_ofa), (tau, w_rpkd) = (GRID[d][points[d]] for d in DISTILLERS)
    return {"standard_temperature": t, "standard_kd_weight": alpha, "standard_ofa_eps": eps,
            "standard_ofa_weight": w_ofa, "standard_tau": tau, "standard_glob_weight": w_rpkd,
            "standard_map_weight": w_rpkd}


def views(a: int) -> dict:
    return {"standard_augment": a, "standard_ce_original": True}


def run_one(seed: int, phase: str, name: str, fields: dict, shared: dict, teacher_cpu: float, extra: dict) -> dict:
    scale = "smoke" if seed < 0 else "book"
    cfg = RPKDConfig.preset(scale, seed=abs(seed), device="cpu", **fields).validated()
    std_cfg = standard_protocol(cfg)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    summary = {}
    for n in cfg.class_grid:
        acc, _ = students(std_cfg, n, shared[n])
        summary[f"C={n}"] = {"n_classes": n, "teacher_accuracy": shared[n]["teacher_accuracy"], "accuracy": acc}
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    std = _results(std_cfg, summary, {})
    rows = [learns_check([std]), *_protocol_claims(std)]
    row = {
        "seed": seed, "phase": phase, "candidate": name, "fields": fields, **extra,
        "cpu_s": round(cpu, 2), "wall_s": round(wall, 1), "teacher_cpu_s": round(teacher_cpu, 1),
        "rows": [{"kind": g.kind, "name": g.name, "claim": g.claim, "verdict": g.verdict, "measured": g.measured}
                 for g in rows],
        "gain_over_ce": {d: float(pooled(std, d, "ce").mean()) for d in DISTILLERS},
        "accuracy_standard": {n: {a: per_seed(std, a, n).tolist() for a in std_cfg.arms} for n in cfg.class_grid},
        "teacher": {n: shared[n]["teacher_accuracy"] for n in cfg.class_grid},
        "finished": time.strftime("%H:%M:%S", time.gmtime()),
    }
    print(json.dumps({k: row[k] for k in ("seed", "phase", "candidate", "cpu_s", "wall_s", "finished")}),
          {d: round(v, 4) for d, v in row["gain_over_ce"].items()}, flush=True)
    for g in rows:
        print("  ", g.name or g.claim[:40], g.verdict.split(":")[0], "|", g.measured, flush=True)
    if seed >= 0:
        with OUT.open("a") as f:
            f.write(json.dumps(row) + "\n")
    return row


def teachers(seed: int) -> tuple[dict, float]:
    scale = "smoke" if seed < 0 else "book"
    base = RPKDConfig.preset(scale, seed=abs(seed), device="cpu").validated()
    cpu0 = time.process_time()
    shared = {n: teacher_part(base, n, probe=False) for n in base.class_grid}
    return shared, time.process_time() - cpu0


def select(seed: int) -> None:
    assert seed < 0 or seed in SELECTION, "selection seeds only"
    with one_cpu_thread("cpu"):
        shared, tcpu = teachers(seed)
        for a in AUGMENTS:
            for i in range(len(GRID["kd"])):
                points = dict.fromkeys(DISTILLERS, i)
                run_one(seed, "select", f"a={a},i={i}", views(a) | fields_of(points), shared, tcpu,
                        {"augment": a, "point": i})


def choose() -> dict:
    rows = [json.loads(line) for line in OUT.open()]
    choice: dict = {}
    for a in AUGMENTS:
        choice[f"W{a}"] = {}
        for d in DISTILLERS:
            means = []
            for i in range(len(GRID[d])):
                vals = [r["gain_over_ce"][d] for r in rows if r["phase"] == "select" and r.get("augment") == a
                        and r.get("point") == i and r["seed"] in SELECTION]
                assert sorted(r for r in {r["seed"] for r in rows if r["phase"] == "select" and r.get("augment") == a
                                           and r.get("point") == i}) == list(SELECTION), (a, d, i)
                means.append(float(np.mean(vals)))
            best = max(means)
            pick = min(i for i in range(len(means)) if means[i] >= best - TIE)
            choice[f"W{a}"][d] = {"point": pick, "means": [round(m, 4) for m in means]}
    CHOICE.write_text(json.dumps(choice, indent=1) + "\n")
    print(json.dumps(choice, indent=1))
    return choice


def confirm(seed: int) -> None:
    assert seed < 0 or seed in CONFIRMATION, "confirmation seeds only"
    with one_cpu_thread("cpu"):
        shared, tcpu = teachers(seed)
        run_one(seed, "confirm", "C0", {}, shared, tcpu, {})
        while seed >= 0 and not CHOICE.exists():
            time.sleep(10)
        choice = json.loads(CHOICE.read_text()) if seed >= 0 else {
            f"W{a}": {d: {"point": 1} for d in DISTILLERS} for a in AUGMENTS}
        for a in AUGMENTS:
            points = {d: choice[f"W{a}"][d]["point"] for d in DISTILLERS}
            run_one(seed, "confirm", f"W{a}", views(a) | fields_of(points), shared, tcpu,
                    {"augment": a, "points": points})


def summary() -> None:
    rows = [json.loads(line) for line in OUT.open()]
    for phase in ("select", "confirm"):
        print(f"\n## {phase}\n")
        print("| seed | candidate | KD − CE | OFA − CE | RPKD − CE | distill_standard | headroom_standard | learns |"
              " CPU s | dK |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        ref = {r["seed"]: r for r in rows if r["phase"] == phase and r["candidate"] == "C0"}
        for r in sorted((r for r in rows if r["phase"] == phase), key=lambda r: (r["seed"], r["candidate"])):
            g = {x["name"] or x["claim"][:12]: x for x in r["rows"]}
            words = [g[k]["verdict"].split(":")[0] for k in ("distill_standard", "headroom_standard")]
            learns = next(x for x in r["rows"] if x["claim"].startswith("every student arm learns"))
            dk = r["cpu_s"] - ref[r["seed"]]["cpu_s"] if r["seed"] in ref else float("nan")
            gains = " | ".join(f"{r['gain_over_ce'][d]:+.3f}" for d in DISTILLERS)
            print(f"| {r['seed']} | {r['candidate']} | {gains} | {words[0]} | {words[1]} | "
                  f"{learns['verdict'].split(':')[0]} | {r['cpu_s']:.1f} | {dk:+.1f} |")
    print()
    for r in rows:
        if r["phase"] == "confirm":
            print(f"- {r['candidate']} seed {r['seed']}:")
            for x in r["rows"]:
                print(f"  - {x['name'] or x['claim'][:60]}: {x['verdict']} | {x['measured']}")


def main(args: list[str]) -> None:
    if "--summary" in args:
        summary()
    elif args[0] == "choose":
        choose()
    else:
        fn = {"select": select, "confirm": confirm}[args[0]]
        for seed in map(int, args[1:]):
            fn(seed)


if __name__ == "__main__":
    main(sys.argv[1:])
