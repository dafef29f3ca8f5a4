"""Differential conformance of the optimized coordinator (`groupspec.impl`) against the spec.

The spec is a relation: for a state and an input it returns every outcome Kafka allows. The impl
is a function: it takes one of them. `Differential` feeds the same input to both and keeps the
spec *bound* to the impl's choice: after each step only the spec outcomes whose responses and
state match the impl's survive (a set of "worlds", usually one). An impl response the spec does
not allow, or an impl state no surviving outcome has, raises `ConformanceError`.

What is compared (the projection, in the spec's vocabulary):
- every response, by the request it answers, with lists whose order carries no meaning sorted;
- every group: state, previous state, generation, protocol type and name, leader, members (ids,
  instance ids, client, timeouts, protocols, assignment, "new", parked join/sync, session
  deadline), pending members with their deadlines, the pending-sync set, the join timer
  (deadline, initial delay, remainder) and its "new member added" flag, the sync timer, committed
  offsets, subscribed topics and the state timestamp;
- the coordinator: loading and unowned partitions, the retention deadline, and the offsets log.

Member ids are the one value the two sides may spell differently (Kafka: `<prefix>-<UUID>`; the
spec `<prefix>-<n>`). A world therefore carries a bijection impl id -> spec id, extended when a
step hands out a new id on both sides. Inputs are written in the impl's vocabulary and
translated per world.

Both sides take and answer the vocabulary's requests and responses; only the configuration and
the timer events (each side has its own) are converted here, which the impl adapter reuses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from groupspec.impl import events as impl_events
from groupspec.impl.clock import ManualClock
from groupspec.impl.config import CoordinatorConfig as ImplConfig
from groupspec.impl.coordinator import Coordinator
from groupspec.impl.policy import Policy
from groupspec.impl.state import Group as ImplGroup
from groupspec.spec import events as spec_events
from groupspec.spec.config import KAFKA_4X
from groupspec.spec.config import CoordinatorConfig as SpecConfig
from groupspec.spec.coordinator import GroupCoordinatorSpec
from groupspec.spec.log import GroupMetadataKey, GroupMetadataValue, OffsetCommitValue
from groupspec.spec.member_ids import (
    FieldRole,
    field_roles,
    rename_request_member_ids,
    request_member_ids,
)
from groupspec.spec.state import CoordinatorState
from groupspec.spec.step import Outcome
from groupspec.vocabulary import requests
from groupspec.vocabulary.errors import InputError, InvalidConfigError

Name = Callable[[str], str]


class ConformanceError(AssertionError):
    """The impl did something the spec does not allow (the message shows what and where)."""


# -- converting spec inputs into impl inputs ------------------------------------------------


def to_impl_config(config: SpecConfig) -> ImplConfig:
    """The impl's configuration for the spec's (append failures are the policy's business);
    InvalidConfigError for a Kafka version profile the impl does not follow (it follows 4.x)."""
    if config.kafka_version != KAFKA_4X:
        raise InvalidConfigError(
            f"kafka_version {config.kafka_version}: the optimized coordinator (impl/) follows "
            f"the Kafka {KAFKA_4X} profile only"
        )
    return ImplConfig(**{f.name: getattr(config, f.name) for f in dataclasses.fields(ImplConfig)})


def to_spec_timer_event(event: impl_events.TimerEvent, name: Name) -> spec_events.TimerEvent:
    """The spec's timer event for the impl's, member ids translated by `name`."""
    if isinstance(event, impl_events.HeartbeatExpired):
        return spec_events.HeartbeatExpired(event.group_id, name(event.member_id))
    if isinstance(event, impl_events.JoinTimerExpired):
        return spec_events.JoinTimerExpired(event.group_id)
    if isinstance(event, impl_events.SyncTimerExpired):
        return spec_events.SyncTimerExpired(event.group_id)
    return spec_events.OffsetRetentionCheck()


# -- projections ----------------------------------------------------------------------------


def normalize_response(body: Any, name: Name) -> tuple[Any, ...]:
    """A response of either side as plain values: its class name, then its fields in order,
    member ids through `name`, error codes as numbers, nested messages as tuples, and the lists
    the vocabulary marks `UNORDERED` sorted (both sides answer with the vocabulary's classes).
    """
    if not dataclasses.is_dataclass(body) or isinstance(body, type):
        raise TypeError(f"no normal form for {body!r}")
    return (type(body).__name__, *_normal_fields(body, name))


def _normal_fields(message: Any, name: Name) -> tuple[Any, ...]:
    cls: type = type(message)
    return tuple(_normal(getattr(message, role.name), role, name) for role in field_roles(cls))


def _normal(value: Any, role: FieldRole, name: Name) -> Any:
    if isinstance(value, tuple):
        items = [_normal_item(item, role, name) for item in value]
        return tuple(sorted(items)) if role.unordered else tuple(items)
    return _normal_item(value, role, name)


def _normal_item(value: Any, role: FieldRole, name: Name) -> Any:
    if role.member_id and isinstance(value, str):
        return name(value)
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value):
        return _normal_fields(value, name)
    return value


def _offsets(
    entries: Iterable[tuple[tuple[str, int], Any]],
) -> dict[tuple[str, int], tuple[Any, ...]]:
    return {
        key: (v.offset, v.leader_epoch, v.metadata, v.commit_timestamp_ms, v.expire_timestamp_ms)
        for key, v in entries
    }


def _member_records(members: Iterable[Any], name: Name) -> tuple[tuple[Any, ...], ...]:
    return tuple(
        sorted(
            (
                name(m.member_id),
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.rebalance_timeout_ms,
                m.session_timeout_ms,
                m.subscription,
                m.assignment,
            )
            for m in members
        )
    )


def _group_value(value: Any, name: Name) -> tuple[Any, ...]:
    return (
        value.protocol_type,
        value.generation_id,
        value.protocol_name,
        name(value.leader) if value.leader is not None else None,
        value.current_state_timestamp_ms,
        _member_records(value.members, name),
    )


def _member(m: Any) -> tuple[Any, ...]:
    return (
        m.group_instance_id,
        m.client_id,
        m.client_host,
        m.rebalance_timeout_ms,
        m.session_timeout_ms,
        m.protocol_type,
        tuple((p.name, p.metadata) for p in m.protocols),
        m.assignment,
        m.is_new,
        m.awaiting_join,
        m.awaiting_sync,
        m.heartbeat_deadline_ms,
    )


def _group(
    g: Any, members: Iterable[Any], pending: Iterable[tuple[str, int]], offsets: Any, name: Name
) -> dict[str, Any]:
    join = g.join_timer
    sync = g.sync_timer
    return {
        "state": g.state.value,
        "previous_state": g.previous_state.value if g.previous_state is not None else None,
        "generation": g.generation_id,
        "protocol_type": g.protocol_type,
        "protocol_name": g.protocol_name,
        "leader": name(g.leader_id) if g.leader_id is not None else None,
        "members": {name(m.member_id): _member(m) for m in members},
        "pending_members": {name(mid): deadline for mid, deadline in pending},
        "pending_sync": tuple(sorted(name(mid) for mid in g.pending_sync_members)),
        "new_member_added": g.new_member_added,
        "join_timer": (join.deadline_ms, join.initial_delay_ms, join.initial_remaining_ms)
        if join
        else None,
        "sync_timer": (sync.deadline_ms, sync.generation_id) if sync else None,
        "offsets": _offsets(offsets),
        "subscribed_topics": tuple(sorted(g.subscribed_topics))
        if g.subscribed_topics is not None
        else None,
        "state_timestamp": g.current_state_timestamp_ms,
    }


def project_spec(state: CoordinatorState, name: Name) -> dict[str, Any]:
    """The comparable projection of a spec state (member ids through `name`)."""
    groups = {
        g.group_id: _group(
            g,
            g.members,
            ((p.member_id, p.expiry_deadline_ms) for p in g.pending_members),
            ((((tp.topic, tp.partition), v) for tp, v in g.offsets)),
            name,
        )
        for g in state.groups
    }
    log: dict[tuple[Any, ...], Any] = {}
    for key, value in state.log.entries:
        if isinstance(key, GroupMetadataKey):
            assert isinstance(value, GroupMetadataValue)
            log[("group", key.group_id)] = _group_value(value, name)
        else:
            assert isinstance(value, OffsetCommitValue)
            log[("offset", key.group_id, key.topic, key.partition)] = next(
                iter(_offsets([((key.topic, key.partition), value)]).values())
            )
    return {
        "groups": groups,
        "loading": tuple(sorted(state.loading_partitions)),
        "unowned": tuple(sorted(state.unowned_partitions)),
        "retention_deadline": state.retention_check_deadline_ms,
        "log": log,
    }


def project_impl(coordinator: Coordinator, name: Name) -> dict[str, Any]:
    """The comparable projection of the impl's state (member ids through `name`)."""
    groups = {}
    for g in coordinator.groups():
        assert isinstance(g, ImplGroup)
        groups[g.group_id] = _group(
            g, g.members.values(), g.pending_members.items(), g.offsets.items(), name
        )
    log: dict[tuple[Any, ...], Any] = {}
    for _, group_id, entry in coordinator.log.entries():
        if entry.metadata is not None:
            log[("group", group_id)] = _group_value(entry.metadata, name)
        for (topic, partition), value in _offsets(entry.offsets.items()).items():
            log[("offset", group_id, topic, partition)] = value
    return {
        "groups": groups,
        "loading": tuple(sorted(coordinator.loading_partitions)),
        "unowned": tuple(sorted(coordinator.unowned_partitions)),
        "retention_deadline": coordinator.retention_deadline_ms,
        "log": log,
    }


def first_difference(left: Any, right: Any, path: str = "") -> str | None:
    """Where two projections first differ, as `path: left != right`, or None if equal."""
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right), key=repr):
            if key not in left:
                return f"{path}[{key!r}]: missing on the impl side, spec has {right[key]!r}"
            if key not in right:
                return f"{path}[{key!r}]: impl has {left[key]!r}, missing on the spec side"
            found = first_difference(left[key], right[key], f"{path}[{key!r}]")
            if found is not None:
                return found
        return None
    if left != right:
        return f"{path}: impl {left!r} != spec {right!r}"
    return None


