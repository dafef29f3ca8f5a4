"""`groupspec bench impl`: the optimized coordinator's throughput, against the spec and at scale.

Two measurements, reported as figures (never as pass/fail timings):

1. **Same stream, spec vs impl.** One deterministic request stream for N groups of M dynamic
   members: the v4+ join dance (MEMBER_ID_REQUIRED, then join with the id), the initial
   rebalance delay passing, SyncGroup from leader and followers, then rounds of heartbeats,
   offset commits and fetches, a rebalance every third round (the leader rejoins, followers see
   REBALANCE_IN_PROGRESS on their heartbeats and rejoin, everyone syncs again), and a
   DescribeGroups and ListGroups per round. Requests are built beforehand for both sides, as a
   wire decoder would hand them over. "Time passes" items (ticks) let each side fire its due
   timers its own way: the spec driver steps every due timer the spec lists, the impl calls
   `advance()`. Each side runs the whole stream; the spec driver takes the first allowed
   outcome of every step. Both sides' responses are then compared, so the figures are only
   reported for runs that did the same work.
2. **Scale, impl alone.** G groups of M members formed through the protocol in one process on
   a real monotonic clock, then every member heartbeats, pass after pass. Reported: memory per
   group (resident-set growth over the build, or live bytes under tracemalloc), heartbeats per
   second on one core, and the timer-heap size.
"""

from __future__ import annotations

import gc
import os
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from groupspec.conformance.differential import normalize_response
from groupspec.impl.clock import ManualClock, MonotonicClock
from groupspec.impl.config import CoordinatorConfig as ImplConfig
from groupspec.impl.coordinator import Coordinator
from groupspec.impl.policy import SequentialIdPolicy
from groupspec.spec.config import CoordinatorConfig as SpecConfig
from groupspec.spec.consumer_protocol import encode_subscription_v0
from groupspec.spec.coordinator import GroupCoordinatorSpec
from groupspec.vocabulary import requests as impl_requests
from groupspec.vocabulary.errors import ErrorCode as ImplErrorCode
from groupspec.vocabulary.group_state import COMPLETING_REBALANCE, PREPARING_REBALANCE, STABLE
from groupspec.vocabulary.requests import (
    DescribeGroupsRequest,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    ListGroupsRequest,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    Request,
    RequestRef,
    SyncGroupAssignment,
    SyncGroupRequest,
    TopicPartition,
)

SESSION_MS = 45_000
REBALANCE_MS = 300_000
INITIAL_DELAY_MS = 3_000  # Kafka's group.initial.rebalance.delay.ms
ROUND_MS = 1_000
REBALANCE_EVERY = 3  # rounds


@dataclass(frozen=True)
class StreamItem:
    """One input of the stream at time `at_ms`: a request or a tick."""

    at_ms: int
    ref: RequestRef | None
    request: Request | None


@dataclass(frozen=True)
class StreamFigures:
    """Spec and impl on the same request stream."""

    groups: int
    members: int
    rounds: int
    requests: int
    ticks: int
    spec_seconds: float
    impl_seconds: float
    spec_requests_per_s: float
    impl_requests_per_s: float
    ratio: float
    responses_compared: int
    responses_differing: int


@dataclass(frozen=True)
class ScaleFigures:
    """Many groups in one process: memory and heartbeat throughput of the impl."""

    groups: int
    members: int
    setup_requests: int
    setup_seconds: float
    setup_requests_per_s: float
    memory_method: str
    memory_bytes: int
    bytes_per_group: float
    heartbeats: int
    heartbeat_seconds: float
    heartbeats_per_s: float
    best_pass_heartbeats_per_s: float
    heap_entries: int


# -- the shared stream ----------------------------------------------------------------------


def _protocols(group: int) -> tuple[JoinGroupProtocol, ...]:
    return (JoinGroupProtocol("range", encode_subscription_v0((f"topic-{group % 7}",))),)


class _StreamWriter:
    """Builds the stream while predicting member ids and generations exactly as both sides
    produce them (`<client id>-<n>`, n counting the ids handed out so far)."""

    def __init__(self) -> None:
        self.items: list[StreamItem] = []
        self.now = 0
        self.correlation = 0
        self.next_id = 0

    def send(self, client: str, request: Request) -> None:
        self.correlation += 1
        ref = RequestRef(client, self.correlation)
        self.items.append(StreamItem(self.now, ref, request))

    def tick(self, delta_ms: int) -> None:
        self.now += delta_ms
        self.items.append(StreamItem(self.now, None, None))

    def new_member_id(self, client: str) -> str:
        member_id = f"{client}-{self.next_id}"
        self.next_id += 1
        return member_id


