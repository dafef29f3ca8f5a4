"""The model checker's two findings about the classic protocol, driven against Apache Kafka's
own brokers (4.4.0 and 3.9.2): a two-broker cluster per line, each finding's script following
its counterexample, every answer it depends on compared with the specification's, and the
merged trace of both brokers' recorders judged by the oracle (docs/bugs.md, "Reproduced on
Apache Kafka"). One cluster per line serves both findings (a cluster takes seconds to start)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from groupspec.cli.main import main
from groupspec.oracle.trace.validate import PASS, validate_trace
from groupspec.record.findings.run import FindingCluster
from groupspec.record.findings.scenarios import FINDINGS
from groupspec.record.kafka.cluster import KafkaCluster
from groupspec.record.kafka.settings import KAFKA_3_9, KAFKA_4X


@pytest.fixture(scope="module", params=[KAFKA_4X, KAFKA_3_9])
def finding_cluster(request: pytest.FixtureRequest) -> Iterator[FindingCluster]:
    """Two brokers of each Kafka line in turn, behind one recorder each."""
    with FindingCluster(request.param) as cluster:
        yield cluster


@pytest.mark.parametrize("finding", sorted(FINDINGS))
def test_kafka_reproduces_the_finding_and_the_oracle_agrees_with_every_answer(
    finding_cluster: FindingCluster, finding: str, tmp_path: Path
) -> None:
    run = finding_cluster.reproduce(finding, tmp_path)
    failed = [check for check in run.checks if not check.holds]
    assert run.stopped is None and not failed, (run.stopped, failed)
    assert run.reproduced
    verdict = validate_trace(run.merged_trace)
    assert verdict.status == PASS, [group.first.reason for group in verdict.groups]
    assert verdict.kafka_version == finding_cluster.cluster.header_settings()["kafka_version"]
    # Both brokers were recorded; the failover finding has traffic on both.
    brokers = {trace.stem for trace in run.broker_traces}
    assert brokers == {"b1", "b2"}
    if finding == "static-failover-fenced":
        assert all(trace.read_text().count("\n") > 1 for trace in run.broker_traces)


def test_the_coordinator_moves_to_the_other_broker_and_back(
    finding_cluster: FindingCluster,
) -> None:
    cluster = finding_cluster.cluster
    first = asyncio.run(cluster.leadership())
    assert sorted(first.replicas) == sorted(first.in_sync) == [1, 2]
    moved = asyncio.run(cluster.move_coordinator())
    assert moved != first.leader
    assert asyncio.run(cluster.leadership()).leader == moved
    assert asyncio.run(cluster.move_coordinator(first.leader)) == first.leader
    assert asyncio.run(cluster.leadership()).leader == first.leader


def test_a_cluster_has_two_brokers_at_least_and_an_advertised_port_for_each() -> None:
    with pytest.raises(ValueError, match="at least 2 brokers"):
        KafkaCluster(KAFKA_4X, 1)
    with pytest.raises(ValueError, match="1 advertised ports for 2 brokers"):
        KafkaCluster(KAFKA_4X, 2, advertised_ports=[9092])


def test_reproduce_refuses_an_unknown_finding_or_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "--finding", "nonesuch", "--trace-dir", "out"]) == 2
    assert "invalid choice: 'nonesuch'" in capsys.readouterr().err
    assert main(["reproduce", "--target", "serve", "--trace-dir", "out"]) == 2
    assert "invalid choice: 'serve'" in capsys.readouterr().err