# -- the differential runner ----------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """One spec state consistent with everything the impl did, and the id bijection."""

    state: CoordinatorState
    impl_to_spec: Mapping[str, str]

    def spec_name(self) -> Name:
        """Translate an impl member id into this world's spec id (unknown ids cannot match)."""
        known = self.impl_to_spec
        taken = set(known.values())

        def name(member_id: str) -> str:
            if member_id == "":
                return ""
            if member_id in known:
                return known[member_id]
            # A spec id bound to a different impl id must not be reachable by its spelling.
            return f"\x00unbound:{member_id}" if member_id in taken else member_id

        return name


@dataclass
class _Match:
    world: Candidate | None = None
    report: list[str] = field(default_factory=list)


class Differential:
    """The spec and the impl driven by one input stream, checked after every step."""

    def __init__(
        self,
        config: SpecConfig,
        policy: Policy,
        *,
        unowned_partitions: frozenset[int] = frozenset(),
    ) -> None:
        self.spec = GroupCoordinatorSpec(config)
        self.clock = ManualClock(0)
        self._responses: dict[Any, Any] = {}
        self.impl = Coordinator(
            to_impl_config(config),
            policy=policy,
            clock=self.clock,
            respond=self._collect,
            unowned_partitions=unowned_partitions,
        )
        self.worlds: list[Candidate] = [Candidate(self.spec.initial_state(unowned_partitions), {})]
        self.trace: list[str] = []
        self.steps = 0

    @property
    def now(self) -> int:
        """The time both sides are at."""
        return self.clock.now_ms()

    def set_time(self, now_ms: int) -> None:
        """Move the shared clock (never backwards)."""
        self.clock.set(now_ms)

    def _collect(self, ref: Any, body: Any) -> None:
        if ref in self._responses:
            raise ConformanceError(f"the impl answered {ref} twice in one step")
        self._responses[ref] = body

    def _take(self) -> dict[Any, Any]:
        taken, self._responses = self._responses, {}
        return taken

    # -- inputs -------------------------------------------------------------------------------

    def request(self, ref: requests.RequestRef, request: requests.Request) -> dict[Any, Any]:
        """Send `request` (member ids in the impl's vocabulary) to both; returns the impl's responses."""
        self.trace.append(f"t={self.now} {ref}: {request}")
        self.impl.handle(ref, request)
        responses = self._take()
        ids = request_member_ids(request)
        self._check(
            lambda world: requests.Received(
                ref, rename_request_member_ids(request, world.spec_name())
            ),
            responses,
            lambda world: _echo(world, ids),
        )
        return responses

    def fire(self, event: impl_events.TimerEvent) -> dict[Any, Any]:
        """Fire one armed timer on both sides now, whatever its deadline."""
        self.trace.append(f"t={self.now} fire {event}")
        self.impl.fire(event)
        responses = self._take()
        self._check(lambda world: to_spec_timer_event(event, world.spec_name()), responses)
        return responses

    def advance(self) -> list[impl_events.TimerEvent]:
        """Let the impl fire what is due at the current time; each firing is checked as it happens."""
        self.trace.append(f"t={self.now} advance")

        def fired(event: impl_events.TimerEvent) -> None:
            self.trace.append(f"t={self.now}   impl fired {event}")
            responses = self._take()
            for world in self.worlds:
                spec_event = to_spec_timer_event(event, world.spec_name())
                if spec_event not in self.spec.due_timers(world.state, self.now):
                    raise ConformanceError(
                        f"the impl fired {event} at t={self.now}, not a due timer of the spec"
                        f" (due: {self.spec.due_timers(world.state, self.now)})\n" + self._trace()
                    )
            self._check(lambda world: to_spec_timer_event(event, world.spec_name()), responses)

        events = self.impl.advance(on_fired=fired)
        late = [
            e
            for deadline, e in self.impl.armed_timers()
            if deadline <= self.now and e not in events
        ]
        if late:
            raise ConformanceError(
                f"after advance to t={self.now} the impl still has due timers {late}\n"
                + self._trace()
            )
        return events

    def partition_event(self, event: spec_events.PartitionEvent) -> dict[Any, Any]:
        """StartLoading, FinishLoading or Unload on both sides."""
        self.trace.append(f"t={self.now} {event}")
        if isinstance(event, spec_events.StartLoading):
            self.impl.start_loading(event.partition)
        elif isinstance(event, spec_events.FinishLoading):
            self.impl.finish_loading(event.partition)
        else:
            self.impl.unload(event.partition)
        responses = self._take()
        self._check(lambda world: event, responses)
        return responses

    # -- checking -----------------------------------------------------------------------------

    def _check(
        self,
        spec_input: Callable[[Candidate], Any],
        impl_responses: Mapping[Any, Any],
        echo_of: Callable[[Candidate], Mapping[str, str]] = lambda world: {},
    ) -> None:
        self.steps += 1
        survivors: list[Candidate] = []
        reports: list[str] = []
        for world in self.worlds:
            try:
                outcomes = self.spec.step(world.state, spec_input(world), self.now)
            except InputError as error:
                reports.append(f"the spec refuses the input: {error}")
                continue
            echo = echo_of(world)
            for outcome in outcomes:
                match = _match(self.impl, world, outcome, impl_responses, echo)
                if match.world is not None:
                    survivors.append(match.world)
                else:
                    reports.extend(match.report)
        if not survivors:
            raise ConformanceError(
                "no spec outcome matches the impl\n  " + "\n  ".join(reports) + "\n" + self._trace()
            )
        unique: dict[tuple[Any, ...], Candidate] = {}
        for world in survivors:
            unique.setdefault((world.state, tuple(sorted(world.impl_to_spec.items()))), world)
        self.worlds = list(unique.values())

    def _trace(self) -> str:
        tail = self.trace[-40:]
        return "trace (last steps):\n    " + "\n    ".join(tail)