def build_stream(groups: int, members: int, rounds: int) -> list[StreamItem]:
    """The deterministic stream described in the module docstring."""
    if groups < 1 or members < 1 or rounds < 0:
        raise ValueError("need groups >= 1, members >= 1 and rounds >= 0")
    out = _StreamWriter()
    names = [f"bench-{g}" for g in range(groups)]
    ids: list[list[str]] = []
    for g, group_id in enumerate(names):
        group_ids = []
        for m in range(members):
            client = f"client-{g}-{m}"
            join = JoinGroupRequest(
                group_id, "", "consumer", _protocols(g), SESSION_MS, REBALANCE_MS, client_id=client
            )
            out.send(client, join)  # MEMBER_ID_REQUIRED
            member_id = out.new_member_id(client)
            out.send(client, replace(join, member_id=member_id))
            group_ids.append(member_id)
        ids.append(group_ids)
    # Members arrived during the initial delay, so it runs twice before the join completes.
    out.tick(INITIAL_DELAY_MS)
    out.tick(INITIAL_DELAY_MS)
    generation = 1
    _sync_all(out, names, ids, generation)
    for round_ in range(rounds):
        out.tick(ROUND_MS)
        for g, group_id in enumerate(names):
            for m, member_id in enumerate(ids[g]):
                client = f"client-{g}-{m}"
                out.send(client, HeartbeatRequest(group_id, generation, member_id))
                partitions = tuple(
                    OffsetCommitPartition(f"topic-{g % 7}", p, 100 * round_ + p)
                    for p in (m, m + members)
                )
                out.send(client, OffsetCommitRequest(group_id, partitions, generation, member_id))
                out.send(client, HeartbeatRequest(group_id, generation, member_id))
            out.send(
                f"client-{g}-0",
                OffsetFetchRequest(group_id, (TopicPartition(f"topic-{g % 7}", 0),)),
            )
            out.send("admin", DescribeGroupsRequest((group_id,)))
        out.send("admin", ListGroupsRequest())
        if round_ % REBALANCE_EVERY == REBALANCE_EVERY - 1:
            _rebalance(out, names, ids, generation)
            generation += 1
            _sync_all(out, names, ids, generation)
    return out.items


def _rejoin(out: _StreamWriter, g: int, group_id: str, m: int, member_id: str) -> None:
    client = f"client-{g}-{m}"
    out.send(
        client,
        JoinGroupRequest(
            group_id,
            member_id,
            "consumer",
            _protocols(g),
            SESSION_MS,
            REBALANCE_MS,
            client_id=client,
        ),
    )


def _rebalance(out: _StreamWriter, names: list[str], ids: list[list[str]], generation: int) -> None:
    """The leader (first member) rejoins; followers learn it from a heartbeat and rejoin."""
    for g, group_id in enumerate(names):
        _rejoin(out, g, group_id, 0, ids[g][0])
        for m, member_id in enumerate(ids[g][1:], start=1):
            out.send(f"client-{g}-{m}", HeartbeatRequest(group_id, generation, member_id))
            _rejoin(out, g, group_id, m, member_id)


def _sync_all(out: _StreamWriter, names: list[str], ids: list[list[str]], generation: int) -> None:
    for g, group_id in enumerate(names):
        leader, *followers = ids[g]
        assignments = tuple(SyncGroupAssignment(m, f"partitions-of-{m}".encode()) for m in ids[g])
        out.send(
            f"client-{g}-0", SyncGroupRequest(group_id, generation, leader, assignments=assignments)
        )
        for m, member_id in enumerate(followers, start=1):
            out.send(f"client-{g}-{m}", SyncGroupRequest(group_id, generation, member_id))


def run_spec(stream: list[StreamItem]) -> tuple[float, dict[Any, Any]]:
    """Run the stream through the spec (first outcome of every step); (seconds, responses)."""
    spec = GroupCoordinatorSpec(SpecConfig())
    state = spec.initial_state()
    responses: dict[Any, Any] = {}
    start = time.perf_counter()
    for item in stream:
        if item.request is None:
            while due := spec.due_timers(state, item.at_ms):
                outcome = spec.step(state, due[0], item.at_ms)[0]
                state = outcome.state
                for response in outcome.responses:
                    responses[response.ref] = response.body
            continue
        outcome = spec.step(state, Received(item.ref, item.request), item.at_ms)[0]  # type: ignore[arg-type]
        state = outcome.state
        for response in outcome.responses:
            responses[response.ref] = response.body
    return time.perf_counter() - start, responses


