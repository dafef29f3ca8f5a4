"""One Apache Kafka broker as a child process: KRaft, broker and controller in one JVM, on
loopback, for recording the reference behaviour (docs/kafka.md); or one node of a cluster of
several (`ClusterNode`, started by record/kafka/cluster.py with `launch`).

`KafkaBroker.start` finds the release's jars (installing them on first use), writes
server.properties into the data directory, formats the storage there unless it already is,
starts `java ... kafka.Kafka server.properties` with its log (stdout and stderr) in
`<data dir>/broker.log`, and returns once the broker is ready for groups (`readiness`).
`stop` asks it to shut down (SIGTERM, which Kafka answers with a controlled shutdown) and
removes the data directory if it was a temporary one. Both JVMs map the release's class archive
(`class_archive`), which the first broker of a release writes when it stops.
"""

from __future__ import annotations

import asyncio
import base64
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from groupspec.wire.address import Address, free_port

from .class_archive import ClassArchive, archive_path
from .install import install, java_executable, pinned_release
from .readiness import NotReadyError, await_ready
from .settings import (
    KAFKA_4X,
    ORACLE_PROFILE,
    broker_properties,
    consumer_group_header,
    consumer_group_overrides,
    consumer_group_properties,
    group_settings,
    header_settings,
)

HOST = "127.0.0.1"
PROPERTIES, LOG, FORMAT_LOG, STORAGE = "server.properties", "broker.log", "format.log", "kraft"
READY_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 60.0
HEAP = "512m"
# A port picked free may be taken by someone else before the broker binds it: try again.
START_ATTEMPTS = 3
# The JVM flags of Kafka's own start script (bin/kafka-run-class.sh) that matter here, a smaller
# heap than its 1 GiB, and slf4j-simple's log format (the pom's binding): timestamps, INFO.
JVM_OPTIONS = (
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-Djava.awt.headless=true",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
    "-Dorg.slf4j.simpleLogger.showDateTime=true",
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSS",
)
# The storage tool runs for a second: no need for the optimizing compiler.
TOOL_OPTIONS = ("-Xmx256m", "-XX:TieredStopAtLevel=1")


class BrokerStartError(Exception):
    """The broker did not start or did not become ready (the message names its log)."""


