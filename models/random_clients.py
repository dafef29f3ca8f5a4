"""A closed world of protocol clients around one coordinator, for random exploration.

Clients remember what a real client would (member id, generation, leadership, the member list
a leader received) and send any request a client could send in that situation, including stale
and deliberately wrong ones (old generations, forgotten member ids, restarts). Time is abstract:
any armed timer may fire. Faults: client restarts and coordinator failover. This world is a
stand-in for the consumer-side models of the model checker: it exercises the coordinator's rules,
not client correctness.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from groupspec.checker.model import ActionProperty, Cut, Invariant, Property, Transition
from groupspec.checker.plain import PlainModel
from groupspec.spec import (
    CoordinatorConfig,
    CoordinatorState,
    FinishLoading,
    GroupCoordinatorSpec,
    Input,
    Outcome,
    StartLoading,
    Unload,
)
from groupspec.spec.config import INT32_MAX
from groupspec.spec.consumer_protocol import encode_subscription_v0
from groupspec.spec.invariants import ACTION_PROPERTIES, INVARIANTS, check_state, check_step
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    RequestRef,
    SyncGroupAssignment,
    SyncGroupRequest,
    TopicPartition,
)
from groupspec.vocabulary.responses import JoinGroupResponse, Response, SyncGroupResponse

from .parameters import ParameterError, check_ranges, documented

GROUP = "g"
SIMPLE_GROUP = "simple"
TOPIC = "t"
# Parameter ranges: instance and member ids stay single-digit; a clock step of up to a year.
MAX_CLIENTS = 9
MAX_WRITE_FAILURES = 8
MAX_CLOCK_TICK_MS = 365 * 24 * 3_600_000


@dataclass(frozen=True)
class ClientsParameters:
    """The shape of a random-clients world: how many clients, which static, which faults."""

    clients: int = documented(
        3, "protocol clients around the coordinator", minimum=1, maximum=MAX_CLIENTS
    )
    static_clients: int = documented(
        1,
        "the first N clients are static (instance ids i1, ...)",
        minimum=0,
        maximum=MAX_CLIENTS,
        note="at most clients",
    )
    failover: bool = documented(True, "coordinator failover (Unload, StartLoading, FinishLoading)")
    legacy_join_versions: bool = documented(
        True, "the last dynamic client joins with JoinGroup v3 (no MEMBER_ID_REQUIRED round)"
    )
    write_failures: tuple[str, ...] = documented(
        (),
        "errors a __consumer_offsets append may fail with (Kafka error names)",
        length=(0, MAX_WRITE_FAILURES),
        note="names of Kafka error codes (NOT_ENOUGH_REPLICAS, ...)",
    )
    group_max_size: int = documented(
        0, "group.max.size (0: unlimited)", minimum=0, maximum=INT32_MAX
    )
    # Retention compares real timestamps, while timers stay abstract (any armed timer may fire).
    clock_tick_ms: int = documented(
        3_600_000,
        "milliseconds one 'clock advances' step moves",
        minimum=1,
        maximum=MAX_CLOCK_TICK_MS,
        note="a year",
    )

    def __post_init__(self) -> None:
        check_ranges(self)
        if self.static_clients > self.clients:
            raise ParameterError(
                "static_clients",
                f"must be at most clients ({self.clients}), got {self.static_clients}",
            )
        for name in self.write_failures:
            if name not in ErrorCode.__members__:
                raise ParameterError("write_failures", f"unknown error {name!r}")


@dataclass(frozen=True)
class Client:
    """What one client knows about its membership."""

    name: str
    instance_id: str | None
    join_version: int
    member_id: str = ""
    generation: int = -1
    leader: str = ""
    known_members: tuple[str, ...] = ()
    next_correlation_id: int = 0
    in_flight: RequestRef | None = None


@dataclass(frozen=True)
class Action:
    """Something that can happen next: a client's request, a timer, a fault, or time passing."""

    label: str
    event: Input | None = None
    client: str | None = None
    restart: bool = False
    # How often a random walk picks it relative to others: faults and misbehaviour are rarer
    # than the ordinary protocol so that walks reach Stable groups and then perturb them.
    weight: int = 10


@dataclass(frozen=True)
class ClientsState:
    """The coordinator state together with every client's view, and the coordinator
    action-property findings of the step that led here (a ghost, empty when correct)."""

    coordinator: CoordinatorState
    clients: tuple[Client, ...] = field(default=())
    now_ms: int = 0
    step_problems: tuple[tuple[str, str], ...] = ()

    def client(self, name: str) -> Client:
        """The client called `name`."""
        for client in self.clients:
            if client.name == name:
                return client
        raise KeyError(name)

    def with_client(self, updated: Client) -> ClientsState:
        """The world with one client's view replaced."""
        return replace(
            self, clients=tuple(updated if c.name == updated.name else c for c in self.clients)
        )


