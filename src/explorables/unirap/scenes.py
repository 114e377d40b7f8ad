"""Procedural table-top scenes: tools with named parts, clutter, templated instructions.

Every scene is drawn from one seed (same seed, same scene). A tool is a set of named parts
defined in its own coordinates (``u`` along the tool, ``v`` across it) and rasterised after a
rotation and a scale; each part carries a 4-DoF grasp (centre, closing angle, opening width)
that lies on the part by construction. Clutter is blobs drawn *behind* the tools, so part
masks are never occluded. Instructions come from templates ("grasp the mug by its handle",
"something to cut with"); an instruction that names an object or a part the scene does not
have is a ``ValueError`` saying which.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..core.arguments import Array, checked
from ..core.params import Choice, Int
from ..core.validation import check_int

#: tool -> its parts (the first is the part a plain "pick up the <tool>" grasps)
PARTS: dict[str, tuple[str, ...]] = {
    "mug": ("handle", "body"),
    "knife": ("handle", "blade"),
    "hammer": ("handle", "head"),
    "spatula": ("handle", "head"),
}
TOOLS: tuple[str, ...] = tuple(PARTS)
#: "something to <verb> with/from" -> the tool (grasped by its handle)
FUNCTIONS: dict[str, str] = {"cut": "knife", "hammer": "hammer", "flip": "spatula", "drink": "mug"}

#: per tool and part, in tool units (a tool is ~16 units long): (u0, v0, alpha, width) of the grasp:
#: centre, closing direction alpha relative to the tool's axis, opening width
GRASPS: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "mug": {"handle": (6.4, 0.0, 0.0, 3.6), "body": (0.0, 0.0, 0.0, 10.0)},
    "knife": {"handle": (-4.5, 0.0, math.pi / 2, 4.6), "blade": (2.5, 0.0, math.pi / 2, 5.2)},
    "hammer": {"handle": (-2.0, 0.0, math.pi / 2, 4.2), "head": (5.75, 0.0, 0.0, 5.5)},
    "spatula": {"handle": (-4.0, 0.0, math.pi / 2, 4.0), "head": (4.0, 0.0, math.pi / 2, 8.4)},
}
#: tools are drawn this much thicker (across ``v``) than the part definitions below say
THICKNESS = 1.35
#: the gripper jaws' extent across the opening (pixels at a 32-pixel scene; scales with the scene)
JAW = 4.0

TEMPLATES_PART = ("grasp the {obj} by its {part}", "hold the {obj} by the {part}", "pick up the {obj} by the {part}",
                  "touch the {part} of the {obj}")
TEMPLATES_TOOL = ("pick up the {obj}", "grasp the {obj}")
TEMPLATES_FUNCTION = ("something to {verb} with", "give me something to {verb} with")
PARSING_TEMPLATE = "the {obj}"

PAD = "<pad>"
_WORDS = sorted({w for t in TEMPLATES_PART + TEMPLATES_TOOL + TEMPLATES_FUNCTION + (PARSING_TEMPLATE,)
                 for w in t.split() if not w.startswith("{")}
                | set(TOOLS) | {p for ps in PARTS.values() for p in ps} | set(FUNCTIONS) | {"from"})
#: the instruction vocabulary (index 0 pads)
VOCAB: tuple[str, ...] = (PAD, *_WORDS)
WORD_ID = {w: i for i, w in enumerate(VOCAB)}
MAX_WORDS = 8


def part_masks(tool: str, u: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    """Boolean masks of ``tool``'s parts at tool coordinates ``(u, v)`` (any shape)."""
    v = v / THICKNESS
    if tool == "mug":
        r = np.hypot(u - 4.0, v)
        return {"body": (np.abs(u) <= 4.0) & (np.abs(v) <= 5.0), "handle": (u > 4.0) & (r >= 1.6) & (r <= 3.2)}
    if tool == "knife":
        taper = 1.6 * np.clip((8.0 - u) / 3.0, 0.0, 1.0)
        return {"handle": (u >= -8.0) & (u < -1.0) & (np.abs(v) <= 1.3),
                "blade": (u >= -1.0) & (u <= 8.0) & (np.abs(v) <= taper)}
    if tool == "hammer":
        return {"handle": (u >= -8.0) & (u < 4.0) & (np.abs(v) <= 1.1),
                "head": (u >= 4.0) & (u <= 7.5) & (np.abs(v) <= 4.5)}
    if tool == "spatula":
        return {"handle": (u >= -8.0) & (u < 0.0) & (np.abs(v) <= 1.0),
                "head": (u >= 0.0) & (u <= 8.0) & (np.abs(v) <= 3.2)}
    raise ValueError(f"tool must be one of {TOOLS}, got {tool!r}")


