"""A continuous job's checkpoints: the snapshot it starts from, those it retains, those it forgets.

As Flink, a job keeps its checkpoints under ``<checkpoint dir>/<job id>``: every epoch's
manifest and state there, and each completed checkpoint as ``chk-<n>/_metadata.json``, a
manifest of the job's (shared, incremental) state files; the last
``execution.checkpointing.num-retained`` are kept, and when the job ends they are kept or
deleted as ``execution.checkpointing.externalized-checkpoint-retention`` says. A new job never
resumes another's directory: restoring a retained checkpoint, like a savepoint, is explicit
(``execution.savepoint.path``) and checked alike.

A source's position is operator state, in every checkpoint and savepoint under the source's
operator ID, so a restored job goes on where its sources were, at any parallelism (the
positions are of the whole source, split anew among the restored subtasks):

* a data generator: the index its next record has;
* a bounded source (a collection, a sequence, a bounded generator or file): finished, so
  a restored job does not read it again (Flink's finished operators stay finished);
* a monitored FileSource: the paths it saw, and the files not read to their end with the
  lines read of each (Flink's enumerator's and readers' state);
* a socket: Flink's socket source keeps nothing; flowmagic keeps the lines it had received
  but not yet processed, which a restored job processes before those of its new connection;
* a Spark streaming DataFrame (``from_spark``): nothing; Spark's own checkpoint of the job
  owns its offsets, and a restored job's source starts as its options say.

(Each source's feed says its position: :mod:`flowmagic.runtime.continuous.feeds`.)
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from flowmagic.errors import JobError
from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.key_groups import compute_key_group_range
from flowmagic.runtime.continuous.restore_check import compare_restore, program_operators, read_snapshot
from flowmagic.runtime.continuous.state_store import (
    MANIFEST,
    Manifest,
    OperatorState,
    StateFile,
    read_manifest,
    verify_snapshot,
    write_manifest,
)
from flowmagic.runtime.continuous.status import JobStatus
from flowmagic.runtime.continuous.storage import Storage, s3a_options
from flowmagic.runtime.metric_reports import CheckpointRecord
from flowmagic.runtime.plan import VertexPlan

__all__ = ["CHECKPOINT_HISTORY", "CheckpointStats", "CheckpointStore", "discard_savepoint"]

#: How many checkpoints the live view lists (Flink's ``web.checkpoints.history``).
CHECKPOINT_HISTORY = 10

#: How many of the newest epochs' manifests a job keeps (Spark replays at most its last batch).
_KEPT_EPOCHS = 3


@dataclass
class CheckpointStats:
    """What Flink's web UI shows in its Checkpoints tab."""

    completed: int = 0
    last_duration_ms: float | None = None
    last_size_bytes: int | None = None
    last_completed_at: float | None = None
    last_savepoint: str | None = None
    #: The latest completed checkpoints, oldest first.
    history: deque[CheckpointRecord] = field(default_factory=lambda: deque(maxlen=CHECKPOINT_HISTORY))


