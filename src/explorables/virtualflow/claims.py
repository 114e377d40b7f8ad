"""The chapter's claims table: each claim of the abstract, our setting, our number, a verdict.

Verdicts come from the functions below (tested on constructed numbers), with the criteria
written in each; they read means over seeds, so the book glues their output and never decides
between sentences itself.
"""

from __future__ import annotations

from ..core.tables import Claim
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from ..core.tables import markdown_table as table
from .experiment import BEAM_LABELS, BEAMFORMING, METHOD_LABELS, METHODS, VirtualFlowResults

#: learning "adds something" to the pseudo-target when its SI-SDR against the truth is higher by this (dB)
LEARNING_MARGIN = 1.0
#: a VM channel "helps the beamformer" when the MVDR output's SI-SDR rises by at least this (dB)
BEAM_MARGIN = 0.5
#: a band's magnitude is "better" when the absolute energy ratio is smaller by at least this (dB)
MAGNITUDE_MARGIN = 1.0
#: reflow's one step "matches" the base flow when within this (dB); the base's one step is "worse" beyond STEP_GAP
REFLOW_TOL = 0.5
STEP_GAP = 1.0


def _pm(entry: dict, fmt: str = ".2f") -> str:
    return f"{entry['mean']:{fmt}} ± {entry['sd']:{fmt}}"


def learning_verdict(flow: float, pseudo: float, nearest: float, margin: float = LEARNING_MARGIN) -> str:
    """SI-SDR (dB) against the true VM. yes: Virtual-Flow beats its own pseudo-target by ``margin``;
    partly: it beats the nearest real mic by ``margin`` only; no: neither."""
    if flow >= pseudo + margin:
        return f"yes: ≥ {margin:g} dB above the pseudo-targets it was trained on"
    if flow >= nearest + margin:
        return (
            f"partly: better than the nearest real mic, but within {margin:g} dB of its own pseudo-target "
            f"({flow - pseudo:+.2f} dB): it learned the pseudo-target, not more"
        )
    return f"no: not ≥ {margin:g} dB better than the nearest real mic"


def magnitude_verdict(
    flow_ratio: float,
    supervised_ratio: float,
    flow_mag: float,
    supervised_mag: float,
    pseudo_ratio: float,
    margin: float = MAGNITUDE_MARGIN,
) -> str:
    """Top band, dB. ``*_ratio``: the band's energy ratio estimate/truth (0 is right); ``*_mag``: the bin-by-bin
    magnitude error over the truth's energy (lower is better). yes: Virtual-Flow's energy ratio is closer to 0 dB
    than the supervised model's by at least ``margin`` and its bin-by-bin magnitude error is not larger; partly:
    the band's energy is closer but bin by bin the magnitudes are not; no: the band's energy is not closer.
    The reading names the pseudo-target's own ratio (``pseudo_ratio``): a flow that reproduces its targets
    inherits their band energy."""
    inherited = f"the pseudo-target itself is at {pseudo_ratio:+.1f} dB, so the flow inherits it from its targets"
    if abs(flow_ratio) + margin > abs(supervised_ratio):
        return f"no: the top-band energy is not ≥ {margin:g} dB closer to the truth than the supervised model's"
    energy = f"top-band energy off by {flow_ratio:+.1f} dB against the supervised model's {supervised_ratio:+.1f} dB"
    if flow_mag <= supervised_mag:
        return f"yes: {energy}, bin-by-bin magnitude error {flow_mag:.1f} vs {supervised_mag:.1f} dB; {inherited}"
    return (
        f"partly: {energy}, but bin by bin the magnitudes are further off ({flow_mag:.1f} vs {supervised_mag:.1f} dB): "
        f"the band's total is right, not each bin's; {inherited}"
    )


