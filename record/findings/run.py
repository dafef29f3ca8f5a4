"""Drive a Kafka cluster into a finding's counterexample, recording every broker's group traffic.

`FindingCluster` is a `KafkaCluster` whose brokers tell clients to connect through one recorder
each (byte-transparent: the broker advertises its recorder's port). `reproduce` starts those
recorders, runs one finding's script (record/findings/scenarios.py) against the cluster, stops
them, and merges their traces into one (`wire.trace_merge`, as `groupspec validate --merge`
does), so the oracle can follow the group from one coordinator to the next.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupspec.record.kafka.cluster import KafkaCluster
from groupspec.record.kafka.leadership import LeadershipError
from groupspec.record.proxy import ProxyConfig
from groupspec.record.proxy_thread import RecorderThread
from groupspec.wire.address import Address, free_port
from groupspec.wire.request_connection import NoAnswerError
from groupspec.wire.trace_format import TraceHeader, TraceWriter
from groupspec.wire.trace_merge import merge_traces

from .scenarios import FINDINGS, NEEDS_FAILOVER, Check, Scenario, Stop

LOOPBACK = "127.0.0.1"
BROKERS = 2
# Short enough that the counterexample's session expiry (static-failover-fenced, step 31) is
# waited for in seconds, and at Kafka's least allowed value (group.min.session.timeout.ms).
SESSION_TIMEOUT_MS = 6_000
REBALANCE_TIMEOUT_MS = 30_000
# The coordinator's initial rebalance delay: a lone member's first join completes after it.
INITIAL_DELAY_MS = 100
SETTLE_S = 0.2  # for the recorders to see the last frames before they stop
# A script waits for the group's state and the coordinator's timers; a broker that never gets
# there stops it (the run is then not reproduced, with the reason) instead of hanging.
SCRIPT_TIMEOUT_S = 180.0


@dataclass
class FindingRun:
    """One finding driven against one cluster: its checks, whether it was reproduced, where the
    traces are, and why the script stopped early (None: it ran to its end)."""

    finding: str
    broker: str
    checks: list[Check]
    reproduced: bool
    merged_trace: Path
    broker_traces: list[Path]
    stopped: str | None = None


class FindingCluster:
    """A cluster of `BROKERS` brokers of Kafka `line` behind one recorder each; a context
    manager."""

    def __init__(self, line: str, settings: Mapping[str, Any] | None = None) -> None:
        """The cluster of `line` with the group settings `settings` overrides (header names;
        groupspec's defaults with a 100 ms initial rebalance delay otherwise)."""
        self.recorder_ports = [free_port() for _ in range(BROKERS)]
        self.cluster = KafkaCluster(
            line,
            BROKERS,
            {"group_initial_rebalance_delay_ms": INITIAL_DELAY_MS, **(settings or {})},
            advertised_ports=self.recorder_ports,
        )

    def start(self, say: Callable[[str], None] | None = None) -> FindingCluster:
        """Start the brokers (BrokerStartError, KafkaSetupError as KafkaCluster raises them)."""
        self.cluster.start(say)
        return self

    def stop(self) -> None:
        """Stop the brokers and remove their data."""
        self.cluster.stop()

    def __enter__(self) -> FindingCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reproduce(self, finding: str, trace_dir: Path) -> FindingRun:
        """Run `finding`'s script (a name in scenarios.FINDINGS) with a fresh group, recording
        broker i's traffic to `trace_dir/FINDING/bI.jsonl`, merged into
        `trace_dir/FINDING.jsonl`."""
        script = FINDINGS[finding]
        folder = trace_dir / finding
        folder.mkdir(parents=True, exist_ok=True)
        header = self.cluster.header_settings()
        recorders = []
        for index, port in enumerate(self.recorder_ports):
            node = index + 1
            title = f"{self.cluster.node(node).title}, groupspec finding {finding!r}"
            config = ProxyConfig(Address(LOOPBACK, port), self.cluster.address(node))
            recorders.append(
                RecorderThread(config, folder / f"b{node}.jsonl", TraceHeader(title, header))
            )
        scenario = Scenario(
            group=f"{finding}-{int(time.time() * 1000)}",
            bootstrap=Address(LOOPBACK, self.recorder_ports[0]),
            session_timeout_ms=SESSION_TIMEOUT_MS,
            rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
            brokers={
                index + 1: Address(LOOPBACK, port) for index, port in enumerate(self.recorder_ports)
            },
            failover=self.cluster if finding in NEEDS_FAILOVER else None,
        )
        stopped = None
        try:
            for recorder in recorders:
                recorder.start()
            try:
                asyncio.run(asyncio.wait_for(script(scenario), SCRIPT_TIMEOUT_S))
            except Stop as stop:
                stopped = str(stop)
            except TimeoutError:
                stopped = f"the script did not finish within {SCRIPT_TIMEOUT_S:g} s"
            except (NoAnswerError, LeadershipError, OSError) as error:
                stopped = f"{type(error).__name__}: {error}"
            time.sleep(SETTLE_S)
        finally:
            for recorder in recorders:
                recorder.stop()
        traces = [recorder.out for recorder in recorders]
        merged = trace_dir / f"{finding}.jsonl"
        buffer = io.StringIO()
        merge_traces([(trace.stem, trace) for trace in traces], buffer)
        events = buffer.getvalue().split("\n", 1)[1]
        names = ", ".join(trace.name for trace in traces)
        source = f"{self.cluster.title}, groupspec finding {finding!r} (merged: {names})"
        with merged.open("w", encoding="utf-8") as out:
            TraceWriter(out, TraceHeader(source, header))
            out.write(events)
        return FindingRun(
            finding,
            self.cluster.title,
            scenario.checks,
            stopped is None and scenario.reproduced,
            merged,
            traces,
            stopped,
        )