class CheckpointStore:
    """Where a continuous job's snapshots lie (``storage``, a directory of its own under the
    checkpoint storage), what it restores from, the checkpoints it retains, and the
    manifests and state it forgets."""

    def __init__(
        self,
        graph: ExecutionGraph,
        plans: dict[str, VertexPlan],
        job_id: str,
        *,
        spark: Any = None,
        checkpoint_storage: str | None = None,
        retention: str = "NO_EXTERNALIZED_CHECKPOINTS",
        retained: int = 1,
    ):
        self.graph = graph
        self.plans = plans
        self.spark = spark
        #: ``execution.checkpointing.externalized-checkpoint-retention`` and ``num-retained``.
        self.retention = retention
        self.retained_count = retained
        stream_graph = graph.job_graph.stream_graph
        self.operator_ids = {node_id: digest.hex() for node_id, digest in stream_graph.operator_hashes.items()}
        #: Operator id -> the rule its keyed state is filed by (its key_by's, see KeyHash).
        self.key_hashes = {
            self.operator_ids[node_id]: node.key_hash.name
            for plan in plans.values()
            for node_id, node in plan.nodes.items()
            if node_id in self.operator_ids
        }
        #: The temporary checkpoint directory when none was configured (gone with the job).
        self.temporary_root = None if checkpoint_storage is not None else tempfile.mkdtemp(prefix="flowmagic-job-")
        self.storage = self.open(checkpoint_storage or self.temporary_root or "").child(job_id)
        #: Where the state to restore lies: this job's checkpoint directory, or a savepoint's
        #: (or a retained checkpoint's job directory).
        self.restore_storage = self.storage
        #: The last completed epoch's manifest, or the snapshot restored from (None: none).
        self.previous: Manifest | None = None
        #: Whether ``previous`` is this job's own (an earlier epoch) rather than a savepoint's.
        self.own_previous = False
        #: This job's completed checkpoints it retains (``chk-<n>``), oldest first.
        self.retained: deque[Manifest] = deque()

    @property
    def own(self) -> Manifest | None:
        """The manifest of this job's last completed epoch (None: it completed none)."""
        return self.previous if self.own_previous else None

    def advance(self, manifest: Manifest) -> None:
        """An epoch completed with ``manifest``: the next restores from it."""
        self.previous = manifest
        self.own_previous = True
        self.restore_storage = self.storage

    def open(self, location: str) -> Storage:
        """``location``'s storage, with the S3A settings of the job's Spark session."""
        storage = Storage(location)
        if storage.is_local:
            return storage
        from flowmagic.runtime.spark.session import get_spark_session

        # The session's settings (spark.hadoop.* set in the builder or at run time).
        return Storage(location, s3a_options(get_spark_session(self.spark).conf.getAll))

    def manifests(self) -> list[str]:
        return [name for name in self.storage.list("manifests") if name.endswith(".json")]

    def restore_from(self, savepoint_path: str | None, allow_non_restored: bool) -> None:
        """Restore from the savepoint or retained checkpoint at ``savepoint_path`` (None: the
        job starts afresh; it never resumes another job's checkpoints unless told to, as in
        Flink), once its every file is checked."""
        if savepoint_path is None:
            return
        manifest, savepoint = read_snapshot(savepoint_path, self.open)
        # Every operator's verdict before anything runs: a refusal lists them all.
        program = program_operators(self.graph, self.plans)
        compare_restore(manifest, program, savepoint_path, self.graph.job_name, allow_non_restored).raise_if_refused()
        # Every file, before any task unpickles one: a damaged savepoint is one error now.
        verify_snapshot(savepoint, manifest, self.describe_operator)
        self.restore_storage = savepoint
        self.previous = manifest

    def describe_operator(self, operator_id: str) -> str:
        """An operator of a snapshot, by its name in this program and its ID."""
        nodes = self.graph.job_graph.stream_graph.nodes
        names = {hex_id: nodes[node_id].name for node_id, hex_id in self.operator_ids.items()}
        return f"{names[operator_id]!r} ({operator_id})" if operator_id in names else operator_id

    def source_plans(self) -> list[VertexPlan]:
        return [plan for plan in self.plans.values() if plan.nodes[plan.head].is_source]

    def source_positions_to_restore(self) -> dict[int, dict[str, Any]]:
        """Per source of this program, the position the snapshot restored from keeps under
        its operator ID (a source it does not know starts afresh)."""
        if self.previous is None:
            return {}
        positions = {}
        for plan in self.source_plans():
            state = self.previous.operators.get(self.operator_ids.get(plan.head, ""))
            if state is None or state.source is None:
                continue
            kind = str(plan.nodes[plan.head].operator.kind)
            if state.source.get("kind") != kind:
                raise JobError(
                    f"Cannot restore the source {plan.name!r} (operator {self.operator_ids[plan.head]}): the "
                    f"savepoint holds the position of a source of another kind ({state.source.get('kind')!r}, "
                    f"not {kind!r})."
                )
            positions[plan.head] = state.source
        return positions

    def discard(self, status: JobStatus) -> None:
        """Flink's ends of a job's checkpoints: deleted when it finishes, kept when it is
        cancelled only with RETAIN_ON_CANCELLATION, kept when it fails unless they are not
        externalized. With none kept, nothing in the job's directory is of use any more: it goes."""
        retention = self.retention
        kept = (status is JobStatus.CANCELED and retention == "RETAIN_ON_CANCELLATION") or (
            status is JobStatus.FAILED and retention != "NO_EXTERNALIZED_CHECKPOINTS"
        )
        if not (self.retained and kept):
            self.retained.clear()
            self.storage.remove_dir()

    def epoch_plan(self, epoch: int, ends: Callable[[], dict[int, int]]) -> tuple[int, dict[int, int]]:
        """The epoch's processing time and, per source with offsets, the end of its range
        (``ends()`` the first time): logged before it first runs, so a replay reads the same."""
        path = f"epochs/{epoch}"
        if self.storage.exists(path):
            logged = json.loads(self.storage.read(path))
            return int(logged["time"]), {int(node_id): int(end) for node_id, end in logged["ends"].items()}
        now, planned = int(time.time() * 1000), ends()
        self.storage.write(path, json.dumps({"time": now, "ends": planned}).encode())
        return now, planned

    def operator_state(self, operator_id: str, plan: VertexPlan) -> OperatorState:
        """An operator's entry in the manifest of the epoch its subtasks just wrote."""
        return OperatorState(plan.parallelism, plan.max_parallelism, key_hash=self.key_hashes[operator_id])

    def chain(self, operator_id: str, plan: VertexPlan, index: int) -> list[StateFile]:
        """The files of the last epoch's state of ``operator_id`` at subtask ``index``,
        which the subtask's changes of this epoch follow."""
        previous = self.previous
        if previous is None or not self.own_previous or operator_id not in previous.operators:
            return []
        key_groups = compute_key_group_range(plan.max_parallelism, plan.parallelism, index)
        first, last = key_groups.start, key_groups.stop - 1
        return [file for file in previous.operators[operator_id].files if (file.first, file.last) == (first, last)]

    def retain(self, manifest: Manifest) -> None:
        """Keep the completed checkpoint ``manifest`` as ``chk-<n>``, a manifest of the job's
        state files (not copies: a checkpoint costs one small file), and drop the oldest
        beyond ``execution.checkpointing.num-retained``."""
        write_manifest(self.storage, replace(manifest, root=".."), f"chk-{manifest.checkpoint}/{MANIFEST}")
        self.retained.append(manifest)
        while len(self.retained) > self.retained_count:
            self.storage.remove_dir(f"chk-{self.retained.popleft().checkpoint}")

    def forget_epoch_plan(self, epoch: int) -> None:
        """Delete the logged plan of ``epoch``, whose manifest is written: Spark replays at
        most its last batch, and a batch whose manifest exists returns before it reads the
        plan (each job has a directory of its own, so no other run left plans there)."""
        self.storage.remove(f"epochs/{epoch}")

    def forget_old_manifests(self, epoch: int) -> list[Manifest]:
        """Delete the manifests of all but the newest epochs, the state no kept manifest
        needs (a kept one may need state an older epoch wrote) and the logged plans of epochs
        now completed (a replay of them never runs); returns the kept manifests."""
        kept = []
        for name in self.manifests():
            if int(name[:-5]) <= epoch - _KEPT_EPOCHS:
                self.storage.remove(f"manifests/{name}")
            else:
                kept.append(read_manifest(self.storage, f"manifests/{name}"))
        needed = {path.split("/")[1] for manifest in kept for path in manifest.files()}
        needed.update(path.split("/")[1] for manifest in self.retained for path in manifest.files())
        for folder in self.storage.list("state"):
            if folder.startswith("epoch-") and folder not in needed and int(folder.rsplit("-", 1)[1]) <= epoch:
                self.storage.remove_dir(f"state/{folder}")
        self.forget_epoch_plan(epoch)
        return kept


def discard_savepoint(target: Storage, manifest: Manifest) -> None:
    """Delete the files a failed savepoint copied (its manifest, written last, was not)."""
    for path in manifest.files():
        with contextlib.suppress(OSError):
            target.remove(path)