def beamforming_verdict(
    reflow: float, supervised: float, real: float, physical: float | None = None, margin: float = BEAM_MARGIN
) -> str:
    """MVDR output SI-SDR (dB). yes: adding the reflowed Virtual-Flow channel beats adding the supervised one and
    the real mics alone by ``margin``; partly: one of the two; no: neither. When ``physical`` (the output with a
    physical mic at the virtual position) is given and even that adds less than ``margin``, the verdict says that
    this beamformer cannot show a virtual channel's value (the verdict word is unchanged)."""
    beats_sup, beats_real = reflow >= supervised, reflow >= real + margin
    if beats_sup and beats_real:
        verdict = f"yes: above the supervised VM and ≥ {margin:g} dB above the real mics alone"
    elif beats_sup:
        verdict = f"partly: not below the supervised VM, but < {margin:g} dB above the real mics alone"
    elif beats_real:
        verdict = f"partly: ≥ {margin:g} dB above the real mics alone, but below the supervised VM"
    else:
        verdict = (
            f"no: {reflow - real:+.2f} dB over the real mics alone, {reflow - supervised:+.2f} dB against the "
            "supervised VM"
        )
    if physical is not None and physical < real + margin:
        verdict += f"; a weak test here: even a physical mic at the virtual position adds {physical - real:+.2f} dB"
    return verdict


def reflow_verdict(
    reflow_one: float, base_many: float, base_one: float, tol: float = REFLOW_TOL, gap: float = STEP_GAP
) -> str:
    """SI-SDR (dB) against the truth. yes: reflow at one step is within ``tol`` of the base flow at many steps (or
    above it), and the base flow at one step is more than ``gap`` worse; partly: reflow matches but the base flow's
    one step is already close (reflow is not needed here); no: reflow at one step is more than ``tol`` below."""
    if reflow_one < base_many - tol:
        return f"no: reflow's one step is {reflow_one - base_many:+.2f} dB from the base flow's many steps"
    matches = (
        "matches many steps"
        if reflow_one <= base_many + tol
        else f"is {reflow_one - base_many:+.2f} dB above many steps"
    )
    if base_one < base_many - gap:
        return f"yes: reflow's one step {matches}; the base flow's one step is {base_one - base_many:+.2f} dB"
    return (
        f"partly: reflow's one step {matches}, but the base flow's one step is already close "
        f"({base_one - base_many:+.2f} dB): the learned flow is already nearly straight"
    )


def compute_verdict(nfe_reflow: int, nfe_flow: int, nfe_supervised: int) -> str:
    """Network evaluations per bin. partly: reflow needs no more than the same-size regression network and fewer
    than the base flow (the paper's comparison with larger published models is not reproduced); no otherwise."""
    if nfe_reflow <= nfe_supervised and nfe_reflow < nfe_flow:
        return (
            f"partly: {nfe_reflow} evaluation, {nfe_flow // nfe_reflow}× fewer than the base flow and as many as "
            "a same-size regression network; larger published models not compared"
        )
    return "no: reflow does not reduce the number of network evaluations"


def control_sentence(flow: float, control: float, pseudo: float) -> str:
    """Reading of the control: is Virtual-Flow any better than a regression network fitted to the same
    pseudo-targets? (SI-SDR in dB against the truth; 0.5 dB counts as a difference.)"""
    if flow >= control + 0.5:
        head = f"Virtual-Flow is {flow - control:.2f} dB above the regression network fitted to the same pseudo-targets"
    elif control >= flow + 0.5:
        head = f"the regression network fitted to the same pseudo-targets is {control - flow:.2f} dB above Virtual-Flow"
    else:
        head = (
            "Virtual-Flow and the regression network fitted to the same pseudo-targets agree within 0.5 dB "
            f"({flow - control:+.2f} dB)"
        )
    return f"{head}; both stay close to the pseudo-target itself ({flow - pseudo:+.2f} and {control - pseudo:+.2f} dB)."


def control_verdict(flow: float, control: float, pseudo: float) -> str:
    """yes: the flow is >= 0.5 dB above the regression network fitted to the same pseudo-targets (the generative
    model adds something); no otherwise. The reason is :func:`control_sentence`."""
    word = "yes" if flow >= control + 0.5 else "no"
    return f"{word}: {control_sentence(flow, control, pseudo)}"


