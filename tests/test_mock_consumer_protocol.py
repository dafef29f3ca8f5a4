"""librdkafka's mock cluster serving the consumer protocol (KIP-848), judged by the
consumer-protocol oracle: confluent-kafka consumers with `group.protocol=consumer` in the
scenarios of `record/workload/consumer_protocol_mock.py` (they consume and commit), and a probe
of the commit's epoch check, each against a mock cluster of its own, recorded through the
recording proxy (docs/kafka.md, "The consumer protocol on librdkafka's mock cluster").

The mock is judged under the 4.0-4.2 profile (its commit check is the strict one). What agrees
is pinned by passing tests; each difference the oracle finds is a strict xfail citing the
mock's source (librdkafka v2.15.0, `src/rdkafka_mock_handlers.c` and `src/rdkafka_mock_cgrp.c`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from groupspec.oracle.trace.validate import Verdict, validate_trace
from groupspec.record.workload.consumer_protocol_mock import (
    MOCK_SCENARIOS,
    record_mock_commit_probe,
    record_mock_scenario,
)
from groupspec.spec.kip848.profiles import KAFKA_4_3

COMMIT_PROBE = "commit-epochs"


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every scenario and the commit probe, each against a fresh mock cluster, run together."""
    folder = tmp_path_factory.mktemp("mock-consumer-protocol")
    with ThreadPoolExecutor(len(MOCK_SCENARIOS) + 1) as pool:
        runs = {
            name: pool.submit(record_mock_scenario, s, folder) for name, s in MOCK_SCENARIOS.items()
        }
        runs[COMMIT_PROBE] = pool.submit(record_mock_commit_probe, folder)
        return {name: run.result() for name, run in runs.items()}


@pytest.fixture(scope="module")
def verdicts(traces: dict[str, Path]) -> dict[str, Verdict]:
    """Each trace judged under the profile its header names (4.0-4.2)."""
    return {name: validate_trace(path, shrink=False) for name, path in traces.items()}


def _scenarios(verdicts: dict[str, Verdict]) -> dict[str, Verdict]:
    return {name: v for name, v in verdicts.items() if name != COMMIT_PROBE}


def _under_profile(trace: Path, profile: str) -> Path:
    """A copy of `trace` whose header names the consumer-protocol profile `profile`."""
    lines = trace.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["consumer_groups"]["kafka_version"] = profile
    copy = trace.with_name(f"{trace.stem}-{profile.replace('+', 'plus')}.jsonl")
    copy.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    return copy


# -- what agrees -----------------------------------------------------------------------------


def test_every_event_of_the_mock_is_judged(verdicts):
    assert len(verdicts) == len(MOCK_SCENARIOS) + 1
    for name, verdict in verdicts.items():
        assert verdict.counts.skipped_apis == {}, name
        assert verdict.judged_fraction == 1.0, name


def _commits(trace: Path) -> int:
    events = (json.loads(line) for line in trace.read_text().splitlines()[1:])
    return sum(1 for e in events if e.get("api") == "OffsetCommit" and e["dir"] == "response")


def test_the_mocks_commits_agree_with_the_strict_epoch_check(traces, verdicts):
    # Every commit of the consumers, and the probe's at an older, the current and a newer epoch,
    # are answered as Kafka 4.0-4.2 answer them.
    for name, verdict in verdicts.items():
        assert [d for d in verdict.divergences if d.api == "OffsetCommit"] == [], name
    assert all(_commits(traces[name]) >= 5 for name in MOCK_SCENARIOS)
    probe = verdicts[COMMIT_PROBE].rules
    assert {"cg_offset_commit.epoch_matches", "cg_offset_commit.epoch_mismatch"} <= probe


def test_the_mocks_joins_and_assignments_agree_where_no_partition_is_held(verdicts):
    # A first member's join, its assignment and its steady heartbeats are Kafka's.
    exercised = set().union(*(v.rules for v in verdicts.values()))
    assert {
        "cg_heartbeat.group_created",
        "cg_heartbeat.join_client_member_id",
        "cg_heartbeat.response_with_assignment",
        "cg_heartbeat.response_without_assignment",
        "cg_offset_fetch.without_member",
    } <= exercised


# -- what the oracle finds (docs/kafka.md) ---------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="the mock answers OffsetFetch with the partition's current leader epoch, not the "
    "committed one, and a partition never committed with metadata null "
    "(rdkafka_mock_handlers.c:947, :952)",
)
def test_offset_fetch_is_answered_as_kafka_does(verdicts):
    for name, verdict in verdicts.items():
        assert [d for d in verdict.divergences if d.api == "OffsetFetch"] == [], name


@pytest.mark.xfail(
    strict=True,
    reason="the mock keeps a member whose new partitions another member still holds at its "
    "old epoch (0 on a join) until they are free; Kafka moves it to the target epoch at once "
    "(rdkafka_mock_cgrp.c:1213-1225, :1300)",
)
def test_a_member_waiting_for_partitions_is_at_the_group_epoch(verdicts):
    for name, verdict in _scenarios(verdicts).items():
        assert [d for d in verdict.divergences if d.field == "member_epoch"] == [], name


@pytest.mark.xfail(
    strict=True,
    reason="the mock answers a leaving heartbeat (epoch -1 or -2) with a null member id and its "
    "heartbeat interval; Kafka names the member and answers interval 0 "
    "(rdkafka_mock_handlers.c:3030, :3077-3088)",
)
def test_a_leave_is_answered_as_kafka_does(verdicts):
    for name, verdict in verdicts.items():
        leaves = [
            d
            for d in verdict.divergences
            if d.api == "ConsumerGroupHeartbeat" and (d.observed or {}).get("member_epoch", 0) < 0
        ]
        assert leaves == [], name


@pytest.mark.xfail(
    strict=True,
    reason="the mock refuses a commit at an older epoch for a partition the member has held "
    "since then (STALE_MEMBER_EPOCH, rdkafka_mock_handlers.c:1084-1087); Kafka 4.3+ accepts it "
    "(KIP-1251)",
)
def test_the_mocks_commit_check_is_kafka_4_3s(traces):
    verdict = validate_trace(_under_profile(traces[COMMIT_PROBE], KAFKA_4_3), shrink=False)
    assert [d for d in verdict.divergences if d.api == "OffsetCommit"] == []


JOIN_WITH_NULL_REGEX = """
import asyncio
from groupspec.record.workload.consumer_protocol_mock import join_with_null_regex
print(asyncio.run(join_with_null_regex()))
"""


@pytest.mark.xfail(
    strict=True,
    reason="the mock aborts its process on a heartbeat naming topics with a null regular "
    "expression, as Kafka's Java consumer sends them (rdkafka_mock_cgrp.c:1393-1403)",
)
def test_a_join_naming_topics_with_a_null_regex_is_answered():
    done = subprocess.run(
        [sys.executable, "-c", JOIN_WITH_NULL_REGEX], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-300:]
    assert done.stdout.strip() == "0"
