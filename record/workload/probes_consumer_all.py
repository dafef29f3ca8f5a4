"""Every consumer-protocol probe: those of ConsumerGroupHeartbeat and the other consumer-group
APIs (`probes_consumer.py`) and those of classic members inside consumer groups
(`probes_consumer_classic.py`, which builds on the first), and how to run them all. The CLI's
`probe --consumer-protocol` and `ci`, the generated tables of docs/kafka.md and the Kafka tests
read this table."""

from __future__ import annotations

from pathlib import Path

from groupspec.record.kafka.broker import KafkaBroker

from .probes import ProbeResult
from .probes_consumer import CONSUMER_PROBES, ConsumerProbe, run_consumer_probes
from .probes_consumer_classic import CLASSIC_MEMBER_PROBES

ALL_CONSUMER_PROBES: dict[str, ConsumerProbe] = {**CONSUMER_PROBES, **CLASSIC_MEMBER_PROBES}


def run_all_consumer_probes(
    folder: Path, names: list[str] | None = None, broker: KafkaBroker | None = None
) -> list[ProbeResult]:
    """Run the consumer-protocol probes `names` (every one of ALL_CONSUMER_PROBES by default)
    as `run_consumer_probes` does; one trace each in `folder`."""
    return run_consumer_probes(folder, names, broker, ALL_CONSUMER_PROBES)