def claims(results: VirtualFlowResults) -> list[Claim]:
    """Evaluate the abstract's claims on ``results`` (criteria in the verdict functions)."""
    cfg, a = results.config, results.summary["aggregate"]
    n = len(cfg.seeds)
    si = {m: a[f"sisdr/{m}"] for m in METHODS}
    top = cfg.n_bands - 1
    energy = {m: a[f"energy/{m}"]["mean"][top] for m in METHODS}
    magerr = {m: a[f"magerr/{m}"]["mean"][top] for m in METHODS}
    beam = {b: a[f"beam_sisdr/{b}"] for b in BEAMFORMING}
    k_many = cfg.n_sample_steps
    steps_flow = {k: a[f"steps/flow/{k}"]["mean"] for k in cfg.steps_grid}
    base_many = steps_flow.get(k_many, si["flow"]["mean"])
    setting = (
        f"{cfg.n_train_scenes} training and {cfg.n_test_scenes} test rooms per seed, {n} seeds, "
        f"{cfg.n_mics} real mics, {cfg.fs // 1000} kHz"
    )
    return [
        Claim(
            "Virtual-Flow generates virtual-mic signals without ground-truth targets (pseudo-VM targets)",
            f"SI-SDR against the true VM signal (which it never sees); {setting}",
            f"Virtual-Flow ({k_many} steps) {_pm(si['flow'])} dB; pseudo-target {_pm(si['pseudo'])}; "
            f"nearest mic {_pm(si['nearest'])}; supervised {_pm(si['supervised'])}",
            learning_verdict(si["flow"]["mean"], si["pseudo"]["mean"], si["nearest"]["mean"]),
        ),
        Claim(
            "Pseudo-target training improves magnitude estimation in high-frequency bands",
            f"top band ({cfg.fs / 2 * top / cfg.n_bands:.0f}–{cfg.fs / 2:.0f} Hz): energy ratio estimate/truth "
            "(0 dB is right) and bin-by-bin magnitude error (lower is better)",
            f"energy: Virtual-Flow {_pm({'mean': energy['flow'], 'sd': a['energy/flow']['sd'][top]})} dB, "
            f"pseudo-target {_pm({'mean': energy['pseudo'], 'sd': a['energy/pseudo']['sd'][top]})}, supervised "
            f"{_pm({'mean': energy['supervised'], 'sd': a['energy/supervised']['sd'][top]})}; magnitude error: "
            f"Virtual-Flow {_pm({'mean': magerr['flow'], 'sd': a['magerr/flow']['sd'][top]})} dB, supervised "
            f"{_pm({'mean': magerr['supervised'], 'sd': a['magerr/supervised']['sd'][top]})}",
            magnitude_verdict(
                energy["flow"], energy["supervised"], magerr["flow"], magerr["supervised"], energy["pseudo"]
            ),
        ),
        Claim(
            "With reflow, it beats supervised neural VME on downstream beamforming",
            "MVDR (steering by covariance whitening, noise covariance from the noise-only lead) on the real mics "
            "plus one VM channel; output SI-SDR against the talker's image at mic 0",
            f"real only {_pm(beam['real'])} dB; + reflow VM {_pm(beam['reflow'])}; + supervised VM "
            f"{_pm(beam['supervised'])}; + a physical mic {_pm(beam['physical'])}",
            beamforming_verdict(
                beam["reflow"]["mean"], beam["supervised"]["mean"], beam["real"]["mean"], beam["physical"]["mean"]
            ),
        ),
        Claim(
            "Reflow distillation gives one-step sampling",
            f"SI-SDR against the truth, Euler steps {list(cfg.steps_grid)}; reflow retrained on "
            f"{cfg.n_reflow_pairs:,} noise-to-sample pairs",
            f"reflow 1 step {_pm(a['steps/reflow/1'])} dB; base 1 step {_pm(a['steps/flow/1'])}; base {k_many} steps "
            f"{_pm(a[f'steps/flow/{k_many}']) if k_many in cfg.steps_grid else _pm(si['flow'])}",
            reflow_verdict(a["steps/reflow/1"]["mean"], base_many, a["steps/flow/1"]["mean"]),
        ),
        Claim(
            "It needs less computation than existing neural VME models",
            "network evaluations per time-frequency bin (same network size for every learned model)",
            f"reflow {a['nfe']['reflow']}, base flow {a['nfe']['flow']}, supervised {a['nfe']['supervised']}",
            compute_verdict(a["nfe"]["reflow"], a["nfe"]["flow"], a["nfe"]["supervised"]),
        ),
        Claim(
            "Control: is it the flow, or any network fitted to the pseudo-targets?",
            "the same network body trained by regression on the same pseudo-targets, as many steps as the supervised "
            "model",
            f"control {_pm(si['control'])} dB vs Virtual-Flow {_pm(si['flow'])} dB",
            control_verdict(si["flow"]["mean"], si["control"]["mean"], si["pseudo"]["mean"]),
        ),
    ]