def run_impl(stream: list[StreamItem]) -> tuple[float, dict[Any, Any]]:
    """Run the stream through the impl; (seconds, responses)."""
    clock = ManualClock()
    responses: dict[Any, Any] = {}
    coordinator = Coordinator(
        ImplConfig(), policy=SequentialIdPolicy(), clock=clock, respond=responses.__setitem__
    )
    handle = coordinator.handle
    set_time = clock.set
    start = time.perf_counter()
    for item in stream:
        set_time(item.at_ms)
        if item.request is None:
            coordinator.advance()
        else:
            handle(item.ref, item.request)
    return time.perf_counter() - start, responses


def bench_stream(groups: int, members: int, rounds: int) -> StreamFigures:
    """Both sides on one stream, with their responses compared."""
    stream = build_stream(groups, members, rounds)
    requests = sum(1 for item in stream if item.ref is not None)
    # The prebuilt stream is input, not work: keep the garbage collector from re-scanning it
    # during either run (the same for both sides).
    gc.collect()
    gc.freeze()
    try:
        spec_seconds, spec_responses = run_spec(stream)
        impl_seconds, impl_responses = run_impl(stream)
    finally:
        gc.unfreeze()
    same: Callable[[str], str] = lambda member_id: member_id  # noqa: E731 — ids agree by design
    refs = set(spec_responses) | set(impl_responses)
    differing = sum(
        1
        for ref in refs
        if ref not in spec_responses
        or ref not in impl_responses
        or normalize_response(spec_responses[ref], same)
        != normalize_response(impl_responses[ref], same)
    )
    spec_rate = requests / spec_seconds
    impl_rate = requests / impl_seconds
    return StreamFigures(
        groups=groups,
        members=members,
        rounds=rounds,
        requests=requests,
        ticks=len(stream) - requests,
        spec_seconds=spec_seconds,
        impl_seconds=impl_seconds,
        spec_requests_per_s=spec_rate,
        impl_requests_per_s=impl_rate,
        ratio=impl_rate / spec_rate,
        responses_compared=len(refs),
        responses_differing=differing,
    )


# -- scale ----------------------------------------------------------------------------------


