"""Chapter 06 (virtualflow), issue 42, twenty-second pass: why does the real mics' pseudo-target collapse in some test
rooms? Scenes only (no network): per test room, the pseudo-target's SI-SDR against the truth with the estimated and
with the true direction, the direction error, the talker-vs-interferer geometry, the SNR, and a wideband check.
Diagnosis on used tuning bases (167, 168) only; never base seeds 0-4.

    PYTHONPATH=src nice -n 5 python benchmarks/virtualflow_collapse_diag.py --base 167 --seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from explorables.virtualflow.data import first_speech_frame, make_example
from explorables.virtualflow.downstream import si_sdr
from explorables.virtualflow.experiment import VirtualFlowConfig, _config_scene, scene_seed
from explorables.virtualflow.pseudo import istft, true_azimuth
from explorables.virtualflow.scenes import simulate


def room(cfg: VirtualFlowConfig, seed: int, j: int, axis_spot: bool = False) -> dict:
    rng = np.random.default_rng(scene_seed(cfg, seed, "test", j))
    scene = _config_scene(cfg, rng, n_aux=cfg.n_aux, aux_radius=cfg.aux_radius)
    if axis_spot:  # the drawn angle snapped to the nearer end of the real array's axis (same draws otherwise)
        c0 = scene.real_mics.mean(0)
        drawn = np.arctan2(*(scene.virtual_mic - c0)[1::-1])
        ends = [np.arctan2(*(m - c0)[1::-1]) for m in scene.real_mics]
        ang = min(ends, key=lambda e: abs(np.angle(np.exp(1j * (e - drawn)))))
        rng = np.random.default_rng(scene_seed(cfg, seed, "test", j))
        scene = _config_scene(cfg, rng, n_aux=cfg.n_aux, aux_radius=cfg.aux_radius, vm_angle=float(ang))
    snr = float(rng.uniform(*cfg.snr_range))
    sim = simulate(
        scene,
        round(cfg.clip_s * cfg.fs),
        rng,
        snr_db=snr,
        sensor_snr_db=cfg.sensor_snr_db,
        lead_s=cfg.lead_s,
        max_order=cfg.max_order,
        use_espeak=cfg.use_espeak,
    )
    hop = cfg.nfft // 2
    first = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft)
    n = sim["real"].shape[1]
    ref = sim["vm_recording"][first * hop :]
    ex = make_example(scene, sim, nfft=cfg.nfft, lead_s=cfg.lead_s, doa_method=cfg.doa_method)
    az_t = true_azimuth(scene.source, scene.real_mics)
    az_i = true_azimuth(scene.interferer, scene.real_mics)
    ex_t = make_example(scene, sim, nfft=cfg.nfft, lead_s=cfg.lead_s, azimuth=az_t)
    ex_i = make_example(scene, sim, nfft=cfg.nfft, lead_s=cfg.lead_s, azimuth=az_i)

    def sis(spec):
        return float(si_sdr(istft(spec, cfg.nfft, hop, n)[first * hop :], ref))

    def wrap(a):
        return float(np.degrees(np.angle(np.exp(1j * a))))

    c = scene.real_mics.mean(0)
    vm = scene.virtual_mic - c
    axis = scene.real_mics[1] - scene.real_mics[0]
    near = int(np.argmin(np.linalg.norm(scene.real_mics - scene.virtual_mic, axis=1)))
    w = np.linalg.norm(scene.real_mics - scene.virtual_mic, axis=1)
    return {
        "seed": seed,
        "j": j,
        "snr": snr,
        "rt60": scene.rt60,
        "pse": sis(ex.pseudo),
        "pse_mirror": sis(
            make_example(
                scene, sim, nfft=cfg.nfft, lead_s=cfg.lead_s, azimuth=2 * np.arctan2(axis[1], axis[0]) - ex.azimuth
            ).pseudo
        ),
        "pse_true_talker": sis(ex_t.pseudo),
        "pse_true_itf": sis(ex_i.pseudo),
        "near": float(si_sdr(sim["real"][near][first * hop :], ref)),
        "mic0": float(si_sdr(sim["real"][0][first * hop :], ref)),
        "mic1": float(si_sdr(sim["real"][1][first * hop :], ref)),
        "az_err_talker": wrap(ex.azimuth - az_t),
        "az_err_itf": wrap(ex.azimuth - az_i),
        "az_est_vs_axis": wrap(ex.azimuth - np.arctan2(axis[1], axis[0])),
        "vm_vs_axis": wrap(np.arctan2(vm[1], vm[0]) - np.arctan2(axis[1], axis[0])),
        "vm_dist": float(np.linalg.norm(vm)),
        "d_mics": w.tolist(),
        "delays_ms": (
            1e3 * (scene.real_mics - scene.virtual_mic) @ np.array([np.cos(ex.azimuth), np.sin(ex.azimuth), 0]) / 343
        ).tolist(),
    }


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--base", type=int, required=True)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--rooms", type=int, default=12)
    p.add_argument("--out", default=None)
    p.add_argument("--axis", action="store_true")
    a = p.parse_args()
    if a.base < 100:
        raise SystemExit("tuning bases only")
    cfg = VirtualFlowConfig(seed=a.base)
    rows = [room(cfg, s, j, a.axis) for s in a.seeds for j in range(a.rooms)]
    for r in rows:
        print(
            json.dumps(
                {
                    k: (
                        round(v, 2)
                        if isinstance(v, float)
                        else ([round(x, 3) for x in v] if isinstance(v, list) else v)
                    )
                    for k, v in r.items()
                }
            ),
            flush=True,
        )
    if a.out:
        json.dump(rows, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
