"""The chapter's claims table: each claim of the abstract, our setting, our number, a verdict.

Verdicts are computed from the measured numbers by the small functions below (each with its
criterion in its docstring, each unit-tested), so the table in the book is never typed by hand.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..core.tables import Claim, markdown_table
from ..core.tables import claims_table as claims_markdown  # noqa: F401 - what the notebook imports
from .experiment import BASELINES, END_MODES, END_SCORED, METHOD_NAMES, METHODS, SCORED, TopoPruneResults

GEOMETRIC: tuple[str, ...] = ("centre", "d2", "ccs")  # the extrinsic-geometry baselines the paper contrasts
TIE = 0.005  # half a point of accuracy: differences below this are ties
NEAR = 0.02  # two points of accuracy: about what 3 seeds resolve here (per-method sd over seeds 0.01-0.02)


def persistence_verdict(max_gap: float) -> str:
    """Persistence read off torch distances at gudhi's pairs equals gudhi's diagram: yes if the largest
    gap is <= 1e-9."""
    return "yes: equal to gudhi's diagram to rounding" if max_gap <= 1e-9 else "no: our values differ from gudhi's"


def paired_gap(a: list[float], b: list[float]) -> tuple[float, float]:
    """Mean and standard error over seeds of the paired differences ``a - b`` (same seed, same split)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    se = float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0
    return float(d.mean()), se


def accuracy_verdict(topo: list[float], baselines: Mapping[str, list[float]], random: list[float]) -> str:
    """TopoPrune is accurate at this pruning rate (per-seed accuracies, paired by seed): yes if its mean is
    within ``TIE`` (0.5 pt) of the best baseline's mean or above it *and* above random selection by more
    than ``NEAR`` (2 pt) and two standard errors; no if it is below random by more than ``NEAR`` and two
    standard errors; partly otherwise (not clearly below random, not clearly a better pruner than it)."""
    means = {b: float(np.mean(v)) for b, v in baselines.items()}
    best = max(means, key=means.get)
    mean = float(np.mean(topo))
    gap, se = paired_gap(topo, random)  # TopoPrune - random, per seed
    if mean >= means[best] - TIE and gap > max(NEAR, 2 * se):
        return f"yes: within {TIE:.3f} of the best baseline or above, and clearly above random ({gap:+.3f} ± {se:.3f})"
    if -gap > max(NEAR, 2 * se):
        return f"no: clearly below random selection (TopoPrune − random = {gap:+.3f} ± {se:.3f}, paired by seed)"
    return (f"partly: not clearly different from random (TopoPrune − random = {gap:+.3f} ± {se:.3f}, paired); "
            f"best baseline ({METHOD_NAMES[best]}) − TopoPrune = {means[best] - mean:+.3f}")  # fmt: skip


def robustness_verdict(rank_ok: bool, overlap_ok: bool, accuracy_ok: bool) -> str:
    """Robust to feature noise, against the geometric baselines: yes if TopoPrune's scores keep their
    ranking at least as well as the distance to the class centre (``rank_ok``), its kept set overlaps its
    clean kept set at least as much as every geometric baseline's (``overlap_ok``) and its accuracy moves
    not clearly more than theirs (``accuracy_ok``, see :func:`robustness_checks`); partly if its ranks or
    its kept sets are that stable; no if neither is. A steady accuracy alone is not robustness here: random
    selection's accuracy is just as steady under feature noise (it ignores the features), and with 3 seeds
    accuracy changes of a point are within the noise, so ``accuracy_ok`` only qualifies the wording."""
    held = [name for name, ok in (("ranks", rank_ok), ("kept sets", overlap_ok)) if ok]
    if held and accuracy_ok and len(held) == 2:
        return "yes: ranks, kept sets and accuracy at least as stable as the geometric baselines'"
    if held:
        return f"partly: as stable as the geometric baselines in {' and '.join(held)}"
    if accuracy_ok:
        return ("no: ranks and kept sets far less stable than the geometric baselines'; its accuracy moves no "
                "more than theirs, but neither does random selection's")
    return "no: less stable than the geometric baselines in ranks, kept sets and accuracy"


