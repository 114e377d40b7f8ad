"""The trees the chapter searches: synthetic families (as parent arrays, so a million vertices is
cheap) and three real, offline inputs.

* **Python syntax trees**: ``ast.parse`` of standard-library modules (the sources ship with Python).
  The name is checked against ``sys.stdlib_module_names`` and the source file is found in the
  standard library's own folder and read as text: nothing is imported, so no code runs, and a file
  of the same name in the working directory is never looked at.
* **Directory trees** of an installed package, walked with ``os.walk`` in sorted order (located
  without importing it, on ``sys.path`` minus the working directory).
* **A hierarchical-clustering dendrogram**: scipy's Ward ``linkage`` on scikit-learn's bundled
  ``load_digits``. The target of a held-out digit is the leaf of its nearest neighbour in the
  64-pixel space; the *learned prediction* is the leaf of its nearest neighbour in a low-dimensional
  PCA projection (2-D or 16-D in the chapter) fitted on the clustered digits.
"""

from __future__ import annotations

import ast
import os
import sys
import sysconfig
import tokenize
from dataclasses import dataclass
from importlib.machinery import PathFinder
from pathlib import Path

import numpy as np

from ..core.arguments import checked
from ..core.params import Choice, Int
from ..core.resources import check_memory
from ..core.validation import check_int
from .tree import Tree

SYNTHETIC = ("path", "caterpillar", "spider", "complete binary", "random recursive")
N_DIGITS = 1797
"""Digits in scikit-learn's bundled ``load_digits`` (8x8 images): the dendrogram's points and queries."""


def path_parents(n: int) -> np.ndarray:
    """A path on ``n`` vertices (the sorted-array case)."""
    n = check_int("n", n, minimum=1)
    return np.arange(-1, n - 1, dtype=np.int64)


def caterpillar_parents(n: int, legs: int = 1) -> np.ndarray:
    """A caterpillar (pathwidth 1): a spine of ``n // (legs + 1)`` vertices, ``legs`` leaves on each."""
    n = check_int("n", n, minimum=2)
    legs = check_int("legs", legs, minimum=1)
    spine = max(1, n // (legs + 1))
    parents = np.full(n, -1, dtype=np.int64)
    parents[1:spine] = np.arange(spine - 1)
    rest = np.arange(spine, n)
    parents[rest] = (rest - spine) % spine
    return parents


def spider_parents(n: int, legs: int = 8) -> np.ndarray:
    """A spider (pathwidth 2 for >= 3 legs of length >= 2): ``legs`` paths from one centre."""
    n = check_int("n", n, minimum=2)
    legs = check_int("legs", legs, minimum=1, maximum=n - 1)
    parents = np.full(n, -1, dtype=np.int64)
    v = np.arange(1, n)
    along = (v - 1) // legs
    parents[1:] = np.where(along == 0, 0, v - legs)
    return parents


def complete_binary_parents(height: int) -> np.ndarray:
    """A complete binary tree with ``2^(height+1) - 1`` vertices (pathwidth about height / 2)."""
    height = check_int("height", height, minimum=0, maximum=26)
    n = 2 ** (height + 1) - 1
    return np.r_[-1, (np.arange(1, n) - 1) // 2].astype(np.int64)


def random_recursive_parents(n: int, seed: int = 0) -> np.ndarray:
    """A uniform random recursive tree: vertex ``i`` attaches to a uniform earlier vertex."""
    n = check_int("n", n, minimum=1)
    rng = np.random.default_rng(seed)
    parents = np.full(n, -1, dtype=np.int64)
    if n > 1:
        parents[1:] = (rng.random(n - 1) * np.arange(1, n)).astype(np.int64)
    return parents


#: bytes per vertex of a :class:`Tree` and its search structures, roughly (numpy arrays and Python lists)
BYTES_PER_VERTEX = 400


@checked(family=Choice(SYNTHETIC), n=Int(3))
def synthetic_tree(family: str, n: int, seed: int = 0) -> Tree:
    """One of :data:`SYNTHETIC` with about ``n`` vertices (complete binary: the largest <= n)."""
    check_memory({f"synthetic_tree n = {n:,} vertices (about {BYTES_PER_VERTEX} bytes each)": BYTES_PER_VERTEX * n})
    if family == "path":
        parents = path_parents(n)
    elif family == "caterpillar":
        parents = caterpillar_parents(n, 2)
    elif family == "spider":
        parents = spider_parents(n, min(6, n - 1))
    elif family == "complete binary":
        parents = complete_binary_parents(int(np.log2(n + 1)) - 1)
    else:
        parents = random_recursive_parents(n, seed)
    return Tree.from_parents(parents)


@checked(family=Choice(SYNTHETIC), n=Int(3))
def synthetic_size(family: str, n: int) -> int:
    """The number of vertices of ``synthetic_tree(family, n)``, without building it.

    Every family has exactly ``n`` vertices except the complete binary tree, which has the largest
    size ``2^(h+1) - 1 <= n`` (524,287 for ``n = 10^6``).
    """
    return 2 ** int(np.log2(n + 1)) - 1 if family == "complete binary" else n


# --- real inputs ---------------------------------------------------------------------------------


def stdlib_source(module: str) -> Path:
    """The source file of a pure-Python standard-library module (e.g. ``"json.decoder"``), found without importing.

    The top-level name must be in ``sys.stdlib_module_names``; the file is searched for only in
    the standard library's folder (``sysconfig``), so neither the working directory nor
    ``sys.path`` is consulted and no code is executed. Built-in and compiled modules (``sys``,
    ``math``) have no source and are refused.
    """
    parts = module.split(".") if isinstance(module, str) else []
    if not parts or not all(p.isidentifier() for p in parts) or parts[0] not in sys.stdlib_module_names:
        raise ValueError(f"module must be the dotted name of a standard-library module, got {module!r}")
    path: list[str] | None = [sysconfig.get_path("stdlib")]
    spec = None
    for i in range(len(parts)):
        spec = PathFinder.find_spec(".".join(parts[: i + 1]), path) if path else None
        if spec is None:
            break
        path = spec.submodule_search_locations
    origin = spec.origin if spec is not None else None
    if origin is None or not origin.endswith(".py"):
        raise ValueError(f"module must be a standard-library module with Python source, got {module!r}")
    return Path(origin)


def package_directory(package: str) -> Path:
    """The folder of an installed top-level package (e.g. ``"numpy"``), found without importing it.

    Searched for on ``sys.path`` without the working directory (``""``, ``"."`` or the current
    folder), so a folder of the same name where the command runs is never walked.
    """
    if not isinstance(package, str) or not package.isidentifier():
        raise ValueError(f"package must be the name of an installed top-level package, got {package!r}")
    cwd = Path.cwd().resolve()
    path = [p for p in sys.path if p not in ("", ".") and Path(p).resolve() != cwd]
    spec = PathFinder.find_spec(package, path)
    if spec is None or not spec.submodule_search_locations or spec.origin is None:
        raise ValueError(f"package must be the name of an installed top-level package, got {package!r}")
    return Path(spec.origin).parent


@checked()
def ast_tree(module: str = "json.decoder") -> Tree:
    """The syntax tree of a standard-library module (vertices labelled ``i:NodeType``).

    The source is read as text from :func:`stdlib_source`: the module is never imported.
    """
    with tokenize.open(stdlib_source(module)) as f:  # honours the file's encoding declaration
        tree = ast.parse(f.read())
    parents, labels = [-1], [f"0:{type(tree).__name__}"]
    stack = [(tree, 0)]
    while stack:
        node, i = stack.pop()
        for child in ast.iter_child_nodes(node):
            j = len(parents)
            parents.append(i)
            labels.append(f"{j}:{type(child).__name__}")
            stack.append((child, j))
    return Tree.from_parents(parents, labels)


@checked(max_vertices=Int(2))
def directory_tree(package: str = "numpy", max_vertices: int = 5000) -> Tree:
    """The directory tree (folders and files) of an installed package, walked in sorted order.

    ``__pycache__`` folders are skipped; the walk stops after ``max_vertices`` entries.
    """
    root = package_directory(package)
    parents, labels = [-1], [package]
    where = {str(root): 0}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        here = where[dirpath]
        for name in dirnames + sorted(filenames):
            if len(parents) >= max_vertices:
                dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) in where]
                break
            where[os.path.join(dirpath, name)] = len(parents)
            parents.append(here)
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            labels.append(f"{package}/{rel}")
    return Tree.from_parents(parents, labels)


