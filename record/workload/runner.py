"""One workload: a target broker, the recording proxy in front of it, a scenario run by one
client library's consumers; what it leaves is a trace and the counts of what it holds."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kafka.errors import kafka_errors

from groupspec.record.proxy import ProxyConfig
from groupspec.record.proxy_thread import RecorderThread
from groupspec.wire.address import Address
from groupspec.wire.trace_format import CLOSE, RESPONSE, TraceHeader, TraceReading, read_trace

from .admins import open_admin
from .client_scenarios import GroupRun, Scenario, run_scenario
from .targets import Target

TOPIC_PARTITIONS = 6
LOOPBACK = "127.0.0.1"


@dataclass
class WorkloadResult:
    """What one workload left: its trace, the events in it per (API, direction), notes."""

    client: str
    scenario: str
    trace: Path | None = None
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    # Responses whose top-level error code is not 0, per (API, error name).
    errors: Counter[tuple[str, str]] = field(default_factory=Counter)
    events: int = 0
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None
    error: str | None = None


def trace_path(trace_dir: Path, client: str, scenario: str) -> Path:
    """Where the trace of `client` running `scenario` goes."""
    return trace_dir / f"{client}-{scenario}.jsonl"


def group_name(scenario: str, client: str, target_kind: str) -> str:
    """The group (and topic) name a workload uses: on a broker that runs on between workloads
    (`target_kind` "broker"), a name nobody used before, so that no earlier run's group is in
    it; a fresh `groupspec serve` or mock cluster keeps the plain, readable name."""
    suffix = f"-{uuid.uuid4().hex[:12]}" if target_kind == "broker" else ""
    return f"gs-{scenario}-{client}{suffix}"


def run_workload(
    target: Target, client: str, scenario: Scenario, trace_dir: Path
) -> WorkloadResult:
    """Run `scenario` with `client`'s consumers against `target` through a recording proxy.

    The target is opened and closed here (a fresh `groupspec serve` or mock cluster per
    workload). A target that is not a broker raises NotABrokerError before anything is
    written; a scenario step that does not happen is reported in `error`, with the trace
    recorded up to there.
    """
    result = WorkloadResult(client, scenario.name)
    if client not in scenario.clients:
        result.skipped = f"{client} cannot run {scenario.name!r} ({scenario.summary})"
        return result
    name = group_name(scenario.name, client, target.kind)
    target.open()
    try:
        path = trace_path(trace_dir, client, scenario.name)
        config = ProxyConfig(
            Address(LOOPBACK, 0), target.upstream, advertise_self=target.advertise_self
        )
        header = TraceHeader(
            f"{target.describe()}, {client} consumers, groupspec workload scenario "
            f"{scenario.name!r}",
            target.coordinator,
        )
        with RecorderThread(config, path, header) as recorder:
            target.attach(Address(LOOPBACK, recorder.port))
            result.trace = path
            partitions = target.create_topic(recorder.address, name, TOPIC_PARTITIONS)
            run = GroupRun(
                client,
                recorder.address,
                group=name,
                topic=name,
                partitions=partitions,
                scenario=scenario,
                consumer_options=target.consumer_options(),
                producer_options=target.kafka_python_options,
            )
            admin = open_admin(client, recorder.address, target.kafka_python_options)
            try:
                result.notes = run_scenario(run, admin)
            except Exception as error:  # reported with the trace so far, not raised
                result.error = f"{type(error).__name__}: {error}"
            finally:
                admin.close()
    finally:
        target.close()
    reading = TraceReading()
    for event in read_trace(path, reading):
        result.counts[(event.api or CLOSE, event.direction)] += 1
        code = (event.body or {}).get("error_code", 0) if event.direction == RESPONSE else 0
        if code:
            result.errors[(event.api, error_name(code))] += 1
    result.events = reading.events
    return result


def error_name(code: int) -> str:
    """`REBALANCE_IN_PROGRESS(27)` for 27 (kafka-python's names); the number alone for a code it
    does not know."""
    if code == 0:
        return "NONE(0)"  # Kafka's ErrorCode name; kafka-python calls it NO_ERROR
    error = kafka_errors.get(code)
    return str(code) if error is None else f"{error.message}({code})"