@dataclass
class Tool:
    """One tool in a scene: its parts' masks, its box (x0, y0, x1, y1, pixels) and a grasp per part."""

    name: str
    mask: np.ndarray
    parts: dict[str, np.ndarray]
    box: np.ndarray
    grasps: dict[str, np.ndarray]  # part -> (x, y, theta in [0, pi), width), pixels


@checked(image=Array("3 s s"), n_clutter=Int(0, 50))
@dataclass
class Scene:
    """An RGB image (3, S, S) in [0, 1], its tools, and how many clutter blobs it has."""

    image: np.ndarray
    tools: list[Tool]
    n_clutter: int

    def __post_init__(self) -> None:
        if not isinstance(self.tools, list) or not all(isinstance(t, Tool) for t in self.tools):
            raise ValueError(f"tools must be a list of Tool, got {type(self.tools).__name__}")

    def tool(self, name: str) -> Tool:
        for t in self.tools:
            if t.name == name:
                return t
        present = ", ".join(t.name for t in self.tools)
        raise ValueError(f"the scene has no {name} (objects present: {present})")


#: each tool type has a typical hue (jittered); handles are darker than the working part
HUES: dict[str, float] = {"mug": 0.0, "knife": 0.6, "hammer": 0.33, "spatula": 0.13}


def _colour(rng: np.random.Generator, hue: float | None = None, value: tuple[float, float] = (0.55, 1.0)) -> np.ndarray:
    hue = rng.uniform() if hue is None else (hue + rng.uniform(-0.04, 0.04)) % 1.0
    sat, val = rng.uniform(0.55, 1.0), rng.uniform(*value)
    k = (np.array([5.0, 3.0, 1.0]) + hue * 6.0) % 6.0
    return val - val * sat * np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)


