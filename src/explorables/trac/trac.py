"""TrAC, as we reconstruct it from the abstract: witness targets, ancestor grammar, witness map.

The paper's abstract names three ingredients and two guarantees; the construction below is our
own reconstruction of them (the chapter says so), with a proof sketch and tests against the
brute-force oracle.

**Ancestor intervention grammar.** Let A be the endogenous ancestors of φ's variables (minus
those variables). An intervention is a word that gives every a ∈ A one of three moves: *follow*
its equation, *hold* it at its actual value (a ∈ W⃗), or *flip* it to a non-actual value (a ∈ X⃗).
Variables outside A cannot affect φ, and a minimal cause never "flips" a variable to its actual
value, so these words reach every minimal witness.

**Witness target.** The set T_φ of joint configurations v of A (with φ's own variables computed
from their equations) in which φ is false. The counterfactual world of every witness of every
cause lies in T_φ.

**Witness map.** Each v ∈ T_φ determines its *shortest* intervention word: a variable must be
intervened on exactly where v disagrees with its equation on v's own parent values,
D(v) = {a : v_a ≠ f_a(v)}; of those, the ones off their actual value are flipped,
N(v) = D(v) ∩ {a : v_a ≠ a*}, and the others held, S(v) = D(v) ∖ N(v). The map is the DAG of
these joint interventions (N(v) ← v, S(v) ← actual), ordered by inclusion.

**Claim (our proof).** X⃗ is an actual cause of φ iff X⃗ is a ⊆-minimal element of
{N(v) : v ∈ T_φ}; its smallest contingency is min |S(v)| over v ∈ T_φ with N(v) = X⃗.
*Why:* if (X⃗ ← x⃗′, W⃗ ← w⃗*) witnesses AC2 with world v, then v ∈ T_φ and every variable of
D(v) is intervened on, so N(v) ⊆ X⃗ (the variables of W⃗ sit at their actual values) and
S(v) ⊆ W⃗ ∪ {X_i : x′_i = x*_i}; conversely the word (N(v), S(v)) itself produces v, so N(v)
satisfies AC2 (with N(v) ≠ ∅, because holding variables at actual values reproduces the actual
world, where φ holds). Hence the sets satisfying AC2 are exactly the supersets of the N(v), and
AC3 keeps the minimal ones. For the contingency: if X⃗ is minimal, every witness has
x′_i ≠ x*_i for all i (else X_i could move to W⃗, breaking AC3), so then S(v) ⊆ W⃗ and N(v) = X⃗;
every witness of X⃗ is thus at least as large as some (X⃗, S(v)), which is itself a witness.

So TrAC evaluates ∏_{a∈A} |dom a| configurations (2^|A| for Boolean), each once and in
vectorised chunks, instead of the oracle's 4^n interventions: every candidate cause shares the
same pass over the witness target.
"""

from __future__ import annotations

from collections.abc import Mapping

import networkx as nx
import numpy as np

from ..core.arguments import checked
from ..core.params import Int
from .causes import CauseSet, _cause_from, _chunks, _digits, _keep_best, _setup, candidates_of, minimal_sets
from .scm import SCM


def witness_worlds(
    model: SCM, context: Mapping[str, int], phi, actual: dict[str, int], cands: list[str], max_rows: int
):
    """The witness target T_φ, eq. (trac-target), chunk by chunk, with each world's forced intervention.

    Yields ``(codes, N masks, S masks, |S|, total)`` for the configurations ``v`` of the ancestors
    ``cands`` in which φ is false: ``N(v)`` (to flip) and ``S(v)`` (to hold) as bit masks over
    ``cands``, eq. (trac-witness).
    """
    relevant = set(cands) | set(phi.names) | model.endogenous_ancestors(phi.names)
    order = [v for v in model.order if v in relevant]  # topological: parents are computed first
    radices = [len(model.domains[v]) for v in cands]
    total = int(np.prod(radices, dtype=np.float64))  # every configuration v of the ancestors A
    if total > max_rows:
        raise ValueError(f"trac would enumerate {total:,} configurations (> max_rows = {max_rows:,})")
    pos = {v: j for j, v in enumerate(cands)}
    weights = np.int64(1) << np.arange(len(cands), dtype=np.int64)  # variable j <-> bit j of a mask
    act = np.array([actual[v] for v in cands], dtype=np.int64)  # the actual values a*
    doms = [np.array(model.domains[v], dtype=np.int64) for v in cands]
    for codes in _chunks(total):  # vectorised: one row per configuration v
        digits = _digits(codes, radices)
        vals = np.stack([doms[j][digits[:, j]] for j in range(len(cands))], axis=1) if cands else digits
        env: dict = dict(context)
        deviates = np.zeros_like(vals, dtype=bool)
        for v in order:
            computed = model.formulas[v].batch(env, len(codes))  # f_a(v), from v's own parent values
            if v in pos:
                j = pos[v]
                deviates[:, j] = vals[:, j] != computed  # a in D(v): v_a != f_a(v)
                env[v] = vals[:, j]  # an ancestor takes its value in v
            else:
                env[v] = computed  # φ's own variables follow their equations
        in_target = phi.batch(env, len(codes)) == 0  # v in T_φ: φ is false in v
        off = vals != act  # v_a != a*
        n_mask = ((deviates & off) * weights).sum(1)  # N(v) = D(v) ∩ {a : v_a != a*}: flipped
        held = deviates & ~off  # S(v) = D(v) \ N(v): held at the actual value
        s_mask = (held * weights).sum(1)
        yield codes[in_target], n_mask[in_target], s_mask[in_target], held[in_target].sum(1), total


@checked(skip_nested=True, max_rows=Int(1, 2**40))  # the model's methods in the loops run bare
def trac(model: SCM, context: Mapping[str, int], outcome: str, *, max_rows: int = 1 << 28) -> CauseSet:
    """All actual causes of ``outcome`` in (M, u), each with a smallest contingency set (TrAC).

    Sound and complete for the modified HP definition (see the module docstring for the
    argument, and the tests for the check against :func:`~.causes.brute_force_causes`).
    """
    phi, context, actual, holds = _setup(model, context, outcome)
    cands = candidates_of(model, phi, ancestors_only=True)
    if not holds:
        return CauseSet(outcome, False, [], tuple(cands), "TrAC")
    best: dict[int, tuple[int, int]] = {}
    for codes, n_mask, _, s_size, _ in witness_worlds(model, context, phi, actual, cands, max_rows):
        _keep_best(best, n_mask, s_size, codes)
    radices = [len(model.domains[v]) for v in cands]
    total = int(np.prod(radices, dtype=np.int64))  # configurations enumerated
    causes = []
    for m in minimal_sets(best):
        code = best[m][1]
        digits = _digits(np.array([code]), radices)[0]
        v = {c: model.domains[c][digits[j]] for j, c in enumerate(cands)}
        X = [c for j, c in enumerate(cands) if (m >> j) & 1]
        # recompute S(v) for the chosen world: the variables held at their actual values
        env = dict(context)
        held = []
        for name in model.order:
            computed = model.formulas[name](env)
            if name in v:
                if v[name] != computed and name not in X:
                    held.append(name)
                env[name] = v[name]
            else:
                env[name] = computed
        causes.append(_cause_from(model, context, phi, actual, X, {c: v[c] for c in X}, held))
    return CauseSet(outcome, True, causes, tuple(cands), "TrAC", total)


