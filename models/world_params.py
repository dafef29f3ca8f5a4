"""The named parameters of the closed group world (`GroupWorld`), with types, defaults and checks.

Every parameter has a declared type (int, bool, str, list of str, list of int), so a preset file
and a `--set name=value` override are read the same way. `validate` refuses impossible worlds
(no clients, a generation bound below 1, an unknown assignor, a subscription to a topic that
does not exist) with a `ParameterError` naming the key; `models/presets.py` adds the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from groupspec.spec.assignors.registry import ASSIGNORS
from groupspec.spec.config import INT32_MAX, KAFKA_4X, KAFKA_VERSIONS, CoordinatorConfig
from groupspec.vocabulary.errors import ErrorCode

from .faults import FAULTS, unknown_fault_message
from .parameters import Parameter, ParameterError, check_ranges, documented, schema

# Separates the assignors of one client in `client_assignors` ("range+cooperative-sticky"):
# a comma already separates list items in `--set`.
ASSIGNOR_SEPARATOR = "+"
# Symmetry tries permutations of interchangeable clients, and member ids stay single-digit.
MAX_CLIENTS = 4
# The ranges of the bounds and budgets: every unit more multiplies the states, and these are
# already far beyond what an exhaustive check finishes.
MAX_BOUND = 10
MAX_BUDGET = 10
MAX_TOPICS = 4
MAX_PARTITIONS = 8
_ASSIGNOR_NAMES = tuple(sorted(ASSIGNORS))
_JOINED = f"assignor names ({', '.join(_ASSIGNOR_NAMES)}) joined by {ASSIGNOR_SEPARATOR}"


@dataclass(frozen=True)
class WorldParameters:
    """Everything that shapes a group world: clients, topics, bounds and fault budgets.

    Clients: `clients` consumers, the first `static_clients` of them static (group.instance.id
    "i1", "i2", ...). Every client uses the assignors `assignors` (preference order) unless
    `client_assignors` gives one entry per client ("range+cooperative-sticky").
    Topics: `topics` with `partitions` partitions each; clients subscribe to `subscription`
    (empty: every topic) and a subscription change switches one client to
    `alternative_subscription`. A partition growth adds one partition to `grow_topic` (empty:
    the first topic).
    Bounds: the group generation never exceeds `max_generation`; a client has at most
    `max_in_flight` requests unanswered; the clients send at most `commits` OffsetCommits in
    all and process each partition up to offset `max_offset`. With `commit_on_revoke` the
    application's onPartitionsRevoked commits the positions of the partitions it gives up after
    a cooperative SyncGroup (the usual ConsumerRebalanceListener), from the commits budget.
    Fault budgets (each shared by all clients): `crashes`, `poll_timeouts`, `session_timeouts`
    (client side), `evictions` (a live client stalls past a coordinator timeout: its session,
    rebalance or pending-sync timeout ran out, which evicts it, or, for a static member, completes
    the rebalance without it; -1: unbounded), `failovers`,
    `subscription_changes`, `partition_growths`, `append_failures` (an append to
    __consumer_offsets fails: every write-failure branch of the coordinator). `closes` bounds how many clients shut down
    gracefully (`Consumer.close()`: revoke, LeaveGroup unless static, never come back); a close
    is something applications do, not a fault, so it does not hold back Convergence.
    `group_max_size` is the coordinator's group.max.size (0: unlimited). With `admin` an admin
    client (kafka-consumer-groups.sh, an AdminClient) sends DescribeGroups, ListGroups,
    DeleteGroups and OffsetFetch for the group at any moment, each answered at once.
    `symmetry` reduces interchangeable clients; `naive_zombie_property` adds the property
    ExclusiveOwnershipCountingZombies, which the classic protocol does not have.
    `fault` names a historical bug to re-introduce (empty: none; see `models/bugs.py`).
    `check_convergence` declares the liveness property Convergence (see `GroupWorld`).
    """

    clients: int = documented(2, "consumers in the group", minimum=1, maximum=MAX_CLIENTS)
    static_clients: int = documented(
        0,
        "the first N clients are static (group.instance.id i1, i2, ...)",
        minimum=0,
        maximum=MAX_CLIENTS,
        note="at most clients",
    )
    assignors: tuple[str, ...] = documented(
        ("range",),
        "every client's partition.assignment.strategy, in preference order",
        length=(1, len(_ASSIGNOR_NAMES)),
        choices=_ASSIGNOR_NAMES,
        note="distinct",
    )
    client_assignors: tuple[str, ...] = documented(
        (),
        'per-client override, one entry per client: "range+cooperative-sticky"',
        length=(0, MAX_CLIENTS),
        note=f"none, or one per client: {_JOINED}",
    )
    upgrade_assignors: str = documented(
        "",
        'the assignors a crashed client restarts with, in preference order ("cooperative-'
        'sticky+range": a rolling upgrade of the consumers; empty: its own)',
        note=f"empty, or {_JOINED}",
    )
    topics: tuple[str, ...] = documented(
        ("t",), "topic names", length=(1, MAX_TOPICS), note="distinct names not ending in -<digits>"
    )
    partitions: tuple[int, ...] = documented(
        (2,),
        "partitions per topic, in the order of topics",
        length=(1, MAX_TOPICS),
        minimum=1,
        maximum=MAX_PARTITIONS,
        note="one per topic",
    )
    subscription: tuple[str, ...] = documented(
        (),
        "topics every client subscribes to (empty: all)",
        length=(0, MAX_TOPICS),
        note="names in topics",
    )
    alternative_subscription: tuple[str, ...] = documented(
        (),
        "what a subscription change switches one client to",
        length=(0, MAX_TOPICS),
        note="names in topics",
    )
    grow_topic: str = documented(
        "",
        "the topic a partition growth adds to (empty: the first topic)",
        note="empty, or a name in topics",
    )
    max_generation: int = documented(
        2, "bound: the group's generation never exceeds this", minimum=1, maximum=MAX_BOUND
    )
    max_in_flight: int = documented(
        2, "bound: requests one client may have unanswered", minimum=1, maximum=MAX_BOUND
    )
    max_offset: int = documented(
        0, "bound: records a client processes per partition", minimum=0, maximum=MAX_BOUND
    )
    crashes: int = documented(
        0, "fault budget: client crash and restart", minimum=0, maximum=MAX_BUDGET
    )
    poll_timeouts: int = documented(
        0,
        "fault budget: max.poll.interval.ms expires (PollTimeoutExpired)",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    session_timeouts: int = documented(
        0,
        "fault budget: the client's own session timeout (SessionTimeoutExpired)",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    evictions: int = documented(
        1,
        "fault budget: a live client stalls past a coordinator timeout, which evicts it or "
        "completes a rebalance without it (-1: unbounded)",
        minimum=-1,
        maximum=MAX_BUDGET,
    )
    failovers: int = documented(
        0,
        "fault budget: coordinator failover (Unload, StartLoading, FinishLoading)",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    subscription_changes: int = documented(
        0,
        "fault budget: a client switches to alternative_subscription",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    partition_growths: int = documented(
        0,
        "fault budget: a topic gains a partition (every client's MetadataChanged)",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    append_failures: int = documented(
        0,
        "fault budget: an append to __consumer_offsets fails (NOT_ENOUGH_REPLICAS)",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    foreign_answers: int = documented(
        0,
        "fault budget: a consumer reads an answer another broker might give instead of the "
        "coordinator's (an unexpected or authorization error, another protocol type or "
        "assignor, an assignment it cannot decode)",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    closes: int = documented(
        0,
        "budget: clients that shut down gracefully (Consumer.close(); not a fault)",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    legacy_clients: int = documented(
        0,
        "the last N clients speak the versions of a Kafka 2.1 consumer (JoinGroup v3, without "
        "the MEMBER_ID_REQUIRED round; SyncGroup and Heartbeat v2, LeaveGroup v2, OffsetCommit "
        "v4, FindCoordinator v2); they must be dynamic",
        minimum=0,
        maximum=MAX_CLIENTS,
        note="at most clients - static_clients",
    )
    disconnects: int = documented(
        0,
        "fault budget: a client's connection to the coordinator drops (Disconnected; the "
        "client lives on and rediscovers its coordinator)",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    retention_checks: int = documented(
        0,
        "budget: the Empty group lies idle for offsets.retention.minutes and the periodic "
        "retention check runs (the clock jumps; its offsets expire, the group is deleted)",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    retention_with_members: bool = documented(
        False,
        "the retention check (from the retention_checks budget) may also run while the group "
        "lies Stable with no sync pending, its members heartbeating (the clock jumps; KIP-211 "
        "keeps the offsets of subscribed topics)",
    )
    api_misuses: int = documented(
        0,
        "budget: the application misuses the consumer API (commits nothing, commits a "
        "negative offset, or subscribes again to the topics it has)",
        minimum=0,
        maximum=MAX_BUDGET,
    )
    group_max_size: int = documented(
        0,
        "the coordinator's group.max.size (0: unlimited, Kafka's default)",
        minimum=0,
        maximum=INT32_MAX,
    )
    failover_group_max_size: int = documented(
        0,
        "the group.max.size of the coordinator that takes over after a failover (0: the same; "
        "a rolling restart that lowered it)",
        minimum=0,
        maximum=INT32_MAX,
    )
    commits: int = documented(
        0, "budget: OffsetCommits the clients send in all", minimum=0, maximum=MAX_BUDGET
    )
    kafka_version: str = documented(
        KAFKA_4X,
        "the coordinator followed where Kafka releases differ: 4.x (the Java group coordinator) "
        "or 3.x (the Scala GroupCoordinator); docs/oracle.md, Kafka version profiles",
        note=" or ".join(KAFKA_VERSIONS),
    )
    admin: bool = documented(
        False,
        "an admin client may describe, list and delete the group and fetch its offsets at any "
        "moment (DescribeGroups, ListGroups, DeleteGroups, OffsetFetch)",
    )
    admin_resets: bool = documented(
        False,
        "the admin client also resets the group's offsets (OffsetCommit at generation -1, as "
        "kafka-consumer-groups --reset-offsets does) and may once remove the first static "
        "member by its instance id (removeMembersFromConsumerGroup)",
    )
    misbehaving_client: bool = documented(
        False,
        "a client that breaks the consumer protocol sends, at any moment, a request no Kafka "
        "consumer sends (another protocol type or assignor, an invalid session timeout, an "
        "empty group id, oversized commit metadata, a pending id with an instance id, an "
        "unknown instance's removal, a member's commit at the previous generation or before its "
        "assignment, a replaced static incarnation's leave)",
    )
    commit_on_revoke: bool = documented(
        False,
        "the application commits what it processed of a partition in onPartitionsRevoked "
        "(cooperative; each such commit spends the commits budget)",
    )
    symmetry: bool = documented(True, "reduce interchangeable (identically configured) clients")
    naive_zombie_property: bool = documented(
        False, "also check ExclusiveOwnershipCountingZombies (expected to fail)"
    )
    fault: str = documented(
        "",
        "a historical bug to re-introduce (see docs/bugs.md; empty: none)",
        note="empty, or a bug of the catalog (`groupspec bugs --list`)",
    )
    check_convergence: bool = documented(
        False, "also check the liveness property Convergence (keeps the state graph)"
    )

    def assignors_of(self, index: int) -> tuple[str, ...]:
        """The assignor names of client `index` (0-based), in preference order."""
        if self.client_assignors:
            return tuple(self.client_assignors[index].split(ASSIGNOR_SEPARATOR))
        return self.assignors

    def upgraded_assignors_of(self, index: int) -> tuple[str, ...]:
        """The assignors client `index` (0-based) restarts with after a crash."""
        if self.upgrade_assignors:
            return tuple(self.upgrade_assignors.split(ASSIGNOR_SEPARATOR))
        return self.assignors_of(index)

    def subscribed_topics(self) -> tuple[str, ...]:
        """The topics every client subscribes to at start."""
        return self.subscription or self.topics

    def topic_to_grow(self) -> str:
        """The topic a partition growth adds a partition to."""
        return self.grow_topic or self.topics[0]


def coordinator_config(parameters: WorldParameters) -> CoordinatorConfig:
    """The coordinator's configuration in a world of `parameters` (Kafka's defaults otherwise)."""
    return CoordinatorConfig(
        group_max_size=parameters.group_max_size or INT32_MAX,
        write_failures=(ErrorCode.NOT_ENOUGH_REPLICAS,) if parameters.append_failures else (),
        kafka_version=parameters.kafka_version,
    )


def failover_coordinator_config(parameters: WorldParameters) -> CoordinatorConfig:
    """The configuration of the coordinator that takes over after a failover."""
    config = coordinator_config(parameters)
    if parameters.failover_group_max_size:
        config = replace(config, group_max_size=parameters.failover_group_max_size)
    return config


# Every parameter with its type, default and meaning (preset files, `--set`, docs).
WORLD_PARAMETERS: Mapping[str, Parameter] = schema(WorldParameters)


def build(values: Mapping[str, object]) -> WorldParameters:
    """Parameters from already-coerced `values` (defaults for the rest), validated."""
    parameters = WorldParameters(**values)  # type: ignore[arg-type]
    validate(parameters)
    return parameters


def validate(p: WorldParameters) -> None:
    """Raise ParameterError naming the first impossible parameter: out of its range, or
    impossible with the others."""
    check_ranges(p)
    if p.static_clients > p.clients:
        raise ParameterError(
            "static_clients", f"must be at most clients ({p.clients}), got {p.static_clients}"
        )
    if p.static_clients + p.legacy_clients > p.clients:
        raise ParameterError(
            "legacy_clients",
            f"legacy clients speak no static membership: at most clients - static_clients"
            f" ({p.clients - p.static_clients}), got {p.legacy_clients}",
        )
    if p.kafka_version not in KAFKA_VERSIONS:
        raise ParameterError(
            "kafka_version", f"must be one of {', '.join(KAFKA_VERSIONS)}, got {p.kafka_version!r}"
        )
    if p.fault and p.fault not in FAULTS:
        raise ParameterError("fault", unknown_fault_message(p.fault))
    _validate_topics(p)
    _validate_assignors(p)


def _validate_topics(p: WorldParameters) -> None:
    if not p.topics:
        raise ParameterError("topics", "at least one topic is needed")
    if len(set(p.topics)) != len(p.topics):
        raise ParameterError("topics", f"topic names repeat: {list(p.topics)}")
    # Member ids are "<client or instance id>-<n>" and are renamed as such; a topic that looked
    # like one could be mistaken for one.
    for topic in p.topics:
        if not topic or topic.rsplit("-", 1)[-1].isdigit():
            raise ParameterError("topics", f"{topic!r} is empty or ends in -<digits>")
    if len(p.partitions) != len(p.topics):
        raise ParameterError(
            "partitions",
            f"needs one count per topic ({len(p.topics)}), got {len(p.partitions)}",
        )
    if any(count < 1 for count in p.partitions):
        raise ParameterError("partitions", f"every count must be at least 1, got {p.partitions}")
    for key in ("subscription", "alternative_subscription"):
        unknown = sorted(set(getattr(p, key)) - set(p.topics))
        if unknown:
            raise ParameterError(key, f"topics {unknown} are not in topics {list(p.topics)}")
    if p.grow_topic and p.grow_topic not in p.topics:
        raise ParameterError("grow_topic", f"{p.grow_topic!r} is not in topics {list(p.topics)}")
    if p.subscription_changes and not p.alternative_subscription:
        raise ParameterError("subscription_changes", "needs alternative_subscription to switch to")


def _validate_assignors(p: WorldParameters) -> None:
    if p.client_assignors and len(p.client_assignors) != p.clients:
        raise ParameterError(
            "client_assignors",
            f"needs one entry per client ({p.clients}), got {len(p.client_assignors)}",
        )
    key = "client_assignors" if p.client_assignors else "assignors"
    lists = [(key, f"client {index + 1}", p.assignors_of(index)) for index in range(p.clients)]
    if p.upgrade_assignors:
        lists.append(("upgrade_assignors", "a restarted client", p.upgraded_assignors_of(0)))
    for key, who, names in lists:
        if not names or len(set(names)) != len(names):
            raise ParameterError(key, f"{who} needs distinct assignors, got {names}")
        for name in names:
            if name not in ASSIGNORS:
                raise ParameterError(
                    key, f"unknown assignor {name!r}; known: {', '.join(sorted(ASSIGNORS))}"
                )
