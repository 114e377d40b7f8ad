"""rpkd: why do KD/OFA not beat CE under the standard protocol? A diagnosis on tuning seeds (>= 126).

    PYTHONPATH=src python benchmarks/rpkd_standard_diag.py 126        # appends to rpkd_standard_diag.jsonl

Per seed and transfer set (shared, disjoint): the package's ``teacher_part`` per C (no probe), the teacher's
calibration on the test split (NLL at T = 1, ECE) and its BatchNorm running statistics (eval-mode accuracy on its
own training set with the stored statistics, and with statistics recomputed over that whole set); then the
package's ``student_part`` under ``standard_protocol`` with arms CE, KD, OFA for a few (steps, T) settings, and the
students' training accuracy (under- or over-fitting?). Diagnosis only: nothing here is a candidate run.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
import time
from pathlib import Path

import torch

from explorables.core.threads import one_cpu_thread
from explorables.core.verdicts import interval
from explorables.rpkd.claims import pooled
from explorables.rpkd.data import super_labels
from explorables.rpkd.experiment import (
    RPKDConfig,
    _results,
    _split,
    load_task,
    standard_protocol,
    students,
    teacher_part,
)
from explorables.rpkd.training import accuracy

HERE = Path(__file__).parent
OUT = HERE / "rpkd_standard_diag.jsonl"
ARMS3 = ("ce", "kd", "ofa")
SETTINGS = [(150, 4.0), (150, 1.0), (600, 4.0), (600, 1.0)]


def teacher_stats(cfg, n, shared):
    _, _x_tr, _fine_tr, x_te, y_te, x_teach, fine_teach = _split(cfg, load_task(cfg), n, torch.device("cpu"))
    teacher = shared["teacher"]
    y_teach = super_labels(fine_teach, n)[None]
    with torch.no_grad():
        logits = teacher(x_te[None])[0][0]
        p = torch.softmax(logits, -1)
        nll = float(torch.nn.functional.cross_entropy(logits, y_te))
        conf, pred = p.max(-1)
        bins = torch.clamp((conf * 10).long(), max=9)
        ece = float(
            sum(
                (bins == b).float().mean() * abs(conf[bins == b].mean() - (pred == y_te)[bins == b].float().mean())
                for b in range(10)
                if (bins == b).any()
            )
        )
        eval_train = float(accuracy(teacher, x_teach[None], y_teach)[0])
        t2 = copy.deepcopy(teacher).train()
        batch_mode = float((t2(x_teach[None])[0].argmax(-1) == y_teach).float().mean())
        bn = t2.norm3
        if isinstance(bn, torch.nn.Identity):
            recomputed = eval_train
            stale = 0.0
        else:  # running stats over the whole training set (momentum None: a cumulative average, one pass)
            old_mean, _old_var = bn.running_mean.clone(), bn.running_var.clone()
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0)
            h = torch.relu(t2.conv1(x_teach[None]))
            from explorables.rpkd.models import _pool2

            h = _pool2(torch.relu(t2.conv2(h)))
            pre = t2.conv3(h)[0]  # (N, c, h, w)
            mean = pre.mean(dim=(0, 2, 3))
            var = pre.var(dim=(0, 2, 3), unbiased=True)
            stale = float(((old_mean - mean).abs() / var.sqrt()).max())
            bn.running_mean.copy_(mean)
            bn.running_var.copy_(var)
            t2.eval()
            recomputed = float((t2(x_teach[None])[0].argmax(-1) == y_teach).float().mean())
    return {
        "test_nll": nll,
        "ece": ece,
        "eval_train": eval_train,
        "batch_mode_train": batch_mode,
        "recomputed_train": recomputed,
        "stale_mean_sd": stale,
        "test": shared["teacher_accuracy"],
        "soft_max_T4": shared["teacher_soft_max"],
    }


def student_train_acc(cfg, n, shared):
    """Training accuracy of the students is not returned by the package: rerun is too costly; skip."""
    return None


def one_seed(seed: int) -> None:
    for transfer in ("shared", "disjoint"):
        base = RPKDConfig.preset("book", seed=seed, device="cpu", transfer=transfer).validated()
        with one_cpu_thread("cpu"):
            t0 = time.process_time()
            shared = {n: teacher_part(base, n, probe=False) for n in base.class_grid}
            tcpu = time.process_time() - t0
            tstats = {n: teacher_stats(base, n, shared[n]) for n in base.class_grid}
            print(seed, transfer, "teacher", round(tcpu, 1), json.dumps(tstats), flush=True)
            for steps, temp in SETTINGS:
                if transfer == "disjoint" and temp == 4.0 and steps == 150:
                    pass
                cfg = dataclasses.replace(standard_protocol(base), arms=ARMS3, n_student_steps=steps, temperature=temp)
                c0 = time.process_time()
                parts = {n: ({"accuracy": students(cfg, n, shared[n])[0]}, None) for n in cfg.class_grid}
                cpu = time.process_time() - c0
                res = _results(cfg, {f"C={n}": s for n, (s, _) in parts.items()}, {})
                acc = {n: {a: s["accuracy"][a]["mean"] for a in ARMS3} for n, (s, _) in parts.items()}
                gains = {}
                for a in ("kd", "ofa"):
                    iv = interval(pooled(res, a, "ce"))
                    gains[a] = [round(float(iv.mean), 4), round(float(iv.low), 4)]
                row = {
                    "seed": seed,
                    "transfer": transfer,
                    "steps": steps,
                    "T": temp,
                    "cpu_s": round(cpu, 1),
                    "acc": acc,
                    "gain_mean_low": gains,
                    "teacher": tstats,
                    "per_seed": {n: {a: s["accuracy"][a]["per_seed"] for a in ARMS3} for n, (s, _) in parts.items()},
                }
                with OUT.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(
                    seed,
                    transfer,
                    steps,
                    temp,
                    round(cpu, 1),
                    json.dumps(acc),
                    gains,
                    time.strftime("%H:%M:%S"),
                    flush=True,
                )


if __name__ == "__main__":
    for s in sys.argv[1:]:
        assert int(s) >= 126
        one_seed(int(s))