def transfer_verdict(accuracy: str, rank_ok: bool) -> str:
    """Transfers across architectures: yes if the accuracy verdict on subsets chosen with the *other*
    network's features is yes and TopoPrune's scores agree across the two networks at least as well as
    the distance to the class centre (Spearman); partly if the accuracy verdict is yes or partly; no
    otherwise."""
    if accuracy.startswith("yes") and rank_ok:
        return "yes: as accurate as the best baseline, and its ranking agrees across the networks"
    if accuracy.startswith(("yes", "partly")):
        why = "its ranking does not agree across the networks" if accuracy.startswith("yes") else accuracy[8:]
        return f"partly: {why}"
    return f"no: {accuracy[4:]}"


def control_verdict(topo: list[float], control: list[float]) -> str:
    """The persistence is what helps (our control): yes if TopoPrune's accuracy beats the control's (same
    UMAP embedding and selection rule, score = mean kNN radius, no persistence) by more than ``TIE`` *and*
    by more than two standard errors of the per-seed paired differences; no otherwise (then the embedding
    and the selection rule explain whatever TopoPrune reaches, within our seeds' resolution)."""
    gap, se = paired_gap(topo, control)
    if gap > max(TIE, 2 * se):
        return f"yes: persistence adds {gap:.3f} ± {se:.3f} (paired, per seed) over the embedding alone"
    return f"no: TopoPrune {gap:+.3f} ± {se:.3f} (paired, per seed) against the same pipeline without persistence"


END_NAMES: dict[str, str] = {"easy": "lowest scores", "hard": "highest scores"}


def ends_verdict(by_end: Mapping[str, str]) -> str:
    """TopoPrune is accurate when it keeps one *end* of its score (top-k or bottom-k per class) instead of
    evenly spaced ranks: the better of the ends' :func:`accuracy_verdict` words (yes > partly > no; generous,
    since the abstract does not say which end), with every end's verdict quoted."""
    order = ("yes", "partly", "no")
    best = min(by_end.values(), key=lambda v: order.index(v.split(":")[0]))
    word = best.split(":")[0]
    return f"{word}: " + "; ".join(f"{END_NAMES.get(k, k)}: {v}" for k, v in by_end.items())


def _ms(d: Mapping) -> str:
    return f"{d['mean']:.3f} ± {d['sd']:.3f}"


def mean_abs(d: Mapping) -> float:
    """Mean over seeds of the absolute value (how far the accuracy moves, whatever the direction)."""
    return float(np.mean(np.abs(d["values"])))


def robustness_checks(results: TopoPruneResults, rate: str) -> tuple[bool, bool, bool]:
    """``(rank_ok, overlap_ok, accuracy_ok)`` of :func:`robustness_verdict` at pruning rate ``rate``.

    ``rank_ok``: TopoPrune's clean-vs-noisy Spearman >= the centre distance's (means over seeds);
    ``overlap_ok``: its clean-vs-noisy Jaccard >= every geometric baseline's; ``accuracy_ok``: its mean
    |accuracy change| under noise is not clearly larger than the geometric baselines' average (by no more
    than ``TIE`` or two standard errors of its own per-seed changes, whichever is larger).
    """
    m = results.summary["methods"]
    rank_ok = m["spearman_noise"]["topoprune"]["mean"] >= m["spearman_noise"]["centre"]["mean"]
    overlap_ok = all(m["jaccard"]["topoprune"][rate]["mean"] >= m["jaccard"][g][rate]["mean"] for g in GEOMETRIC)
    topo = np.abs(m["noise_change"]["topoprune"][rate]["values"])
    se = float(topo.std(ddof=1) / np.sqrt(topo.size)) if topo.size > 1 else 0.0
    geometric = float(np.mean([mean_abs(m["noise_change"][g][rate]) for g in GEOMETRIC]))
    accuracy_ok = float(topo.mean()) <= geometric + max(TIE, 2 * se)
    return rank_ok, overlap_ok, accuracy_ok


