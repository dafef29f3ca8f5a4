"""Apache Kafka as the ground truth: every real-client workload (kafka-python, aiokafka,
confluent-kafka; every scenario each can run), recorded from Kafka 4.4.0 and judged under the
4.x profile, and from Kafka 3.9.2 (its default Scala coordinator) judged under the 3.x profile,
passes with every event judged (docs/kafka.md, "Kafka as the ground truth"). The probes, which
need brokers with settings of their own, are judged the same way by tests/test_probes_kafka.py
and tests/test_probes_kafka39.py.

One broker per line serves the whole module (`kafka_broker`); the workloads run together on it,
each on a group named afresh (`KafkaTarget(shared=...)`), which keeps the module within its
share of the suite's time and puts each group beside others, as on a real cluster."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from kafka.protocol.consumer.group import OffsetCommitRequest, OffsetCommitResponse

from groupspec.oracle.trace.validate import PASS, Verdict, validate_trace
from groupspec.record.kafka.broker import KafkaBroker
from groupspec.record.kafka.settings import ORACLE_PROFILE
from groupspec.record.workload.client_scenarios import ALL_CLIENTS, SCENARIOS
from groupspec.record.workload.probe_client import TOPIC, ProbeClient
from groupspec.record.workload.runner import run_workload
from groupspec.record.workload.targets import KafkaTarget

# The workloads run four at a time: they wait on Kafka's timers far more than they
# compute. With eight at once on a busy 2-core machine (load average above 20), kafka-python
# consumers stalled for the rest of the run (one sent no request for 48 s after a cooperative
# rebalance, another never joined), and their scenarios could not finish.
PARALLEL = 4
# Rules the workload traces of one line exercise together: 29-31 of the profile's rules in the
# runs docs/kafka.md reports; a run reaching fewer has lost a kind of traffic.
AT_LEAST_RULES = 26
RUNS = [
    (client, scenario)
    for scenario in SCENARIOS.values()
    for client in sorted(ALL_CLIENTS)
    if client in scenario.clients
]


@dataclass
class Recorded:
    """One trace of the campaign, what stopped it early (if anything), and its verdict."""

    name: str
    trace: Path
    error: str | None
    verdict: Verdict


def _record(
    broker: KafkaBroker, folder: Path, job: tuple[str, str]
) -> tuple[str, Path, str | None]:
    client, scenario = job
    ran = run_workload(KafkaTarget(shared=broker), client, SCENARIOS[scenario], folder)
    assert ran.trace is not None, ran.skipped
    return f"{client}-{scenario}", ran.trace, ran.error


@pytest.fixture(scope="module")
def campaign(kafka_broker: KafkaBroker, tmp_path_factory) -> list[Recorded]:
    """Every workload against the line's broker, each judged under its profile."""
    folder = tmp_path_factory.mktemp(f"kafka-{kafka_broker.line}")
    jobs = [(c, s.name) for c, s in RUNS]
    with ThreadPoolExecutor(PARALLEL) as pool:
        recorded = list(pool.map(lambda job: _record(kafka_broker, folder, job), jobs))
    profile = {"kafka_version": ORACLE_PROFILE[kafka_broker.line]}
    return [
        Recorded(name, trace, error, validate_trace(trace, profile, shrink=False))
        for name, trace, error in recorded
    ]


def test_every_workload_passes_with_every_event_judged(campaign, kafka_broker):
    assert len(campaign) == len(RUNS) == 11
    assert [(r.name, r.error) for r in campaign if r.error] == []
    for recorded in campaign:
        verdict = recorded.verdict
        assert verdict.kafka_version == ORACLE_PROFILE[kafka_broker.line]
        assert verdict.status == PASS, (recorded.name, [g.first.to_json() for g in verdict.groups])
        assert verdict.counts.judged == verdict.counts.events, recorded.name
    # Real traffic was judged: each workload's joins, syncs, heartbeats and commits.
    assert all(r.verdict.counts.responses_checked > 50 for r in campaign)


def test_the_campaign_exercises_the_rules_of_a_consumer_groups_life(campaign):
    reached = frozenset().union(*(r.verdict.rules for r in campaign))
    assert len(reached) >= AT_LEAST_RULES, sorted(reached)
    for rule in (
        "join.new_dynamic_member.member_id_required",
        "join.static_member_replaced",
        "timer.heartbeat_expired_member_removed",
        "leave.member_removed",
        "commit.accepted",
        "fetch.all_offsets",
        "describe.stable_group",
        "list.groups",
    ):
        assert rule in reached, rule


def test_a_probe_topic_is_ready_for_a_commit_once_created(kafka_broker):
    # Kafka creates an auto-created topic in the background: until then a commit naming it is
    # refused UNKNOWN_TOPIC_OR_PARTITION before the coordinator sees it. The probes wait.
    async def commit_after_creating(topic: str) -> int:
        reader, writer = await asyncio.open_connection("127.0.0.1", kafka_broker.address.port)
        client = ProbeClient(reader, writer, "topic-check")
        await client.create_topic()
        partition = OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=1, committed_metadata=""
        )
        commit = OffsetCommitRequest(
            group_id=f"{topic}-group",
            generation_id_or_member_epoch=-1,
            member_id="",
            retention_time_ms=-1,
            topics=[
                OffsetCommitRequest.OffsetCommitRequestTopic(name=topic, partitions=[partition])
            ],
        )
        answer = await client.call(commit, OffsetCommitResponse, 2)
        client.close()
        return answer.topics[0].partitions[0].error_code

    assert asyncio.run(commit_after_creating(TOPIC)) == 0
