"""A continuous job's FileSink commits, on the driver: Flink's two-phase commit by checkpoints.

Writers hand on the part files they rolled in an epoch (committables) and the path of the
file they keep open. The driver keeps the committables until a checkpoint completes, and
every epoch's manifest lists those not yet committed, so that a restored job commits them
again (committing is idempotent). A checkpoint's epoch, a savepoint's, and the job's last
epoch commit them once their manifest is written.

Files of attempts that failed are nobody's: the open file a retry restores is truncated to
its checkpointed length, and the driver deletes, between epochs, the in-progress files of
its writers that neither a writer keeps open nor a committable names.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from typing import Any

from flowmagic.runtime.connectors.file_sink import commit_part, writer_of

__all__ = ["FileCommits"]


class FileCommits:
    """The committables of a continuous job's file sinks, from the epoch that rolled them
    to the checkpoint that commits them."""

    def __init__(self, directories: Iterable[str], pending: Iterable[tuple[str, str]] = ()):
        self.directories = list(directories)
        #: Rolled part files not yet committed: (in-progress path, final path).
        self.pending: list[tuple[str, str]] = [(in_progress, final) for in_progress, final in pending]
        #: The files the writers keep open (reported by the last epoch that ran).
        self.in_use: set[str] = set()
        #: The ids of this job's writers, known from their files.
        self.writers: set[str] = set()
        #: The directories the writers wrote files in: the base paths and their buckets.
        self.directories_seen: set[str] = set(self.directories)
        for in_progress, _final in self.pending:
            self._note_writer(in_progress)

    def _note_writer(self, in_progress: str) -> None:
        writer = writer_of(os.path.basename(in_progress))
        if writer is not None:
            self.writers.add(writer)
        # A bucket's directory (a date-time bucket under the base path, say).
        self.directories_seen.add(os.path.dirname(in_progress))

    def begin_epoch(self) -> None:
        """An epoch's Spark job ran: its writers report the files they keep open anew."""
        self.in_use = set()

    def take(self, payload: Any) -> None:
        """A committer's result: a rolled file to commit, or the open file of a writer."""
        action, in_progress, final = payload
        self._note_writer(in_progress)
        if action == "commit":
            self.pending.append((in_progress, final))
        else:
            self.in_use.add(in_progress)

    def commit(self) -> list[str]:
        """Publish every pending file (after the manifest that lists them was written)."""
        committed = []
        for in_progress, final in self.pending:
            commit_part(in_progress, final)
            committed.append(final)
        self.pending.clear()
        return committed

    def delete_orphans(self) -> None:
        """Delete the in-progress files this job's writers left in failed attempts (called
        between epochs, when no writer runs)."""
        kept = self.in_use | {in_progress for in_progress, _final in self.pending}
        for directory in sorted(self.directories_seen):
            with contextlib.suppress(OSError):
                for name in os.listdir(directory):
                    path = os.path.join(directory, name)
                    if writer_of(name) in self.writers and path not in kept:
                        with contextlib.suppress(OSError):
                            os.remove(path)
