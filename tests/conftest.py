"""Fixtures any test module can ask for by name: Apache Kafka's own brokers (docs/kafka.md).

A broker takes seconds to start, so each is shared by the tests of one module (module scope):

- `kafka_broker`: one per Kafka line, parametrized ("4.x", then "3.9"), so a test that asks for
  it runs against both; pytest finishes every test of the module on one line before it starts
  the other's broker, so at most one runs at a time.
- `kafka_4x`, `kafka_39`: one line only.

Each is a started `KafkaBroker` (`.bootstrap`, `.address`, `.header_settings()`), with a
temporary data directory removed at the end. To record through the recording proxy, wrap it in
`KafkaTarget(shared=broker)`: workloads and probes then leave it running and name their groups
afresh. The jars must be installed (`make test` does it; `groupspec kafka --install` by hand); a
missing java or mvn fails the test with the one-line reason rather than skipping it, since
`make test` installs both.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from groupspec.record.kafka.broker import KafkaBroker
from groupspec.record.kafka.settings import KAFKA_3_9, KAFKA_4X


def _running(line: str) -> Iterator[KafkaBroker]:
    broker = KafkaBroker(line)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="module", params=[KAFKA_4X, KAFKA_3_9])
def kafka_broker(request: pytest.FixtureRequest) -> Iterator[KafkaBroker]:
    """A running Kafka broker of each line in turn, shared by the module's tests."""
    yield from _running(request.param)


@pytest.fixture(scope="module")
def kafka_4x() -> Iterator[KafkaBroker]:
    """A running Kafka 4.x broker shared by the module's tests."""
    yield from _running(KAFKA_4X)


@pytest.fixture(scope="module")
def kafka_39() -> Iterator[KafkaBroker]:
    """A running Kafka 3.9 broker shared by the module's tests."""
    yield from _running(KAFKA_3_9)
