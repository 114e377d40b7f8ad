"""The chapter's claims table: each claim of the abstract, our setting, our number, a verdict.

Verdicts come from the functions below (tested on constructed numbers), with the criteria
written in each; the book glues their output and never decides between sentences itself.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.tables import Claim
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from ..core.tables import markdown_table as table
from .experiment import CONTROL, TRAINED, StableNDEResults
from .losses import METHOD_LABELS

LABELS = {**METHOD_LABELS, CONTROL: "one-step, more steps (control)"}
#: a cheap loss "aligns better" than one-step when its mean cosine is higher by at least this (the seed-to-seed
#: spread of a system's mean gain is a few hundredths, so smaller gains are not told apart from noise)
ALIGNMENT_MARGIN = 0.1
#: a method is "cheap" next to unrolled training when its step costs at most this fraction of an unrolled step
CHEAP_FRACTION = 0.75


def alignment_gains(results: StableNDEResults, method: str) -> dict[str, float]:
    """Per system: the mean over checkpoints and seeds of ``cos(method) - cos(one-step)`` with the unrolled gradient."""
    out = {}
    for name in results.config.systems:
        cos = results.summary[name]["alignment"]["cosine"]
        out[name] = float(np.mean(np.asarray(cos[method]) - np.asarray(cos["one_step"])))
    return out


def alignment_verdict(gains: dict[str, float], margin: float = ALIGNMENT_MARGIN) -> str:
    """yes: the mean gain over one-step is >= ``margin`` on every system; partly: on some; no: on none."""
    values = list(gains.values())
    if values and all(g >= margin for g in values):
        return f"yes: higher than one-step by ≥ {margin} on every system"
    if any(g >= margin for g in values):
        return f"partly: higher than one-step by ≥ {margin} on some systems only"
    return f"no: not better aligned than the one-step gradient by ≥ {margin} on any system"


def lens_verdict(
    noise_gains: dict[str, float], jacobian_gains: dict[str, float], margin: float = ALIGNMENT_MARGIN
) -> str:
    """yes: both noise injection and Jacobian matching align better than one-step (>= ``margin``) on every
    system; partly: one of the two does (on every system), or both on some; no: neither."""
    noise = all(g >= margin for g in noise_gains.values())
    jac = all(g >= margin for g in jacobian_gains.values())
    if noise and jac:
        return "yes: both align better with the unrolled gradient than one-step does"
    if noise or jac:
        which = "rollout-shaped noise" if noise else "Jacobian matching"
        other = "Jacobian matching" if noise else "noise injection"
        return f"partly: {which} does on every system; {other} does not"
    if any(g >= margin for g in (*noise_gains.values(), *jacobian_gains.values())):
        return "partly: better aligned than one-step on some systems only"
    return "no: neither aligns better than one-step"


def secondary_metric(system: str) -> tuple[str, str]:
    """The stability number besides the blow-up fraction: ``(summary key, label)``."""
    return ("energy_drift", "energy drift |ΔH|") if system == "pendulum" else ("z_distance", "W₁(z) to the truth")


def improves(candidate: dict, baseline: dict, system: str) -> bool:
    """Whether ``candidate`` is at least as stable as ``baseline``: no more blow-ups (mean over seeds)
    and a smaller secondary metric (energy drift, or distance of the long-run z distribution)."""
    key, _ = secondary_metric(system)
    blow_ok = candidate["blow_up_fraction"]["mean"] <= baseline["blow_up_fraction"]["mean"]
    a, b = candidate[key]["mean"], baseline[key]["mean"]
    better = math.isfinite(a) and (not math.isfinite(b) or a < b)
    return bool(blow_ok and better)


def stability_verdict(improved: dict[str, bool], against: str = "one-step training") -> str:
    """yes: more stable than ``against`` on every system; partly: on some; no: on none."""
    wins = [k for k, v in improved.items() if v]
    if wins and len(wins) == len(improved):
        return f"yes: more stable than {against} on every system"
    if wins:
        return f"partly: more stable than {against} on {', '.join(wins)} only"
    return f"no: not more stable than {against}"


def cost_verdict(unrolled_ratio: float, cheap_ratio: float, fraction: float = CHEAP_FRACTION) -> str:
    """``*_ratio``: seconds per step over one-step's. yes: the complete regulariser costs at most
    ``fraction`` of an unrolled step; no otherwise."""
    if cheap_ratio <= fraction * unrolled_ratio:
        return f"yes: a complete-regulariser step costs {cheap_ratio / unrolled_ratio:.0%} of an unrolled one"
    return "no: the complete regulariser is not much cheaper than unrolled training here"


def _ms(v: float) -> str:
    return f"{v * 1e3:.1f} ms"


def _pm(entry: dict, fmt: str = ".2f") -> str:
    return f"{entry['mean']:{fmt}} ± {entry['sd']:{fmt}}"


def claims(results: StableNDEResults) -> list[Claim]:
    """Evaluate the abstract's claims on ``results`` (criteria in the verdict functions)."""
    cfg, s = results.config, results.summary
    systems = cfg.systems
    rows: list[Claim] = []

    # 1. unrolled training limits divergence but costs more per step
    cost = {m: float(np.mean([s[n]["step_cost_seconds"][m] for n in systems])) for m in TRAINED}
    unrolled_ratio, complete_ratio = cost["unrolled"] / cost["one_step"], cost["complete"] / cost["one_step"]
    rows.append(
        Claim(
            "Training on unrolled trajectories is expensive (gradients through an iterative process)",
            f"seconds per training step, mean over {', '.join(systems)}, same pairs per step",
            f"one-step {_ms(cost['one_step'])}, unrolled {_ms(cost['unrolled'])} ({unrolled_ratio:.1f}×), "
            f"complete {_ms(cost['complete'])} ({complete_ratio:.1f}×)",
            cost_verdict(unrolled_ratio, complete_ratio),
        )
    )

    # 2. the common lens: noise injection and Jacobian regularisation approximate the unrolled gradient
    noise, iso, jac = (alignment_gains(results, m) for m in ("noise_rollout", "noise_iso", "jacobian"))
    rows.append(
        Claim(
            "Noise injection and Jacobian regularisation both approximate the unrolled gradient",
            f"cosine with the K-step unrolled gradient minus one-step's, mean over checkpoints "
            f"{list(cfg.alignment_steps)} and seeds",
            "; ".join(
                f"{n}: rollout noise {noise[n]:+.2f}, isotropic noise {iso[n]:+.2f}, Jacobian {jac[n]:+.2f}"
                for n in systems
            ),
            lens_verdict(noise, jac),
        )
    )

    # 3. the complete regulariser's gradient is closer to the unrolled one
    comp = alignment_gains(results, "complete")
    detail = "; ".join(
        f"{n}: {_pm(_cos_entry(s[n], 'complete'))} vs one-step {_pm(_cos_entry(s[n], 'one_step'))} ({comp[n]:+.2f})"
        for n in systems
    )
    rows.append(
        Claim(
            "The complete regulariser follows from this view (its gradient approximates the unrolled one)",
            "same measurement; our reconstruction of the regulariser, eq. (nde-complete)",
            detail,
            alignment_verdict(comp),
        )
    )

    # 4. stability of the complete regulariser against one-step training, and against the control
    stab = {n: s[n]["stability"] for n in systems}
    improved = {n: improves(stab[n]["complete"], stab[n]["one_step"], n) for n in systems}
    rows.append(
        Claim(
            "The complete regulariser improves the stability of the learned dynamics",
            f"{cfg.n_rollouts} held-out rollouts of {cfg.rollout_steps} steps per seed: blow-up fraction and "
            + ", ".join(secondary_metric(n)[1] + f" ({n})" for n in systems),
            "; ".join(_stability_text(stab[n], n, ("complete", "one_step")) for n in systems),
            stability_verdict(improved),
        )
    )
    versus_control = {n: improves(stab[n]["complete"], stab[n][CONTROL], n) for n in systems}
    rows.append(
        Claim(
            "Control: is the gain only extra compute per step?",
            f"one-step training with {cfg.control_step_factor}× the steps ({cfg.control_step_factor}× one-step's "
            f"time vs {complete_ratio:.1f}× for the complete regulariser)",
            "; ".join(_stability_text(stab[n], n, ("complete", CONTROL)) for n in systems),
            stability_verdict(versus_control, against="the longer one-step control"),
        )
    )
    return rows


