"""The chapter's experiment: classic examples, agreement with the oracle, and scaling.

Three checkpointed parts (see :func:`run`):

1. **examples**: every classic example, solved by TrAC, the oracle and the baselines, with
   responsibility and blame, and the witness map's size;
2. **agreement**: TrAC against the brute-force oracle (and the pruned search) on seeded random
   Boolean SCMs small enough for the oracle; every TrAC cause re-checked by the independent
   AC1–AC3 checker on the smallest of them;
3. **scaling**: random Boolean SCMs for each n in ``n_variables_grid``: time of TrAC, of the pruned search
   and of the oracle over all variables and over the ancestors only (where it fits), the number
   of causes, and the recall and responsibility error of the single-cause baselines; and the
   published single-cause method (our reconstruction of Ibrahim & Pretschner's integer program,
   :mod:`.ilp`) used to enumerate, with a budget of solver calls per instance: its solves, nodes
   and completeness (deterministic), its time, the time of its first cause, its recall within
   the budget and within TrAC's own time (a measurement). Instances
   run in parallel over ``workers`` processes and each finished n is checkpointed, so
   ``--resume`` continues with the next n.
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from tqdm.auto import tqdm

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Int, Probability, Tuple, param
from ..core.threads import worker_count
from .causes import CauseSet, brute_force_causes, but_for_causes, first_cause, is_actual_cause, pruned_search
from .examples import classic_examples
from .ilp import NODE_LIMIT, ilp_enumerate
from .responsibility import blame, context_distribution, responsibility
from .scm import random_boolean_scm
from .trac import trac, witness_map


@dataclass(frozen=True)
class TracConfig(ExperimentConfig):
    """Settings of the experiment; the defaults are the ``book`` preset."""

    n_variables_grid: tuple[int, ...] = param(
        (4, 6, 8, 9, 10, 12, 14, 16, 18),
        Tuple(Int(2, 40), increasing=True),
        "numbers n of endogenous variables of the random SCMs in the scaling sweep",
    )
    n_instances: int = param(10, Int(1), "random SCMs per n in the scaling sweep")
    brute_max_n: int = param(9, Int(2, 13), "the brute-force oracle runs up to this n (4^(n-1) interventions)")
    pruned_max_n: int = param(12, Int(2, 24), "the pruned search runs up to this n (about 3^|A| interventions)")
    ilp_max_n: int = param(18, Int(2, 40), "the ILP single-cause baseline (Ibrahim & Pretschner) runs up to this n")
    ilp_max_solves: int = param(
        500,
        Int(1, 10**6),
        "solver calls per instance for the ILP baseline to enumerate causes (a solve per cause, one more to end)",
    )
    ilp_node_limit: int = param(NODE_LIMIT, Int(1, 10**9), "branch-and-bound nodes per ILP solve at most")
    n_agreement_instances: int = param(
        100, Int(1), "random SCMs (n = 3 .. agreement_max_n) on which TrAC is compared with the oracle"
    )
    agreement_max_n: int = param(8, Int(3, 11), "largest n of the agreement check against the oracle")
    recheck_max_n: int = param(6, Int(2, 9), "every TrAC cause is re-checked by the AC1-AC3 checker up to this n")
    max_parents: int = param(3, Int(1, 6), "parents of each endogenous variable in a random SCM at most (1 to this)")
    p_exogenous_true: float = param(0.5, Probability(), "Pr(U = 1) for every exogenous variable U, for blame")
    blame_max_exogenous: int = param(
        4, Int(0, 12), "blame (2^|U| contexts) is computed for examples with at most this many exogenous variables"
    )
    workers: int = param(1, Int(0), "processes for the scaling sweep; 0: all cores (same numbers for any count)")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            n_variables_grid=(4, 6, 8),
            n_instances=4,
            n_agreement_instances=20,
            agreement_max_n=6,
            pruned_max_n=8,
        ),
        "book": {},
        "paper": dict(
            n_variables_grid=(5, 8, 10, 11, 12, 14, 15, 16, 18, 20, 22, 24, 26),
            n_instances=200,
            brute_max_n=11,
            pruned_max_n=16,
            ilp_max_n=26,
            ilp_max_solves=10_000,
            n_agreement_instances=1000,
            agreement_max_n=9,
            recheck_max_n=7,
            workers=0,
        ),
    }
    PAPER_WANTS_GPU: ClassVar[bool] = False
    PAPER_HARDWARE: ClassVar[str] = "a multi-core CPU (no GPU needed); not timed by us, estimated minutes on 16 cores"


class TracResults(Results[TracConfig]):
    """What :func:`run` returns: the config, a JSON-able ``summary`` and every scaling instance's row."""


