"""flowmagic itself, shipped to executors that do not have it installed (a cluster)."""

from __future__ import annotations

import os
import tempfile
import zipfile
from typing import Any

__all__ = ["ship_flowmagic"]

_SHIPPED: set[str] = set()
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ship_flowmagic(sc: Any) -> None:
    """Add flowmagic as a zip to ``sc``'s Python path, once per SparkContext."""
    if sc.applicationId in _SHIPPED:
        return
    archive = os.path.join(tempfile.mkdtemp(prefix="flowmagic-"), "flowmagic.zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bundle:
        for root, directories, files in os.walk(_PACKAGE):
            directories[:] = [d for d in directories if d != "__pycache__"]
            for name in files:
                path = os.path.join(root, name)
                bundle.write(path, os.path.relpath(path, os.path.dirname(_PACKAGE)))
    sc.addPyFile(archive)
    _SHIPPED.add(sc.applicationId)
