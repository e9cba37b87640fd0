"""flowmagic as the zip it ships itself as: what a worker's Python imports from it."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import textwrap

from pyspark import SparkFiles

from flowmagic.runtime.spark.shipping import ship_flowmagic

_IMPORT = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import flowmagic.runtime.continuous.epoch as epoch, flowmagic.runtime.spark.subtask as subtask
    print(json.dumps([epoch.__file__, subtask.__file__]))
    """
)


def test_workers_import_flowmagic_compiled_from_the_shipped_zip(spark, tmp_path) -> None:
    ship_flowmagic(spark.sparkContext)
    # The zip as Spark hands it to the workers (a copy in the context's files directory).
    archive = min(glob.glob(os.path.join(SparkFiles.getRootDirectory(), "**", "flowmagic.zip"), recursive=True))
    # A Python of its own, as a worker's, where only the zip has flowmagic.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    run = subprocess.run(
        [sys.executable, "-c", _IMPORT, archive], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    files = json.loads(run.stdout)
    # Loaded from the pycs beside the sources, rather than compiled again in every worker.
    assert all(file.startswith(archive) and file.endswith(".pyc") for file in files), files
