"""The brokers a workload records: `groupspec serve`, librdkafka's mock cluster, Apache Kafka's
own broker (4.x or 3.9), or one running at an address you give.

A target is opened before the recording proxy (the proxy needs its address), then told where
the proxy listens (`attach`): `groupspec serve` starts only then, advertising the proxy's port
so the proxy forwards bytes unchanged; the mock cluster, Kafka and other brokers advertise
themselves, so the proxy rewrites their addresses (`advertise_self`).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from typing import IO, Any

from groupspec.record.kafka.broker import KafkaBroker
from groupspec.record.kafka.settings import KAFKA_3_9, KAFKA_4X
from groupspec.wire.address import Address, free_port
from groupspec.wire.reachability import probe_broker

SERVE_INITIAL_REBALANCE_DELAY_MS = 500
SERVE_MIN_SESSION_TIMEOUT_MS = 6000
# librdkafka's mock cluster: group.initial.rebalance.delay.ms is 3000 and the Python client
# cannot change it (rd_kafka_mock_group_initial_rebalance_delay_ms is C only).
MOCK_INITIAL_REBALANCE_DELAY_MS = 3000
# The mock answers kafka-python's ApiVersions v4 probe with an error body in the flexible
# format, which kafka-python cannot read; a fixed broker version 2.3 makes it ask v2.
MOCK_KAFKA_PYTHON_API_VERSION = (2, 3)
START_TIMEOUT_S = 60.0
# The --target names of Apache Kafka's brokers, and the Kafka line each runs.
KAFKA_TARGETS = {"kafka": KAFKA_4X, "kafka-3.9": KAFKA_3_9}
TARGET_NAMES = "serve, mock, kafka, kafka-3.9 or HOST:PORT"


class Target:
    """A broker to record (see the module docstring); this base is one already running."""

    kind = "broker"
    advertise_self = True

    def __init__(self, upstream: Address, coordinator: dict[str, Any] | None = None) -> None:
        self.upstream = upstream
        self.coordinator = dict(coordinator or {})
        self.kafka_python_options: dict[str, Any] = {}

    def open(self) -> None:
        """Make sure a broker answers at `upstream` (NotABrokerError if not)."""
        asyncio.run(probe_broker(self.upstream))

    def attach(self, proxy: Address) -> None:
        """The recording proxy listens at `proxy` now."""

    def close(self) -> None:
        """Stop what `open` started."""

    def describe(self) -> str:
        """The trace header's source."""
        return f"broker at {self.upstream}"

    def create_topic(self, bootstrap: str, name: str, partitions: int) -> int:
        """Create topic `name` through `bootstrap` (CreateTopics); its partition count."""
        from kafka import KafkaAdminClient

        admin = KafkaAdminClient(bootstrap_servers=bootstrap, **self.kafka_python_options)
        try:
            admin.create_topics({name: {"num_partitions": partitions, "replication_factor": 1}})
        finally:
            admin.close()
        return partitions

    def consumer_options(self) -> dict[str, str]:
        """Extra flags for the consumer processes."""
        version = self.kafka_python_options.get("api_version")
        return {"api_version": ".".join(map(str, version))} if version else {}


class ServeTarget(Target):
    """`groupspec serve` as a process on loopback, advertising the proxy's port."""

    kind = "serve"
    advertise_self = False

    def __init__(
        self, settings: dict[str, Any] | None = None, *, several_recordings: bool = False
    ) -> None:
        super().__init__(
            Address("127.0.0.1", free_port()),
            {
                "group_initial_rebalance_delay_ms": SERVE_INITIAL_REBALANCE_DELAY_MS,
                "group_min_session_timeout_ms": SERVE_MIN_SESSION_TIMEOUT_MS,
                **(settings or {}),
            },
        )
        # One server for several recordings advertises itself, and each recorder rewrites it.
        self.advertise_self = several_recordings
        self._process: subprocess.Popen[str] | None = None
        self._log: IO[str] | None = None

    def open(self) -> None:
        """Start the server now if it serves several recordings; otherwise it starts once it
        knows the proxy's port."""
        if self.advertise_self:
            self._start(self.upstream)

    def attach(self, proxy: Address) -> None:
        """Start the server on `upstream`, advertising `proxy`, unless it runs already."""
        if not self.advertise_self:
            self._start(proxy)

    def _start(self, advertised: Address) -> None:
        """Start the server on `upstream`, advertising `advertised`; wait until it listens."""
        settings = [
            f"--coordinator-setting={name}={value}" for name, value in self.coordinator.items()
        ]
        # Closed in close(): it must outlive this call, as the server does.
        self._log = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "groupspec.cli.main",
                "serve",
                "--host",
                self.upstream.host,
                "--port",
                str(self.upstream.port),
                "--advertised-host",
                advertised.host,
                "--advertised-port",
                str(advertised.port),
                *settings,
            ],
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if "listening on" not in line:
            self._process.kill()
            self._process.communicate(timeout=START_TIMEOUT_S)
            raise RuntimeError(f"groupspec serve did not start: {line}{self.log()}".strip())

    def log(self) -> str:
        """What the server wrote to stderr so far."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read()

    def close(self) -> None:
        """Stop the server (SIGTERM, as a user would)."""
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.communicate(timeout=START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.communicate()
            self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def describe(self) -> str:
        """The trace header's source."""
        return f"groupspec serve at {self.upstream}"


