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

Restoring unpickles what it reads, so nothing is read that is not known to be this user's
jobs' own: the manifest records every file's size and SHA-256 (its writer hashes the bytes
it writes) and is signed with the user's state key
(:mod:`~flowmagic.runtime.continuous.state_key`); a restore checks the signature, that every
path stays inside the snapshot's directory and, on the driver before the job starts, every
file; an executor checks each file it reads against the digests its task carries. Progress
files hold plain data only and are read without unpickling any class or function.
A manifest also keeps, per operator ID, what Flink keeps beside the state itself: a source's
position (its ``source`` entry, see :mod:`flowmagic.runtime.continuous.checkpoints`) and the keyed
state descriptors the operator declared (``states``: name -> kind and type), so that a
restore into a descriptor of another kind is refused rather than started empty.
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from flowmagic.errors import JobError, StateIntegrityError
from flowmagic.key_groups import assign_to_key_group, java_hash_code
from flowmagic.runtime.continuous.state_key import ENVIRONMENT_VARIABLE, key_origin, sign, state_key, verifies
from flowmagic.runtime.continuous.storage import Storage, outside
from flowmagic.runtime.plan import JAVA_KEY_HASH

__all__ = [
    "MANIFEST",
    "Checksum",
    "Manifest",
    "OperatorState",
    "StateDeclaration",
    "StateFile",
    "copy_savepoint",
    "load_keyed",
    "load_operator_state",
    "load_progress",
    "read_manifest",
    "trust_snapshot",
    "verify_snapshot",
    "write_keyed",
    "write_manifest",
    "write_operator_state",
    "write_progress",
]

MANIFEST = "_metadata.json"
_SIGNATURE = "signature"


class Checksum(NamedTuple):
    """What a file of a snapshot held when it was written: its size and SHA-256."""

    size: int
    sha256: str

    @classmethod
    def of(cls, data: bytes) -> Checksum:
        return cls(len(data), hashlib.sha256(data).hexdigest())


@dataclass(frozen=True)
class StateFile:
    """One subtask's keyed state of one operator: a file and the key groups it covers."""

    path: str
    first: int
    last: int

    def meets(self, key_groups: range) -> bool:
        return self.first < key_groups.stop and key_groups.start <= self.last