@checked(max_clutter=Int(0, 50), max_tools=Int(1, 4))
def make_scene(seed: int, size: int = 32, n_tools: int | None = None, n_clutter: int | None = None,
               max_clutter: int = 4, max_tools: int = 3) -> Scene:
    """The scene of ``seed``: 1..``max_tools`` distinct tools (or ``n_tools``), 0..``max_clutter`` blobs (or
    ``n_clutter``)."""
    size = check_int("size", size, 16, 512)
    rng = np.random.default_rng(seed)
    n_tools = int(rng.integers(1, max_tools + 1)) if n_tools is None else check_int("n_tools", n_tools, 1, len(TOOLS))
    n_clutter = int(rng.integers(0, max_clutter + 1)) if n_clutter is None else check_int("n_clutter", n_clutter, 0, 50)
    unit = size / 32.0
    ys, xs = np.mgrid[0:size, 0:size].astype(float) + 0.5
    # background: a grey level, a gentle gradient and pixel noise
    base = rng.uniform(0.3, 0.6)
    grad = rng.normal(0, 0.08, 2)
    image = base + grad[0] * (xs / size - 0.5) + grad[1] * (ys / size - 0.5)
    image = np.repeat(image[None], 3, axis=0) + rng.normal(0, 0.03, (3, size, size))
    crng = np.random.default_rng([seed, 7])  # clutter has its own stream: more clutter, same tools
    for _ in range(n_clutter):  # blobs behind the tools
        cx, cy = crng.uniform(0, size, 2)
        rx, ry = crng.uniform(1.5, 4.5, 2) * unit
        a = crng.uniform(0, math.pi)
        du, dv = (xs - cx) * math.cos(a) + (ys - cy) * math.sin(a), -(xs - cx) * math.sin(a) + (ys - cy) * math.cos(a)
        blob = (du / rx) ** 2 + (dv / ry) ** 2 <= 1 if crng.uniform() < 0.5 else (np.abs(du) <= rx) & (np.abs(dv) <= ry)
        image[:, blob] = _colour(crng)[:, None]
    names = [TOOLS[i] for i in rng.permutation(len(TOOLS))[:n_tools]]
    blocked = np.zeros((size, size), bool)  # the tools placed so far, grown by a pixel
    tools: list[Tool] = []
    for name in names:
        for _attempt in range(60):
            scale = rng.uniform(0.85, 1.1) * unit
            angle = rng.uniform(-0.5, 0.5) + (math.pi if rng.uniform() < 0.5 else 0.0) if name == "mug" \
                else rng.uniform(0, 2 * math.pi)
            margin = 8.0 * scale
            cx, cy = rng.uniform(margin, size - margin, 2)
            ca, sa = math.cos(angle), math.sin(angle)
            u = ((xs - cx) * ca + (ys - cy) * sa) / scale
            v = (-(xs - cx) * sa + (ys - cy) * ca) / scale
            parts = part_masks(name, u, v)
            mask = np.logical_or.reduce(list(parts.values()))
            if mask.sum() and not (mask & blocked).any() and all(p.sum() >= 3 for p in parts.values()):
                break
        else:
            continue  # no room left for this tool
        blocked |= _dilate(mask)
        for part, pm in parts.items():
            image[:, pm] = _colour(rng, HUES[name], (0.3, 0.5) if part == "handle" else (0.8, 1.0))[:, None]
        grasps = {}
        for part, (u0, v0, alpha, width) in GRASPS[name].items():
            gx, gy = cx + scale * (u0 * ca - v0 * sa), cy + scale * (u0 * sa + v0 * ca)
            across = THICKNESS if abs(math.sin(alpha)) > 0.5 else 1.0  # an opening across v is thicker too
            grasps[part] = np.array([gx, gy, (angle + alpha) % math.pi, width * scale * across])
        rows, cols = np.nonzero(mask)
        box = np.array([cols.min(), rows.min(), cols.max() + 1, rows.max() + 1], float)
        tools.append(Tool(name, mask, parts, box, grasps))
    return Scene(np.clip(image, 0, 1).astype(np.float32), tools, n_clutter)


def _dilate(mask: np.ndarray) -> np.ndarray:
    out = mask.copy()
    out[1:] |= mask[:-1]
    out[:-1] |= mask[1:]
    grown = out.copy()
    grown[:, 1:] |= out[:, :-1]
    grown[:, :-1] |= out[:, 1:]
    return grown


@checked()
def tokenize(text: str) -> np.ndarray:
    """The instruction as word ids, padded to :data:`MAX_WORDS`; an unknown word is a ``ValueError``."""
    words = re.findall(r"[a-z]+", text.lower().replace("'s", ""))
    unknown = [w for w in words if w not in WORD_ID]
    if unknown:
        raise ValueError(f"text has words outside the vocabulary: {unknown}; "
                         f"known words: {', '.join(VOCAB[1:])}")
    if not words or len(words) > MAX_WORDS:
        raise ValueError(f"text must have 1 to {MAX_WORDS} words, got {len(words)}")
    ids = np.zeros(MAX_WORDS, np.int64)
    ids[: len(words)] = [WORD_ID[w] for w in words]
    return ids


@checked(skip_nested=True)  # tokenize in the body runs bare: text is checked here
def parse_instruction(text: str) -> tuple[str, str]:
    """``(tool, part)`` an instruction refers to (the handle when it names a tool or a function only).

    A part the tool does not have is a ``ValueError`` naming the tool's parts.
    """
    tokenize(text)
    words = re.findall(r"[a-z]+", text.lower().replace("'s", ""))
    tools = [w for w in words if w in PARTS]
    verbs = [w for w in words if w in FUNCTIONS and w not in tools and "something" in words]
    if "something" in words and verbs:
        tool = FUNCTIONS[verbs[0]]
    elif tools:
        tool = tools[0]
    else:
        raise ValueError(f"text names no object: {text!r} (objects: {', '.join(TOOLS)}; "
                         f"or 'something to <{'|'.join(FUNCTIONS)}> with')")
    named = [w for w in words if w in {p for ps in PARTS.values() for p in ps}]
    part = named[0] if named else PARTS[tool][0]
    if part not in PARTS[tool]:
        raise ValueError(f"text asks for a part a {tool} does not have: {part!r} (its parts: {', '.join(PARTS[tool])})")
    return tool, part