class MockTarget(Target):
    """librdkafka's mock cluster (one broker) inside this process, kept alive by a
    confluent-kafka producer handle until `close`."""

    kind = "mock"

    def __init__(self) -> None:
        super().__init__(
            Address("127.0.0.1", 0),
            {"group_initial_rebalance_delay_ms": MOCK_INITIAL_REBALANCE_DELAY_MS},
        )
        self.kafka_python_options = {"api_version": MOCK_KAFKA_PYTHON_API_VERSION}
        self._handle: Any = None

    def open(self) -> None:
        """Start the mock cluster and read its broker's address from its metadata."""
        from confluent_kafka import Producer

        self._handle = Producer({"test.mock.num.brokers": 1, "log_level": 3})
        brokers = list(self._handle.list_topics(timeout=START_TIMEOUT_S).brokers.values())
        if len(brokers) != 1:
            raise RuntimeError(f"the mock cluster lists {len(brokers)} brokers, not 1")
        self.upstream = Address(brokers[0].host, brokers[0].port)
        asyncio.run(probe_broker(self.upstream))

    def close(self) -> None:
        """Drop the handle: librdkafka destroys the mock cluster with it."""
        self._handle = None

    def describe(self) -> str:
        """The trace header's source."""
        from confluent_kafka import libversion

        return f"librdkafka {libversion()[0]} mock cluster at {self.upstream}"

    def create_topic(self, bootstrap: str, name: str, partitions: int) -> int:
        """The mock has no CreateTopics: a Metadata request creates the topic with the mock's
        default partition count (4), which is returned."""
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=bootstrap, **self.kafka_python_options)
        try:
            found = producer.partitions_for(name)
        finally:
            producer.close()
        if not found:
            raise RuntimeError(f"the mock cluster did not create topic {name}")
        return len(found)


class KafkaTarget(Target):
    """Apache Kafka's broker: a fresh one started by `open` and stopped by `close` (a temporary
    data directory each time), or one already running that is shared (`shared`) and left
    running. Its trace header carries the broker's group settings (record/kafka/settings.py)."""

    kind = "kafka"

    def __init__(
        self,
        line: str = KAFKA_4X,
        settings: dict[str, Any] | None = None,
        shared: KafkaBroker | None = None,
    ) -> None:
        broker = shared if shared is not None else KafkaBroker(line, settings=settings)
        super().__init__(broker.address, broker.header_settings())
        self.broker = broker
        self._owned = shared is None
        if not self._owned:
            # A shared broker keeps earlier runs' groups: name each run's group afresh.
            self.kind = "broker"

    def open(self) -> None:
        """Start the broker (KafkaSetupError, BrokerStartError if it cannot), or make sure the
        shared one answers."""
        if self._owned:
            self.broker.start(lambda line: print(f"groupspec: {line}", file=sys.stderr))
        self.upstream = self.broker.address
        asyncio.run(probe_broker(self.upstream))

    def close(self) -> None:
        """Stop the broker this target started."""
        if self._owned:
            self.broker.stop()

    def describe(self) -> str:
        """The trace header's source."""
        return self.broker.describe()


def configures_broker(spec: str) -> bool:
    """Whether target `spec` starts its own broker with the settings it is given (serve and
    Kafka), rather than describing one that runs (mock, HOST:PORT)."""
    return spec == "serve" or spec in KAFKA_TARGETS


def make_target(
    spec: str, coordinator: dict[str, Any] | None = None, *, several_recordings: bool = False
) -> Target:
    """`serve`, `mock`, `kafka` (Apache Kafka 4.x), `kafka-3.9`, or `HOST:PORT` of a running
    broker (ValueError if none of those). `coordinator` describes a running broker's settings
    for the trace header; serve and Kafka targets start their broker with them. With
    `several_recordings`, the broker serves several recorders in turn between `open` and
    `close` (it advertises itself, and each recorder rewrites its address)."""
    if spec == "serve":
        return ServeTarget(coordinator, several_recordings=several_recordings)
    if spec == "mock":
        return MockTarget()
    if spec in KAFKA_TARGETS:
        return KafkaTarget(KAFKA_TARGETS[spec], coordinator)
    return Target(Address.parse(spec), coordinator)
