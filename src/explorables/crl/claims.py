"""The chapter's claims table: each claim of the abstract, our setting, our number, a verdict.

Verdicts come from the functions below (tested on constructed numbers), with the criteria written
in each and fixed before the book's runs; the book glues their output and never decides between
sentences itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.tables import Claim
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from ..core.tables import markdown_table as table
from .experiment import IVAE_CHECK, CRLResults

#: a component counts as recovered when its median MCC over seeds is at least this
RECOVERED = 0.8
#: the all-change model is identified when its mean MCC (over components, then seeds) is at least this
IDENTIFIED = 0.85
#: one method beats another when its mean MCC is higher by at least this
MARGIN = 0.05
#: a component predicted non-identifiable "falls short" when its median is below the lowest
#: predicted-identifiable median (or, for the control, its own all-change median) by at least this
GAP = 0.1


def fmt(stats: dict[str, Any]) -> str:
    """``mean ± sd`` of a statistics entry."""
    return f"{stats['mean']:.2f} ± {stats['sd']:.2f}"


def fmt_median(stats: dict[str, Any]) -> str:
    """``median [min, max]`` of a statistics entry."""
    return f"{stats['median']:.2f} [{stats['min']:.2f}, {stats['max']:.2f}]"


def identified_verdict(
    mean_mcc: float, component_medians: list[float], chance: float, baseline: float | None = None
) -> str:
    """yes: mean MCC >= IDENTIFIED, every component's median >= RECOVERED and (when a non-identifiable
    ``baseline``'s mean MCC is given) the mean above it by >= MARGIN; partly: some component recovered
    with the mean above ``chance`` (the MCC of a random rotation of the same targets) by >= MARGIN,
    short of the above; no: otherwise, including a high MCC that the non-identifiable baseline
    reaches too. (Review: "partly" first needed only a mean above chance; a mean 0.002 above it read
    "partly" on one base seed and "no" on the others.)"""
    recovered = sum(m >= RECOVERED for m in component_medians)
    high = mean_mcc >= IDENTIFIED and recovered == len(component_medians)
    above_baseline = baseline is None or mean_mcc >= baseline + MARGIN
    if high and above_baseline:
        return f"yes: mean MCC ≥ {IDENTIFIED} and every component's median ≥ {RECOVERED}"
    if high:
        return f"no: high MCC, but the plain VAE reaches it too ({baseline:.2f}, within {MARGIN})"
    if recovered and mean_mcc >= chance + MARGIN:
        return (f"partly: {recovered} of {len(component_medians)} components with median ≥ {RECOVERED}, "
                f"mean above the chance level {chance:.2f} by ≥ {MARGIN}")
    where = ("not above" if mean_mcc <= chance else f"less than {MARGIN} above")
    return (f"no: {recovered} of {len(component_medians)} components with median ≥ {RECOVERED}; mean MCC "
            f"{where} the chance level {chance:.2f} of a random rotation")


def paired_gain(gain: float | Sequence[float]) -> tuple[float, float]:
    """Mean and standard error over seeds of per-seed paired differences (a single number: se 0)."""
    d = np.atleast_1d(np.asarray(gain, dtype=float))
    return float(d.mean()), (float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0)


def clearly_above(gain: float | Sequence[float], margin: float) -> bool:
    """The mean of the per-seed differences is >= ``margin`` and more than two standard errors above 0."""
    mean, se = paired_gain(gain)
    return mean >= margin and mean > 2 * se


def beats_verdict(gains: dict[str, float | Sequence[float]], margin: float = MARGIN) -> str:
    """yes: mean MCC higher than every baseline's by >= ``margin``; partly: than some; no: than none.

    ``gains`` holds per baseline the per-seed MCC differences (same data draws, so paired by seed) or
    one number; a gain counts when its mean is >= ``margin`` and more than two standard errors above 0
    (added in review: a mean gain of 0.05 with a paired standard error of 0.03 is within the noise)."""
    above = [name for name, g in gains.items() if clearly_above(g, margin)]
    if gains and len(above) == len(gains):
        return f"yes: higher than every baseline by ≥ {margin}"
    if above:
        return f"partly: higher by ≥ {margin} than {', '.join(above)} only"
    return f"no: not higher than any baseline by ≥ {margin}"


def pattern_matches(
    medians: list[float],
    identifiable: list[bool],
    all_change: list[float],
    gap: float = GAP,
    paired_drops: Sequence[Sequence[float]] | None = None,
) -> bool:
    """Whether one pattern's per-component medians follow the prediction: every predicted-identifiable
    component recovered (>= RECOVERED), and every other one both below the lowest of those and below
    its own median in the all-change run (``all_change``) by >= ``gap``: fixing its influence costs it.

    ``paired_drops`` (optional): per predicted non-identifiable component, its per-seed drops from the
    all-change run (same data draws); then each drop's mean must also exceed two standard errors
    (added in review: a drop of 0.12 ± 0.09 read as "follows the prediction" on one base seed)."""
    ok = [m for m, i in zip(medians, identifiable, strict=True) if i]
    bad = [(m, a) for m, i, a in zip(medians, identifiable, all_change, strict=True) if not i]
    if not ok or min(ok) < RECOVERED:
        return False
    if paired_drops is not None and not all(clearly_above(d, 0.0) for d in paired_drops):
        return False
    return all(m <= min(ok) - gap and m <= a - gap for m, a in bad)


def partial_verdict(matches: dict[str, bool]) -> str:
    """yes: every some-change pattern follows the prediction; partly: some do; no: none does."""
    good = [p for p, m in matches.items() if m]
    if matches and len(good) == len(matches):
        return "yes: every pattern follows the prediction"
    if good:
        return f"partly: {', '.join(good)} follow(s) the prediction, {len(matches) - len(good)} pattern(s) do not"
    return "no: no pattern follows the prediction"


def control_verdict(drops: list[float], gap: float = GAP) -> str:
    """The control (no influence changes): yes when every child component's median falls by >= ``gap``
    from the all-change run (the change, not the architecture, identifies it); partly: some; no: none."""
    fell = sum(d >= gap for d in drops)
    if drops and fell == len(drops):
        return f"yes: every child component's median falls by ≥ {gap} without changes"
    if fell:
        return f"partly: {fell} of {len(drops)} child components fall by ≥ {gap} without changes"
    return f"no: the children are recovered as well without changing influences (falls < {gap})"


def _arm(results: CRLResults, name: str) -> dict[str, Any] | None:
    return results.summary["arms"].get(name)


def _baseline(results: CRLResults, name: str) -> float | None:
    arm = _arm(results, name)
    return None if arm is None else arm["mcc"]["mean"]


def medians(arm: dict[str, Any]) -> list[float]:
    """Per-component median MCC over seeds."""
    return [c["median"] for c in arm["components"]]


def per_seed(arm: dict[str, Any], component: int | None = None) -> np.ndarray:
    """Per-seed MCC of an arm (mean over components), or of one component."""
    stats = arm["mcc"] if component is None else arm["components"][component]
    return np.asarray(stats["per_seed"], dtype=float)


def partial_matches(results: CRLResults) -> dict[str, bool]:
    """Per some-change pattern (``fix …``): whether it follows the prediction (:func:`pattern_matches`)."""
    out: dict[str, bool] = {}
    full = _arm(results, "causal / all")
    if full is None:
        return out
    for arm in results.summary["arms"].values():
        if arm["prior"] == "causal" and arm["data"] == "synthetic" and arm["pattern"].startswith("fix"):
            drops = [per_seed(full, i) - per_seed(arm, i) for i, ok in enumerate(arm["identifiable"]) if not ok]
            out[arm["pattern"]] = pattern_matches(medians(arm), arm["identifiable"], medians(full), paired_drops=drops)
    return out


def control_drops(results: CRLResults) -> list[float]:
    """Per child component (predicted non-identifiable without changes): all-change median minus the
    no-change median."""
    full, none = _arm(results, "causal / all"), _arm(results, "causal / none")
    if full is None or none is None:
        return []
    return [a - b for a, b, i in zip(medians(full), medians(none), none["identifiable"], strict=True) if not i]


def prediction_table(results: CRLResults) -> str:
    """The theory's prediction per pattern (from the graph and what changes; no results involved)."""
    rows = []
    for arm in results.summary["arms"].values():
        if arm["prior"] == "causal" and arm["data"] == "synthetic":
            marks = ["identifiable" if i else "not identifiable" for i in arm["identifiable"]]
            rows.append([arm["pattern"], *marks])
    d = len(rows[0]) - 1 if rows else 0
    return table(["influences that change", *(f"z{i}" for i in range(d))], rows)