def method_table(results: VirtualFlowResults) -> str:
    """Per estimator: SI-SDR against the truth, per-band NMSE and energy ratio (mean ± sd over seeds), network
    evaluations per bin, and wall-clock milliseconds per second of audio on this machine (one CPU run, noisy)."""
    cfg, a = results.config, results.summary["aggregate"]
    edges = [cfg.fs / 2 * b / cfg.n_bands / 1000 for b in range(cfg.n_bands + 1)]
    bands = [f"{edges[b]:g}–{edges[b + 1]:g} kHz" for b in range(cfg.n_bands)]
    header = (
        "estimator",
        "SI-SDR (dB)",
        *[f"NMSE {b}" for b in bands],
        *[f"energy {b}" for b in bands],
        "evals",
        "ms per s of audio",
    )
    rows = []
    for m in METHODS:
        nmse, en = a[f"nmse/{m}"], a[f"energy/{m}"]
        rows.append(
            (
                METHOD_LABELS[m],
                _pm(a[f"sisdr/{m}"]),
                *[f"{mu:.1f} ± {sd:.1f}" for mu, sd in zip(nmse["mean"], nmse["sd"], strict=True)],
                *[f"{mu:+.1f} ± {sd:.1f}" for mu, sd in zip(en["mean"], en["sd"], strict=True)],
                a["nfe"][m],
                f"{1e3 * a['compute_seconds'][m]['mean']:.1f}",
            )
        )
    return table(header, rows)


def beamforming_table(results: VirtualFlowResults) -> str:
    """Per channel set: MVDR output SI-SDR and STOI (mean ± sd over seeds) and the gain over the real mics alone."""
    a = results.summary["aggregate"]
    real = a["beam_sisdr/real"]["mean"]
    rows = [
        (
            BEAM_LABELS[b],
            _pm(a[f"beam_sisdr/{b}"]),
            f"{a[f'beam_sisdr/{b}']['mean'] - real:+.2f}",
            _pm(a[f"beam_stoi/{b}"], ".3f"),
        )
        for b in BEAMFORMING
    ]
    return table(("channels", "MVDR SI-SDR (dB)", "gain (dB)", "STOI"), rows)


def physical_sentence(results: VirtualFlowResults, margin: float = BEAM_MARGIN) -> str:
    """The beamformer's own control: what a *physical* microphone at the virtual position adds to the MVDR output
    (mean over seeds). If even that adds less than ``margin``, our beamforming setup cannot show a virtual
    channel's value, whatever the estimator."""
    a = results.summary["aggregate"]
    gain = a["beam_sisdr/physical"]["mean"] - a["beam_sisdr/real"]["mean"]
    sup = a["beam_sisdr/supervised"]["mean"] - a["beam_sisdr/real"]["mean"]
    if gain < margin:
        weak = (
            f"A physical microphone at the virtual position changes the MVDR output by only {gain:+.2f} dB here "
            f"(below the {margin:g} dB that counts as help): with a short noise-only lead to estimate the noise "
            "covariance and a reverberant interferer, even real extra data barely helps our beamformer, so the "
            "downstream comparison is a weak test at this scale."
        )
        if sup >= margin:
            return (
                f"{weak} The supervised channel's {sup:+.2f} dB is then more likely a denoised copy of the talker "
                "(it was trained on the clean signal) than extra spatial information."
            )
        return f"{weak} The supervised channel does not clear the margin either ({sup:+.2f} dB)."
    return (
        f"A physical microphone at the virtual position adds {gain:+.2f} dB to the MVDR output: the beamformer can "
        f"use a good extra channel, and the virtual channels are measured against that (supervised {sup:+.2f} dB)."
    )


def band_sentence(results: VirtualFlowResults) -> str:
    """Where the pseudo-target is right and where wrong: its NMSE in the lowest and the highest band."""
    cfg, a = results.config, results.summary["aggregate"]
    nmse = a["nmse/pseudo"]["mean"]
    trend = "grows" if nmse[-1] > nmse[0] else "does not grow"
    return (
        f"The pseudo-target's error {trend} with frequency: {nmse[0]:.1f} dB below "
        f"{cfg.fs / 2 / cfg.n_bands:.0f} Hz, {nmse[-1]:.1f} dB in the top band (0 dB is an error as large as "
        "the signal)."
    )
