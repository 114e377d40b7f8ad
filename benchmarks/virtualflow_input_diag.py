"""Chapter 06 (virtualflow), issue 42, eighteenth pass: why the gate "room" fails on some rooms (diagnosis only).

For tuning base seeds (>= 155, never run by an earlier pass) and inner seeds, this trains the supervised network
alone (as ``benchmarks/virtualflow_room_diag.py`` does: the package's init order and loop, the book preset) and reads,
per test room, the gate's quantity (SI-SDR of the supervised estimate minus that of the real mics' pseudo-target,
speech part, against the true virtual signal) beside what each room is like:
- ``doa_err``: the talker direction estimated on the real mics against the true one (degrees), and ``mirror``:
  whether the estimate is closer to the true direction's mirror image about the array's axis (a 2-mic array cannot
  tell front from back);
- ``sir``: talker-to-rest energy at the real mics (dB) on the speech part; ``vm_axis``: |cos| of the angle between
  the virtual mic's direction and the real mics' axis; ``dist``; ``rt60``;
- ``oracle``: a per-bin linear estimate of the truth from the aligned real channels (this frame, complex least
  squares per frequency bin fitted on the room itself: an upper bound on what a per-bin linear map of the channels
  could get), its SI-SDR minus the pseudo-target's.

    PYTHONPATH=src python benchmarks/virtualflow_input_diag.py --base 155 --seeds 0 1 2 --out /tmp/x.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from virtualflow_room_diag import supervised

from explorables.virtualflow.data import bins_to_spec, first_speech_frame
from explorables.virtualflow.downstream import si_sdr
from explorables.virtualflow.experiment import VirtualFlowConfig, build_example
from explorables.virtualflow.pseudo import istft, true_azimuth


def _deg(a: float) -> float:
    return float(abs((np.degrees(a) + 180) % 360 - 180))


def room_features(cfg: VirtualFlowConfig, ex, net) -> dict:
    hop, n = cfg.nfft // 2, ex.real.shape[1]
    first = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft)
    start = first * hop

    def score(spec: np.ndarray) -> float:
        return float(si_sdr(istft(spec, cfg.nfft, hop, n)[start:], ex.truth_wave[start:]))

    with torch.no_grad():
        sup = bins_to_spec(net(torch.from_numpy(ex.cond)).numpy(), ex.scale, ex.truth.shape[0])
    # per-bin complex least squares from the aligned channels to the truth, fitted on the room itself
    a, y = ex.aligned, ex.truth
    oracle = np.zeros_like(y)
    for f in range(y.shape[0]):
        x = a[:, f, :].T
        coef, *_ = np.linalg.lstsq(x, y[f], rcond=None)
        oracle[f] = x @ coef
    sc = ex.scene
    mics = sc.real_mics
    axis = mics[1] - mics[0]
    axis_az = float(np.arctan2(axis[1], axis[0]))
    true_az = true_azimuth(sc.source, mics)
    mirror_az = 2 * axis_az - true_az
    vm_dir = sc.virtual_mic - mics.mean(0)
    talker = float(np.sum(ex.real_speech[:, start:] ** 2))
    rest = float(np.sum((ex.real[:, start:] - ex.real_speech[:, start:]) ** 2))
    pse = score(ex.pseudo)
    return {
        "room": score(sup) - pse,
        "pseudo": pse,
        "supervised": score(sup),
        "oracle": score(oracle) - pse,
        "doa_err": _deg(ex.azimuth - true_az),
        "mirror": _deg(ex.azimuth - mirror_az) < _deg(ex.azimuth - true_az),
        "sir": 10 * np.log10(talker / rest),
        "vm_axis": float(abs(np.dot(vm_dir[:2], axis[:2])) / np.linalg.norm(vm_dir[:2]) / np.linalg.norm(axis[:2])),
        "dist": float(np.linalg.norm(vm_dir)),
        "rt60": float(sc.rt60),
    }


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--base", type=int, nargs="+", required=True)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if min(a.base) < 155:
        raise SystemExit("fresh tuning base seeds only (>= 155)")
    torch.set_num_threads(1)
    rows = []
    for b in a.base:
        cfg = VirtualFlowConfig(seed=b)
        for s in a.seeds:
            t0 = time.perf_counter()
            train = [build_example(cfg, s, "train", i) for i in range(cfg.n_train_scenes)]
            test = [build_example(cfg, s, "test", j) for j in range(cfg.n_test_scenes)]
            net = supervised(cfg, train, s, cfg.n_supervised_steps, cfg.d_hidden)
            feats = [dict(base=b, seed=s, index=j, **room_features(cfg, ex, net)) for j, ex in enumerate(test)]
            rows += feats
            print(
                f"{b}/{s} ({time.perf_counter() - t0:.0f} s): gate value {np.mean([r['room'] for r in feats]):+.2f} dB,"
                f" oracle {np.mean([r['oracle'] for r in feats]):+.2f}",
                flush=True,
            )
            json.dump(rows, open(a.out, "w"), default=float)


if __name__ == "__main__":
    main()
