"""StreamGraphHasherV2: the deterministic operator and vertex ids of Flink.

Do not change the algorithm: savepoints map state to operators by these ids, and they
must stay bit-identical to Flink's for the same topology. A node's hash depends on how
many nodes were hashed before it in a breadth-first walk from the sources, on how many of
its out-edges are chainable, and on its inputs' hashes; never on names or functions.
"""

from __future__ import annotations

import struct
from collections import deque

from flowmagic.compile.chaining import is_chainable
from flowmagic.errors import HashCollisionError
from flowmagic.graph.stream_graph import StreamGraph, StreamNode

__all__ = ["check_unique_uids", "hash_user_id", "traverse_stream_graph_and_generate_hashes"]


def _murmur3_128(data: bytes) -> bytes:
    # Imported here, not at module level: executors import this module (through flowmagic's
    # __init__) but never hash a StreamGraph, and must need nothing PySpark does not bring.
    import mmh3

    return mmh3.hash_bytes(data, 0)


def hash_user_id(uid: str) -> bytes:
    """The 16-byte murmur3_128 (seed 0) of a user-specified uid, as Guava computes it."""
    return _murmur3_128(uid.encode("utf-8"))


def traverse_stream_graph_and_generate_hashes(graph: StreamGraph) -> dict[int, bytes]:
    """Hash every node of ``graph``; returns node id -> 16-byte hash."""
    hashes: dict[int, bytes] = {}
    sources = sorted(graph.source_ids)
    visited = set(sources)
    remaining = deque(graph.node(source_id) for source_id in sources)
    while remaining:
        node = remaining.popleft()
        if _generate_node_hash(node, hashes, graph):
            for edge in node.out_edges:
                if edge.target_id not in visited:
                    remaining.append(graph.node(edge.target_id))
                    visited.add(edge.target_id)
        else:
            # Not all inputs hashed yet: a later parent will enqueue this node again.
            visited.discard(node.id)
    return hashes


def check_unique_uids(graph: StreamGraph) -> None:
    """Fail as Flink's JobGraph generation does when two operators share a hash (a uid).

    The hashes are computed with the StreamGraph, but Flink reports the collision only when
    it builds the JobGraph: ``getExecutionPlan()`` of such a program still works.
    """
    owners: dict[bytes, int] = {}
    for node_id, digest in graph.operator_hashes.items():
        if digest in owners:
            node = graph.node(node_id)
            raise HashCollisionError(
                f'Hash collision on user-specified ID "{node.uid}". Most likely cause is a '
                "non-unique ID. Please check that all IDs specified via `uid(String)` are unique."
                + (f" (operator {node.label!r} at {node.call_site})" if node.call_site else "")
            )
        owners[digest] = node_id


def _generate_node_hash(node: StreamNode, hashes: dict[int, bytes], graph: StreamGraph) -> bool:
    if node.uid is not None:
        hashes[node.id] = hash_user_id(node.uid)
        return True
    if any(edge.source_id not in hashes for edge in node.in_edges):
        return False
    hashes[node.id] = _deterministic_hash(node, hashes, graph)
    return True


def _deterministic_hash(node: StreamNode, hashes: dict[int, bytes], graph: StreamGraph) -> bytes:
    position = struct.pack("<i", len(hashes))
    chainable_outputs = sum(1 for edge in node.out_edges if is_chainable(edge, graph))
    digest = bytearray(_murmur3_128(position * (1 + chainable_outputs)))
    for edge in node.in_edges:
        other = hashes[edge.source_id]
        for j in range(len(digest)):
            digest[j] = ((digest[j] * 37) ^ other[j]) & 0xFF
    return bytes(digest)