def _cos_entry(system_summary: dict, method: str) -> dict:
    per = np.asarray(system_summary["alignment"]["cosine"][method])  # (checkpoints, seeds)
    per_seed = per.mean(0)
    return {"mean": float(per_seed.mean()), "sd": float(per_seed.std(ddof=1)) if per_seed.size > 1 else 0.0}


def _stability_text(stab: dict, system: str, methods: tuple[str, ...]) -> str:
    key, label = secondary_metric(system)
    parts = [f"{LABELS[m]}: blow-up {_pm(stab[m]['blow_up_fraction'])}, {label} {_pm(stab[m][key])}" for m in methods]
    return f"{system}: " + "; ".join(parts)


def fits_better(candidate: dict, baseline: dict) -> bool:
    """Whether ``candidate``'s held-out K-step loss is clearly below ``baseline``'s: the means differ by
    more than the two seed-to-seed sds added (``{"mean", "sd"}`` entries)."""
    return bool(candidate["mean"] + candidate["sd"] + baseline["sd"] < baseline["mean"])


def reference_fit_sentence(held: dict[str, dict[str, dict]]) -> str:
    """A sentence on whether unrolled training fits its *own* objective better than one-step training.

    ``held[system][method]``: the held-out K-step loss entry (mean, sd over seeds). If the unrolled
    model is not clearly better on the very loss it minimises, the reference is under-trained at
    this budget, and stability comparisons against it say more about optimisation than about the
    loss's gradient.
    """
    good = {n: fits_better(h["unrolled"], h["one_step"]) for n, h in held.items()}
    numbers = "; ".join(
        f"{n}: unrolled {h['unrolled']['mean']:.2g} ± {h['unrolled']['sd']:.1g}, "
        f"one-step {h['one_step']['mean']:.2g} ± {h['one_step']['sd']:.1g}"
        for n, h in held.items()
    )
    if all(good.values()):
        verdict = "unrolled training reaches a clearly lower held-out K-step loss than one-step training, as it should"
    elif any(good.values()):
        wins = ", ".join(n for n, g in good.items() if g)
        verdict = (
            f"unrolled training reaches a clearly lower held-out K-step loss than one-step training on {wins} only; "
            "elsewhere the reference does not fit its own objective better at this budget"
        )
    else:
        verdict = (
            "unrolled training does not reach a clearly lower held-out K-step loss than one-step training, although "
            "that is the loss it minimises: at this budget the reference itself is under-trained"
        )
    return f"Held-out K-step loss ({numbers}): {verdict}."


