"""Apache Kafka's broker jars, resolved from Maven Central into a cache once, found there after.

The release of each line ("4.x", "3.9") is pinned in this package's pom.xml, one Maven profile
per line. `install(line)` returns the folder of jars that makes up the class path of that
release's broker: `<cache>/<release>/libs/`, where `<cache>` is `$GROUPSPEC_KAFKA_CACHE`, else
`$XDG_CACHE_HOME/groupspec/kafka`, else `~/.cache/groupspec/kafka`. A missing or stale folder
(resolved from another pom.xml) is resolved again by `mvn dependency:copy-dependencies`, under a
lock (parallel test workers share the cache) into a scratch folder renamed into place at the
end, so a folder that exists is complete.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

POM_NAMESPACE = {"m": "http://maven.apache.org/POM/4.0.0"}
CACHE_VARIABLE = "GROUPSPEC_KAFKA_CACHE"
# The folder of a cached release: its jars, and the pom.xml they were resolved from.
LIBS, RESOLVED_FROM, MAVEN_LOG = "libs", "pom.xml", "mvn.log"
DEBIAN_PACKAGES = "apt-get install openjdk-17-jre-headless maven"


class KafkaSetupError(Exception):
    """What a Kafka broker needs is not there (java, mvn, the jars): one line saying what."""


def pom_text() -> bytes:
    """This package's pom.xml, as shipped."""
    return (resources.files(__package__) / "pom.xml").read_bytes()


def pinned_releases() -> dict[str, str]:
    """Each Kafka line the pom pins and its release: {"4.x": "4.4.0", "3.9": "3.9.2"}."""
    root = ElementTree.fromstring(pom_text())
    found = {}
    for profile in root.iterfind("m:profiles/m:profile", POM_NAMESPACE):
        line = profile.findtext("m:id", namespaces=POM_NAMESPACE)
        release = profile.findtext("m:properties/m:kafka.version", namespaces=POM_NAMESPACE)
        if line and release:
            found[line.strip()] = release.strip()
    return found


def pinned_release(line: str) -> str:
    """The release pinned for `line` (ValueError naming the lines there are)."""
    releases = pinned_releases()
    if line not in releases:
        raise ValueError(f"unknown Kafka line {line!r}; choose from {', '.join(releases)}")
    return releases[line]


def cache_root() -> Path:
    """Where resolved releases are kept (see the module docstring)."""
    explicit = os.environ.get(CACHE_VARIABLE)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "groupspec" / "kafka"


def release_folder(line: str) -> Path:
    """The cache folder of `line`'s pinned release (it may not exist yet)."""
    return cache_root() / pinned_release(line)


def installed(line: str) -> Path | None:
    """The jar folder of `line`'s release if it is in the cache and current, else None."""
    folder = release_folder(line)
    try:
        current = (folder / RESOLVED_FROM).read_bytes() == pom_text()
    except OSError:
        return None
    return folder / LIBS if current else None


def java_executable() -> str:
    """The `java` to run brokers with: `$JAVA_HOME/bin/java`, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").is_file():
        return str(Path(home, "bin", "java"))
    found = shutil.which("java")
    if found is None:
        raise KafkaSetupError(
            f"Apache Kafka's broker needs Java 17 or later and there is no `java` on PATH "
            f"(nor in JAVA_HOME); on Debian or Ubuntu: {DEBIAN_PACKAGES}"
        )
    return found


def install(line: str, say: Callable[[str], None] | None = None) -> Path:
    """The jar folder of `line`'s pinned release, resolved with Maven first if it is not cached
    (`say` hears a line before that); KafkaSetupError if it cannot be."""
    ready = installed(line)
    if ready is not None:
        return ready
    release = pinned_release(line)
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise KafkaSetupError(f"cannot create the Kafka cache {root}: {error.strerror}") from None
    with _locked(root / f"{release}.lock"):
        ready = installed(line)  # another process may have resolved it while we waited
        if ready is not None:
            return ready
        mvn = shutil.which("mvn")
        if mvn is None:
            raise KafkaSetupError(
                f"Apache Kafka {release} is not in {root} and resolving it needs Maven: there "
                f"is no `mvn` on PATH; on Debian or Ubuntu: {DEBIAN_PACKAGES}"
            )
        if say is not None:
            say(f"resolving Apache Kafka {release} from Maven Central into {root / release}")
        _resolve(mvn, line, release, root)
    ready = installed(line)
    assert ready is not None, "a resolved release is installed"
    return ready


def _resolve(mvn: str, line: str, release: str, root: Path) -> None:
    """Resolve `release` into a scratch folder under `root`, then rename it into place."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{release}.partial-", dir=root))
    try:
        pom = scratch / RESOLVED_FROM
        pom.write_bytes(pom_text())
        command = [
            mvn,
            "-B",
            "-q",
            "-Dstyle.color=never",
            "-f",
            str(pom),
            "-P",
            line,
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={scratch / LIBS}",
        ]
        log = root / f"{release}.{MAVEN_LOG}"
        with log.open("w", encoding="utf-8") as output:
            done = subprocess.run(
                command, cwd=scratch, stdout=output, stderr=subprocess.STDOUT, check=False
            )
        jars = list((scratch / LIBS).glob("*.jar"))
        if done.returncode != 0 or not jars:
            raise KafkaSetupError(
                f"mvn could not resolve Apache Kafka {release} (exit {done.returncode}): "
                f"{_last_error(log)} (whole output: {log})"
            )
        folder = root / release
        if folder.exists():  # a stale release (resolved from another pom.xml)
            shutil.rmtree(folder)
        scratch.rename(folder)
        log.unlink()
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)


def _last_error(log: Path) -> str:
    """The first line of Maven's output that says ERROR, else its last line."""
    lines = [line.strip() for line in log.read_text(encoding="utf-8", errors="replace").split("\n")]
    lines = [line for line in lines if line]
    errors = [line for line in lines if line.startswith("[ERROR]")]
    if errors:
        return errors[0]
    return lines[-1] if lines else "no output"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) meanwhile."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