def _protocols(variant: int) -> tuple[JoinGroupProtocol, ...]:
    subscription = encode_subscription_v0((TOPIC,))
    if variant == 0:
        return (
            JoinGroupProtocol("range", subscription),
            JoinGroupProtocol("roundrobin", subscription),
        )
    return (JoinGroupProtocol("roundrobin", subscription), JoinGroupProtocol("range", subscription))


class RandomClientsWorld(PlainModel[ClientsState]):
    """The actions possible in a `ClientsState`, each with every outcome the spec allows, as a
    model for random walks (`checker.walk`). Unbounded: correlation ids and the clock grow, so
    it is never explored exhaustively."""

    exhaustive = False

    def __init__(self, settings: ClientsParameters, name: str = "random-clients") -> None:
        self.settings = settings
        self._name = name
        base = CoordinatorConfig(offsets_retention_ms=2 * settings.clock_tick_ms)
        if settings.write_failures:
            base = replace(
                base, write_failures=tuple(ErrorCode[name] for name in settings.write_failures)
            )
        if settings.group_max_size:
            base = replace(base, group_max_size=settings.group_max_size)
        self.spec = GroupCoordinatorSpec(base)
        self.partition = self.spec.partition_for(GROUP)
        self._properties: tuple[Property, ...] = (
            *(
                Invariant(invariant.name, invariant.description, _coordinator_check(invariant.name))
                for invariant in INVARIANTS
            ),
            # Reported by each step (`_action_steps` judges the coordinator's step).
            *(ActionProperty(prop.name, prop.description) for prop in ACTION_PROPERTIES),
        )

    # Closures do not pickle; engines send models to other processes (Spark's executors), so
    # only the parameters travel and everything else is rebuilt.
    def __getstate__(self) -> dict[str, object]:
        return {"settings": self.settings, "name": self._name}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(state["settings"], state["name"])  # type: ignore[misc]

    # -- the Model protocol ------------------------------------------------------------------

    @property
    def name(self) -> str:  # type: ignore[override]
        """The world's name in reports (its preset's name)."""
        return self._name

    def initial_states(self) -> tuple[ClientsState, ...]:
        """Every client unjoined; the coordinator leads every partition."""
        return (self.initial(),)

    def transitions(self, world: ClientsState) -> list[Transition[ClientsState] | Cut]:
        """Every enabled action with each outcome the specification allows."""
        return [step for _, outcomes in self.weighted_steps(world) for step in outcomes()]

    def weighted_steps(
        self, world: ClientsState
    ) -> list[tuple[float, Callable[[], list[Transition[ClientsState]]]]]:
        """Each enabled action's weight, with its outcomes computed on demand: a walk picks an
        action by weight, then one of its outcomes (faults and misbehaviour are rarer than the
        ordinary protocol, so that walks reach Stable groups and then perturb them)."""
        return [
            (float(action.weight), partial(self._action_steps, world, action))
            for action in self.actions(world)
        ]

    def _action_steps(self, world: ClientsState, action: Action) -> list[Transition[ClientsState]]:
        """The action with every outcome the specification allows, as transitions."""
        kind = _action_kind(action)
        outcomes = self.outcomes(world, action)
        if not outcomes:
            after = replace(self.apply(world, action, None), step_problems=())
            return [Transition(action.label, kind, after)]
        steps = []
        event = action.event
        assert event is not None
        for outcome in outcomes:
            found = check_step(world.coordinator, event, outcome.state, outcome.responses)
            after = replace(self.apply(world, action, outcome), step_problems=tuple(found))
            label = action.label
            if outcome.choices:
                label += " [" + ", ".join(f"{c.what}={c.value}" for c in outcome.choices) + "]"
            steps.append(Transition(label, kind, after, outcome.rules, tuple(found)))
        return steps

    @property
    def properties(self) -> tuple[Property, ...]:  # type: ignore[override]
        """The coordinator's invariants, on the coordinator state, and its action properties,
        as each step reports them."""
        return self._properties

    # -- actions -----------------------------------------------------------------------------

    def initial(self) -> ClientsState:
        """Every client unjoined; the coordinator leads every partition."""
        clients = []
        for index in range(self.settings.clients):
            is_static = index < self.settings.static_clients
            legacy = self.settings.legacy_join_versions and index == self.settings.clients - 1
            clients.append(
                Client(
                    name=f"c{index + 1}",
                    instance_id=f"i{index + 1}" if is_static else None,
                    join_version=3 if legacy and not is_static else (8 if index % 2 else 9),
                )
            )
        return ClientsState(self.spec.initial_state(), tuple(clients))

    def actions(self, world: ClientsState) -> tuple[Action, ...]:
        """Every action enabled in `world`, in a stable order."""
        actions: list[Action] = []
        for client in world.clients:
            actions.extend(self._client_actions(client))
        for _deadline, timer in self.spec.armed_timers(world.coordinator):
            actions.append(Action(f"timer {timer}", timer, weight=3))
        actions.extend(self._fault_actions(world))
        admin = (
            ("admin DescribeGroups", DescribeGroupsRequest((GROUP,))),
            ("admin ListGroups", ListGroupsRequest(("stable", "empty"))),
            ("admin DeleteGroups", DeleteGroupsRequest((GROUP,))),
            ("admin FindCoordinator", FindCoordinatorRequest(GROUP)),
            ('admin Heartbeat(group id "")', HeartbeatRequest("", 0, "nobody")),
            ("admin OffsetFetch(all)", OffsetFetchRequest(GROUP, None)),
            (
                "admin OffsetCommit(simple, big metadata)",
                OffsetCommitRequest(
                    SIMPLE_GROUP,
                    (OffsetCommitPartition(TOPIC, 1, 0, committed_metadata="x" * 5000),),
                ),
            ),
        )
        actions.extend(Action(label, self._admin(request), weight=1) for label, request in admin)
        actions.append(Action("clock advances", weight=1))
        return tuple(actions)

    def _admin(self, request: object) -> Received:
        return Received(RequestRef("admin", 0), request)  # type: ignore[arg-type]

    def _fault_actions(self, world: ClientsState) -> list[Action]:
        if not self.settings.failover:
            return []
        state = world.coordinator
        if self.partition in state.loading_partitions:
            return [Action("fault FinishLoading", FinishLoading(self.partition), weight=5)]
        if self.partition in state.unowned_partitions:
            return [Action("fault StartLoading", StartLoading(self.partition), weight=5)]
        return [Action("fault Unload", Unload(self.partition), weight=1)]

    def _client_actions(self, client: Client) -> list[Action]:
        actions = [Action(f"{client.name} restarts", client=client.name, restart=True, weight=1)]
        if client.in_flight is not None:
            return actions
        ref = RequestRef(client.name, client.next_correlation_id)
        member, gen, instance = client.member_id, client.generation, client.instance_id
        sync_instance = instance
        for variant in (0, 1):
            join = JoinGroupRequest(
                group_id=GROUP,
                member_id=member,
                protocol_type="consumer",
                protocols=_protocols(variant),
                session_timeout_ms=10_000,
                rebalance_timeout_ms=20_000 + 10_000 * (client.name == "c1"),
                group_instance_id=instance,
                client_id=client.name,
                api_version=client.join_version,
            )
            actions.append(
                Action(
                    f"{client.name} JoinGroup(protocols={variant})",
                    Received(ref, join),
                    client.name,
                    weight=10 if variant == 0 else 2,
                )
            )
        foreign = JoinGroupRequest(
            GROUP,
            member,
            "connect",
            (JoinGroupProtocol("default"),),
            10_000,
            20_000,
            group_instance_id=instance,
            client_id=client.name,
            api_version=client.join_version,
        )
        actions.append(
            Action(
                f"{client.name} JoinGroup(type=connect)",
                Received(ref, foreign),
                client.name,
                weight=1,
            )
        )
        too_short = replace(
            foreign, protocol_type="consumer", protocols=_protocols(0), session_timeout_ms=1_000
        )
        actions.append(
            Action(
                f"{client.name} JoinGroup(session 1s)",
                Received(ref, too_short),
                client.name,
                weight=1,
            )
        )
        assignments: tuple[SyncGroupAssignment, ...] = ()
        if client.leader == member and member:
            assignments = tuple(SyncGroupAssignment(m, m.encode()) for m in client.known_members)
        actions.append(
            Action(
                f"{client.name} SyncGroup",
                Received(
                    ref,
                    SyncGroupRequest(GROUP, gen, member, sync_instance, assignments=assignments),
                ),
                client.name,
            )
        )
        wrong_protocol = SyncGroupRequest(GROUP, gen, member, sync_instance, protocol_name="sticky")
        actions.append(
            Action(
                f"{client.name} SyncGroup(protocol=sticky)",
                Received(ref, wrong_protocol),
                client.name,
                weight=1,
            )
        )
        actions.append(
            Action(
                f"{client.name} Heartbeat",
                Received(ref, HeartbeatRequest(GROUP, gen, member, instance)),
                client.name,
            )
        )
        actions.append(
            Action(
                f"{client.name} LeaveGroup",
                Received(ref, LeaveGroupRequest(GROUP, (MemberIdentity(member, instance),))),
                client.name,
                weight=1,
            )
        )
        offsets = (OffsetCommitPartition(TOPIC, 0, client.next_correlation_id),)
        actions.append(
            Action(
                f"{client.name} OffsetCommit(gen={gen})",
                Received(ref, OffsetCommitRequest(GROUP, offsets, gen, member, instance)),
                client.name,
            )
        )
        actions.append(
            Action(
                f"{client.name} OffsetCommit(stale gen={gen - 1})",
                Received(ref, OffsetCommitRequest(GROUP, offsets, gen - 1, member, instance)),
                client.name,
                weight=2,
            )
        )
        actions.append(
            Action(
                f"{client.name} OffsetCommit(simple)",
                Received(ref, OffsetCommitRequest(SIMPLE_GROUP, offsets)),
                client.name,
                weight=2,
            )
        )
        actions.append(
            Action(
                f"{client.name} OffsetFetch",
                Received(ref, OffsetFetchRequest(GROUP, (TopicPartition(TOPIC, 0),))),
                client.name,
            )
        )
        return actions

    def outcomes(self, world: ClientsState, action: Action) -> tuple[Outcome, ...]:
        """Every outcome the specification allows for `action` (empty for a client restart)."""
        if action.event is None:
            return ()
        return self.spec.step(world.coordinator, action.event, world.now_ms)

    def apply(self, world: ClientsState, action: Action, outcome: Outcome | None) -> ClientsState:
        """The world after `action` happened with `outcome`."""
        if action.event is None and not action.restart:
            return replace(world, now_ms=world.now_ms + self.settings.clock_tick_ms)
        if action.restart:
            assert action.client is not None
            client = world.client(action.client)
            # A restart drops the connection: in-flight responses are lost, the id is forgotten
            # (a static member rejoins with "" and its instance id, as after a real restart).
            return world.with_client(
                replace(
                    client,
                    member_id="",
                    generation=-1,
                    leader="",
                    known_members=(),
                    in_flight=None,
                    next_correlation_id=client.next_correlation_id + 1,
                )
            )
        assert outcome is not None
        world = replace(world, coordinator=outcome.state)
        if action.client is not None:
            client = world.client(action.client)
            assert action.event is not None and isinstance(action.event, Received)
            world = world.with_client(
                replace(
                    client,
                    in_flight=action.event.ref,
                    next_correlation_id=client.next_correlation_id + 1,
                )
            )
        for response in outcome.responses:
            world = self._deliver(world, response)
        return world

    def _deliver(self, world: ClientsState, response: Response) -> ClientsState:
        """A response reaches its client (if that client still waits for it)."""
        for client in world.clients:
            if client.in_flight != response.ref:
                continue
            client = replace(client, in_flight=None)
            body = response.body
            if isinstance(body, JoinGroupResponse):
                client = _learn_from_join(client, body)
            elif isinstance(body, SyncGroupResponse) and body.error_code in (
                ErrorCode.UNKNOWN_MEMBER_ID,
                ErrorCode.ILLEGAL_GENERATION,
            ):
                client = replace(client, generation=-1)
            return world.with_client(client)
        return world


def _learn_from_join(client: Client, body: JoinGroupResponse) -> Client:
    if body.error_code is ErrorCode.MEMBER_ID_REQUIRED:
        return replace(client, member_id=body.member_id)
    if body.error_code is ErrorCode.NONE:
        return replace(
            client,
            member_id=body.member_id,
            generation=body.generation_id,
            leader=body.leader,
            known_members=tuple(m.member_id for m in body.members),
        )
    if body.error_code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
        return replace(client, member_id="", generation=-1, leader="", known_members=())
    return client


def _coordinator_check(name: str) -> Callable[[ClientsState], list[str]]:
    def check(world: ClientsState) -> list[str]:
        return [problem for which, problem in check_state(world.coordinator) if which == name]

    return check


def _action_kind(action: Action) -> str:
    """The action kind a walk counts: Handle<API>, a timer's or a fault's event, or the rest."""
    if action.restart:
        return "Restart"
    event = action.event
    if event is None:
        return "ClockAdvances"
    if isinstance(event, Received):
        return "Handle" + type(event.request).__name__.removesuffix("Request")
    return type(event).__name__
