"""Starting Spark for groupspec's engines: quiet, UI off, the package shipped to executors.

Every Spark pipeline of groupspec (the breadth-first search, swarm simulation, and bulk trace
validation) gets its `SparkContext` from `spark_context`, which

- checks first that Java and pyspark are there (`SparkUnavailable` names what to install);
- turns the web UI and the console progress bar off and sets Spark's log level (ERROR by
  default) through a log4j2 file shipped with the package, so the JVM's start-up banner and
  warnings stay out of the output; the few lines the JVM prints on every start whatever the
  configuration says are filtered from its standard error;
- for a local master (`local`, `local[N]`, `local[N,F]`, `local[*]`) runs the executors' Python
  workers with this interpreter, which already imports `groupspec`; for any other master zips
  the `groupspec` package (`package_zip`) and ships it with `SparkContext.addPyFile`;
- reuses a SparkContext already running in the process (a test fixture's, a notebook's) and
  leaves it running; a context it started, it stops.

pyspark is imported only here and only when a Spark engine is asked for, so the other commands
start as fast as before.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

DEFAULT_MASTER = "local[*]"
# The subpackages that make up the installed `groupspec` namespace (see pyproject.toml).
LOG4J_FILE = Path(__file__).with_name("log4j2.properties")
# Lines the JVM prints on every start that say nothing to a user of groupspec (Spark announces
# a shell's log level whatever the log4j configuration says, and PySpark starts as a shell).
_JVM_NOISE = (
    "WARNING: Using incubator modules",
    "Setting default log level to",
    "To adjust logging level use sc.setLogLevel",
)
_LOG_LEVELS = ("ALL", "DEBUG", "ERROR", "FATAL", "INFO", "OFF", "TRACE", "WARN")


class SparkError(Exception):
    """A Spark engine cannot run as asked (no Java, no pyspark, an unusable checkpoint); the
    message says why, in one line."""


class SparkUnavailable(SparkError, RuntimeError):
    """Spark cannot start here; the message says what to install."""


@dataclass(frozen=True)
class SparkSettings:
    """How to start Spark: the master URL, the log level, and any further `spark.*` settings."""

    master: str = DEFAULT_MASTER
    app_name: str = "groupspec"
    log_level: str = "ERROR"
    conf: Mapping[str, str] = field(default_factory=dict)


def java_problem() -> str | None:
    """Why Spark's JVM cannot start (no `java`), or None when it can."""
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").exists():
        return None
    if shutil.which("java"):
        return None
    return (
        "the Spark engine needs Java 17 or later, and no `java` is on PATH (nor in JAVA_HOME); "
        "install it, on Debian or Ubuntu: apt-get install openjdk-17-jre-headless"
    )


def pyspark_problem() -> str | None:
    """Why pyspark cannot be imported, or None when it can."""
    try:
        importlib.import_module("pyspark")
    except ImportError:
        return "the Spark engine needs pyspark: pip install 'groupspec[spark]' (or pyspark>=4)"
    return None


def is_local_master(master: str) -> bool:
    """Whether `master` runs everything in this machine's processes (local, local[N], ...)."""
    return master == "local" or master.startswith("local[")


def spark_conf_pairs(settings: SparkSettings) -> dict[str, str]:
    """Every `spark.*` setting groupspec starts Spark with, `settings.conf` last (it wins)."""
    if settings.log_level.upper() not in _LOG_LEVELS:
        raise ValueError(f"unknown log level {settings.log_level!r}; known: {_LOG_LEVELS}")
    pairs = {
        "spark.master": settings.master,
        "spark.app.name": settings.app_name,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # Cached levels and visited sets are pickles: compress them like shuffles are.
        "spark.rdd.compress": "true",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG4J_FILE.as_uri()}",
    }
    if is_local_master(settings.master):
        pairs["spark.pyspark.python"] = sys.executable
        pairs["spark.pyspark.driver.python"] = sys.executable
    pairs.update(settings.conf)
    return pairs


def package_zip(directory: Path) -> Path:
    """A zip of the `groupspec` package (every subpackage, with its data files) in `directory`.

    The zip holds `groupspec/spec/...`, `groupspec/models/...` and so on, whatever folders the
    installation maps them from. Installed, `groupspec` is a namespace package; zipimport does
    not find namespace packages, so the zip has an empty `groupspec/__init__.py`, and
    `import groupspec.models` works on an executor that has the zip on its path.
    """
    target = directory / "groupspec.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("groupspec/__init__.py", "")
        for name in _top_level_packages():
            module = importlib.import_module(f"groupspec.{name}")
            root = Path(module.__file__ or "").parent
            for path in sorted(root.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    relative = path.relative_to(root).as_posix()
                    archive.write(path, f"groupspec/{name}/{relative}")
    return target


def _top_level_packages() -> list[str]:
    """The names of the `groupspec` namespace's subpackages (spec, models, checker, ...)."""
    namespace = importlib.import_module("groupspec")
    return sorted(info.name for info in pkgutil.iter_modules(namespace.__path__) if info.ispkg)


def _forward(stream: IO[bytes]) -> None:
    """Copy the JVM's standard error to ours (whatever `sys.stderr` is at the time), leaving
    out its start-up noise."""
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace")
        if line.startswith(_JVM_NOISE):
            continue
        try:
            sys.stderr.write(line)
            sys.stderr.flush()
        except ValueError:  # a closed stream (a test's captured one): the line is dropped
            pass


def _start(settings: SparkSettings, scratch: Path) -> Any:
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if is_local_master(settings.master):
        # Spark warns when the host name resolves to a loopback address; locally it does not
        # matter which address Spark binds to. PySpark takes the executors' interpreter from
        # the environment, not from spark.pyspark.python.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = SparkConf().setAll(list(spark_conf_pairs(settings).items()))
    gateway = None
    if getattr(SparkContext, "_gateway", None) is None:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
        process = getattr(gateway, "proc", None)
        if process is not None and process.stderr is not None:
            threading.Thread(target=_forward, args=(process.stderr,), daemon=True).start()
    context = SparkContext(conf=conf, gateway=gateway)
    context.setLogLevel(settings.log_level.upper())
    if not is_local_master(settings.master):
        context.addPyFile(str(package_zip(scratch)))
    return context


@contextmanager
def spark_context(settings: SparkSettings | None = None) -> Iterator[Any]:
    """A running `SparkContext` (see the module docstring); raises `SparkUnavailable`."""
    settings = settings or SparkSettings()
    problem = pyspark_problem() or java_problem()
    if problem:
        raise SparkUnavailable(problem)
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        yield active
        return
    with tempfile.TemporaryDirectory(prefix="groupspec-spark-") as scratch:
        context = _start(settings, Path(scratch))
        try:
            yield context
        finally:
            context.stop()
