"""The three metrics: box accuracy (IoU > 0.5), mask IoU, and grasp success (rectangle metric).

Grasp success follows the usual rectangle metric of grasp detection: the predicted grasp is a
success when its closing angle is within 30 degrees of the true one (angles modulo 180 degrees:
a parallel gripper is symmetric) and the IoU of the two grasp rectangles exceeds 0.25. A grasp
``(x, y, theta, width)`` is the rectangle centred at ``(x, y)`` whose side ``width`` (the opening)
runs along ``theta`` and whose other side is the jaw size :data:`~explorables.unirap.scenes.JAW`.
Rectangle IoU is exact (convex polygon clipping), not rasterised.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.arguments import Array, checked
from ..core.params import Positive

BOX_IOU = 0.5
GRASP_ANGLE_DEG = 30.0
GRASP_IOU = 0.25


@checked(a=Array("... 4"), b=Array("... 4"))
def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of axis-aligned boxes ``(..., 4)`` given as ``(x0, y0, x1, y1)``."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    w = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    h = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    inter = w * h
    area = lambda x: np.clip(x[..., 2] - x[..., 0], 0, None) * np.clip(x[..., 3] - x[..., 1], 0, None)  # noqa: E731
    union = area(a) + area(b) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


@checked(pred=Array("... h w"), true=Array("... h w"))
def mask_iou(pred: np.ndarray, true: np.ndarray) -> np.ndarray:
    """IoU of boolean masks ``(..., H, W)`` (1 where both are empty)."""
    pred, true = np.asarray(pred, bool), np.asarray(true, bool)
    inter = (pred & true).sum(axis=(-2, -1))
    union = (pred | true).sum(axis=(-2, -1))
    return np.where(union > 0, inter / np.maximum(union, 1), 1.0)


@checked(grasp=Array("4"), jaw=Positive())
def grasp_rectangle(grasp: np.ndarray, jaw: float) -> np.ndarray:
    """The 4 corners (counter-clockwise) of grasp ``(x, y, theta, width)`` with jaw size ``jaw``."""
    x, y, theta, width = (float(g) for g in grasp)
    d = np.array([math.cos(theta), math.sin(theta)])  # the opening's direction
    n = np.array([-d[1], d[0]])
    c = np.array([x, y])
    hw, hj = width / 2, jaw / 2
    return np.array([c - hw * d - hj * n, c + hw * d - hj * n, c + hw * d + hj * n, c - hw * d + hj * n])


def _corners(grasp, jaw: float) -> list[tuple[float, float]]:
    """:func:`grasp_rectangle` in Python floats (the same arithmetic, corner by corner): the metric's inner loop,
    where a numpy array per point cost most of a run's scoring time."""
    x, y, theta, width = (float(g) for g in grasp)
    d0, d1 = math.cos(theta), math.sin(theta)
    n0, n1 = -d1, d0
    hw, hj = width / 2, jaw / 2
    return [(x - hw * d0 - hj * n0, y - hw * d1 - hj * n1), (x + hw * d0 - hj * n0, y + hw * d1 - hj * n1),
            (x + hw * d0 + hj * n0, y + hw * d1 + hj * n1), (x - hw * d0 + hj * n0, y - hw * d1 + hj * n1)]


def _area(poly: list[tuple[float, float]]) -> float:
    """Shoelace area of a polygon given as a list of ``(x, y)``."""
    k = len(poly)
    if k < 3:
        return 0.0
    s1 = s2 = 0.0
    for i in range(k):
        (x, y), (x_next, y_next) = poly[i], poly[(i + 1) % k]
        s1 += x * y_next
        s2 += y * x_next
    return 0.5 * abs(s1 - s2)


def _clip(subject: list[tuple[float, float]], a: tuple[float, float], b: tuple[float, float]) -> list:
    """Sutherland-Hodgman: the part of polygon ``subject`` left of the directed edge a -> b."""
    ax, ay, ex, ey = a[0], a[1], b[0] - a[0], b[1] - a[1]
    out = []
    q = subject[-1]
    sq = ex * (q[1] - ay) - ey * (q[0] - ax)
    for p in subject:
        sp = ex * (p[1] - ay) - ey * (p[0] - ax)
        if sp >= 0:
            if sq < 0:
                t = sq / (sq - sp)
                out.append((q[0] + (p[0] - q[0]) * t, q[1] + (p[1] - q[1]) * t))
            out.append(p)
        elif sq >= 0:
            t = sq / (sq - sp)
            out.append((q[0] + (p[0] - q[0]) * t, q[1] + (p[1] - q[1]) * t))
        q, sq = p, sp
    return out