@dataclass
class Dendrogram:
    """A Ward dendrogram of digits with held-out queries, their targets and learned predictions."""

    tree: Tree
    targets: np.ndarray  # internal vertex ids (leaves)
    predictions: np.ndarray  # internal vertex ids (leaves)
    n_points: int


@checked()
def digits_dendrogram(n_points: int = 1000, n_queries: int = 300, seed: int = 0, dims: int = 2) -> Dendrogram:
    """Ward linkage of ``n_points`` digits; targets/predictions for ``n_queries`` held-out digits.

    Leaves ``0..n_points-1`` are digits, internal node ``n_points + i`` is merge ``i`` of
    ``scipy.cluster.hierarchy.linkage``. Target: the leaf of the held-out digit's nearest
    neighbour in pixel space; prediction: its nearest neighbour after a ``dims``-dimensional PCA
    (a cheap learned embedding), so the error ``eta`` is the tree distance between the two leaves.
    """
    from scipy.cluster.hierarchy import linkage
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA
    from sklearn.neighbors import NearestNeighbors

    X = load_digits().data
    n_points = check_int("n_points", n_points, minimum=4, maximum=len(X) - 1)
    n_queries = check_int("n_queries", n_queries, minimum=1, maximum=len(X) - n_points)
    dims = check_int("dims", dims, minimum=1, maximum=X.shape[1])
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))
    base, queries = X[order[:n_points]], X[order[n_points : n_points + n_queries]]
    Z = linkage(base, method="ward")
    m = n_points
    parents = np.full(2 * m - 1, -1, dtype=np.int64)
    for i, (a, b) in enumerate(Z[:, :2].astype(np.int64)):
        parents[a] = parents[b] = m + i
    labels = [f"digit {j}" for j in range(m)] + [f"merge {i}" for i in range(m - 1)]
    tree = Tree.from_parents(parents, labels)
    target_pt = NearestNeighbors(n_neighbors=1).fit(base).kneighbors(queries, return_distance=False)[:, 0]
    pca = PCA(n_components=dims, random_state=seed).fit(base)
    nn_pca = NearestNeighbors(n_neighbors=1).fit(pca.transform(base))
    pred_pt = nn_pca.kneighbors(pca.transform(queries), return_distance=False)[:, 0]
    idx = np.array([tree.index[f"digit {j}"] for j in range(m)])
    return Dendrogram(tree, idx[target_pt], idx[pred_pt], m)


REAL = ("AST json.decoder", "AST argparse", "directory numpy", "digits dendrogram")


@checked(name=Choice(REAL), size=Int(2))
def real_tree(name: str, size: int = 2000) -> Tree:
    """One of the real trees in :data:`REAL` (``size`` caps the directory walk / dendrogram size)."""
    if name.startswith("AST "):
        return ast_tree(name.split(" ", 1)[1])
    if name == "directory numpy":
        return directory_tree("numpy", size)
    return digits_dendrogram(max(4, min(size // 2, 1500)), 10).tree