@dataclass(frozen=True)
class StateDeclaration:
    """A keyed state an operator declared: Flink's state type (``VALUE``, ``LIST``, ``MAP``,
    ``REDUCING``, ``AGGREGATING``) and the type information it was declared with, if any."""

    kind: str
    type_info: str | None = None


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
    #: A source's position (plain JSON data): where a restored job's source goes on from.
    source: dict[str, Any] | None = None
    #: The keyed states the operator declared, by name.
    states: dict[str, StateDeclaration] = field(default_factory=dict)

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
    keeps only the operators. ``root`` is where the state files' paths start, relative to
    the manifest's directory: ``"."`` for a savepoint (self-contained), ``".."`` for a retained
    checkpoint ``chk-<n>``, whose files are its job's (shared between its checkpoints, as
    Flink's incremental checkpoints share theirs).
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
    #: Every file of :meth:`files` (path) -> its size and SHA-256 when written.
    checksums: dict[str, Checksum] = field(default_factory=dict)
    root: str = "."

    @property
    def state_epoch(self) -> int:
        """The epoch whose subtasks hold this state (what a live subtask must have done)."""
        return self.epoch if self.ran is None else self.ran

    def files(self) -> list[str]:
        """Every file this snapshot needs, relative to its root."""
        paths = [state_file.path for state in self.operators.values() for state_file in state.files]
        paths += [path for state in self.operators.values() for path in state.operator_state if path is not None]
        paths += [
            state.source["unread"] for state in self.operators.values() if state.source and "unread" in state.source
        ]
        return paths + [path for files in self.progress.values() for path in files if path is not None]

    def to_json(self, indent: int | None = 1) -> str:
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
                        "source": state.source,
                        "states": {
                            name: {"kind": declared.kind, "type": declared.type_info}
                            for name, declared in state.states.items()
                        },
                    }
                    for operator_id, state in self.operators.items()
                },
                "progress": self.progress,
                "offsets": {str(node_id): offset for node_id, offset in self.offsets.items()},
                "pending": [list(committable) for committable in self.pending],
                "checksums": {path: list(checksum) for path, checksum in self.checksums.items()},
                "root": self.root,
            },
            indent=indent,
        )

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        return cls.from_dict(json.loads(text))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
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
                    state.get("source"),
                    {
                        name: StateDeclaration(declared["kind"], declared.get("type"))
                        for name, declared in state.get("states", {}).items()
                    },
                )
                for operator_id, state in data["operators"].items()
            },
            progress=data.get("progress", {}),
            offsets={int(node_id): offset for node_id, offset in data.get("offsets", {}).items()},
            pending=[(in_progress, final) for in_progress, final in data.get("pending", [])],
            checksums={
                path: Checksum(int(size), str(sha256)) for path, (size, sha256) in data.get("checksums", {}).items()
            },
            root=data.get("root", "."),
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
    *,
    checksums: dict[str, Checksum],
) -> StateFile:
    """Write one subtask's keyed state of one operator, grouped by key group (a key's state
    is ``None`` in a file of changes when the key has none left), the group of the
    ``hash_code`` its exchange routed it by; its checksum goes into ``checksums``.

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
    _write(storage, relative, pickle.dumps(grouped, pickle.HIGHEST_PROTOCOL), checksums)
    return StateFile(relative, key_groups.start, key_groups.stop - 1)


def load_keyed(
    storage: Storage,
    files: Iterable[StateFile],
    key_groups: range,
    regroup: Callable[[Any], int] | None = None,
    *,
    checksums: Mapping[str, Checksum],
    operator: str = "",
) -> dict[Any, dict[str, Any]]:
    """The keyed state of the keys in ``key_groups``, from every file that holds some, read
    in order (a later file's changes replace what an earlier one said), each file checked
    against ``checksums`` before it is unpickled (``operator`` describes whose it is).

    ``regroup`` gives a key's group when the files were filed by another rule than the
    restoring job's: their groups then say nothing, so every file is read and each key placed
    by its group under ``regroup``.
    """
    entries: dict[Any, dict[str, Any]] = {}
    for state_file in files:
        if regroup is None and not state_file.meets(key_groups):
            continue
        data = _read(storage, state_file.path, checksums, _state_of(operator))
        grouped: dict[int, dict[Any, dict[str, Any] | None]] = _unpickle_state(data)
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
    storage: Storage,
    folder: str,
    operator_id: str,
    subtask: int,
    attempt: int,
    snapshot: Any,
    *,
    checksums: dict[str, Checksum],
) -> str:
    """Write one subtask's operator state of one operator, whole; returns its path."""
    relative = posixpath.join(folder, operator_id, f"operator-{subtask}-{attempt}.pkl")
    _write(storage, relative, pickle.dumps(snapshot, pickle.HIGHEST_PROTOCOL), checksums)
    return relative


def load_operator_state(storage: Storage, path: str, *, checksums: Mapping[str, Checksum], operator: str = "") -> Any:
    """The operator state :func:`write_operator_state` wrote at ``path``, once checked."""
    return _unpickle_state(_read(storage, path, checksums, _state_of(operator)))


def write_progress(storage: Storage, relative: str, progress: Any, *, checksums: dict[str, Checksum]) -> None:
    """Write a subtask's progress: plain data only (numbers, strings, None, and lists,
    tuples, sets and dicts of them), which :func:`load_progress` reads without running code."""
    _write(storage, relative, pickle.dumps(progress, pickle.HIGHEST_PROTOCOL), checksums)


def load_progress(storage: Storage, relative: str, *, checksums: Mapping[str, Checksum]) -> Any:
    """The progress :func:`write_progress` wrote, once checked; no class or function it might
    name is looked up, so reading it cannot run code."""
    data = _read(storage, relative, checksums, "the progress file")
    return _PlainDataUnpickler(io.BytesIO(data)).load()


#: Where the classes that savepoints of earlier flowmagic versions name (rows, windows, a
#: state's TtlValue, ...) are now: the vocabulary left the API, the runtime's modules went
#: into rooms (operators, connectors, state).
_MOVED_MODULES = {
    **{
        f"flowmagic.runtime.{old}": f"flowmagic.runtime.{new}"
        for old, new in (
            ("broadcast", "operators.broadcast"),
            ("cache", "operators.cache"),
            ("connector", "connectors.factories"),
            ("context", "operators.context"),
            ("file_sink", "connectors.file_sink"),
            ("file_source", "connectors.file_source"),
            ("interval_join", "operators.interval_join"),
            ("keyed_aggregation", "operators.keyed_aggregation"),
            ("keyed_state", "state.keyed_state"),
            ("operator", "operators.operator"),
            ("process", "operators.process"),
            ("sinks", "connectors.sinks"),
            ("sources", "connectors.sources"),
            ("state_ttl", "state.state_ttl"),
            ("stateless", "operators.stateless"),
            ("timer_queue", "state.timer_queue"),
            ("two_input", "operators.two_input"),
            ("typed_output", "operators.typed_output"),
            ("watermark_assignment", "operators.watermark_assignment"),
            ("window_behaviour", "operators.window_assigner_trigger_evictor"),
            ("windowing", "operators.window_operator"),
        )
    },
    **{
        f"flowmagic.api.{name}": f"flowmagic.vocabulary.{name}"
        for name in (
            "bucket_assigner",
            "configuration",
            "functions",
            "job_execution_result",
            "option_values",
            "output_file_config",
            "restart_strategy",
            "rolling_policy",
            "state",
            "state_ttl",
            "time",
            "time_domain",
            "types",
            "watermarks",
            "windows",
        )
    },
}


class _StateUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(_MOVED_MODULES.get(module, module), name)


def _unpickle_state(data: bytes) -> Any:
    """State a checksum vouched for, whichever flowmagic version wrote it."""
    return _StateUnpickler(io.BytesIO(data)).load()


class _PlainDataUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a progress file holds plain data only, not {module}.{name}")


def _state_of(operator: str) -> str:
    return f"the state file of operator {operator}" if operator else "the state file"


def _uri(storage: Storage, relative: str) -> str:
    return posixpath.join(storage.location.rstrip("/"), relative)


def _write(storage: Storage, relative: str, data: bytes, checksums: dict[str, Checksum]) -> None:
    storage.write(relative, data)
    checksums[relative] = Checksum.of(data)


def _read(storage: Storage, relative: str, checksums: Mapping[str, Checksum], what: str) -> bytes:
    """The bytes of ``relative``, refused unless they are those its checksum recorded."""
    uri = _uri(storage, relative)
    expected = checksums.get(relative)
    if expected is None:
        raise _damaged(f"{what} {uri} has no checksum in its manifest")
    try:
        data = storage.read(relative)
    except FileNotFoundError:
        raise _damaged(f"{what} {uri} is missing") from None
    if len(data) != expected.size:
        raise _damaged(f"{what} {uri} holds {len(data):,} bytes where {expected.size:,} were written")
    if hashlib.sha256(data).hexdigest() != expected.sha256:
        raise _damaged(f"{what} {uri} does not hold the bytes that were written (its SHA-256 differs)")
    return data


def _damaged(problem: str) -> StateIntegrityError:
    return StateIntegrityError(
        f"The checkpoint or savepoint is damaged: {problem[0].upper()}{problem[1:]}. It was altered, truncated or "
        "replaced since it was written, so it is not restored (nothing of it was unpickled)."
    )


def _canonical(data: Mapping[str, Any]) -> bytes:
    """What a manifest's signature signs: its fields as compact JSON, keys sorted (so the
    text's layout does not matter, only what it says)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def write_manifest(storage: Storage, manifest: Manifest, name: str = MANIFEST, key: bytes | None = None) -> None:
    """Write ``manifest`` as ``name`` in ``storage``, whole (readers never see half of it),
    signed with ``key`` (the user's state key by default)."""
    unlisted = [path for path in manifest.files() if path not in manifest.checksums]
    if unlisted:
        raise ValueError(f"the manifest {name} would list files without their checksums: {unlisted[:3]}")
    # Not indented: JSON with indents is encoded in Python, ten times slower, at every epoch.
    data = json.loads(manifest.to_json(indent=None))
    data[_SIGNATURE] = sign(_canonical(data), state_key() if key is None else key)
    storage.write(name, json.dumps(data).encode())


def read_manifest(storage: Storage, name: str = MANIFEST, key: bytes | None = None) -> Manifest:
    """The manifest ``name`` of a checkpoint directory, or a savepoint's: signed with ``key``
    (the user's state key by default), naming no path outside ``storage``."""
    data = _parse_manifest(storage, name)
    signature = data.pop(_SIGNATURE, None)
    if not verifies(_canonical(data), signature, state_key() if key is None else key):
        raise StateIntegrityError(_untrusted(storage, name, signature is None))
    return _manifest_of(data, storage, name, computed=False)


def _parse_manifest(storage: Storage, name: str) -> dict[str, Any]:
    try:
        raw = storage.read(name)
    except FileNotFoundError:
        raise JobError(f"Cannot find a savepoint or checkpoint in {storage.location!r} (no {name}).") from None
    try:
        data = json.loads(raw.decode())
    except ValueError as error:  # UnicodeDecodeError and JSONDecodeError alike
        raise StateIntegrityError(
            f"The manifest {_uri(storage, name)} is damaged (truncated, or not a manifest): {error}. Nothing of "
            "the checkpoint or savepoint was read."
        ) from None
    if not isinstance(data, dict):
        raise StateIntegrityError(f"The manifest {_uri(storage, name)} is not a manifest (not a JSON object).")
    return data


def _untrusted(storage: Storage, name: str, unsigned: bool) -> str:
    uri = _uri(storage, name)
    carries = " (it carries no signature)" if unsigned else ""
    if name == MANIFEST:
        remedy = (
            "If you trust it, sign it with your key: from flowmagic.runtime import trust_savepoint; "
            f"trust_savepoint({storage.location!r}). Or set ${ENVIRONMENT_VARIABLE} to the key it was written with."
        )
    else:
        # Only a running job reads its own epochs' manifests (a restore reads a chk-N's or a
        # savepoint's _metadata): the key changed under it.
        remedy = (
            f"The job signed it while running: the state key changed since it started; give ${ENVIRONMENT_VARIABLE} "
            "the key it started with."
        )
    return (
        f"The manifest {uri} is not signed with your state key ({key_origin()}){carries}: it was written by another "
        "user or on another machine (each has a key of its own), or altered since. Nothing of the checkpoint or "
        f"savepoint was read. {remedy}"
    )


def _manifest_of(data: dict[str, Any], storage: Storage, name: str, *, computed: bool) -> Manifest:
    """``data`` as a manifest, whose every path stays inside ``storage`` and (unless its
    checksums are to be ``computed``) has a checksum."""
    uri = _uri(storage, name)
    try:
        manifest = Manifest.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise StateIntegrityError(
            f"The manifest {uri} is damaged: {type(error).__name__}: {error}. Nothing of the checkpoint or "
            "savepoint was read."
        ) from None
    for path in [*manifest.files(), *manifest.checksums]:
        if outside(path):
            raise StateIntegrityError(
                f"The manifest {uri} names {path!r}, a path outside the savepoint or checkpoint directory "
                f"{storage.location}: it is refused, and nothing of it was read."
            )
    unlisted = [path for path in manifest.files() if path not in manifest.checksums]
    if unlisted and not computed:
        raise _damaged(f"the manifest {uri} has no checksum of {unlisted[0]}")
    return manifest


def verify_snapshot(storage: Storage, manifest: Manifest, describe: Callable[[str], str]) -> None:
    """Check, before a job restores from it, that every file of ``manifest`` in ``storage``
    holds what was written (``describe`` names an operator by its ID in messages)."""
    for path, what in _owners(manifest, describe).items():
        _read(storage, path, manifest.checksums, what)


def _owners(manifest: Manifest, describe: Callable[[str], str]) -> dict[str, str]:
    """Every file of ``manifest`` -> whose it is, for messages."""
    owners = dict.fromkeys(manifest.files(), "the file")
    for operator_id, state in manifest.operators.items():
        for path in [state_file.path for state_file in state.files] + state.operator_state:
            if path is not None:
                owners[path] = _state_of(describe(operator_id))
    for vertex_id, paths in manifest.progress.items():
        for path in paths:
            if path is not None:
                owners[path] = f"the progress file of vertex {vertex_id}"
    return owners


def trust_snapshot(storage: Storage, name: str = MANIFEST, key: bytes | None = None) -> Manifest:
    """Sign the manifest ``name`` of ``storage`` with ``key`` (the user's state key by
    default), whoever signed it: for a savepoint copied from another user or machine, or
    written before manifests were signed. Its paths must stay inside ``storage``, and its
    files must hold what its checksums say (a manifest without checksums gets those of the
    files as they are now)."""
    manifest = _manifest_of(_parse_manifest(storage, name), storage, name, computed=True)
    for path, what in _owners(manifest, lambda operator_id: operator_id).items():
        if path in manifest.checksums:
            _read(storage, path, manifest.checksums, what)
        else:
            try:
                manifest.checksums[path] = Checksum.of(storage.read(path))
            except FileNotFoundError:
                raise _damaged(f"{what} {_uri(storage, path)} is missing") from None
    write_manifest(storage, manifest, name, key)
    return manifest


def copy_savepoint(source: Storage, manifest: Manifest, target: Storage) -> str:
    """Copy the state ``manifest`` names into ``target``, self-contained, as a savepoint
    (each file checked on its way)."""
    copied = Manifest(epoch=manifest.epoch, time=manifest.time, pending=list(manifest.pending))
    for operator_id, state in manifest.operators.items():
        copied.operators[operator_id] = replace(
            state, files=list(state.files), operator_state=list(state.operator_state)
        )
    owners = _owners(copied, lambda operator_id: operator_id)
    for path in copied.files():
        target.write(path, _read(source, path, manifest.checksums, owners[path]))
    copied.checksums = {path: manifest.checksums[path] for path in copied.files()}
    write_manifest(target, copied)
    return target.location