def cluster_id() -> str:
    """A random KRaft cluster id, as `kafka-storage random-uuid` prints one: 16 random bytes in
    URL-safe base64 without padding, never starting with '-' (a command line would read it as
    an option)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


@dataclass(frozen=True)
class ClusterNode:
    """A broker's place in a cluster of several (record/kafka/cluster.py): its node id, whether
    it is also the KRaft controller, the quorum it registers with, the cluster id its storage is
    formatted with, the replication factor of the internal topics, the port of the listener
    the brokers replicate over, the port clients are told to use (None: the client port; a
    recorder's port records this broker byte-transparently), and the controller's port (the
    controller's own node only)."""

    node_id: int
    controller: bool
    voters: str
    cluster_id: str
    replication: int
    internal_port: int
    advertised_port: int | None = None
    controller_port: int = 0


@dataclass
class StartupTimes:
    """Seconds from `start` to each milestone of the last start (None: not reached)."""

    formatted_s: float | None = None  # the storage formatted (or found formatted)
    answered_s: float | None = None  # the first ApiVersions answered
    ready_s: float | None = None  # ready for groups (readiness)


class KafkaBroker:
    """One single-node Kafka broker (see the module docstring); a context manager."""

    def __init__(
        self,
        line: str = KAFKA_4X,
        port: int = 0,
        data_dir: Path | None = None,
        settings: Mapping[str, Any] | None = None,
        node: ClusterNode | None = None,
        consumer_groups: Mapping[str, int] | None = None,
    ) -> None:
        """A broker of Kafka `line` ("4.x" or "3.9") on loopback port `port` (0: any free one),
        keeping its data in `data_dir` (None: a temporary directory removed by `stop`), with
        the group settings `settings` overrides (header names; ValueError if a broker cannot
        take one); one node of a cluster if `node` is given (then `port` must be given and
        `launch` starts it), and the consumer-protocol settings `consumer_groups` overrides
        (settings.CONSUMER_GROUP_OVERRIDABLE). Nothing starts before `start` or `launch`."""
        if line not in ORACLE_PROFILE:
            raise ValueError(
                f"unknown Kafka line {line!r}; choose from {', '.join(ORACLE_PROFILE)}"
            )
        self.line = line
        self.release = pinned_release(line)
        self.settings = group_settings(settings)
        self.consumer_groups = consumer_group_overrides(line, consumer_groups)
        self.node = node
        self._wanted_port = port
        self._given_data_dir = data_dir
        self.data_dir: Path | None = data_dir
        self.port = port
        self.controller_port = node.controller_port if node is not None else 0
        self.startup = StartupTimes()
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._archive: ClassArchive | None = None

    @property
    def address(self) -> Address:
        """Where clients connect (the PLAINTEXT listener)."""
        return Address(HOST, self.port)

    @property
    def bootstrap(self) -> str:
        """`host:port` for a client's bootstrap.servers."""
        return str(self.address)

    @property
    def pid(self) -> int | None:
        """The broker JVM's process id while it runs."""
        return self._process.pid if self._process is not None else None

    @property
    def log_path(self) -> Path:
        """The broker's log (its stdout and stderr)."""
        assert self.data_dir is not None, "the broker has a data directory once started"
        return self.data_dir / LOG

    def header_settings(self) -> dict[str, Any]:
        """The trace header's coordinator settings of this broker."""
        return header_settings(self.line, self.settings)

    def consumer_group_header(self, topics: list[dict[str, Any]]) -> dict[str, Any]:
        """The trace header's consumer-protocol settings of this broker holding `topics`."""
        return consumer_group_header(self.line, topics, self.consumer_groups)

    @property
    def title(self) -> str:
        """`Apache Kafka 4.4.0 (KRaft, one node)`, or `... (KRaft, node 2)` in a cluster."""
        where = "one node" if self.node is None else f"node {self.node.node_id}"
        return f"Apache Kafka {self.release} (KRaft, {where})"

    def describe(self) -> str:
        """`Apache Kafka 4.4.0 (KRaft, one node) at 127.0.0.1:PORT`."""
        return f"{self.title} at {self.address}"

    def start(self, say: Callable[[str], None] | None = None) -> None:
        """Start the broker and return once it is ready for groups; KafkaSetupError if java or
        the jars are missing, BrokerStartError if it does not start. `say` hears progress."""
        if self.node is not None:
            raise RuntimeError("a cluster's node is started with launch(), by its cluster")
        java, libs = self._prepare(say)
        started = time.monotonic()
        self.startup = StartupTimes()
        try:
            for attempt in range(1, START_ATTEMPTS + 1):
                self.port = self._wanted_port or free_port()
                self.controller_port = free_port()
                self._write_properties()
                self._format(java, libs)
                self.startup.formatted_s = time.monotonic() - started
                self._launch(java, libs)
                try:
                    self._await_ready(started)
                    break
                except BrokerStartError:
                    retry = attempt < START_ATTEMPTS and self._port_was_taken()
                    self._terminate()
                    if not retry:
                        raise
        except BrokerStartError:
            raise  # the data directory stays: it holds the log the error names
        except BaseException:
            self.stop()
            raise
        self.startup.ready_s = time.monotonic() - started

    def launch(self, say: Callable[[str], None] | None = None) -> None:
        """Format the storage and start the JVM of a cluster's node without waiting for it
        (the cluster waits for all its nodes at once); KafkaSetupError if java or the jars are
        missing, BrokerStartError if the storage tool fails."""
        if self.node is None or not self._wanted_port:
            raise RuntimeError("launch() starts a cluster's node on a given port")
        if self._process is not None:
            raise RuntimeError("the broker is already running")
        java, libs = self._prepare(say)
        try:
            self._write_properties()
            self._format(java, libs)
            self._launch(java, libs)
        except BrokerStartError:
            raise
        except BaseException:
            self.stop()
            raise

    def port_was_taken(self) -> bool:
        """Whether the broker's log says one of its listeners could not bind its port."""
        return "Address already in use" in self.log_path.read_text(errors="replace")

    def stop(self, keep_data: bool = False) -> int | None:
        """Shut the broker down (SIGTERM, then SIGKILL after STOP_TIMEOUT_S) and remove a
        temporary data directory unless `keep_data`; the JVM's exit code, None if it was not
        running."""
        code = self._terminate()
        if self._given_data_dir is None and self.data_dir is not None and not keep_data:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None
        return code

    def running(self) -> bool:
        """Whether the broker process is alive."""
        return self._process is not None and self._process.poll() is None

    def wait(self) -> int:
        """Block until the broker process exits by itself; its exit code."""
        assert self._process is not None, "the broker was started"
        return self._process.wait()

    def __enter__(self) -> KafkaBroker:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def _prepare(self, say: Callable[[str], None] | None) -> tuple[str, Path]:
        """`java` and the release's jars (installed on first use); the data directory made."""
        java = java_executable()
        libs = install(self.line, say)
        self._archive = ClassArchive(archive_path(libs.parent, java))
        if self.data_dir is None:
            self.data_dir = Path(tempfile.mkdtemp(prefix="groupspec-kafka-"))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        return java, libs

    def _write_properties(self) -> None:
        assert self.data_dir is not None
        lines = self._single_node_lines() if self.node is None else self._cluster_node_lines()
        text = "".join(f"{key}={value}\n" for key, value in lines.items())
        header = f"# Apache Kafka {self.release}, written by groupspec (docs/kafka.md)\n"
        (self.data_dir / PROPERTIES).write_text(header + text, encoding="utf-8")

    def _cluster_node_lines(self) -> dict[str, str]:
        """One node of several: the controller (also a broker) or a broker only; clients on
        PLAINTEXT (advertised as the node's recorder if it has one), brokers replicating over
        INTERNAL, so a recorder sees client traffic only."""
        assert self.data_dir is not None and self.node is not None
        node = self.node
        advertised = node.advertised_port or self.port
        listeners = [f"PLAINTEXT://{HOST}:{self.port}", f"INTERNAL://{HOST}:{node.internal_port}"]
        if node.controller:
            listeners.append(f"CONTROLLER://{HOST}:{node.controller_port}")
        replication = str(node.replication)
        return {
            "process.roles": "broker,controller" if node.controller else "broker",
            "controller.quorum.voters": node.voters,
            "listeners": ",".join(listeners),
            "advertised.listeners": (
                f"PLAINTEXT://{HOST}:{advertised},INTERNAL://{HOST}:{node.internal_port}"
            ),
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "INTERNAL",
            "listener.security.protocol.map": (
                "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT"
            ),
            "log.dirs": str(self.data_dir / STORAGE),
            # Every broker holds a replica of the offsets topic, so its leadership can move.
            "offsets.topic.replication.factor": replication,
            "transaction.state.log.replication.factor": replication,
            "transaction.state.log.min.isr": "1",
            **broker_properties(self.settings),
            # After the settings: broker_id is the header's, node.id each node's own.
            "node.id": str(node.node_id),
        }

    def _single_node_lines(self) -> dict[str, str]:
        assert self.data_dir is not None
        node = self.settings["broker_id"]
        return {
            "process.roles": "broker,controller",
            "controller.quorum.voters": f"{node}@{HOST}:{self.controller_port}",
            "listeners": f"PLAINTEXT://{HOST}:{self.port},CONTROLLER://{HOST}:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{HOST}:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.data_dir / STORAGE),
            # One node: every internal topic has one replica.
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            **broker_properties(self.settings),
            **consumer_group_properties(self.line, self.consumer_groups),
        }

    def _format(self, java: str, libs: Path) -> None:
        """Format the storage unless an earlier run did (a kept --data-dir restarts)."""
        assert self.data_dir is not None
        if (self.data_dir / STORAGE / "meta.properties").exists():
            return
        assert self._archive is not None
        command = [
            java,
            *TOOL_OPTIONS,
            *self._archive.use_options(),
            "-cp",
            f"{libs}/*",
            "kafka.tools.StorageTool",
            "format",
            "-t",
            self.node.cluster_id if self.node is not None else cluster_id(),
            "-c",
            str(self.data_dir / PROPERTIES),
        ]
        log = self.data_dir / FORMAT_LOG
        with log.open("wb") as output:
            done = subprocess.run(command, stdout=output, stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            raise BrokerStartError(
                f"Kafka {self.release}'s storage tool failed (exit {done.returncode}): "
                f"{_last_line(log)} (whole output: {log})"
            )

    def _launch(self, java: str, libs: Path) -> None:
        assert self.data_dir is not None
        assert self._archive is not None
        command = [
            java,
            f"-Xmx{HEAP}",
            *JVM_OPTIONS,
            *self._archive.broker_options(),
            "-cp",
            f"{libs}/*",
            "kafka.Kafka",
            str(self.data_dir / PROPERTIES),
        ]
        # Closed in _terminate: it must outlive this call, as the broker does.
        self._log = (self.data_dir / LOG).open("ab")
        self._process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT
        )

    def _await_ready(self, started: float) -> None:
        def answered() -> None:
            if self.startup.answered_s is None:
                self.startup.answered_s = time.monotonic() - started

        try:
            asyncio.run(await_ready(self.address, self.running, READY_TIMEOUT_S, answered))
        except NotReadyError as error:
            raise BrokerStartError(
                f"Apache Kafka {self.release} did not become ready: {error}; see {self.log_path}"
                f"{first_error_suffix(self.log_path)}"
            ) from None

    def _port_was_taken(self) -> bool:
        """Whether the log says a listener could not bind, and the ports were picked here."""
        return not self._wanted_port and self.port_was_taken()

    def _terminate(self) -> int | None:
        process, self._process = self._process, None
        code = None
        if process is not None:
            process.terminate()
            try:
                code = process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                code = process.wait()
            if self._archive is not None:
                self._archive.keep(code)
        if self._log is not None:
            self._log.close()
            self._log = None
        return code


def _last_line(path: Path) -> str:
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


def first_error_suffix(path: Path) -> str:
    """The log's first ERROR line (Kafka's reason for stopping), as a suffix."""
    for line in path.read_text(errors="replace").splitlines():
        if " ERROR " in line or "Exception" in line:
            return f" (first error: {line.strip()})"
    return ""
