"""The key that signs a user's checkpoints and savepoints, on the driver.

A manifest lists every file of its snapshot with its size and SHA-256, and is signed with an
HMAC-SHA256 under this key, so that what a restore unpickles is what this user's jobs wrote:
a file changed since, or a manifest written (or edited) by someone without the key, is
refused before anything is unpickled. The key is ``$FLOWMAGIC_STATE_KEY`` when set (the same
value on every machine a user's jobs run their drivers on), else the file
``$XDG_CONFIG_HOME/flowmagic/state.key`` (``~/.config/flowmagic/state.key``), created on first
use, readable by its owner only. It never leaves the driver: executors check the files they
read against the digests their task carries.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from flowmagic.errors import StateIntegrityError

__all__ = ["ENVIRONMENT_VARIABLE", "key_origin", "sign", "state_key", "verifies"]

#: The environment variable that gives the key itself (it wins over the key file).
ENVIRONMENT_VARIABLE = "FLOWMAGIC_STATE_KEY"
_SCHEME = "hmac-sha256"

# Key file path -> its key: read once per process (a driver signs a manifest every epoch).
_KEYS: dict[Path, bytes] = {}


def _key_file() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "flowmagic" / "state.key"


def key_origin() -> str:
    """Where the key comes from, for messages (never the key itself)."""
    if os.environ.get(ENVIRONMENT_VARIABLE):
        return f"${ENVIRONMENT_VARIABLE}"
    return str(_key_file())


def state_key() -> bytes:
    """This user's state key: ``$FLOWMAGIC_STATE_KEY``, or the key file (created if missing)."""
    given = os.environ.get(ENVIRONMENT_VARIABLE)
    if given:
        return given.encode()
    path = _key_file()
    key = _KEYS.get(path)
    if key is None:
        key = _KEYS[path] = _read_or_create(path)
    return key


def _read_or_create(path: Path) -> bytes:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Written whole beside its place, then linked in: two drivers starting at once both
        # end up with the one key that got there first.
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w") as file:
                file.write(secrets.token_hex(32) + "\n")
            with contextlib.suppress(FileExistsError):
                os.link(temporary, path)
        finally:
            os.unlink(temporary)
        return _read(path)
    except OSError as error:
        raise StateIntegrityError(
            f"Cannot create the state key {path}, which signs checkpoints and savepoints: {error}. Set "
            f"${ENVIRONMENT_VARIABLE} to a long random string instead."
        ) from None


def _read(path: Path) -> bytes:
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise StateIntegrityError(
            f"The state key {path} can be read or written by other users, who could then sign checkpoint "
            f"data that your jobs unpickle: run chmod 600 {path} (or set ${ENVIRONMENT_VARIABLE})."
        )
    key = path.read_text().strip()
    if not key:
        raise StateIntegrityError(f"The state key {path} is empty: delete it (a new key is made) or restore it.")
    return key.encode()


def sign(data: bytes, key: bytes) -> str:
    """The signature of ``data`` under ``key``."""
    return f"{_SCHEME}:{hmac.new(key, data, hashlib.sha256).hexdigest()}"


def verifies(data: bytes, signature: object, key: bytes) -> bool:
    """Whether ``signature`` is ``data``'s under ``key``."""
    return isinstance(signature, str) and hmac.compare_digest(signature, sign(data, key))