@checked(skip_nested=True, max_nodes=Int(1, 10**7))  # the model's methods in the loops run bare
def witness_map(model: SCM, context: Mapping[str, int], outcome: str, *, max_nodes: int = 500) -> nx.DiGraph:
    """The witness map: distinct shortest joint interventions of the witness target, as a DAG.

    Nodes are frozensets of ``(variable, value, role)`` with role ``"flip"`` (in X⃗) or ``"hold"``
    (in W⃗); node attributes ``X`` (frozenset), ``W`` (frozenset), ``worlds`` (how many target
    configurations share it) and ``cause`` (whether X is an actual cause and W a smallest
    contingency for it). Edges are the covering relation of inclusion (networkx's transitive
    reduction). Refuses models whose map exceeds ``max_nodes`` nodes.
    """
    phi, context, actual, holds = _setup(model, context, outcome)
    cands = candidates_of(model, phi, ancestors_only=True)
    graph = nx.DiGraph()
    if not holds:
        return graph
    radices = [len(model.domains[v]) for v in cands]
    counts: dict[frozenset, int] = {}
    for codes, n_mask, s_mask, _, _ in witness_worlds(model, context, phi, actual, cands, 1 << 24):
        digits = _digits(codes, radices)
        for row, n, s in zip(digits, n_mask.tolist(), s_mask.tolist(), strict=True):
            node = frozenset(
                (c, int(model.domains[c][row[j]]), "flip" if (n >> j) & 1 else "hold")
                for j, c in enumerate(cands)
                if ((n | s) >> j) & 1
            )
            counts[node] = counts.get(node, 0) + 1
            if len(counts) > max_nodes:
                raise ValueError(f"the witness map has more than max_nodes = {max_nodes} nodes")
    best_w: dict[frozenset, int] = {}
    for node in counts:
        X = frozenset(v for v, _, r in node if r == "flip")
        best_w[X] = min(best_w.get(X, len(node)), len(node) - len(X))
    minimal = {
        frozenset(c for j, c in enumerate(cands) if (m >> j) & 1)
        for m in minimal_sets(sum(1 << cands.index(v) for v in X) for X in best_w)
    }
    for node, count in counts.items():
        X = frozenset(v for v, _, r in node if r == "flip")
        W = frozenset(v for v, _, r in node if r == "hold")
        graph.add_node(node, X=X, W=W, worlds=count, cause=X in minimal and len(W) == best_w[X])
    nodes = list(counts)
    for a in nodes:
        for b in nodes:
            if a != b and a < b:
                graph.add_edge(a, b)
    reduced = nx.transitive_reduction(graph)
    reduced.add_nodes_from(graph.nodes(data=True))
    return reduced


@checked(skip_nested=True)  # parse_outcome and trac run bare: their arguments are checked here
def witness_target_table(model: SCM, context: Mapping[str, int], outcome: str, max_rows: int = 64) -> str:
    """The witness target of a small model as a Markdown table: each ¬φ configuration of the
    ancestors, the variables it must flip (N) and hold (S), and whether N is a cause."""
    from ..core.tables import markdown_table

    phi, context, actual, holds = _setup(model, context, outcome)
    cands = candidates_of(model, phi, ancestors_only=True)
    if not holds:
        return f"({outcome} is false in the actual world: no causes)"
    causes = trac(model, context, outcome).sets
    radices = [len(model.domains[v]) for v in cands]
    rows = []
    for codes, n_mask, s_mask, _, _ in witness_worlds(model, context, phi, actual, cands, 1 << 16):
        for row, n, s in zip(_digits(codes, radices), n_mask.tolist(), s_mask.tolist(), strict=True):
            config = " ".join(f"{c}={model.domains[c][row[j]]}" for j, c in enumerate(cands))
            flip = frozenset(c for j, c in enumerate(cands) if (n >> j) & 1)
            hold = [c for j, c in enumerate(cands) if (s >> j) & 1]
            rows.append((config, "{" + ", ".join(sorted(flip, key=cands.index)) + "}",
                         "{" + ", ".join(hold) + "}" if hold else "∅", "yes" if flip in causes else "no"))  # fmt: skip
    if len(rows) > max_rows:
        raise ValueError(f"the witness target has {len(rows)} configurations (> max_rows = {max_rows})")
    actual_row = " ".join(f"{c}={actual[c]}" for c in cands)
    header = (f"configuration v of the ancestors (actual: {actual_row})", "flip N(v)", "hold S(v)", "N(v) a cause?")
    return markdown_table(header, rows)
