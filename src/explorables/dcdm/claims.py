"""The chapter's claims table, and the tested functions that turn measured numbers into verdicts.

Each verdict function states its criterion in its docstring; the notebook only glues their output.
Stochastic numbers are ``{"mean": ..., "sd": ...}`` over the seeds of the run. A difference
"counts" when it is larger than the two standard deviations added.
"""

from __future__ import annotations

from ..core.tables import Claim
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from .experiment import DCDMResults

Stat = dict[str, float]

ABLATION_NAMES = {"fixed_centres": "fixed centres", "softmax": "softmax weights", "no_kl": "no KL"}
PART_NAMES = {"mixture": "2-D mixture", "images": "digits"}


def pm(x: Stat, digits: int = 3) -> str:
    """``mean ± sd``."""
    return f"{x['mean']:.{digits}f} ± {x['sd']:.{digits}f}"


def clearly_above(a: Stat, b: Stat, margin: float = 0.0) -> bool:
    """``a`` exceeds ``b`` by more than ``margin`` and by more than the two sds added."""
    gap = a["mean"] - b["mean"]
    return gap > margin and gap > a["sd"] + b["sd"]


def discovery_verdict(
    dcdm: Stat,
    kmeans: Stat,
    untrained: Stat,
    dcdm_per_seed: list[float],
    untrained_per_seed: list[float],
    tol: float = 0.05,
) -> str:
    """NMI of DCDM's concepts against the labels. The control is the same encoder before training (an
    encoder's random features already group nearby inputs); DCDM is "above the control" when its mean
    NMI is at least 0.1 higher and it is higher on every seed (paired: same initial weights).
    Yes: above the control and within ``tol`` of k-means or better. Partly: above the control but more
    than ``tol`` below k-means. No: not above the control."""
    paired = len(dcdm_per_seed) == len(untrained_per_seed) and all(
        a > b for a, b in zip(dcdm_per_seed, untrained_per_seed, strict=True)
    )
    above_control = paired and dcdm["mean"] - untrained["mean"] >= 0.1
    if above_control and dcdm["mean"] >= kmeans["mean"] - tol:
        return f"yes: far above the untrained encoder, within {tol} of k-means or better"
    if above_control:
        return (
            "partly: concepts track the labels (well above the untrained encoder) "
            f"but k-means does better by more than {tol}"
        )
    return "no: not clearly better than an untrained encoder's grouping"


def ablation_verdict(dcdm: Stat, ablations: dict[str, Stat]) -> str:
    """NMI of DCDM against each ablation. Yes: clearly above every ablation. Partly: clearly above some.
    No: clearly above none (ties within the seed spread count against the claim)."""
    beaten = [ABLATION_NAMES.get(k, k) for k, v in ablations.items() if clearly_above(dcdm, v)]
    if len(beaten) == len(ablations):
        return "yes: clearly above every ablation"
    if beaten:
        return f"partly: clearly above {', '.join(beaten)} only"
    return "no: not clearly above any ablation"


def purity_verdict(dcdm: Stat, unconditional: Stat, good: float = 0.7) -> str:
    """Purity of concept-conditioned samples under the separate classifier. Yes: mean >= ``good`` and
    clearly above the purity of the plain DDPM's samples (the control: unconditional samples, grouped the
    same way). Partly: clearly above the control but below ``good``. No: not clearly above the control."""
    if clearly_above(dcdm, unconditional) and dcdm["mean"] >= good:
        return f"yes: purity ≥ {good}, far above unconditional samples"
    if clearly_above(dcdm, unconditional):
        return f"partly: concepts steer the samples, but purity stays below {good}"
    return "no: samples per concept are not purer than unconditional ones"


def quality_verdict(dcdm: Stat, ddpm: Stat) -> str:
    """Squared MMD of samples to held-out data, DCDM against the plain DDPM with the same denoiser.
    Yes: not clearly worse (DCDM mean <= DDPM mean + both sds, or <= 1.25x the DDPM's). Partly: within
    2x the DDPM's. No: worse than that."""
    if dcdm["mean"] <= ddpm["mean"] + dcdm["sd"] + ddpm["sd"] or dcdm["mean"] <= 1.25 * ddpm["mean"]:
        return "yes: samples as close to the data as the plain DDPM's"
    if dcdm["mean"] <= 2 * ddpm["mean"]:
        return "partly: samples somewhat further from the data than the plain DDPM's (under 2×)"
    return "no: samples clearly further from the data than the plain DDPM's"


def intervention_verdict(hit: Stat, base: Stat, good: float = 0.5) -> str:
    """Share of edited inputs the classifier gives the new concept's label, against the same edit without
    the swap (the control: how often that label comes out anyway). Yes: the gain is at least ``good``
    and clear. Partly: a clear gain of at least 0.15. No otherwise."""
    gain = hit["mean"] - base["mean"]
    if clearly_above(hit, base) and gain >= good:
        return f"yes: swapping the weights moves at least {good:.0%} more inputs to the new concept"
    if clearly_above(hit, base, 0.15):
        return "partly: a clear but small share of edits takes on the new concept"
    return "no: swapping the weights does not clearly move inputs to the new concept"