def _causes_json(cs: CauseSet) -> list[dict[str, Any]]:
    return [
        {"X": list(c.actual), "alternative": c.alternative, "W": c.contingency, "world": c.world, "k": c.k}
        for c in cs.causes
    ]


def _examples(cfg: TracConfig) -> tuple[dict, dict]:
    out: dict[str, Any] = {}
    for key, ex in classic_examples().items():
        m, u, phi = ex.model, ex.context, ex.outcome
        t0 = time.perf_counter()
        full = trac(m, u, phi)
        t_trac = time.perf_counter() - t0
        pruned = pruned_search(m, u, phi)
        n_cands = len(m.order) - 1
        oracle = brute_force_causes(m, u, phi) if n_cands <= 9 else None
        bf, first = but_for_causes(m, u, phi), first_cause(m, u, phi)
        rechecked = all(is_actual_cause(m, u, c.variables, phi) for c in full.causes) if n_cands <= 6 else None
        wmap = witness_map(m, u, phi, max_nodes=5000)
        in_map = all(
            any(d["X"] == c.variables and d["W"] == frozenset(c.contingency) for _, d in wmap.nodes(data=True))
            for c in full.causes
        )
        variables = list(full.candidates)
        resp = {name: responsibility(cs, variables) for name, cs in (("trac", full), ("but_for", bf), ("first", first))}
        blames: dict[str, dict[str, float]] = {}
        if len(m.exogenous) <= cfg.blame_max_exogenous:
            ctxs = context_distribution(m, default=cfg.p_exogenous_true)
            actual = m.evaluate(u)
            for name, method in (("trac", trac), ("but_for", but_for_causes)):
                blames[name] = {v: blame(m, v, actual[v], phi, ctxs, method) for v in variables}
        graph_edges = [(a, b) for a, b in m.graph.edges if a in m.formulas]
        out[key] = {
            "title": ex.title,
            "source": ex.source,
            "note": ex.note,
            "outcome": phi,
            "equations": {v: m.formulas[v].source for v in m.order},
            "actual": m.evaluate(u),
            "edges": [list(e) for e in graph_edges],
            "causes": _causes_json(full),
            "literature": sorted(sorted(s) for s in ex.literature),
            "trac_sets": sorted(sorted(s) for s in full.sets),
            "matches_literature": full.sets == set(ex.literature),
            "matches_pruned": full.sets == pruned.sets,
            "matches_oracle": None if oracle is None else full.sets == oracle.sets,
            "rechecked": rechecked,
            "witness_map_nodes": wmap.number_of_nodes(),
            "every_cause_in_map": in_map,
            "but_for_sets": sorted(sorted(s) for s in bf.sets),
            "first_sets": sorted(sorted(s) for s in first.sets),
            "responsibility": resp,
            "blame": blames,
            "time_trac_seconds": t_trac,
        }
    return out, {}


