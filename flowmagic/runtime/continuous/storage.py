"""Where checkpoints and savepoints live: a local path, ``file://``, ``s3a://`` or ``hdfs://``.

Executors read and write state themselves (through pyarrow's file systems), so state never
travels through the driver. An ``s3a://`` location takes the S3A settings of the Spark
session that runs the job (``spark.hadoop.fs.s3a.endpoint``, ``.access.key``,
``.secret.key``, ``.endpoint.region``, ``.path.style.access``,
``.connection.ssl.enabled``), so the credentials Spark has are the ones flowmagic uses;
without them, pyarrow's own (the ``AWS_*`` variables, the instance's role). ``hdfs://``
needs Hadoop's native client (``libhdfs``, as pyarrow finds it through ``HADOOP_HOME`` or
``ARROW_LIBHDFS_DIR``).

Paths are relative to the directory and never leave it (no absolute path, no ``..``): a
manifest read from a savepoint names the files to read, and must not name others. A file is
written whole or not at all: a failed write (a full disk) leaves nothing behind, and names
the path and the cause.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from flowmagic.errors import JobError, StateIntegrityError, StorageError

__all__ = ["Storage", "outside", "s3a_options"]

#: Spark's S3A settings that flowmagic passes on to pyarrow's S3 file system.
_S3A_KEYS = (
    "fs.s3a.endpoint",
    "fs.s3a.access.key",
    "fs.s3a.secret.key",
    "fs.s3a.session.token",
    "fs.s3a.endpoint.region",
    "fs.s3a.path.style.access",
    "fs.s3a.connection.ssl.enabled",
)


def outside(relative: str) -> bool:
    """Whether ``relative`` could name a file outside the directory it is relative to."""
    return relative.startswith("/") or "\0" in relative or (".." in relative and ".." in relative.split("/"))


def s3a_options(spark_conf: Mapping[str, str]) -> dict[str, str]:
    """The S3A settings of a Spark configuration (``spark.hadoop.fs.s3a.*``), by Hadoop key."""
    return {key: spark_conf[f"spark.hadoop.{key}"] for key in _S3A_KEYS if f"spark.hadoop.{key}" in spark_conf}


class Storage:
    """A directory on some file system, addressed by paths relative to it (``/``-separated).

    Plain data (its URI and options): it pickles to executors, which open the file system
    when they first need it.
    """

    def __init__(self, location: str, options: Mapping[str, str] | None = None):
        self.location = location
        self.options = dict(options or {})
        self._opened: tuple[Any, str] | None = None
        scheme = urlsplit(location).scheme
        if scheme not in ("", "file", "s3a", "s3", "hdfs"):
            raise JobError(
                f"Checkpoint storage {location!r}: the continuous mode keeps state on a local path, file://, "
                "s3a:// or hdfs://."
            )

    def __getstate__(self) -> dict[str, Any]:
        return {"location": self.location, "options": self.options, "_opened": None}

    def __repr__(self) -> str:
        return f"Storage({self.location!r})"

    @property
    def is_local(self) -> bool:
        return urlsplit(self.location).scheme in ("", "file")

    @property
    def local_path(self) -> str:
        """The directory on this machine (local storage only)."""
        assert self.is_local, self.location
        parts = urlsplit(self.location)
        return os.path.abspath(parts.path if parts.scheme else self.location)

    def child(self, relative: str) -> Storage:
        """The storage of a directory under this one."""
        return Storage(posixpath.join(self.location.rstrip("/"), relative), self.options)

    def _open(self) -> tuple[Any, str]:
        if self._opened is None:
            self._opened = self._file_system()
        return self._opened

    def _file_system(self) -> tuple[Any, str]:
        from pyarrow import fs

        if self.is_local:
            return fs.LocalFileSystem(), self.local_path
        parts = urlsplit(self.location)
        if parts.scheme == "hdfs":
            try:
                return fs.HadoopFileSystem.from_uri(f"hdfs://{parts.netloc}"), parts.path
            except (OSError, RuntimeError) as error:
                raise JobError(
                    f"Checkpoint storage {self.location!r}: HDFS needs Hadoop's native client (libhdfs; set "
                    f"HADOOP_HOME or ARROW_LIBHDFS_DIR on the driver and the executors): {error}"
                ) from None
        options = self.options
        endpoint = options.get("fs.s3a.endpoint")
        secure = options.get("fs.s3a.connection.ssl.enabled", "true").lower() != "false"
        if endpoint is not None and "://" in endpoint:
            secure = endpoint.startswith("https://")
            endpoint = endpoint.split("://", 1)[1]
        s3 = fs.S3FileSystem(
            access_key=options.get("fs.s3a.access.key"),
            secret_key=options.get("fs.s3a.secret.key"),
            session_token=options.get("fs.s3a.session.token"),
            region=options.get("fs.s3a.endpoint.region"),
            endpoint_override=endpoint,
            scheme="https" if secure else "http",
            force_virtual_addressing=options.get("fs.s3a.path.style.access", "false").lower() == "false"
            and endpoint is None,
        )
        return s3, f"{parts.netloc}{parts.path}".rstrip("/")

    def path(self, relative: str) -> str:
        """``relative`` as a path of the file system (refused if it leaves this directory)."""
        if outside(relative):
            raise StateIntegrityError(f"{relative!r} names a path outside {self.location}: refused.")
        _file_system, root = self._open()
        return posixpath.join(root, relative) if relative else root

    def write(self, relative: str, data: bytes) -> None:
        """Write a file whole: readers see all of it or none (a local file is written beside
        its place and renamed into it; an object store's upload appears at once). A write
        that fails leaves nothing behind and raises :class:`StorageError` naming the path."""
        path = self.path(relative)
        try:
            if self.is_local:
                _write_local(path, data)
            else:
                file_system, _root = self._open()
                file_system.create_dir(posixpath.dirname(path), recursive=True)
                with file_system.open_output_stream(path) as stream:
                    stream.write(data)
        except OSError as cause:
            shown = path if self.is_local else posixpath.join(self.location.rstrip("/"), relative)
            error = StorageError(f"{cause.strerror}: {shown}" if cause.strerror else f"Cannot write {shown}: {cause}")
            error.errno = cause.errno
            raise error from None

    def read(self, relative: str) -> bytes:
        file_system, _root = self._open()
        path = self.path(relative)
        if self.is_local:
            # A link inside the directory must not lead a reader out of it either.
            real, root = os.path.realpath(path), os.path.realpath(self.local_path)
            if real != root and not real.startswith(root + os.sep):
                raise StateIntegrityError(f"{relative!r} leads outside {self.location} (to {real}): refused.")
        try:
            with file_system.open_input_stream(path) as stream:
                data: bytes = stream.read()
        except FileNotFoundError:
            raise
        except OSError as error:
            if "not found" in str(error).lower() or "does not exist" in str(error).lower():
                raise FileNotFoundError(path) from None
            raise
        return data

    def exists(self, relative: str) -> bool:
        from pyarrow import fs

        file_system, _root = self._open()
        return file_system.get_file_info(self.path(relative)).type != fs.FileType.NotFound

    def size(self, relative: str) -> int:
        file_system, _root = self._open()
        size: int = file_system.get_file_info(self.path(relative)).size
        return size

    def list(self, relative: str) -> list[str]:
        """The names in directory ``relative`` (none if it does not exist)."""
        from pyarrow import fs

        file_system, _root = self._open()
        selector = fs.FileSelector(self.path(relative), allow_not_found=True)
        return sorted(posixpath.basename(info.path) for info in file_system.get_file_info(selector))

    def remove(self, relative: str) -> None:
        file_system, _root = self._open()
        with contextlib.suppress(FileNotFoundError):
            file_system.delete_file(self.path(relative))

    def remove_dir(self, relative: str = "") -> None:
        file_system, _root = self._open()
        with contextlib.suppress(FileNotFoundError):
            file_system.delete_dir(self.path(relative))


def _write_local(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{uuid.uuid4().hex}.tmp"
    try:
        with open(temporary, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise
