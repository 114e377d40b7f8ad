"""Hamming ranking, mAP@all, and packed-bit search.

Codes are ``±1`` matrices of shape ``(n, n_bits)``. Two codes at Hamming distance ``d`` have inner
product ``n_bits - 2 d``, eq. (hamming-inner). Rankings sort by distance with ties broken by
database index (a stable sort), so every number here is deterministic.
"""

from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

from ..core.arguments import Array, checked


def check_codes(name: str, codes: np.ndarray) -> np.ndarray:
    """``codes`` as an int8 matrix of ±1, or a ``ValueError`` naming it."""
    arr = np.asarray(codes)
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"{name} must be a 2-d array of ±1 codes (n, n_bits), got shape {arr.shape}")
    if not np.all((arr == 1) | (arr == -1)):
        raise ValueError(f"{name} must hold only +1 and -1")
    return arr.astype(np.int8)


@checked(query=Array("n_query n_bits"), database=Array("n_database n_bits"))
def hamming_distances(query: np.ndarray, database: np.ndarray) -> np.ndarray:
    """``d_H(q, b) = (n_bits - q·b) / 2`` for every query-database pair, eq. (hamming-inner)."""
    q, b = check_codes("query", query), check_codes("database", database)
    if q.shape[1] < 2**24:  # float32 products of ±1 are exact integers here; BLAS computes them ~30x faster
        inner = (q.astype(np.float32) @ b.astype(np.float32).T).astype(np.int32)
    else:
        inner = q.astype(np.int64) @ b.astype(np.int64).T
    return (q.shape[1] - inner) // 2


@checked(query=Array("n_query n_bits"), database=Array("n_database n_bits"), skip_nested=True)
def hamming_ranking(query: np.ndarray, database: np.ndarray) -> np.ndarray:
    """Database indices per query, nearest first (ties by index)."""
    distances = hamming_distances(query, database)
    if np.shape(query)[1] < 2**15:  # distances fit int16, whose stable sort is a radix sort (the same order)
        distances = distances.astype(np.int16)
    return np.argsort(distances, axis=1, kind="stable")


def relevance(query_labels: np.ndarray, database_labels: np.ndarray) -> np.ndarray:
    """A query and a database item are relevant to each other when they share at least one label."""
    ql, dl = np.asarray(query_labels, float), np.asarray(database_labels, float)
    if ql.ndim != 2 or dl.ndim != 2 or ql.shape[1] != dl.shape[1]:
        raise ValueError(f"labels must be 2-d multi-hot with the same classes, got {ql.shape} and {dl.shape}")
    return (ql @ dl.T) > 0


def _check_binary(name: str, value: np.ndarray) -> np.ndarray:
    """``value`` as a bool array if it holds only booleans or 0/1, else a ``ValueError`` naming it."""
    arr = np.asarray(value)
    if arr.dtype != bool and not np.all((arr == 0) | (arr == 1)):
        raise ValueError(f"{name} must hold booleans (or 0/1): relevant or not")
    return arr.astype(bool)


@checked(relevant_in_order=Array("n", nonempty=False))
def average_precision(relevant_in_order: np.ndarray | list) -> float:
    """AP of one ranked list: the mean of precision@r over the ranks r of relevant items, eq. (map-all).

    A query with no relevant item has AP 0 (it still counts in the mean).
    """
    rel = _check_binary("relevant_in_order", relevant_in_order)
    hits = np.cumsum(rel)
    if hits.size == 0 or hits[-1] == 0:
        return 0.0
    ranks = np.flatnonzero(rel) + 1
    return float(np.mean(hits[rel] / ranks))


@checked(ranking=Array("n_query n_database", integer=True), relevant=Array("n_query n_database"))
def mean_average_precision(ranking: np.ndarray, relevant: np.ndarray) -> float:
    """mAP@all: the mean over queries of :func:`average_precision` of the whole ranked database.

    ``ranking`` holds database indices per query (a permutation of each row's ``n_database`` items),
    ``relevant[q, j]`` whether database item ``j`` is relevant to query ``q``.
    """
    ranking, relevant = np.asarray(ranking), _check_binary("relevant", relevant)
    if ranking.min() < 0 or ranking.max() >= ranking.shape[1]:
        raise ValueError(f"ranking must hold database indices in [0, {ranking.shape[1] - 1}]")
    ordered = np.take_along_axis(relevant, ranking, axis=1)
    hits = np.cumsum(ordered, axis=1)
    precision = hits / np.arange(1, ordered.shape[1] + 1)
    n_rel = ordered.sum(1)
    ap = np.where(n_rel > 0, (precision * ordered).sum(1) / np.maximum(n_rel, 1), 0.0)
    return float(ap.mean())


