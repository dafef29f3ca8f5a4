"""Several recorders' traces as one: a cluster's brokers, each behind its own `groupspec record`.

A group that moves from one coordinator to another (a broker fails over) is seen by two
recorders. Merged by time, their events make one trace of the cluster in which each connection
is named `BROKER|client` (BROKER: the name given for its trace), so the validator knows which
broker each request went to (docs/oracle.md, "Coordinator moves"). Events of equal time keep
the order of their files. The recorders' clocks must agree (one host, or synchronized clocks):
the validator allows `--reorder-window-ms` of disagreement between connections.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO

from .trace_format import TraceEvent, TraceFormatError, TraceHeader, TraceReading, TraceWriter
from .trace_format import read_trace as read_events

BROKER_SEPARATOR = "|"


def merge_traces(traces: list[tuple[str, Path]], out: IO[str]) -> int:
    """Write the traces (broker name, path) merged by time to `out`; how many events. Their
    headers must name the same coordinator settings (TraceFormatError naming the file)."""
    readings = [TraceReading() for _ in traces]
    streams = [
        _named(broker, path, reading)
        for (broker, path), reading in zip(traces, readings, strict=True)
    ]
    firsts = [next(stream, None) for stream in streams]  # reads each header
    settings = readings[0].header.coordinator
    for (_, path), reading in zip(traces, readings, strict=True):
        if reading.header.coordinator != settings:
            raise TraceFormatError(
                str(path),
                1,
                f"coordinator settings {reading.header.coordinator} differ from "
                f"{traces[0][1]}'s {settings}: one cluster, one set of settings",
            )
    source = "merged: " + ", ".join(f"{broker}={path}" for broker, path in traces)
    writer = TraceWriter(out, TraceHeader(source, dict(settings)))
    merged = heapq.merge(
        *(
            _keyed(index, first, stream)
            for index, (first, stream) in enumerate(zip(firsts, streams, strict=True))
        ),
        key=lambda keyed: keyed[0],
    )
    count = 0
    for _, event in merged:
        writer.write(event)
        count += 1
    return count


def _named(broker: str, path: Path, reading: TraceReading) -> Iterator[TraceEvent]:
    for event in read_events(path, reading):
        yield replace(event, connection=f"{broker}{BROKER_SEPARATOR}{event.connection}")


def _keyed(
    index: int, first: TraceEvent | None, rest: Iterator[TraceEvent]
) -> Iterator[tuple[tuple[float, int], TraceEvent]]:
    if first is None:
        return
    yield (first.ts_ms, index), first
    for event in rest:
        yield (event.ts_ms, index), event