def _agreement(cfg: TracConfig) -> tuple[dict, dict]:
    rng = np.random.default_rng([cfg.seed, 1])
    equal_oracle = equal_pruned = rechecked = recheck_failed = superset_pairs = 0
    n_causes = []
    for _ in range(cfg.n_agreement_instances):
        n = int(rng.integers(3, cfg.agreement_max_n + 1))
        m, u, phi = random_boolean_scm(n, rng, cfg.max_parents)
        full = trac(m, u, phi)
        equal_oracle += full.sets == brute_force_causes(m, u, phi).sets
        equal_pruned += full.sets == pruned_search(m, u, phi).sets
        superset_pairs += sum(a < b for a in full.sets for b in full.sets)
        n_causes.append(len(full.causes))
        if n <= cfg.recheck_max_n:
            for c in full.causes:
                rechecked += 1
                recheck_failed += not is_actual_cause(m, u, c.variables, phi)
    return {
        "instances": cfg.n_agreement_instances,
        "max_n": cfg.agreement_max_n,
        "equal_oracle": int(equal_oracle),
        "equal_pruned": int(equal_pruned),
        "rechecked_causes": rechecked,
        "recheck_failed": recheck_failed,
        "superset_pairs": int(superset_pairs),
        "mean_causes": float(np.mean(n_causes)),
        "frac_multiple_causes": float(np.mean(np.array(n_causes) > 1)),
    }, {}


def scaling_instance(
    n: int,
    seed: int,
    index: int,
    max_parents: int,
    brute_max_n: int,
    pruned_max_n: int,
    ilp_max_n: int = 0,
    ilp_max_solves: int = 500,
    ilp_node_limit: int = NODE_LIMIT,
) -> dict:
    """One random SCM of the scaling sweep: every method's causes, time and agreement (picklable)."""
    rng = np.random.default_rng([seed, 2, n, index])
    m, u, phi = random_boolean_scm(n, rng, max_parents)
    t0 = time.perf_counter()
    full = trac(m, u, phi)
    row: dict[str, Any] = {
        "n": n,
        "ancestors": len(full.candidates),
        "causes": len(full.causes),
        "time_trac_seconds": time.perf_counter() - t0,
        "trac_rows": full.evaluations,
    }
    row["max_cause_size"] = max((len(c.actual) for c in full.causes), default=0)
    if n <= pruned_max_n:
        t0 = time.perf_counter()
        pr = pruned_search(m, u, phi, max_rows=1 << 30)
        row["time_pruned_seconds"] = time.perf_counter() - t0
        row["pruned_equal"] = pr.sets == full.sets
        row["pruned_rows"] = pr.evaluations
    if n <= brute_max_n:
        t0 = time.perf_counter()
        bf = brute_force_causes(m, u, phi, max_rows=1 << 30)
        row["time_brute_seconds"] = time.perf_counter() - t0
        row["brute_equal"] = bf.sets == full.sets
        row["brute_rows"] = bf.evaluations
        t0 = time.perf_counter()
        anc = brute_force_causes(m, u, phi, ancestors_only=True, max_rows=1 << 30)
        row["time_brute_anc_seconds"] = time.perf_counter() - t0
        row["brute_anc_equal"] = anc.sets == full.sets
        row["brute_anc_rows"] = anc.evaluations
    truth = full.sets
    if n <= ilp_max_n:
        ilp = ilp_enumerate(m, u, phi, max_solves=ilp_max_solves, node_limit=ilp_node_limit, details=True)
        found = ilp.causes.sets
        row["time_ilp_seconds"] = ilp.seconds
        row["time_ilp_first_seconds"] = ilp.found_at[0] if ilp.found_at else None
        row["ilp_complete"] = ilp.complete
        row["ilp_solves"] = ilp.solves
        row["ilp_nodes"] = ilp.nodes  # branch-and-bound nodes over all solves
        row["ilp_max_nodes"] = ilp.max_nodes  # the most in one solve (1: every solve ended at the root, no search)
        row["ilp_sound"] = found <= truth  # every cause it returns is one of TrAC's
        row["ilp_equal"] = found == truth if ilp.complete else None
        row["recall_ilp"] = len(found & truth) / len(truth) if truth else None
        in_time = sum(t <= row["time_trac_seconds"] for t in ilp.found_at)  # causes found within TrAC's time
        row["recall_ilp_within_trac_s"] = in_time / len(truth) if truth else None
        # ILP time / TrAC time, log10; an unfinished run counts the time it took (an underestimate). Keys of
        # values read off a clock end in _s or _seconds (the book's naming table), so runs compare without them
        row["log10_ilp_over_trac_s"] = float(np.log10(ilp.seconds / max(row["time_trac_seconds"], 1e-9)))
    resp = responsibility(full)
    for name, method in (("but_for", but_for_causes), ("first", first_cause)):
        t0 = time.perf_counter()
        found = method(m, u, phi)
        row[f"time_{name}_seconds"] = time.perf_counter() - t0
        row[f"recall_{name}"] = len(found.sets & truth) / len(truth) if truth else None
        r = responsibility(found, list(full.candidates))
        row[f"resp_err_{name}"] = float(np.mean([abs(r[v] - resp[v]) for v in resp])) if resp else 0.0
        row[f"resp_wrong_{name}"] = any(abs(r[v] - resp[v]) > 1e-12 for v in resp)
    return row