def claims(results: TopoPruneResults) -> list[Claim]:
    """Evaluate the paper's claims on ``results`` (criteria in the verdict functions above)."""
    cfg, s = results.config, results.summary
    m = s["methods"]
    top = str(max(cfg.prune_grid))
    seeds = f"{len(cfg.seeds)} seed(s)"
    setting = (f"{cfg.dataset}, pool of {m['n_pool']}, MLP trained on the kept subset, {m['n_test']} test images; "
               f"{seeds}")  # fmt: skip

    def accuracy_row(view: str) -> tuple[str, str]:
        acc = m["accuracy"][view]
        base = {b: acc[b][top]["values"] for b in BASELINES}
        measured = (f"TopoPrune {_ms(acc['topoprune'][top])}; " + ", ".join(f"{METHOD_NAMES[b]} {_ms(acc[b][top])}"
                    for b in BASELINES) + f"; full pool {_ms(m['full_accuracy'])}")  # fmt: skip
        return measured, accuracy_verdict(acc["topoprune"][top]["values"], base, acc["random"][top]["values"])

    rows = [Claim(
        "Differentiable persistent homology (our implementation: torch distances at gudhi's persistence pairs)",
        f"{s['persistence_check']['n_clouds']} random clouds of {cfg.n_neighbours + 1} points, H0 and H1",
        f"largest gap to gudhi's diagram {s['persistence_check']['max_gap']:.1e}",
        persistence_verdict(s["persistence_check"]["max_gap"]),
    )]  # fmt: skip
    measured, verdict = accuracy_row("mlp")
    rows.append(Claim("High accuracy at high pruning rates (e.g. 90%)",
                      f"pruning {float(top):.0%}, MLP features select; {setting}; criterion: within {TIE} of the "
                      f"best baseline and > {NEAR} (and 2 se) above random", measured, verdict))  # fmt: skip
    rank_ok, overlap_ok, accuracy_ok = robustness_checks(results, top)
    rho = m["spearman_noise"]
    rows.append(Claim(
        "Robust to noise in the latent features (geometric methods are not)",
        f"noise {cfg.noise} × each feature's sd on the MLP features; pruning {float(top):.0%}; {seeds}",
        f"Spearman of scores clean vs noisy: TopoPrune {_ms(rho['topoprune'])}, centre distance "
        f"{_ms(rho['centre'])}; kept-set Jaccard: " + ", ".join(
            f"{METHOD_NAMES[k]} {m['jaccard'][k][top]['mean']:.2f}" for k in ("topoprune", *GEOMETRIC, "random"))
        + "; mean |accuracy change|: " + ", ".join(
            f"{METHOD_NAMES[k]} {mean_abs(m['noise_change'][k][top]):.3f}" for k in ("topoprune", *GEOMETRIC)),
        robustness_verdict(rank_ok, overlap_ok, accuracy_ok),
    ))  # fmt: skip
    measured, verdict = accuracy_row("cnn")
    rho_t = m["spearman_transfer"]
    rows.append(Claim(
        "Transfers across architectures",
        f"CNN features select, the MLP trains; pruning {float(top):.0%}; {seeds}",
        measured + f"; Spearman of scores MLP vs CNN features: TopoPrune {_ms(rho_t['topoprune'])}, centre "
        f"distance {_ms(rho_t['centre'])}",
        transfer_verdict(verdict, rho_t["topoprune"]["mean"] >= rho_t["centre"]["mean"]),
    ))  # fmt: skip
    acc = m["accuracy"]["mlp"]
    rows.append(Claim(
        "Control (ours): the gain comes from the persistence, not from the UMAP embedding and the selection rule",
        f"same embedding and class-balanced coverage selection, score = mean kNN radius; pruning "
        f"{float(top):.0%}; {seeds}",
        f"TopoPrune {_ms(acc['topoprune'][top])}, control {_ms(acc['umap_radius'][top])}",
        control_verdict(acc["topoprune"][top]["values"], acc["umap_radius"][top]["values"]),
    ))  # fmt: skip
    ends = m["ends"]
    by_end = {mode: accuracy_verdict(ends[mode]["topoprune"][top]["values"],
                                     {b: acc[b][top]["values"] for b in BASELINES}, acc["random"][top]["values"])
              for mode in END_MODES}  # fmt: skip
    rows.append(Claim(
        "Selection-rule check (ours): high accuracy at 90% when TopoPrune keeps one end of its score",
        f"MLP features; per class the lowest or the highest scores (top-k), instead of evenly spaced ranks; "
        f"pruning {float(top):.0%}; {seeds}; criterion: the accuracy claim's, better end counts",
        "; ".join(f"{END_NAMES[mode]}: TopoPrune {_ms(ends[mode]['topoprune'][top])}, control "
                  f"{_ms(ends[mode]['umap_radius'][top])}" for mode in END_MODES)
        + f"; random {_ms(acc['random'][top])}; evenly spaced ranks {_ms(acc['topoprune'][top])}",
        ends_verdict(by_end),
    ))  # fmt: skip
    return rows