@checked(
    query_codes=Array("n_query n_bits"),
    database_codes=Array("n_database n_bits"),
    query_labels=Array("n_query n_classes"),
    database_labels=Array("n_database n_classes"),
    skip_nested=True,
)
def map_at_all(
    query_codes: np.ndarray, database_codes: np.ndarray, query_labels: np.ndarray, database_labels: np.ndarray
) -> float:
    """Rank the database by Hamming distance to each query and score it: mAP@all."""
    ranking = hamming_ranking(query_codes, database_codes)
    return mean_average_precision(ranking, relevance(query_labels, database_labels))


@checked(codes=Array("n n_bits"))
def pack_codes(codes: np.ndarray) -> np.ndarray:
    """±1 codes as bits (+1 -> 1), eight to a byte: ``n_bits / 8`` bytes per item."""
    return np.packbits(check_codes("codes", codes) > 0, axis=1)


@checked(
    query_packed=Array("n_query n_bytes", integer=True), database_packed=Array("n_database n_bytes", integer=True)
)
def packed_hamming(query_packed: np.ndarray, database_packed: np.ndarray) -> np.ndarray:
    """Hamming distances from packed codes (:func:`pack_codes`, unsigned integers): XOR, then count the set
    bits (``np.bitwise_count``)."""
    query_packed, database_packed = np.asarray(query_packed), np.asarray(database_packed)
    for name, arr in (("query_packed", query_packed), ("database_packed", database_packed)):
        if arr.dtype.kind != "u":
            raise ValueError(f"{name} must hold unsigned integers (packed bits from pack_codes), got dtype {arr.dtype}")
    x = np.bitwise_xor(query_packed[:, None, :], database_packed[None, :, :])
    return np.bitwise_count(x).sum(axis=2, dtype=np.int32)


def search_timing(
    n_database: int,
    n_bits: int,
    d_float: int,
    n_queries: int,
    top_k: int,
    *,
    rng: np.random.Generator,
    repeats: int = 3,
) -> dict:
    """Seconds per query to find the ``top_k`` nearest items: packed Hamming codes vs float32 cosine.

    Random data of the given sizes (the cost does not depend on the values). Returns the best of
    ``repeats`` for each, and the bytes each database takes.
    """
    codes = np.where(rng.random((n_database, n_bits)) < 0.5, 1, -1).astype(np.int8)
    queries = np.where(rng.random((n_queries, n_bits)) < 0.5, 1, -1).astype(np.int8)
    db_packed, q_packed = pack_codes(codes), pack_codes(queries)
    if db_packed.shape[1] % 8 == 0:  # whole 64-bit words: one popcount per word
        db_packed, q_packed = db_packed.view(np.uint64), q_packed.view(np.uint64)
    feats = rng.standard_normal((n_database, d_float)).astype(np.float32)
    feats /= np.linalg.norm(feats, axis=1, keepdims=True)
    qf = rng.standard_normal((n_queries, d_float)).astype(np.float32)
    qf /= np.linalg.norm(qf, axis=1, keepdims=True)

    def best(fn) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times) / n_queries

    def hamming_search():
        for q in q_packed:
            d = np.bitwise_count(np.bitwise_xor(db_packed, q)).sum(axis=1, dtype=np.int32)
            np.argpartition(d, top_k)[:top_k]

    def cosine_search():
        for q in qf:
            np.argpartition(-(feats @ q), top_k)[:top_k]

    with threadpool_limits(1, user_api="blas"):  # one core each: the same footing for both searches
        hamming_s, cosine_s = best(hamming_search), best(cosine_search)
    return {
        "hamming_query_s": hamming_s, "cosine_query_s": cosine_s,
        "hamming_bytes": int(db_packed.nbytes), "cosine_bytes": int(feats.nbytes),
        "n_database": n_database, "n_bits": n_bits, "d_float": d_float,
    }  # fmt: skip
