"""Where checkpoints and savepoints live: a local path, ``file://``, ``s3a://`` or ``hdfs://``.

Executors read and write state themselves (through pyarrow's file systems), so state never
travels through the driver. An ``s3a://`` location takes the S3A settings of the Spark
session that runs the job (``spark.hadoop.fs.s3a.endpoint``, ``.access.key``,
``.secret.key``, ``.endpoint.region``, ``.path.style.access``,
``.connection.ssl.enabled``), so the credentials Spark has are the ones flowmagic uses;
without them, pyarrow's own (the ``AWS_*`` variables, the instance's role). ``hdfs://``
needs Hadoop's native client (``libhdfs``, as pyarrow finds it through ``HADOOP_HOME`` or
``ARROW_LIBHDFS_DIR``).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from flowmagic.errors import JobError

__all__ = ["Storage", "s3a_options"]

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
        """``relative`` as a path of the file system."""
        _file_system, root = self._open()
        return posixpath.join(root, relative) if relative else root

    def write(self, relative: str, data: bytes) -> None:
        """Write a file whole: readers see all of it or none (a local file is renamed into
        place; an object store's upload appears at once)."""
        file_system, _root = self._open()
        path = self.path(relative)
        file_system.create_dir(posixpath.dirname(path), recursive=True)
        target = f"{path}.{uuid.uuid4().hex}.tmp" if self.is_local else path
        with file_system.open_output_stream(target) as stream:
            stream.write(data)
        if self.is_local:
            os.replace(target, path)

    def read(self, relative: str) -> bytes:
        file_system, _root = self._open()
        try:
            with file_system.open_input_stream(self.path(relative)) as stream:
                data: bytes = stream.read()
        except FileNotFoundError:
            raise
        except OSError as error:
            if "not found" in str(error).lower() or "does not exist" in str(error).lower():
                raise FileNotFoundError(self.path(relative)) from None
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