def component_table(results: CRLResults) -> str:
    """Per arm: mean MCC (mean ± sd over seeds) and every component's median [min, max] with the prediction."""
    rows = []
    for name, arm in results.summary["arms"].items():
        comps = [
            fmt_median(c) + ("" if arm["data"] == "motion" else (" ✓" if ok else " ✗"))
            for c, ok in zip(arm["components"], arm["identifiable"], strict=True)
        ]
        rows.append([name, arm["correlation"], fmt(arm["mcc"]), *comps, f"{arm['elbo']['mean']:.2f}"])
    d = max(len(a["components"]) for a in results.summary["arms"].values())
    header = ["arm", "correlation", "MCC mean ± sd", *(f"z{i} median [min, max]" for i in range(d)), "ELBO / sample"]
    return table(header, rows)


def reading_sentence(results: CRLResults) -> str:
    """What the run shows against the prediction, in words (for the page's "Reading the numbers")."""
    parts = []
    matches = partial_matches(results)
    if matches:
        k = sum(matches.values())
        parts.append(f"{k} of {len(matches)} one-fixed-edge pattern(s) follow the prediction")
    drops = control_drops(results)
    if drops:
        fell = all(d >= GAP for d in drops)
        parts.append(
            "from the all-change run to the no-change control the children's medians change by "
            + ", ".join(f"{-d:+.2f}" for d in drops)
            + (f" (each falls by at least {GAP}, as predicted)" if fell
               else f" (not each falls by {GAP}, as predicted)")
        )
    full, plain = _arm(results, "causal / all"), _arm(results, "plain / all")
    if full is not None and plain is not None:
        mcc_gain = full["mcc"]["mean"] - plain["mcc"]["mean"]
        elbo_gain = full["elbo"]["mean"] - plain["elbo"]["mean"]
        parts.append(
            f"on all-change data the causal prior's mean MCC differs from the plain VAE's by {mcc_gain:+.2f} "
            f"while its ELBO differs by {elbo_gain:+.2f} nats per sample"
        )
    return ("At this scale " + "; ".join(parts) + ".") if parts else ""


def claims(results: CRLResults) -> list[Claim]:
    """The claims table (criteria in the verdict functions above)."""
    cfg = results.config
    n_seeds = len(cfg.seeds)
    setting = (
        f"{cfg.d_latent} latents, {cfg.n_envs} environments × {cfg.n_per_env}, {cfg.mixing_layers}-layer "
        f"mixing to {cfg.d_obs} dims, {cfg.n_steps} Adam steps, {n_seeds} seeds"
    )
    out = []
    full = _arm(results, "causal / all")
    if full is not None:
        out.append(
            Claim(
                "When the causal influences change across environments, the latents are identifiable",
                f"causal-prior VAE, all influences change; {setting}",
                f"MCC {fmt(full['mcc'])}; component medians " + ", ".join(f"{m:.2f}" for m in medians(full)),
                identified_verdict(full["mcc"]["mean"], medians(full), full["chance"]["mean"],
                                   _baseline(results, "plain / all")),
            )
        )
        baselines = {n: a for n, a in results.summary["arms"].items() if n in ("factorised / all", "plain / all")}
        if baselines:
            gains = {n.split(" /")[0]: per_seed(full) - per_seed(a) for n, a in baselines.items()}
            out.append(
                Claim(
                    "The causal prior is what recovers them (against a plain VAE and a factorised prior)",
                    "same data, same networks and steps; iVAE's factorised environment prior; N(0, I) prior",
                    "; ".join(f"{n} {fmt(a['mcc'])}" for n, a in baselines.items())
                    + f"; random rotation of the true latents {fmt(full['chance'])}; causal − baseline, paired by "
                    + "seed (mean ± se): "
                    + ", ".join(f"{n} {m:+.3f} ± {se:.3f}" for n, (m, se) in
                                ((n, paired_gain(g)) for n, g in gains.items())),
                    beats_verdict(gains),
                )
            )
    matches = partial_matches(results)
    if matches:
        shown = [a for a in results.summary["arms"].values() if a["pattern"] in matches and a["prior"] == "causal"]
        out.append(
            Claim(
                "Partial identifiability when only some influences change",
                "one edge's influence fixed, the others change; prediction per component stated beforehand",
                "; ".join(
                    f"{a['pattern']}: "
                    + ", ".join(f"{m:.2f}{'✓' if i else '✗'}"
                                for m, i in zip(medians(a), a["identifiable"], strict=True))
                    for a in shown
                ),
                partial_verdict(matches),
            )
        )
    drops = control_drops(results)
    if drops:
        out.append(
            Claim(
                "Control: without changing influences, the children are not recovered",
                "no influence changes (noise still does); same model, data draws and training",
                "median falls " + ", ".join(f"{d:+.2f}" for d in drops),
                control_verdict(drops),
            )
        )
    check = _arm(results, IVAE_CHECK)
    if check is not None:
        out.append(
            Claim(
                "Control: iVAE's own setting is reached at our budget",
                "influences fixed, factorised prior, MCC against the independent exogenous noise",
                f"MCC {fmt(check['mcc'])}; component medians " + ", ".join(f"{m:.2f}" for m in medians(check)),
                identified_verdict(check["mcc"]["mean"], medians(check), check["chance"]["mean"]),
            )
        )
    pnl = _arm(results, "causal / post-nonlinear")
    if pnl is not None:
        out.append(
            Claim(
                "Extends to latent post-nonlinear models",
                "z_i = h(f_i + n_i), h(v) = v/2 + 2 tanh(2v); rank (Spearman) MCC",
                f"MCC {fmt(pnl['mcc'])}",
                identified_verdict(pnl["mcc"]["mean"], medians(pnl), pnl["chance"]["mean"]),
            )
        )
    motion, plain_motion = _arm(results, "motion / causal"), _arm(results, "motion / plain")
    if motion is not None and plain_motion is not None:
        ok = identified_verdict(
            motion["mcc"]["mean"], medians(motion), motion["chance"]["mean"], plain_motion["mcc"]["mean"]
        )
        gain = per_seed(motion) - per_seed(plain_motion)
        out.append(
            Claim(
                "Human-motion case study (ours: a synthetic kinematic chain)",
                "hip → knee → ankle angles, 6 gaits, stick-figure coordinates observed",
                f"causal {fmt(motion['mcc'])}, plain {fmt(plain_motion['mcc'])}",
                ok + ("; " if ok else "") + beats_verdict({"plain": gain}).split(":")[0] + " against the plain VAE",
            )
        )
    return out