def alignment_table(results: StableNDEResults) -> str:
    """Cosine with the unrolled gradient per cheap loss and checkpoint (mean ± sd over seeds), per system."""
    steps = results.config.alignment_steps
    header = ("system", "loss", *[f"step {k}" for k in steps])
    rows = []
    for n in results.config.systems:
        a = results.summary[n]["alignment"]
        for m in a["cosine"]:
            rows.append(
                (n, LABELS[m], *[f"{mu:.2f} ± {sd:.2f}" for mu, sd in zip(a["mean"][m], a["sd"][m], strict=True)])
            )
    return table(header, rows)


def stability_table(results: StableNDEResults) -> str:
    """Per system and method: blow-ups, the secondary metric, the Lyapunov exponent (chaotic systems), cost per step."""
    rows = []
    header = (
        "system",
        "method",
        "held-out K-step loss",
        "blow-up fraction",
        "energy drift / W₁(z)",
        "Lyapunov exponent",
        "ms per step",
    )
    for n in results.config.systems:
        s = results.summary[n]
        key, _ = secondary_metric(n)
        for m in TRAINED:
            st = s["stability"][m]
            lyap = _pm(st["lyapunov"]) if "lyapunov" in st else "–"
            rows.append(
                (
                    n,
                    LABELS[m],
                    _pm(st["heldout_loss"], ".2g"),
                    _pm(st["blow_up_fraction"]),
                    _pm(st[key], ".3g"),
                    lyap,
                    f"{s['step_cost_seconds'][m] * 1e3:.1f}",
                )
            )
        truth = s["truth"]
        ref = f"{truth['energy_drift']:.1e}" if "energy_drift" in truth else "–"
        lyap = f"{truth['lyapunov']:.2f}" if "lyapunov" in truth else "–"
        rows.append((n, "truth (RK4)", "0", "0", ref, lyap, "–"))
    return table(header, rows)


def best_aligned(results: StableNDEResults) -> str:
    """A sentence naming the cheap loss whose gradient is closest to the unrolled one, per system."""
    parts = []
    for n in results.config.systems:
        cos = results.summary[n]["alignment"]["cosine"]
        means = {m: float(np.mean(v)) for m, v in cos.items()}
        best = max(means, key=means.get)
        parts.append(f"on the {n}, {LABELS[best]} ({means[best]:.2f})")
    return "The cheap loss whose gradient is closest to the unrolled one: " + "; ".join(parts) + "."
