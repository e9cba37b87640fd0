"""Snapshots of a continuous job's state, by operator ID and key group, as Flink lays out its own.

At the end of every epoch each subtask writes, per stateful operator of its chain, one file
of keyed state, grouped by key group (``<operator id>/<subtask>-<attempt>.pkl`` under the
epoch's folder), and one file of its own progress (its input channels' watermarks), which
only the same run resumes from. The file is the whole state, or, incrementally, the state
of the keys that changed since the subtask's last file (a key whose state went is written
as ``None``). The driver then writes the epoch's *manifest*: per operator ID, its
parallelism, max parallelism and the files with the key-group range of each, each whole
file followed by the changes written after it. A manifest is what a later epoch, a
restarted job or a savepoint restores from: a new subtask reads, in order, the files whose
ranges meet its own and keeps the keys of its key groups, so state follows its keys to any
parallelism, as in Flink. A key's group comes from the Java hash its ``key_by`` routed it by
(:class:`~flowmagic.runtime.plan.KeyHash`), which the manifest names per operator; state filed
by another rule (a snapshot of PyFlink's API taken before its keys were routed as PyFlink
routes them) is read whole and filed anew by the restoring job's.
"""

from __future__ import annotations

import json
import pickle
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from flowmagic.errors import JobError
from flowmagic.key_groups import assign_to_key_group, java_hash_code
from flowmagic.runtime.continuous.storage import Storage
from flowmagic.runtime.plan import JAVA_KEY_HASH

__all__ = [
    "Manifest",
    "OperatorState",
    "StateFile",
    "copy_savepoint",
    "load_keyed",
    "load_operator_state",
    "read_manifest",
    "write_keyed",
    "write_manifest",
    "write_operator_state",
]

_MANIFEST = "_metadata.json"


@dataclass(frozen=True)
class StateFile:
    """One subtask's keyed state of one operator: a file and the key groups it covers."""

    path: str
    first: int
    last: int

    def meets(self, key_groups: range) -> bool:
        return self.first < key_groups.stop and key_groups.start <= self.last


@dataclass
class OperatorState:
    """An operator's state in a snapshot: where its key groups are, and its operator state
    (broadcast state), one file per subtask (None: that subtask wrote none). ``key_hash``
    names the rule its keys were filed by (:attr:`~flowmagic.runtime.plan.KeyHash.name`)."""

    parallelism: int
    max_parallelism: int
    files: list[StateFile] = field(default_factory=list)
    operator_state: list[str | None] = field(default_factory=list)
    key_hash: str = JAVA_KEY_HASH

    def operator_state_for(self, index: int, parallelism: int, split: bool) -> list[str]:
        """The operator state files subtask ``index`` of ``parallelism`` restores from.

        Split state goes round-robin, each old subtask's to one new subtask (Flink's
        ``SPLIT_DISTRIBUTE``). Broadcast state is every subtask's alike: a subtask takes
        its own, and subtasks past the old parallelism the old subtasks' in turn.
        """
        if split:
            return [
                path for old, path in enumerate(self.operator_state) if path is not None and old % parallelism == index
            ]
        written = [path for path in self.operator_state if path is not None]
        if not written:
            return []
        if index < len(self.operator_state) and self.operator_state[index] is not None:
            return [self.operator_state[index]]  # type: ignore[list-item]
        return [written[index % len(written)]]


