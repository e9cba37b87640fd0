"""``from pyflink... import ...`` resolved to flowmagic's modules, while a ``%%flow`` cell runs.

A PyFlink program pasted unchanged into a ``%%flow`` cell imports ``pyflink.datastream``,
``pyflink.common`` and their submodules. :func:`pyflink_imports` puts a finder first on
``sys.meta_path`` that loads ``pyflink.X`` as ``flowmagic.X`` (the same module objects, so
the classes the cell gets are flowmagic's, and functions using them pickle to Spark's
executors by reference to flowmagic's modules), and takes the aliases out of
``sys.modules`` when it ends. It only does so where PyFlink itself is not installed:
flowmagic never shadows a real PyFlink (see :func:`installed_pyflink`).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator
from types import ModuleType

from flowmagic.api.pyflink_modules import missing_module_error

__all__ = ["imports_pyflink", "installed_pyflink", "pyflink_imports"]

_PYFLINK = "pyflink"


def _is_pyflink(name: str) -> bool:
    return name == _PYFLINK or name.startswith(_PYFLINK + ".")


def imports_pyflink(source: str) -> bool:
    """Whether the (valid Python) ``source`` imports ``pyflink`` or one of its modules."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(_is_pyflink(alias.name) for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _is_pyflink(node.module):
            return True
    return False


def installed_pyflink() -> str | None:
    """Where a real PyFlink (``apache-flink``) is installed in this Python, else None."""
    spec = importlib.util.find_spec(_PYFLINK)
    if spec is None:
        return None
    return spec.origin or ", ".join(spec.submodule_search_locations or [_PYFLINK])


class _Aliases(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``pyflink.X`` and loads it as the module ``flowmagic.X``."""

    def __init__(self) -> None:
        self.loaded: list[str] = []

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not _is_pyflink(fullname):
            return None
        module = self._target(fullname)
        return importlib.util.spec_from_loader(fullname, self, is_package=hasattr(module, "__path__"))

    @staticmethod
    def _target(fullname: str) -> ModuleType:
        name = "flowmagic" + fullname[len(_PYFLINK) :]
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as missing:
            if missing.name is not None and not name.startswith(missing.name):
                raise
            raise missing_module_error(fullname) from None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        self.loaded.append(spec.name)
        return self._target(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        """The module is flowmagic's, already executed."""


@contextlib.contextmanager
def pyflink_imports() -> Iterator[None]:
    """While active, ``import pyflink...`` gives flowmagic's modules of the same names."""
    aliases = _Aliases()
    sys.meta_path.insert(0, aliases)
    try:
        yield
    finally:
        sys.meta_path.remove(aliases)
        for name in aliases.loaded:
            sys.modules.pop(name, None)