def _part(results: DCDMResults, part: str) -> dict:
    return results.summary[part]


def claims(results: DCDMResults) -> list[Claim]:
    """The claims table: discovery, ablations, prototypes, sample quality and interventions, per dataset."""
    rows = []
    cfg = results.config
    for part, name in PART_NAMES.items():
        s = _part(results, part)
        a = s["arms"]
        k = cfg.n_mixture_concepts if part == "mixture" else cfg.n_concepts
        setting = f"{name}, K = {k}, {len(cfg.seeds)} seeds"
        rows.append(
            Claim(
                "concepts are discovered without labels",
                setting,
                f"NMI {pm(a['dcdm']['nmi'])} (ARI {pm(a['dcdm']['ari'])}); k-means {pm(s['kmeans']['nmi'])}; "
                f"untrained encoder {pm(s['untrained']['nmi'])}",
                discovery_verdict(
                    a["dcdm"]["nmi"],
                    s["kmeans"]["nmi"],
                    s["untrained"]["nmi"],
                    a["dcdm"]["nmi_per_seed"],
                    s["untrained"]["nmi_per_seed"],
                ),
            )
        )
        rows.append(
            Claim(
                "learned centres, Dirichlet weights and the KL term matter",
                setting,
                "NMI " + "; ".join(f"{ABLATION_NAMES[k]} {pm(a[k]['nmi'])}" for k in ABLATION_NAMES),
                ablation_verdict(a["dcdm"]["nmi"], {k: a[k]["nmi"] for k in ABLATION_NAMES}),
            )
        )
        rows.append(
            Claim(
                "components form coherent prototypes",
                setting + ", samples per concept",
                f"purity {pm(a['dcdm']['purity'])}; unconditional DDPM samples {pm(a['ddpm']['purity'])}",
                purity_verdict(a["dcdm"]["purity"], a["ddpm"]["purity"]),
            )
        )
        rows.append(
            Claim(
                "concept discovery does not cost generation quality",
                setting + ", MMD² to held-out data",
                f"DCDM {pm(a['dcdm']['mmd2'], 4)}; DDPM {pm(a['ddpm']['mmd2'], 4)}; data floor {s['mmd2_floor']:.4f}",
                quality_verdict(a["dcdm"]["mmd2"], a["ddpm"]["mmd2"]),
            )
        )
        hit, base = a["dcdm"].get("intervention_hit"), a["dcdm"].get("intervention_base")
        if hit is not None and base is not None:
            rows.append(
                Claim(
                    "concepts support interventions",
                    setting + f", edit from t = {cfg.edit_fraction:g} T",
                    f"new concept's label {pm(hit)}; without the swap {pm(base)}",
                    intervention_verdict(hit, base),
                )
            )
    return rows


def ablation_sentence(results: DCDMResults, part: str = "images") -> str:
    """Which ablations DCDM beats on ``part``, in words (from :func:`ablation_verdict`)."""
    a = _part(results, part)["arms"]
    verdict = ablation_verdict(a["dcdm"]["nmi"], {k: a[k]["nmi"] for k in ABLATION_NAMES})
    word = verdict.split(":")[0]
    return {
        "yes": "DCDM's concepts track the labels clearly better than every ablation's.",
        "partly": f"DCDM beats some ablations clearly ({verdict.split(':', 1)[1].strip()}), not all.",
        "no": (
            "No ablation is clearly worse than DCDM: within the seed-to-seed spread, each of the three parts "
            "we removed can go without hurting the concepts."
        ),
    }[word]


def discovery_sentence(results: DCDMResults, part: str) -> str:
    """DCDM's concepts against k-means and the untrained encoder on ``part`` (from :func:`discovery_verdict`)."""
    s = _part(results, part)
    a, u = s["arms"]["dcdm"], s["untrained"]
    verdict = discovery_verdict(a["nmi"], s["kmeans"]["nmi"], u["nmi"], a["nmi_per_seed"], u["nmi_per_seed"])
    return {
        "yes": "Here the concepts match the labels about as well as k-means does, and far better than the untrained "
        "encoder.",
        "partly": "Here the concepts are learned (far above the untrained encoder) but k-means on the same inputs "
        "matches the labels better.",
        "no": "Here the concepts are no better than the grouping an untrained encoder already makes.",
    }[verdict.split(":")[0]]


def quality_sentence(results: DCDMResults) -> str:
    """Whether generation kept its quality on both datasets (from :func:`quality_verdict`)."""
    words = []
    for part, name in PART_NAMES.items():
        a = _part(results, part)["arms"]
        words.append((name, quality_verdict(a["dcdm"]["mmd2"], a["ddpm"]["mmd2"]).split(":")[0]))
    if all(w == "yes" for _, w in words):
        return "On both datasets DCDM's samples are as close to the data as the plain DDPM's."
    bad = [name for name, w in words if w != "yes"]
    return f"On the {' and the '.join(bad)} DCDM's samples are clearly further from the data than the plain DDPM's."