def _scaling(cfg: TracConfig, checkpoint: Checkpointer, progress: bool) -> tuple[dict, dict]:
    workers = worker_count(cfg.workers, cfg.n_instances)
    rows_by_n: dict[str, list[dict]] = {}
    pool = ProcessPoolExecutor(workers) if workers > 1 else None
    try:
        for n in tqdm(cfg.n_variables_grid, desc="scaling", disable=not progress):
            done = checkpoint.get(f"scaling/n={n}")
            if done is None:
                args = [
                    (
                        n,
                        cfg.seed,
                        i,
                        cfg.max_parents,
                        cfg.brute_max_n,
                        cfg.pruned_max_n,
                        cfg.ilp_max_n,
                        cfg.ilp_max_solves,
                        cfg.ilp_node_limit,
                    )
                    for i in range(cfg.n_instances)
                ]
                done = (
                    list(pool.map(scaling_instance, *zip(*args, strict=True)))
                    if pool
                    else [scaling_instance(*a) for a in args]
                )
                checkpoint.save(f"scaling/n={n}", done)
            rows_by_n[str(n)] = done
    finally:
        if pool:
            pool.shutdown()
    per_n = [_aggregate(int(n), rows) for n, rows in rows_by_n.items()]
    return {"per_n": per_n}, {"rows": [r for rows in rows_by_n.values() for r in rows]}


