"""Probes: short scripted group exchanges, each isolating a rule (or a few) of the protocol.

A real client's run stops being judged at the first divergence, and a coordinator that departs
early (say, on the first JoinGroup) hides everything after. A probe speaks the protocol
directly, at API versions chosen so that it steps around the other probes' rules (JoinGroup v3
has no MEMBER_ID_REQUIRED round), through the recording proxy; each writes its own trace, for
`groupspec validate` to judge, and names the specification rules (`spec/rules.py`) it is
written to exercise: `tests/test_probes*.py` check that its trace does exercise them.

Some probes need broker settings Kafka's defaults do not have (sessions of a second, a small
group.max.size, a short retention check interval). The probes are grouped by the settings they
need (`PROBE_SETTINGS`); a target that starts its own broker (serve, Kafka) is started once
per group with that group's settings, a broker that runs already is probed as it is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupspec.record.proxy import ProxyConfig
from groupspec.record.proxy_thread import RecorderThread
from groupspec.wire.address import Address
from groupspec.wire.trace_format import TraceHeader

from . import probes_membership as membership
from . import probes_offsets as offsets
from . import probes_timers as timers
from .probe_client import Connect, MalformedAnswer, ProbeClient, ProbeStopped
from .targets import Target, configures_broker, make_target

LOOPBACK = "127.0.0.1"
# The broker settings each group of probes runs with (the specification's names). Sessions of
# a second need a lower minimum session timeout than Kafka's 6 s; a retention check every
# half second and a group.max.size of 2 would disturb other probes (a check deletes any Empty
# group without offsets), so they have a broker of their own.
SHORT_SESSIONS = "short-sessions"
LIMITS = "limits"
PROBE_SETTINGS: dict[str, dict[str, int]] = {
    SHORT_SESSIONS: {"group_min_session_timeout_ms": 500},
    LIMITS: {
        "group_min_session_timeout_ms": 500,
        "group_max_size": 2,
        "offsets_retention_check_interval_ms": offsets.RETENTION_CHECK_INTERVAL_MS,
    },
}

ProbeFunction = Callable[[Connect, str], Coroutine[Any, Any, None]]


@dataclass(frozen=True)
class Probe:
    """A scripted exchange: what it runs, the rules it is written to exercise (under Kafka
    4.x's profile), and the broker settings it needs (a key of PROBE_SETTINGS)."""

    name: str
    run: ProbeFunction
    rules: tuple[str, ...]
    settings: str = SHORT_SESSIONS


def _probe(name: str, run: ProbeFunction, *rules: str, settings: str = SHORT_SESSIONS) -> Probe:
    return Probe(name, run, rules, settings)


PROBES: dict[str, Probe] = {
    probe.name: probe
    for probe in (
        _probe(
            "member-id-required",
            membership.member_id_required,
            "find_coordinator.found",
            "join.group_created",
            "join.new_dynamic_member.member_id_required",
        ),
        _probe(
            "first-generation",
            membership.first_generation,
            "join.new_dynamic_member_added_v0_to_v3",
            "rebalance.prepare",
            "rebalance.initial_delay_armed",
            "timer.initial_rebalance_delay_expired",
            "rebalance.completed_to_completing",
            "sync.leader_assignment_stored_group_stable",
        ),
        _probe("initial-delay", membership.initial_delay, "rebalance.initial_delay_extended"),
        _probe(
            "sync-follower-after-leader",
            membership.sync_follower_after_leader,
            "sync.stable_returns_assignment",
        ),
        _probe(
            "follower-syncs-first",
            membership.follower_syncs_first,
            "sync.completing_follower_parked",
        ),
        _probe(
            "pending-member-joins",
            membership.pending_member_joins,
            "join.pending_member_joined",
            "leave.member_removed",
            "rebalance.completed_to_empty",
        ),
        _probe(
            "pending-member-with-instance-id",
            membership.pending_member_with_instance_id,
            "join.pending_member_with_instance_id",
        ),
        _probe(
            "leave-pending-member",
            membership.leave_pending_member,
            "leave.pending_member_removed",
            "join.existing_member.invalid_member",
        ),
        _probe(
            "new-member-protocol-mismatch",
            membership.new_member_protocol_mismatch,
            "join.new_member.inconsistent_protocol",
        ),
        _probe(
            "member-protocol-mismatch",
            membership.member_protocol_mismatch,
            "join.existing_member.inconsistent_protocol",
            "sync.inconsistent_protocol",
        ),
        _probe(
            "leader-rejoins",
            membership.leader_rejoins,
            "join.existing_member.stable_leader_rebalances",
            "rebalance.join_timer_armed",
            "heartbeat.preparing_rebalance_in_progress",
            "sync.preparing_rebalance_in_progress",
            "join.existing_member.preparing_parked",
            "rebalance.join_completed_early",
        ),
        _probe(
            "follower-rejoins-unchanged",
            membership.follower_rejoins_unchanged,
            "join.existing_member.stable_follower_unchanged",
            "heartbeat.accepted",
        ),
        _probe(
            "follower-rejoins-changed",
            membership.follower_rejoins_changed,
            "join.existing_member.stable_follower_changed_protocols",
        ),
        _probe(
            "rejoin-while-completing",
            membership.rejoin_while_completing,
            "join.existing_member.completing_same_protocols",
            "join.existing_member.completing_changed_protocols",
        ),
        _probe(
            "sync-parked-then-rebalance",
            membership.sync_parked_then_rebalance,
            "sync.parked_answered_with_error",
        ),
        _probe(
            "static-rejoin",
            membership.static_rejoin,
            "join.new_static_member_added",
            "join.static_member_replaced",
            "join.static_replacement.stable_no_rebalance",
            "heartbeat.invalid_member_or_generation",
        ),
        _probe(
            "static-replaced-while-joining",
            membership.static_replaced_while_joining,
            "join.static_replacement.preparing",
        ),
        _probe(
            "static-replaced-while-completing",
            membership.static_replaced_while_completing,
            "join.static_replacement.completing_rebalances",
            "sync.invalid_member_or_generation",
        ),
        _probe(
            "static-replaced-protocol-changed",
            membership.static_replaced_protocol_changed,
            "join.static_replacement.protocol_changed_rebalance",
        ),
        _probe(
            "static-leader-replaced",
            membership.static_leader_replaced,
            "join.static_replacement.stable_no_rebalance",
        ),
        _probe(
            "fenced-instance",
            membership.fenced_instance,
            "heartbeat.invalid_member_or_generation",
            "sync.invalid_member_or_generation",
            "commit.rejected_by_fencing",
            "join.existing_member.invalid_member",
            "leave.invalid_member",
        ),
        _probe(
            "leave-in-batch",
            membership.leave_in_batch,
            "leave.member_removed",
            "leave.removed_by_instance_id",
            "leave.no_member_id_unknown_instance",
            "leave.invalid_member",
        ),
        _probe(
            "session-expiry",
            timers.session_expiry,
            "timer.heartbeat_expired_member_removed",
        ),
        _probe(
            "expiry-completes-join",
            timers.expiry_completes_join,
            "rebalance.join_completed_after_removal",
        ),
        _probe(
            "pending-member-expiry",
            timers.pending_member_expiry,
            "timer.pending_member_expired",
        ),
        _probe(
            "rebalance-timeout",
            timers.rebalance_timeout,
            "timer.rebalance_timeout_expired",
            "rebalance.dynamic_member_not_rejoined_removed",
            "timer.heartbeat_expired_but_satisfied",
        ),
        _probe(
            "leader-not-rejoined",
            timers.leader_not_rejoined,
            "rebalance.leader_reelected",
        ),
        _probe(
            "no-member-rejoined",
            timers.no_member_rejoined,
            "rebalance.no_member_rejoined_join_timer_rearmed",
        ),
        _probe("sync-timeout", timers.sync_timeout, "timer.sync_expired_members_removed"),
        _probe(
            "offset-fetch-all",
            offsets.offset_fetch_all,
            "commit.simple_group_created",
            "commit.accepted",
            "fetch.all_offsets",
        ),
        _probe(
            "offset-fetch-uncommitted",
            offsets.offset_fetch_uncommitted,
            "fetch.unknown_group",
        ),
        _probe("offset-fetch-stable", offsets.offset_fetch_stable, "fetch.offsets"),
        _probe(
            "commit-metadata-too-large",
            offsets.commit_metadata_too_large,
            "commit.metadata_too_large",
        ),
        _probe(
            "commit-generations",
            offsets.commit_generations,
            "commit.rejected_by_fencing",
            "commit.accepted",
        ),
        _probe(
            "offsets-retention",
            offsets.offsets_retention,
            "retention.check",
            "retention.offsets_expired",
            "retention.empty_group_deleted",
            settings=LIMITS,
        ),
        _probe(
            "unknown-group",
            offsets.unknown_group,
            "join.unknown_group_with_member_id",
            "sync.unknown_or_empty_group",
            "heartbeat.unknown_group",
            "leave.unknown_group",
            "commit.unknown_group_with_generation",
            "fetch.unknown_group",
            "describe.unknown_group",
            "delete.unknown_group",
        ),
        _probe("invalid-group-id", offsets.invalid_group_id, "coordinator.invalid_group_id"),
        _probe(
            "invalid-session-timeout",
            offsets.invalid_session_timeout,
            "join.invalid_session_timeout",
        ),
        _probe(
            "group-max-size",
            offsets.group_max_size,
            "join.group_max_size_reached",
            settings=LIMITS,
        ),
        _probe(
            "describe-groups",
            offsets.describe_groups,
            "describe.unstable_group",
            "describe.stable_group",
            "describe.unknown_group",
        ),
        _probe("list-groups", offsets.list_groups, "list.groups"),
        _probe(
            "delete-groups",
            offsets.delete_groups,
            "delete.non_empty_group",
            "delete.empty_group_deleted",
            "delete.unknown_group",
        ),
    )
}


# The coordinator rules (non-defensive, Kafka 4.x) that no client can drive against one real
# broker, and why; every other such rule is exercised by a probe above (tests/test_probes.py).
_APPEND_FAILS = (
    "needs an append to __consumer_offsets to fail: a healthy one-node broker's appends "
    "succeed, and a trace header cannot tell the oracle that appends may fail "
    "(write_failures is no header setting)"
)
_PARTITION_MOVES = (
    "needs the group's offsets partition to move between brokers (failover, reassignment): "
    "with one broker it never moves, and a restart of that broker shows the recorder "
    "connections closing, not the partition unloaded and loaded again"
)
NOT_DRIVABLE: dict[str, str] = {
    "coordinator.check_failed": (
        "needs the group's offsets partition led by another broker (NOT_COORDINATOR) or still "
        "loading (COORDINATOR_LOAD_IN_PROGRESS): one broker leads every partition, and "
        "groupspec uses it only once its partition is loaded (record/kafka/readiness.py)"
    ),
    "find_coordinator.not_available": (
        "needs a group whose offsets partition this broker does not lead: one broker leads them all"
    ),
    "join.new_group_write_failed": _APPEND_FAILS,
    "join.static_replacement.write_failed_reverted": _APPEND_FAILS,
    "sync.leader_assignment_write_failed": _APPEND_FAILS,
    "commit.write_failed": _APPEND_FAILS,
    "retention.write_failed": _APPEND_FAILS,
    "delete.write_failed": _APPEND_FAILS,
    "partition.unloaded": _PARTITION_MOVES,
    "partition.unloaded_parked_join_answered": _PARTITION_MOVES,
    "partition.unloaded_parked_sync_answered": _PARTITION_MOVES,
    "partition.loading_started": _PARTITION_MOVES,
    "partition.loaded": _PARTITION_MOVES,
    "partition.loaded_group_over_max_size_rebalances": _PARTITION_MOVES,
}


@dataclass
class ProbeResult:
    """One probe's trace, or why it did not finish."""

    name: str
    trace: Path
    error: str | None = None


def probe_batches(
    names: Sequence[str] | None = None, registry: dict[str, Probe] = PROBES
) -> list[tuple[str, list[str]]]:
    """The probes `names` (default: all of `registry`) grouped by the settings they need: (a
    key of PROBE_SETTINGS, the probes' names), in PROBE_SETTINGS order."""
    wanted = list(names) if names else list(registry)
    return [
        (settings, [name for name in wanted if registry[name].settings == settings])
        for settings in PROBE_SETTINGS
        if any(registry[name].settings == settings for name in wanted)
    ]


def run_probes_against(
    spec: str,
    trace_dir: Path,
    names: Sequence[str] | None = None,
    registry: dict[str, Probe] = PROBES,
) -> list[ProbeResult]:
    """Run the probes `names` (default: all of `registry`) against target `spec` (see
    `make_target`): serve and Kafka are started once per group of settings the probes need,
    with those settings; any other broker is probed once, as it is."""
    if not configures_broker(spec):
        target = make_target(spec, several_recordings=True)
        return run_probes(target, trace_dir, names or list(registry), registry)
    results = []
    for settings, batch in probe_batches(names, registry):
        target = make_target(spec, PROBE_SETTINGS[settings], several_recordings=True)
        results += run_probes(target, trace_dir, batch, registry)
    # In the order asked for, whatever the batches.
    order = {name: index for index, name in enumerate(names or registry)}
    return sorted(results, key=lambda result: order[result.name])


def run_probes(
    target: Target,
    trace_dir: Path,
    names: Sequence[str] | None = None,
    registry: dict[str, Probe] = PROBES,
) -> list[ProbeResult]:
    """Run each probe (of `registry`, default the shipped ones) against `target`, opened once
    for them all, behind a recorder of its own: one trace per probe, each on groups named
    afresh."""
    trace_dir.mkdir(parents=True, exist_ok=True)
    target.open()
    try:
        return [_run_one(target, registry[name], trace_dir) for name in names or list(registry)]
    finally:
        target.close()


def _run_one(target: Target, probe: Probe, trace_dir: Path) -> ProbeResult:
    name = probe.name
    path = trace_dir / f"probe-{name}.jsonl"
    config = ProxyConfig(
        Address(LOOPBACK, 0), target.upstream, advertise_self=target.advertise_self
    )
    header = TraceHeader(f"{target.describe()}, groupspec probe {name!r}", target.coordinator)
    with RecorderThread(config, path, header) as recorder:
        target.attach(Address(LOOPBACK, recorder.port))

        async def connect(client_id: str, port: int = recorder.port) -> ProbeClient:
            reader, writer = await asyncio.open_connection(LOOPBACK, port)
            return ProbeClient(reader, writer, client_id)

        result = ProbeResult(name, path)
        try:
            asyncio.run(probe.run(connect, f"probe-{name}-{int(time.time() * 1000)}"))
        except (
            TimeoutError,
            OSError,
            asyncio.IncompleteReadError,
            MalformedAnswer,
            ProbeStopped,
        ) as error:
            result.error = f"{type(error).__name__}: {error}"
        # Let the recorder see the last frames before it stops.
        time.sleep(0.2)
    return result