@dataclass
class Manifest:
    """A complete snapshot: the epoch it ends, its time, and every operator's state files.

    ``progress`` (vertex id -> per subtask a file) is the run's own position; a savepoint
    keeps only the operators.
    """

    epoch: int
    time: int
    operators: dict[str, OperatorState] = field(default_factory=dict)
    progress: dict[str, list[str | None]] = field(default_factory=dict)
    #: The run's own sources: per source node id, the offset its epochs read up to.
    offsets: dict[int, int] = field(default_factory=dict)
    #: Flink's checkpoint counter: set on the epochs that complete a checkpoint.
    checkpoint: int | None = None
    #: The epoch whose Spark job wrote this state: an epoch with nothing to do runs none
    #: and keeps the state of the one before (None: this epoch's own).
    ran: int | None = None
    #: File sinks' part files rolled but not committed before this snapshot completed:
    #: (in-progress path, final path), committed again by a job restored from it.
    pending: list[tuple[str, str]] = field(default_factory=list)

    @property
    def state_epoch(self) -> int:
        """The epoch whose subtasks hold this state (what a live subtask must have done)."""
        return self.epoch if self.ran is None else self.ran

    def files(self) -> list[str]:
        """Every file this snapshot needs, relative to its root."""
        paths = [state_file.path for state in self.operators.values() for state_file in state.files]
        paths += [path for state in self.operators.values() for path in state.operator_state if path is not None]
        return paths + [path for files in self.progress.values() for path in files if path is not None]

    def to_json(self) -> str:
        return json.dumps(
            {
                "epoch": self.epoch,
                "time": self.time,
                "checkpoint": self.checkpoint,
                "ran": self.ran,
                "operators": {
                    operator_id: {
                        "parallelism": state.parallelism,
                        "max_parallelism": state.max_parallelism,
                        "files": [[f.path, f.first, f.last] for f in state.files],
                        "operator_state": state.operator_state,
                        "key_hash": state.key_hash,
                    }
                    for operator_id, state in self.operators.items()
                },
                "progress": self.progress,
                "offsets": {str(node_id): offset for node_id, offset in self.offsets.items()},
                "pending": [list(committable) for committable in self.pending],
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        data = json.loads(text)
        return cls(
            epoch=data["epoch"],
            time=data["time"],
            checkpoint=data.get("checkpoint"),
            ran=data.get("ran"),
            operators={
                operator_id: OperatorState(
                    state["parallelism"],
                    state["max_parallelism"],
                    [StateFile(path, first, last) for path, first, last in state["files"]],
                    list(state.get("operator_state", [])),
                    # Snapshots written before manifests named the rule filed every key by its Java hash.
                    state.get("key_hash", JAVA_KEY_HASH),
                )
                for operator_id, state in data["operators"].items()
            },
            progress=data.get("progress", {}),
            offsets={int(node_id): offset for node_id, offset in data.get("offsets", {}).items()},
            pending=[(in_progress, final) for in_progress, final in data.get("pending", [])],
        )


def write_keyed(
    storage: Storage,
    folder: str,
    operator_id: str,
    subtask: int,
    attempt: int,
    key_groups: range,
    max_parallelism: int,
    entries: dict[Any, dict[str, Any] | None],
    groups_of_keys: dict[Any, int] | None = None,
    hash_code: Callable[[Any], int] = java_hash_code,
) -> StateFile:
    """Write one subtask's keyed state of one operator, grouped by key group (a key's state
    is ``None`` in a file of changes when the key has none left), the group of the
    ``hash_code`` its exchange routed it by.

    ``groups_of_keys`` remembers each key's group from epoch to epoch (computing one takes
    microseconds, which add up at every epoch for a large state).
    """
    known = {} if groups_of_keys is None else groups_of_keys
    grouped: dict[int, dict[Any, dict[str, Any] | None]] = {}
    for key, states in entries.items():
        group = known.get(key)
        if group is None:
            group = known[key] = assign_to_key_group(key, max_parallelism, hash_code)
        grouped.setdefault(group, {})[key] = states
    relative = posixpath.join(folder, operator_id, f"{subtask}-{attempt}.pkl")
    storage.write(relative, pickle.dumps(grouped, pickle.HIGHEST_PROTOCOL))
    return StateFile(relative, key_groups.start, key_groups.stop - 1)


def load_keyed(
    storage: Storage,
    files: Iterable[StateFile],
    key_groups: range,
    regroup: Callable[[Any], int] | None = None,
) -> dict[Any, dict[str, Any]]:
    """The keyed state of the keys in ``key_groups``, from every file that holds some, read
    in order (a later file's changes replace what an earlier one said).

    ``regroup`` gives a key's group when the files were filed by another rule than the
    restoring job's: their groups then say nothing, so every file is read and each key placed
    by its group under ``regroup``.
    """
    entries: dict[Any, dict[str, Any]] = {}
    for state_file in files:
        if regroup is None and not state_file.meets(key_groups):
            continue
        grouped: dict[int, dict[Any, dict[str, Any] | None]] = pickle.loads(storage.read(state_file.path))
        for key_group, keyed in grouped.items():
            if regroup is None and key_group not in key_groups:
                continue
            for key, states in keyed.items():
                if regroup is not None and regroup(key) not in key_groups:
                    continue
                if states is None:
                    entries.pop(key, None)
                else:
                    entries[key] = states
    return entries


def write_operator_state(
    storage: Storage, folder: str, operator_id: str, subtask: int, attempt: int, snapshot: Any
) -> str:
    """Write one subtask's operator state of one operator, whole; returns its path."""
    relative = posixpath.join(folder, operator_id, f"operator-{subtask}-{attempt}.pkl")
    storage.write(relative, pickle.dumps(snapshot, pickle.HIGHEST_PROTOCOL))
    return relative


def load_operator_state(storage: Storage, path: str) -> Any:
    """The operator state :func:`write_operator_state` wrote at ``path``."""
    return pickle.loads(storage.read(path))


def write_manifest(storage: Storage, manifest: Manifest, name: str = _MANIFEST) -> None:
    """Write ``manifest`` as ``name`` in ``storage``, whole (readers never see half of it)."""
    storage.write(name, manifest.to_json().encode())


def read_manifest(storage: Storage, name: str = _MANIFEST) -> Manifest:
    """The manifest ``name`` of a checkpoint directory, or a savepoint's."""
    try:
        return Manifest.from_json(storage.read(name).decode())
    except FileNotFoundError:
        raise JobError(f"Cannot find a savepoint or checkpoint in {storage.location!r} (no {name}).") from None


def copy_savepoint(source: Storage, manifest: Manifest, target: Storage) -> str:
    """Copy the state ``manifest`` names into ``target``, self-contained, as a savepoint."""
    copied = Manifest(epoch=manifest.epoch, time=manifest.time, pending=list(manifest.pending))
    for operator_id, state in manifest.operators.items():
        for state_file in state.files:
            target.write(state_file.path, source.read(state_file.path))
        for path in state.operator_state:
            if path is not None:
                target.write(path, source.read(path))
        copied.operators[operator_id] = OperatorState(
            state.parallelism, state.max_parallelism, list(state.files), list(state.operator_state), state.key_hash
        )
    write_manifest(target, copied)
    return target.location
