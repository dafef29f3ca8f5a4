"""Shared by the Java-client workload tests: run one scenario with Kafka's own KafkaConsumer
through the recorder, judge the trace, and check that it is Java's traffic."""

from __future__ import annotations

import base64
from pathlib import Path

from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from groupspec.oracle.trace.validate import PASS, validate_trace
from groupspec.record.workload.client_scenarios import SCENARIOS
from groupspec.record.workload.runner import run_workload
from groupspec.record.workload.targets import Target
from groupspec.wire.trace_format import REQUEST, TraceReading, read_trace


def run_and_judge(target: Target, scenario: str, trace_dir: Path) -> list:
    """Run `scenario` with Java consumers against `target`; assert the workload completed (every
    record read, every offset committed, assignments disjoint and complete at each step) and
    that its whole trace passes; return the trace's events."""
    result = run_workload(target, "java", SCENARIOS[scenario], trace_dir)
    assert result.error is None, result.error
    assert result.trace is not None
    verdict = validate_trace(result.trace)
    assert verdict.status == PASS, verdict.to_json()
    assert verdict.counts.judged == verdict.counts.events  # every event judged
    assert verdict.counts.responses_checked > 50
    return list(read_trace(result.trace, TraceReading()))


def check_java_joins(events: list, assignor: str, static: bool) -> None:
    """Every JoinGroup of the trace is the Java client's: its client id, the one assignor
    offered, and a group.instance.id exactly when the scenario is static."""
    joins = [e for e in events if e.api == "JoinGroup" and e.direction == REQUEST]
    assert len(joins) >= 4
    for join in joins:
        assert join.client_id == "groupspec-java"
        assert [p["name"] for p in join.body["protocols"]] == [assignor]
        assert (join.body["group_instance_id"] is not None) == static
        metadata = base64.b64decode(join.body["protocols"][0]["metadata"])
        subscription = ConsumerProtocolSubscription.decode(metadata)
        assert subscription.topics == [join.body["group_id"]]