def ends_table(results: TopoPruneResults) -> str:
    """Accuracy (mean ± sd over seeds, MLP features) of TopoPrune and the control with each selection rule,
    next to random selection (Markdown)."""
    m, cfg = results.summary["methods"], results.config
    rates = [str(r) for r in cfg.prune_grid]
    acc = m["accuracy"]["mlp"]
    rows = [("random", "–", *(_ms(acc["random"][r]) for r in rates))]
    for k in END_SCORED:
        rows.append((METHOD_NAMES[k], f"the run's rule ({cfg.topo_selection})", *(_ms(acc[k][r]) for r in rates)))
        rows += [(METHOD_NAMES[k], END_NAMES[mode], *(_ms(m["ends"][mode][k][r]) for r in rates)) for mode in END_MODES]
    return markdown_table(("method", "kept per class", *(f"pruned {float(r):.0%}" for r in rates)), rows)


def accuracy_table(results: TopoPruneResults, view: str = "mlp") -> str:
    """Test accuracy (mean ± sd over seeds) per method and pruning rate, for one feature view (Markdown)."""
    m, rates = results.summary["methods"], [str(r) for r in results.config.prune_grid]
    header = ("method", *(f"pruned {float(r):.0%}" for r in rates))
    return markdown_table(header, [(METHOD_NAMES[k], *(_ms(m["accuracy"][view][k][r]) for r in rates))
                                   for k in METHODS])  # fmt: skip


def robustness_table(results: TopoPruneResults) -> str:
    """Per method: Spearman of scores (clean vs noisy, MLP vs CNN), kept-set Jaccard and accuracy moves (Markdown)."""
    m, rates = results.summary["methods"], [str(r) for r in results.config.prune_grid]
    top = rates[-1]
    header = ("method", "Spearman clean–noisy", "Spearman MLP–CNN", *(f"Jaccard {float(r):.0%}" for r in rates),
              f"accuracy change under noise ({float(top):.0%})", f"change, CNN features ({float(top):.0%})")
    rows = []
    for k in METHODS:
        rho = _ms(m["spearman_noise"][k]) if k in SCORED else "–"
        rho_t = _ms(m["spearman_transfer"][k]) if k in SCORED else "–"
        rows.append((METHOD_NAMES[k], rho, rho_t, *(_ms(m["jaccard"][k][r]) for r in rates),
                     _ms(m["noise_change"][k][top]), _ms(m["transfer_change"][k][top])))  # fmt: skip
    return markdown_table(header, rows)


def ranking_sentence(results: TopoPruneResults) -> str:
    """Which method is most accurate at each pruning rate (MLP features), and where TopoPrune ranks."""
    m, parts = results.summary["methods"]["accuracy"]["mlp"], []
    for r in (str(x) for x in results.config.prune_grid):
        order = sorted(METHODS, key=lambda k: -m[k][r]["mean"])
        parts.append(f"at {float(r):.0%} pruning the best is {METHOD_NAMES[order[0]]} ({m[order[0]][r]['mean']:.3f}) "
                     f"and TopoPrune ranks {order.index('topoprune') + 1} of {len(order)}")  # fmt: skip
    return "; ".join(parts)


def stability_phrase(rho: float, jaccard: float, jaccard_random: float) -> str:
    """How stable a score's choice of samples is under feature noise: "close to random" if the kept sets
    overlap within 0.05 of two random draws' overlap and the scores' rank correlation is below 0.3;
    "stable" if the rank correlation is at least 0.7; "partly stable" otherwise."""
    if jaccard <= jaccard_random + 0.05 and rho < 0.3:
        return "close to random: its kept set overlaps the clean one about as much as two random draws do"
    if rho >= 0.7:
        return "stable: the scores keep their ranking"
    return "partly stable: the ranking survives only in part"


def stability_sentence(results: TopoPruneResults) -> str:
    """:func:`stability_phrase` for TopoPrune at the highest pruning rate of the run."""
    m, top = results.summary["methods"], str(max(results.config.prune_grid))
    return stability_phrase(m["spearman_noise"]["topoprune"]["mean"], m["jaccard"]["topoprune"][top]["mean"],
                            m["jaccard"]["random"][top]["mean"])  # fmt: skip