def _polygon_iou(p: list[tuple[float, float]], q: list[tuple[float, float]]) -> float:
    inter = p
    for i in range(len(q)):
        if not inter:
            break
        inter = _clip(inter, q[i], q[(i + 1) % len(q)])
    a_inter = _area(inter) if inter else 0.0
    union = _area(p) + _area(q) - a_inter
    return a_inter / union if union > 0 else 0.0


@checked(p=Array("k 2", min_size=(("k", 3),)), q=Array("j 2", min_size=(("j", 3),)))
def polygon_iou(p: np.ndarray, q: np.ndarray) -> float:
    """IoU of two convex polygons given counter-clockwise (corners ``(k, 2)``)."""
    as_points = lambda r: [(float(x), float(y)) for x, y in np.asarray(r, float)]  # noqa: E731
    return _polygon_iou(as_points(p), as_points(q))


def angle_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| for grasp angles (radians), modulo pi: in [0, pi/2]."""
    d = np.abs(np.asarray(a, float) - np.asarray(b, float)) % math.pi
    return np.minimum(d, math.pi - d)


@checked(pred=Array("... 4"), true=Array("... 4"), jaw=Positive())
def grasp_success(pred: np.ndarray, true: np.ndarray, jaw: float) -> np.ndarray:
    """Rectangle metric per grasp ``(..., 4)``: angle within 30 degrees and rectangle IoU > 0.25."""
    pred, true = np.asarray(pred, float).reshape(-1, 4), np.asarray(true, float).reshape(-1, 4)
    if pred.shape != true.shape:
        raise ValueError(f"pred and true must hold as many grasps, got {len(pred)} and {len(true)}")
    ok = angle_difference(pred[:, 2], true[:, 2]) < math.radians(GRASP_ANGLE_DEG)
    jaw = float(jaw)
    iou = np.array([_polygon_iou(_corners(p, jaw), _corners(t, jaw)) if k else 0.0
                    for p, t, k in zip(pred.tolist(), true.tolist(), ok.tolist(), strict=True)])
    return ok & (iou > GRASP_IOU)


def evaluate(pred: dict, data: dict, jaw: float) -> dict[str, float]:
    """The three metrics of one model on ``data`` (``make_dataset`` arrays); ``pred`` holds
    ``boxes`` (n, 4), ``masks`` (n, S, S) booleans and ``grasps`` (n, 4), in pixels."""
    return {
        "box_accuracy": float((box_iou(pred["boxes"], data["boxes"]) > BOX_IOU).mean()),
        "mask_iou": float(mask_iou(pred["masks"], data["masks"]).mean()),
        "grasp_success": float(grasp_success(pred["grasps"], data["grasps"], jaw).mean()),
    }


def prior_predictions(train: dict, test: dict) -> dict:
    """A chance-level predictor that ignores the image and the instruction: the training set's mean
    box and mean grasp, and the whole image as the mask."""
    n = len(test["boxes"])
    mean_grasp = train["grasps"].mean(axis=0)
    angle = 0.5 * math.atan2(np.sin(2 * train["grasps"][:, 2]).mean(), np.cos(2 * train["grasps"][:, 2]).mean())
    mean_grasp[2] = angle % math.pi
    return {"boxes": np.repeat(train["boxes"].mean(axis=0)[None], n, 0),
            "masks": np.ones_like(test["masks"], bool), "grasps": np.repeat(mean_grasp[None], n, 0)}


def grasps_from_masks(masks: np.ndarray, extra: float = 2.0) -> np.ndarray:
    """A grasp ``(x, y, theta, width)`` per mask ``(n, H, W)``, from the mask's geometry alone (no learning):
    the centroid, the direction of the smallest spread (the closing direction) and the extent along it plus
    ``extra`` pixels. A no-learning reference: how much of the grasp a *true* part mask already holds."""
    out = []
    for mask in np.asarray(masks).astype(bool):
        ys, xs = np.nonzero(mask)
        pts = np.stack([xs + 0.5, ys + 0.5], 1)
        c = pts.mean(0) if len(pts) else np.array([mask.shape[1] / 2, mask.shape[0] / 2])
        if len(pts) < 2:  # a point has no direction: any angle, the narrowest opening
            out.append([c[0], c[1], 0.0, 1.0 + extra])
            continue
        _, vecs = np.linalg.eigh(np.cov((pts - c).T))
        minor = vecs[:, 0]  # the direction of the smallest spread
        extent = np.ptp((pts - c) @ minor) + 1
        out.append([c[0], c[1], math.atan2(minor[1], minor[0]) % math.pi, extent + extra])
    return np.asarray(out, dtype=float).reshape(-1, 4)