def _echo(world: Candidate, ids: list[str]) -> dict[str, str]:
    """Ids named in the request, as this world's spec spells them: responses may echo them."""
    name = world.spec_name()
    return {member_id: name(member_id) for member_id in ids if member_id != ""}


def _project_step(
    responses: Mapping[Any, Any], project: Callable[[Name], dict[str, Any]], name: Name
) -> dict[str, Any]:
    return {
        "responses": {ref: normalize_response(body, name) for ref, body in responses.items()},
        "state": project(name),
    }


def _match(
    impl: Coordinator,
    world: Candidate,
    outcome: Outcome,
    impl_responses: Mapping[Any, Any],
    echo: Mapping[str, str],
) -> _Match:
    """Whether `outcome` is what the impl did, binding at most one new member id."""
    spec_responses: dict[Any, Any] = {}
    for response in outcome.responses:
        if response.ref in spec_responses:
            return _Match(report=[f"the spec answers {response.ref} twice (spec defect?)"])
        spec_responses[response.ref] = response.body
    known = dict(world.impl_to_spec)
    spec_known = set(known.values()) | set(echo.values())
    new_impl: set[str] = set()
    new_spec: set[str] = set()

    def impl_name(member_id: str) -> str:
        if member_id == "":
            return ""
        if member_id in known:
            return known[member_id]
        if member_id in echo:
            return echo[member_id]
        new_impl.add(member_id)
        return f"\x00new:{member_id}"

    def spec_name(member_id: str) -> str:
        if member_id != "" and member_id not in spec_known:
            new_spec.add(member_id)
        return member_id

    spec_side = _project_step(spec_responses, lambda n: project_spec(outcome.state, n), spec_name)
    impl_side = _project_step(impl_responses, lambda n: project_impl(impl, n), impl_name)
    if new_impl or new_spec:
        if len(new_impl) != 1 or len(new_spec) != 1:
            return _Match(
                report=[
                    f"new member ids do not pair up: impl {sorted(new_impl)}, spec {sorted(new_spec)}"
                    f" (rules {outcome.rules})"
                ]
            )
        (impl_id,) = new_impl
        (spec_id,) = new_spec
        known[impl_id] = spec_id
        impl_side = _project_step(impl_responses, lambda n: project_impl(impl, n), impl_name)
    difference = first_difference(impl_side, spec_side)
    if difference is not None:
        return _Match(
            report=[
                f"{difference}  (spec rules {list(outcome.rules)}, choices {list(outcome.choices)})"
            ]
        )
    return _Match(world=Candidate(outcome.state, known))