def _aggregate(n: int, rows: list[dict]) -> dict[str, Any]:
    def med(key):
        vals = [r[key] for r in rows if r.get(key) is not None]
        return float(np.median(vals)) if vals else None

    def mx(key):
        vals = [r[key] for r in rows if r.get(key) is not None]
        return float(np.max(vals)) if vals else None

    def mean(key):
        vals = [float(r[key]) for r in rows if r.get(key) is not None]
        return float(np.mean(vals)) if vals else None

    return {
        "n": n,
        "instances": len(rows),
        "ancestors_mean": mean("ancestors"),
        "causes_mean": mean("causes"),
        "causes_max": int(max(r["causes"] for r in rows)),
        "frac_multiple_causes": float(np.mean([r["causes"] > 1 for r in rows])),
        "max_cause_size": int(max(r["max_cause_size"] for r in rows)),
        "time_trac_median_seconds": med("time_trac_seconds"),
        "time_trac_max_seconds": mx("time_trac_seconds"),
        "time_pruned_median_seconds": med("time_pruned_seconds"),
        "time_brute_median_seconds": med("time_brute_seconds"),
        "time_brute_anc_median_seconds": med("time_brute_anc_seconds"),
        "time_but_for_median_seconds": med("time_but_for_seconds"),
        "time_first_median_seconds": med("time_first_seconds"),
        "rows_trac_mean": mean("trac_rows"),
        "rows_pruned_mean": mean("pruned_rows"),
        "rows_brute_mean": mean("brute_rows"),
        "rows_brute_anc_mean": mean("brute_anc_rows"),
        "pruned_agree": None if rows[0].get("pruned_equal") is None else bool(all(r["pruned_equal"] for r in rows)),
        "brute_agree": None
        if rows[0].get("brute_equal") is None
        else bool(all(r["brute_equal"] and r.get("brute_anc_equal", True) for r in rows)),
        "time_ilp_median_seconds": med("time_ilp_seconds"),
        "time_ilp_first_median_seconds": med("time_ilp_first_seconds"),
        "ilp_complete_share": mean("ilp_complete"),
        "ilp_solves_mean": mean("ilp_solves"),
        # nodes per solve over all of this n's solves: 1.0 when every solve ends at the root node (no search)
        "ilp_nodes_per_solve": None
        if rows[0].get("ilp_nodes") is None
        else float(sum(r["ilp_nodes"] for r in rows) / max(sum(r["ilp_solves"] for r in rows), 1)),
        "ilp_max_nodes": None if rows[0].get("ilp_max_nodes") is None else int(max(r["ilp_max_nodes"] for r in rows)),
        "ilp_sound": None if rows[0].get("ilp_sound") is None else bool(all(r["ilp_sound"] for r in rows)),
        "ilp_agree": None if rows[0].get("ilp_sound") is None else bool(all(r["ilp_equal"] is not False for r in rows)),
        "recall_ilp": mean("recall_ilp"),
        "recall_ilp_within_trac_s": mean("recall_ilp_within_trac_s"),
        "recall_but_for": mean("recall_but_for"),
        "recall_first": mean("recall_first"),
        "resp_err_but_for": mean("resp_err_but_for"),
        "resp_err_first": mean("resp_err_first"),
        "resp_wrong_but_for": mean("resp_wrong_but_for"),
        "resp_wrong_first": mean("resp_wrong_first"),
        # one value per instance, for the intervals of the verdicts (recall is None without any cause)
        "per_instance": {
            "causes": [int(r["causes"]) for r in rows],
            "time_trac_seconds": [float(r["time_trac_seconds"]) for r in rows],
            **{
                k: [None if r.get(k) is None else float(r[k]) for r in rows]
                for k in (
                    "time_ilp_seconds",
                    "ilp_solves",
                    "ilp_nodes",
                    "log10_ilp_over_trac_s",
                    "recall_ilp",
                    "recall_ilp_within_trac_s",
                )
            },
            **{
                f"{q}_{b}": [None if r[f"{q}_{b}"] is None else float(r[f"{q}_{b}"]) for r in rows]
                for q in ("recall", "resp_wrong")
                for b in ("but_for", "first")
            },
        },
    }


@checked()
def run(
    config: TracConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> TracResults:
    """Run the three parts; with a checkpoint, finished parts (and finished n) are reused on resume.

    Every random model comes from a generator seeded explicitly from ``config.seed`` (and, in the
    sweep, from n and the instance's index), so the global random states are left alone.
    """
    cfg, checkpoint = start_run(TracConfig, config, checkpoint, seed=False)
    parts = {
        "examples": lambda: _examples(cfg),
        "agreement": lambda: _agreement(cfg),
        "scaling": lambda: _scaling(cfg, checkpoint, progress),
    }
    summary, curves = run_parts_timed(checkpoint, parts, progress)
    return TracResults(cfg, summary, curves)


@checked()
def headline(results: TracResults) -> list[str]:
    """Key numbers for the end-of-run summary of the command line."""
    s = results.summary
    a = s["agreement"]
    last = s["scaling"]["per_n"][-1]
    return [
        f"TrAC = oracle on {a['equal_oracle']}/{a['instances']} random SCMs (n <= {a['max_n']}); "
        f"{a['rechecked_causes']} causes re-checked, {a['recheck_failed']} failed",
        f"n = {last['n']}: TrAC median {last['time_trac_median_seconds']:.3f} s, "
        f"{last['causes_mean']:.1f} causes on average",
        f"recall at n = {last['n']}: but-for {last['recall_but_for']:.2f}, first cause {last['recall_first']:.2f}",
    ] + (
        [f"ILP baseline at n = {last['n']}: median {last['time_ilp_median_seconds']:.3f} s for the whole list"]
        if last.get("time_ilp_median_seconds") is not None
        else []
    )