def _resident_bytes() -> int:
    """The process's resident set size now (Linux), else its peak so far."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def bench_scale(
    groups: int,
    members: int,
    heartbeat_passes: int,
    *,
    use_tracemalloc: bool = False,
    batch: int = 1_000,
    progress: Callable[[str], None] | None = None,
) -> ScaleFigures:
    """Form `groups` groups of `members` members on a real clock, then heartbeat every member."""
    if groups < 1 or members < 1 or heartbeat_passes < 1 or batch < 1:
        raise ValueError("need groups, members, heartbeat passes and batch all >= 1")
    gc.collect()
    if use_tracemalloc:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
    else:
        base = _resident_bytes()
    responses: dict[Any, Any] = {}
    config = ImplConfig(group_initial_rebalance_delay_ms=0)
    coordinator = Coordinator(
        config, policy=SequentialIdPolicy(), clock=MonotonicClock(), respond=responses.__setitem__
    )
    handle = coordinator.handle
    protocols = (impl_requests.JoinGroupProtocol("range", encode_subscription_v0(("topic",))),)
    setup_requests = 0
    start = time.perf_counter()
    for first in range(0, groups, batch):
        batch_groups = range(first, min(first + batch, groups))
        member_ids: dict[int, list[str]] = {g: [] for g in batch_groups}
        for g in batch_groups:
            group_id = f"group-{g}"
            for m in range(members):
                join = impl_requests.JoinGroupRequest(
                    group_id,
                    "",
                    "consumer",
                    protocols,
                    REBALANCE_MS,
                    REBALANCE_MS,
                    client_id=f"c{m}",
                )
                handle(("join", g, m), join)
                member_id = responses.pop(("join", g, m)).member_id
                handle(
                    ("join", g, m),
                    impl_requests.JoinGroupRequest(
                        group_id,
                        member_id,
                        "consumer",
                        protocols,
                        REBALANCE_MS,
                        REBALANCE_MS,
                        client_id=f"c{m}",
                    ),
                )
                member_ids[g].append(member_id)
                setup_requests += 2
        # A zero initial delay still re-arms once because members kept arriving: two advances.
        coordinator.advance()
        coordinator.advance()
        for g in batch_groups:
            group = coordinator.group(f"group-{g}")
            if group is None or group.state is not COMPLETING_REBALANCE:
                raise RuntimeError(f"group-{g} did not complete its join phase: {group}")
            leader = group.leader_id
            assignments = tuple(
                impl_requests.SyncGroupAssignment(m, b"\x00\x03") for m in group.members
            )
            for member_id in [leader, *(m for m in group.members if m != leader)]:
                handle(
                    ("sync", member_id),
                    impl_requests.SyncGroupRequest(
                        group.group_id,
                        group.generation_id,
                        member_id,  # type: ignore[arg-type]
                        assignments=assignments if member_id == leader else (),
                    ),
                )
                setup_requests += 1
            if group.state is not STABLE:
                raise RuntimeError(f"{group.group_id} is not Stable after SyncGroup: {group}")
        responses.clear()
        if progress is not None:
            progress(f"built {min(first + batch, groups):,} of {groups:,} groups")
    setup_seconds = time.perf_counter() - start
    gc.collect()
    if use_tracemalloc:
        used = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        method = "tracemalloc (live bytes)"
    else:
        used = _resident_bytes() - base
        method = "RSS growth"
    # Heartbeats are built only now, so the benchmark's own requests do not count as the
    # coordinator's memory; refs are small ints, reused pass after pass.
    beats = [
        (index, impl_requests.HeartbeatRequest(group_id, generation, member_id))
        for index, (group_id, generation, member_id) in enumerate(
            (g.group_id, g.generation_id, m) for g in coordinator.groups() for m in g.members
        )
    ]

    passes = []
    for number in range(heartbeat_passes):
        begin = time.perf_counter()
        for ref, beat in beats:
            handle(ref, beat)
        passes.append(time.perf_counter() - begin)
        if progress is not None:
            progress(f"heartbeat pass {number + 1} of {heartbeat_passes}")
    wrong = [r for r in responses.values() if r.error_code is not ImplErrorCode.NONE]
    if wrong:
        raise RuntimeError(f"{len(wrong)} heartbeats were not accepted, e.g. {wrong[0]}")
    if any(g.state is PREPARING_REBALANCE for g in coordinator.groups()):
        raise RuntimeError("a group started rebalancing during the heartbeat passes")
    total = len(beats) * heartbeat_passes
    return ScaleFigures(
        groups=groups,
        members=members,
        setup_requests=setup_requests,
        setup_seconds=setup_seconds,
        setup_requests_per_s=setup_requests / setup_seconds,
        memory_method=method,
        memory_bytes=used,
        bytes_per_group=used / groups,
        heartbeats=total,
        heartbeat_seconds=sum(passes),
        heartbeats_per_s=total / sum(passes),
        best_pass_heartbeats_per_s=len(beats) / min(passes),
        heap_entries=coordinator.heap_size(),
    )


# -- reporting ------------------------------------------------------------------------------


def format_report(stream: StreamFigures | None, scale: ScaleFigures | None) -> str:
    """The figures as a short human-readable report."""
    lines = []
    if stream is not None:
        lines += [
            f"same stream: {stream.groups} groups × {stream.members} members, {stream.rounds} rounds: "
            f"{stream.requests:,} requests, {stream.ticks} ticks",
            f"  spec  {stream.spec_requests_per_s:12,.0f} requests/s  ({stream.spec_seconds:.2f} s)",
            f"  impl  {stream.impl_requests_per_s:12,.0f} requests/s  ({stream.impl_seconds:.2f} s)",
            f"  ratio {stream.ratio:12,.1f}×",
            f"  responses compared {stream.responses_compared:,}, differing {stream.responses_differing:,}",
        ]
    if scale is not None:
        lines += [
            f"scale: {scale.groups:,} groups × {scale.members} members in one process",
            f"  setup     {scale.setup_requests:,} requests in {scale.setup_seconds:.1f} s "
            f"({scale.setup_requests_per_s:,.0f} requests/s)",
            f"  memory    {scale.memory_bytes / 2**20:,.1f} MiB, {scale.bytes_per_group:,.0f} bytes per group "
            f"({scale.memory_method})",
            f"  heartbeat {scale.heartbeats_per_s:,.0f} heartbeats/s over {scale.heartbeats:,} "
            f"(best pass {scale.best_pass_heartbeats_per_s:,.0f}/s)",
            f"  timer heap {scale.heap_entries:,} entries",
        ]
    return "\n".join(lines)