@checked(skip_nested=True)  # parse_instruction in the body runs bare: text is checked here
def resolve(scene: Scene, text: str) -> tuple[Tool, str]:
    """The tool and part of ``scene`` that ``text`` refers to; a ``ValueError`` if the scene lacks them."""
    tool, part = parse_instruction(text)
    if tool not in {t.name for t in scene.tools}:
        present = ", ".join(t.name for t in scene.tools)
        raise ValueError(f"text names a {tool}, but the scene has no {tool} (objects present: {present})")
    return scene.tool(tool), part


def sample_instruction(rng: np.random.Generator, scene: Scene) -> str:
    """A templated instruction about a tool present in ``scene`` (tool, part or function form)."""
    tool = scene.tools[int(rng.integers(len(scene.tools)))].name
    kind = rng.uniform()
    if kind < 0.5:
        part = PARTS[tool][int(rng.integers(2))]
        return TEMPLATES_PART[int(rng.integers(len(TEMPLATES_PART)))].format(obj=tool, part=part)
    if kind < 0.75:
        return TEMPLATES_TOOL[int(rng.integers(len(TEMPLATES_TOOL)))].format(obj=tool)
    verb = next(v for v, t in FUNCTIONS.items() if t == tool)
    template = TEMPLATES_FUNCTION[int(rng.integers(len(TEMPLATES_FUNCTION)))]
    return template.format(verb=verb).replace(" with", " from") if verb == "drink" else template.format(verb=verb)


@checked(n=Int(0, 100_000), size=Int(16, 512), kind=Choice(("instruction", "parsing")), max_clutter=Int(0, 50))
def make_dataset(n: int, seed: int, size: int = 32, kind: str = "instruction", max_clutter: int = 4,
                 max_tools: int = 3) -> dict:
    """``n`` samples as arrays.

    ``kind="instruction"``: an instruction per scene, the target is the named part (mask), the
    tool's box and the part's grasp. ``kind="parsing"`` (general visual parsing, no instruction):
    the query is just the tool's name, the target is the whole tool's box and mask, no grasp.
    Keys: ``images`` (n, 3, S, S), ``tokens`` (n, MAX_WORDS), ``boxes`` (n, 4: x0, y0, x1, y1),
    ``masks`` (n, S, S), ``grasps`` (n, 4: x, y, theta, width), ``texts``, ``n_clutter``.
    """
    n = check_int("n", n, 0)
    if kind not in ("instruction", "parsing"):
        raise ValueError(f"kind must be 'instruction' or 'parsing', got {kind!r}")
    images = np.zeros((n, 3, size, size), np.float32)
    tokens = np.zeros((n, MAX_WORDS), np.int64)
    boxes, grasps = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.float32)
    masks = np.zeros((n, size, size), np.uint8)
    texts, clutter = [], np.zeros(n, np.int64)
    rng = np.random.default_rng([seed, 1 if kind == "parsing" else 0])
    for i in range(n):
        scene = make_scene(int(rng.integers(2**31)), size, max_clutter=max_clutter, max_tools=max_tools)
        if kind == "parsing":
            tool = scene.tools[int(rng.integers(len(scene.tools)))]
            text, mask, grasp = PARSING_TEMPLATE.format(obj=tool.name), tool.mask, np.zeros(4)
        else:
            text = sample_instruction(rng, scene)
            tool, part = resolve(scene, text)
            mask, grasp = tool.parts[part], tool.grasps[part]
        images[i], tokens[i], boxes[i], masks[i], grasps[i] = scene.image, tokenize(text), tool.box, mask, grasp
        texts.append(text)
        clutter[i] = scene.n_clutter
    return {"images": images, "tokens": tokens, "boxes": boxes, "masks": masks, "grasps": grasps, "texts": texts,
            "n_clutter": clutter}
