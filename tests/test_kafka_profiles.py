"""The oracle's Kafka version profiles proven on Apache Kafka's own brokers: for each of the
five differences between the 3.x and 4.x profiles (docs/oracle.md, "Kafka version profiles"),
a driver (tests/profile_probes.py) is recorded from Kafka 4.4.0 and from Kafka 3.9.2. The 4.4.0
trace passes under 4.x and diverges under 3.x; the 3.9.2 trace passes under 3.x and diverges
under 4.x; each fires, under its own profile, the rule that names the difference
(docs/kafka.md, "The version profiles on real brokers").

Both brokers run at once, with a 6 s initial-rebalance delay and a 2 s minimum session timeout
(`profile_probes.SETTINGS`), on fixed ports, so that one can be restarted on its data; the four
drivers that need no restart run together, then the restarts."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from profile_probes import DRIVERS, SETTINGS, record, record_restarted

from groupspec.oracle.trace.validate import DIVERGED, PASS, Verdict, validate_trace
from groupspec.record.kafka.broker import KafkaBroker
from groupspec.record.kafka.settings import KAFKA_3_9, KAFKA_4X, ORACLE_PROFILE
from groupspec.wire.address import free_port

RESTARTED = "created-then-restarted"
# Each difference: the rule the 4.x profile fires, the one the 3.x profile fires instead, and
# the API whose answer diverges when a line's trace is judged under the other profile.
DIFFERENCES = {
    "sync-in-stable": (
        "sync.stable_returns_assignment",
        "sync.stable_returns_assignment.kafka_3x",
        {KAFKA_4X: "Heartbeat", KAFKA_3_9: "Heartbeat"},
    ),
    "commit-to-unknown-group": (
        "commit.unknown_group_with_generation",
        "commit.unknown_group_with_generation.kafka_3x",
        {KAFKA_4X: "OffsetCommit", KAFKA_3_9: "OffsetCommit"},
    ),
    "expiry-during-initial-delay": (
        "rebalance.join_completed_after_removal",
        "rebalance.initial_delay_kept_after_removal.kafka_3x",
        {KAFKA_4X: "JoinGroup", KAFKA_3_9: "DescribeGroups"},
    ),
    "join-after-emptied": (
        "rebalance.initial_delay_extended",
        "join.new_member_does_not_extend_initial_delay.kafka_3x",
        {KAFKA_4X: "DescribeGroups", KAFKA_3_9: "JoinGroup"},
    ),
    RESTARTED: (
        "join.group_created",
        "join.group_created.kafka_3x",
        {KAFKA_4X: "DescribeGroups", KAFKA_3_9: "DescribeGroups"},
    ),
}
LINES = (KAFKA_4X, KAFKA_3_9)
OTHER = {"4.x": "3.x", "3.x": "4.x"}


@pytest.fixture(scope="module")
def brokers() -> Iterator[dict[str, KafkaBroker]]:
    """A broker of each line, started together, each on a port and data directory of its own
    that a restart keeps."""
    with tempfile.TemporaryDirectory(prefix="groupspec-profiles-") as scratch:
        running = {
            line: KafkaBroker(
                line, port=free_port(), data_dir=Path(scratch) / line, settings=SETTINGS
            )
            for line in LINES
        }
        try:
            with ThreadPoolExecutor(len(running)) as pool:
                list(pool.map(KafkaBroker.start, running.values()))
            yield running
        finally:
            for broker in running.values():
                broker.stop()


@pytest.fixture(scope="module")
def verdicts(brokers, tmp_path_factory) -> dict[tuple[str, str, str], Verdict]:
    """(difference, line, profile) -> the verdict on that line's trace under that profile."""
    folder = tmp_path_factory.mktemp("profiles")

    def run(job: tuple[str, str]) -> tuple[str, str, Path]:
        name, line = job
        return name, line, record(brokers[line], f"{name}-{line}", DRIVERS[name], folder)

    together = [(name, line) for name in DRIVERS for line in LINES]
    with ThreadPoolExecutor(len(together)) as pool:
        traces = list(pool.map(run, together))
    # A restart would cut the other drivers' connections: the restarts come after them, one
    # at a time (a busy machine makes Kafka's shutdown race, docs/kafka.md, likelier).
    for line in LINES:
        trace = record_restarted(brokers[line], f"{RESTARTED}-{line}", folder)
        traces.append((RESTARTED, line, trace))
    return {
        (name, line, profile): validate_trace(trace, {"kafka_version": profile}, shrink=False)
        for name, line, trace in traces
        for profile in OTHER
    }


def test_every_difference_has_a_driver():
    assert set(DIFFERENCES) == {*DRIVERS, RESTARTED}
    assert len(DIFFERENCES) == 5


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("difference", DIFFERENCES)
def test_a_lines_trace_passes_under_its_profile_and_diverges_under_the_other(
    verdicts, difference, line
):
    java_rule, scala_rule, diverging_api = DIFFERENCES[difference]
    own = ORACLE_PROFILE[line]
    passed = verdicts[(difference, line, own)]
    assert passed.status == PASS, [g.first.to_json() for g in passed.groups]
    assert passed.counts.judged == passed.counts.events
    assert (java_rule if own == "4.x" else scala_rule) in passed.rules
    diverged = verdicts[(difference, line, OTHER[own])]
    assert diverged.status == DIVERGED
    assert diverged.groups[0].first.api == diverging_api[line]
