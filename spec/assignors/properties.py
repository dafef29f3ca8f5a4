"""Properties of an assignment, as oracles that judge any assignor's output, ours or anyone's.

Each property has a name used in code, docs and CLI output, a family, and a check that returns a
tuple of `Violation`s (empty when it holds). The checks look only at the group the assignor was
given and the assignment it returned, never at how it was computed, so a third-party assignor is
judged exactly like ours: `properties_for("range")` holds any "range" to range's properties.

| family | property | holds for | what it says |
|---|---|---|---|
| validity | PartitionsExist | all | every assigned partition is in the metadata snapshot |
| validity | SubscribedTopicsOnly | all | a member gets only partitions of topics it subscribes to |
| validity | NoDoubleAssignment | all | no partition is given twice, across or within members |
| validity | EveryMemberHasEntry | all | every member has an entry, and only members do |
| validity | CompleteAssignment | range, roundrobin, sticky | every subscribed partition is assigned |
| validity | CompleteExceptTransferring | cooperative-sticky | a subscribed partition is left out only if some member claims to own it (it is transferring and waits for the follow-up rebalance) |
| balance | RangeBalance | range | per topic, over its subscribers, counts differ by at most one |
| balance | RangeOrder | range | per topic, subscribers in Kafka's member order get consecutive blocks, the extra partitions going to the first ones |
| balance | RoundRobinBalance | roundrobin | under identical subscriptions, counts differ by at most one |
| balance | StickyBalance | sticky, cooperative-sticky | AbstractStickyAssignor's isBalanced (for cooperative-sticky only once nothing is withheld) |
| cooperative | CooperativeRevokeBeforeAssign | cooperative-sticky | no partition is added to a member while another member still owns it |
| stickiness | StickyRetention | sticky, cooperative-sticky | identical subscriptions: each member keeps at least min(valid owned, minQuota) of its valid owned partitions |
| stickiness | StickyRetentionOptimal | sticky, cooperative-sticky | identical subscriptions: no balanced assignment keeps more previously owned partitions |

What Kafka does and does not pin down (read from apache/kafka's RangeAssignor and
AbstractStickyAssignor; reference §8):
- Range is deterministic: members with a group.instance.id first, by instance id, then the rest by
  member id (Java String order, UTF-16 code units); each gets floor(P/N), the first P mod N one
  more, as consecutive blocks in that order. RangeOrder checks exactly that.
- The sticky family's balance is isBalanced: counts differ by at most one, or no member below its
  possible maximum could take a partition from a member holding more than one more than it.
  Equivalently: whenever member j holds a partition member i could take, count(j) ≤ count(i) + 1.
  (Kafka's general path reverts to its pre-balance assignment when reassigning does not improve
  its balance score, so this is Kafka's test-suite criterion rather than a proof obligation of
  the code; a failure is a finding.)
- Stickiness is guaranteed only on the constrained path (every member subscribes to the same
  topics, no rack-aware placement, which needs partition racks our metadata does not carry).
  There every member first keeps min(valid owned, minQuota) of its valid owned partitions, and
  min(members owning at least maxQuota, P mod N) members keep maxQuota, which is the most any
  balanced assignment can keep. Which members get maxQuota is implementation-defined (Java hash
  order), and so is which of a member's partitions it keeps. On the general path Kafka promises
  only "as many as possible" after balance, so stickiness is measured there (`partition_moves`,
  and the z3 oracle in oracle/assignor/optimal_stickiness.py), never asserted.
- "Valid owned" is `previous_owners` (KIP-792 generation rules; claims dropped for partitions that
  several members of the same generation claim), restricted to partitions that still exist.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import GroupAssignment, GroupSubscription, Member
from .cooperative import transferring_partitions
from .cooperative_sticky import cooperative_member_data
from .ordering import sorted_members
from .owned_partitions import PreviousOwnership, previous_owners, resolve_claims
from .sticky import all_subscriptions_equal, assignment_is_balanced
from .sticky_user_data import MemberData, UserDataDecodeError, decode_sticky_user_data

VALIDITY = "validity"
BALANCE = "balance"
COOPERATIVE = "cooperative"
STICKINESS = "stickiness"


@dataclass(frozen=True)
class Violation:
    """A property that does not hold for an assignment, and why."""

    property: str
    detail: str


Check = Callable[[GroupSubscription, GroupAssignment], tuple[Violation, ...]]


@dataclass(frozen=True)
class AssignmentProperty:
    """A named property of an assignment: its family, what it says, and its check."""

    name: str
    family: str
    description: str
    check: Check


# ---------------------------------------------------------------------------------------------
# Shared views of a group and an assignment


def eligible(group: GroupSubscription, member: Member, partition: TopicPartition) -> bool:
    """Whether `member` could be given `partition`: it exists and the member subscribes to its topic."""
    return group.cluster.contains(partition) and partition.topic in member.subscription.topics


def _sticky_claim(data: bytes | None) -> MemberData:
    try:
        return decode_sticky_user_data(data)
    except UserDataDecodeError:
        # Unreadable user data is no claim at all (the member is judged as if it owned nothing).
        return MemberData((), None)


def previous_claims(assignor_name: str, group: GroupSubscription) -> PreviousOwnership:
    """Who owned what before this round, read where the named assignor reads it.

    "sticky" (EAGER: subscriptions own nothing) reads each member's claim from its StickyAssignor
    user data; "cooperative-sticky" from the subscription, falling back to its user data for the
    generation; every other name from the subscription fields (`previous_owners`).
    """
    if assignor_name == "sticky":
        return resolve_claims(
            group, {m.member_id: _sticky_claim(m.subscription.user_data) for m in group.members}
        )
    if assignor_name == "cooperative-sticky":
        return resolve_claims(
            group, {m.member_id: cooperative_member_data(m.subscription) for m in group.members}
        )
    return previous_owners(group)


def valid_owned(
    group: GroupSubscription, ownership: PreviousOwnership | None = None
) -> dict[str, frozenset[TopicPartition]]:
    """Each member's trusted previously owned partitions that still exist (default: `previous_owners`)."""
    ownership = previous_owners(group) if ownership is None else ownership
    conflicted = set(ownership.conflicted)
    result: dict[str, set[TopicPartition]] = {member_id: set() for member_id in group.member_ids}
    for partition, member_id in ownership.owner:
        if (
            member_id in result
            and partition not in conflicted
            and group.cluster.contains(partition)
        ):
            result[member_id].add(partition)
    return {member_id: frozenset(partitions) for member_id, partitions in result.items()}


def partition_moves(
    previous: GroupSubscription | PreviousOwnership, assignment: GroupAssignment
) -> int:
    """How many previously owned partitions (per `previous_owners`) changed owner or were dropped.

    `previous` is the group the assignor was given (its members' owned partitions and generations)
    or an already computed `PreviousOwnership`.
    """
    ownership = previous_owners(previous) if isinstance(previous, GroupSubscription) else previous
    kept = {member_id: set(partitions) for member_id, partitions in assignment.assignments}
    return sum(
        1 for partition, member_id in ownership.owner if partition not in kept.get(member_id, ())
    )


def _counts(group: GroupSubscription, assignment: GroupAssignment) -> dict[str, int]:
    given = assignment.as_dict()
    return {member_id: len(given.get(member_id, ())) for member_id in group.member_ids}


def _assigned_to_members(
    group: GroupSubscription, assignment: GroupAssignment
) -> set[TopicPartition]:
    members = set(group.member_ids)
    return {
        partition
        for member_id, partitions in assignment.assignments
        if member_id in members
        for partition in partitions
    }


def _show(partitions: object) -> str:
    items = sorted(partitions)  # type: ignore[call-overload]
    shown = ", ".join(str(item) for item in items[:8])
    return shown + (f", … ({len(items)} in all)" if len(items) > 8 else "")


# ---------------------------------------------------------------------------------------------
# Validity


def _partitions_exist(
    group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    return tuple(
        Violation(
            "PartitionsExist", f"{member_id} is given {partition}, which is not in the metadata"
        )
        for member_id, partitions in assignment.assignments
        for partition in partitions
        if not group.cluster.contains(partition)
    )


def _subscribed_topics_only(
    group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    topics = {member.member_id: set(member.subscription.topics) for member in group.members}
    return tuple(
        Violation(
            "SubscribedTopicsOnly",
            f"{member_id} is given {partition} but does not subscribe to {partition.topic!r}",
        )
        for member_id, partitions in assignment.assignments
        if member_id in topics
        for partition in partitions
        if partition.topic not in topics[member_id]
    )


def _no_double_assignment(
    group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    holders: dict[TopicPartition, list[str]] = {}
    for member_id, partitions in assignment.assignments:
        for partition in partitions:
            holders.setdefault(partition, []).append(member_id)
    return tuple(
        Violation(
            "NoDoubleAssignment", f"{partition} is given {len(ids)} times: to {', '.join(ids)}"
        )
        for partition, ids in sorted(holders.items())
        if len(ids) > 1
    )


def _every_member_has_entry(
    group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    members = set(group.member_ids)
    entries = {member_id for member_id, _ in assignment.assignments}
    missing = tuple(
        Violation("EveryMemberHasEntry", f"member {member_id} has no entry in the assignment")
        for member_id in sorted(members - entries)
    )
    strangers = tuple(
        Violation("EveryMemberHasEntry", f"the assignment has an entry for non-member {member_id}")
        for member_id in sorted(entries - members)
    )
    return missing + strangers


def _complete(group: GroupSubscription, assignment: GroupAssignment) -> tuple[Violation, ...]:
    missing = set(group.subscribed_partitions) - _assigned_to_members(group, assignment)
    if not missing:
        return ()
    return (
        Violation(
            "CompleteAssignment",
            f"{len(missing)} subscribed partition(s) unassigned: {_show(missing)}",
        ),
    )


def _complete_except_transferring(
    group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    claimed = {
        partition for member in group.members for partition in member.subscription.owned_partitions
    }
    missing = set(group.subscribed_partitions) - _assigned_to_members(group, assignment) - claimed
    if not missing:
        return ()
    return (
        Violation(
            "CompleteExceptTransferring",
            f"{len(missing)} subscribed partition(s) nobody owns are unassigned: {_show(missing)}",
        ),
    )


# ---------------------------------------------------------------------------------------------
# Balance


def _range_subscribers(group: GroupSubscription, topic: str) -> tuple[Member, ...]:
    return sorted_members(member for member in group.members if topic in member.subscription.topics)


def _range_balance(group: GroupSubscription, assignment: GroupAssignment) -> tuple[Violation, ...]:
    given = assignment.as_dict()
    problems: list[Violation] = []
    for topic, _count in group.cluster.partitions_per_topic:
        subscribers = _range_subscribers(group, topic)
        if not subscribers:
            continue
        per_member = {
            member.member_id: sum(1 for p in given.get(member.member_id, ()) if p.topic == topic)
            for member in subscribers
        }
        low, high = min(per_member.values()), max(per_member.values())
        if high - low > 1:
            problems.append(
                Violation(
                    "RangeBalance",
                    f"topic {topic!r}: subscribers hold between {low} and {high} partitions "
                    f"({', '.join(f'{m}={n}' for m, n in per_member.items())})",
                )
            )
    return tuple(problems)


def _range_order(group: GroupSubscription, assignment: GroupAssignment) -> tuple[Violation, ...]:
    given = assignment.as_dict()
    problems: list[Violation] = []
    for topic, count in group.cluster.partitions_per_topic:
        subscribers = _range_subscribers(group, topic)
        if not subscribers:
            continue
        share, extra = divmod(count, len(subscribers))
        start = 0
        for index, member in enumerate(subscribers):
            size = share + (1 if index < extra else 0)
            expected = tuple(TopicPartition(topic, number) for number in range(start, start + size))
            got = tuple(p for p in given.get(member.member_id, ()) if p.topic == topic)
            if got != expected:
                problems.append(
                    Violation(
                        "RangeOrder",
                        f"topic {topic!r}: {member.member_id} (position {index + 1} of "
                        f"{len(subscribers)} in member order) holds [{_show(got)}], range gives "
                        f"[{_show(expected)}]",
                    )
                )
            start += size
    return tuple(problems)


def _round_robin_balance(
    group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    if not group.members or not all_subscriptions_equal(group):
        return ()
    counts = _counts(group, assignment)
    low, high = min(counts.values()), max(counts.values())
    if high - low <= 1:
        return ()
    return (
        Violation(
            "RoundRobinBalance",
            f"identical subscriptions but members hold between {low} and {high} partitions",
        ),
    )


def sticky_balance_violations(
    group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    """Where the assignment fails AbstractStickyAssignor's isBalanced (empty when balanced).

    Balanced: whenever a member holds a partition another member could take, the holder has at
    most one partition more than the other (which includes "max − min ≤ 1").
    """
    # The verdict is the sticky assignors' own isBalanced (one definition of balance in the
    # project); the search below only names the witnesses.
    if assignment_is_balanced(group, assignment):
        return ()
    counts = _counts(group, assignment)
    # One violation per (poorer member, richer holder) pair, naming one partition that could move.
    found: dict[tuple[str, str], TopicPartition] = {}
    for holder, partitions in assignment.assignments:
        if holder not in counts:
            continue
        for partition in partitions:
            for member in group.members:
                taker = member.member_id
                if (
                    taker != holder
                    and counts[holder] > counts[taker] + 1
                    and eligible(group, member, partition)
                ):
                    found.setdefault((taker, holder), partition)
    if not found:
        return (Violation("StickyBalance", f"isBalanced fails; counts {counts}"),)
    return tuple(
        Violation(
            "StickyBalance",
            f"{taker} holds {counts[taker]} partitions and could take {partition} from {holder}, "
            f"which holds {counts[holder]}",
        )
        for (taker, holder), partition in sorted(found.items())
    )


def is_balanced(group: GroupSubscription, assignment: GroupAssignment) -> bool:
    """Whether the assignment is balanced in the sense of AbstractStickyAssignor's isBalanced."""
    return not sticky_balance_violations(group, assignment)


def _sticky_balance_once_complete(
    group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    # cooperative-sticky withholds transferring partitions for the follow-up rebalance; balance is
    # promised of the assignment those partitions complete, so it is checked once none is withheld.
    if set(group.subscribed_partitions) - _assigned_to_members(group, assignment):
        return ()
    return sticky_balance_violations(group, assignment)


# ---------------------------------------------------------------------------------------------
# Cooperative


def _cooperative_revoke_before_assign(
    group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    moving = transferring_partitions(group, assignment)
    if not moving:
        return ()
    owners = {
        partition: sorted(
            member.member_id
            for member in group.members
            if partition in member.subscription.owned_partitions
        )
        for partition in moving
    }
    return tuple(
        Violation(
            "CooperativeRevokeBeforeAssign",
            f"{partition} is given to {', '.join(assignment.owners().get(partition, ()))} while "
            f"{', '.join(owners[partition])} still own(s) it",
        )
        for partition in sorted(moving)
    )


# ---------------------------------------------------------------------------------------------
# Stickiness


@dataclass(frozen=True)
class _Quotas:
    partitions: int
    min_quota: int
    max_quota: int
    members_at_max: int


def _constrained_quotas(group: GroupSubscription) -> _Quotas | None:
    """The constrained path's quotas, or None when Kafka takes the general path (no guarantee)."""
    if not group.members or not all_subscriptions_equal(group):
        return None
    total = len(group.subscribed_partitions)
    share, extra = divmod(total, len(group.members))
    return _Quotas(total, share, share + (1 if extra else 0), extra)


def _kept(
    assignment: GroupAssignment, owned: dict[str, frozenset[TopicPartition]]
) -> dict[str, int]:
    given = assignment.as_dict()
    return {member_id: len(owned[member_id] & set(given.get(member_id, ()))) for member_id in owned}


def _sticky_retention(
    assignor_name: str, group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    quotas = _constrained_quotas(group)
    if quotas is None:
        return ()
    owned = valid_owned(group, previous_claims(assignor_name, group))
    kept = _kept(assignment, owned)
    return tuple(
        Violation(
            "StickyRetention",
            f"{member_id} keeps {kept[member_id]} of its {len(partitions)} valid owned partitions; "
            f"identical subscriptions guarantee min({len(partitions)}, minQuota {quotas.min_quota})",
        )
        for member_id, partitions in owned.items()
        if kept[member_id] < min(len(partitions), quotas.min_quota)
    )


def most_keepable(
    group: GroupSubscription, ownership: PreviousOwnership | None = None
) -> int | None:
    """Under identical subscriptions, the most valid owned partitions a balanced assignment keeps; else None."""
    quotas = _constrained_quotas(group)
    if quotas is None:
        return None
    owned = valid_owned(group, ownership)
    at_least_min = sum(min(len(partitions), quotas.min_quota) for partitions in owned.values())
    # Each of the P mod N members allowed maxQuota keeps one more if it owned at least maxQuota.
    can_use_max = sum(1 for partitions in owned.values() if len(partitions) >= quotas.max_quota)
    bonus = min(can_use_max, quotas.members_at_max) if quotas.max_quota > quotas.min_quota else 0
    return at_least_min + bonus


def _sticky_retention_optimal(
    assignor_name: str, group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    ownership = previous_claims(assignor_name, group)
    best = most_keepable(group, ownership)
    if best is None:
        return ()
    kept = sum(_kept(assignment, valid_owned(group, ownership)).values())
    if kept >= best:
        return ()
    return (
        Violation(
            "StickyRetentionOptimal",
            f"keeps {kept} valid owned partitions where a balanced assignment keeps {best}",
        ),
    )


# ---------------------------------------------------------------------------------------------
# The catalog and which assignor is held to what

PARTITIONS_EXIST = AssignmentProperty(
    "PartitionsExist",
    VALIDITY,
    "Every assigned partition is in the metadata snapshot.",
    _partitions_exist,
)
SUBSCRIBED_TOPICS_ONLY = AssignmentProperty(
    "SubscribedTopicsOnly",
    VALIDITY,
    "A member is given only partitions of topics it subscribes to.",
    _subscribed_topics_only,
)
NO_DOUBLE_ASSIGNMENT = AssignmentProperty(
    "NoDoubleAssignment",
    VALIDITY,
    "No partition is given twice, to two members or twice to one.",
    _no_double_assignment,
)
EVERY_MEMBER_HAS_ENTRY = AssignmentProperty(
    "EveryMemberHasEntry",
    VALIDITY,
    "Every member has an entry (possibly empty), and nothing else has one.",
    _every_member_has_entry,
)
COMPLETE_ASSIGNMENT = AssignmentProperty(
    "CompleteAssignment",
    VALIDITY,
    "Every existing partition of every subscribed topic is assigned.",
    _complete,
)
COMPLETE_EXCEPT_TRANSFERRING = AssignmentProperty(
    "CompleteExceptTransferring",
    VALIDITY,
    "Every subscribed partition is assigned unless some member claims to own it (it is "
    "transferring and is assigned in the follow-up rebalance).",
    _complete_except_transferring,
)
RANGE_BALANCE = AssignmentProperty(
    "RangeBalance",
    BALANCE,
    "Per topic, the members subscribed to it hold counts that differ by at most one.",
    _range_balance,
)
RANGE_ORDER = AssignmentProperty(
    "RangeOrder",
    BALANCE,
    "Per topic, subscribers in Kafka's member order get consecutive blocks; the first P mod N get one extra.",
    _range_order,
)
ROUND_ROBIN_BALANCE = AssignmentProperty(
    "RoundRobinBalance",
    BALANCE,
    "Under identical subscriptions, members' counts differ by at most one.",
    _round_robin_balance,
)
STICKY_BALANCE = AssignmentProperty(
    "StickyBalance",
    BALANCE,
    "AbstractStickyAssignor's isBalanced: no member holds more than one partition more than a "
    "member that could take one of its partitions.",
    sticky_balance_violations,
)
STICKY_BALANCE_ONCE_COMPLETE = AssignmentProperty(
    "StickyBalance",
    BALANCE,
    "isBalanced, checked once no transferring partition is withheld.",
    _sticky_balance_once_complete,
)
COOPERATIVE_REVOKE_BEFORE_ASSIGN = AssignmentProperty(
    "CooperativeRevokeBeforeAssign",
    COOPERATIVE,
    "No partition is added to a member while another member still owns it (raw owned partitions).",
    _cooperative_revoke_before_assign,
)


def _sticky_retention_property(assignor_name: str) -> AssignmentProperty:
    """StickyRetention, judging previous ownership where `assignor_name` reads it."""
    return AssignmentProperty(
        "StickyRetention",
        STICKINESS,
        "Under identical subscriptions each member keeps at least min(valid owned, minQuota) of "
        "its valid owned partitions.",
        functools.partial(_sticky_retention, assignor_name),
    )


def _sticky_retention_optimal_property(assignor_name: str) -> AssignmentProperty:
    """StickyRetentionOptimal, judging previous ownership where `assignor_name` reads it."""
    return AssignmentProperty(
        "StickyRetentionOptimal",
        STICKINESS,
        "Under identical subscriptions the assignment keeps as many valid owned partitions as "
        "any balanced assignment can.",
        functools.partial(_sticky_retention_optimal, assignor_name),
    )


_VALIDITY = (PARTITIONS_EXIST, SUBSCRIBED_TOPICS_ONLY, NO_DOUBLE_ASSIGNMENT, EVERY_MEMBER_HAS_ENTRY)

ASSIGNOR_PROPERTIES: MappingProxyType[str, tuple[AssignmentProperty, ...]] = MappingProxyType(
    {
        "range": (*_VALIDITY, COMPLETE_ASSIGNMENT, RANGE_BALANCE, RANGE_ORDER),
        "roundrobin": (*_VALIDITY, COMPLETE_ASSIGNMENT, ROUND_ROBIN_BALANCE),
        "sticky": (
            *_VALIDITY,
            COMPLETE_ASSIGNMENT,
            STICKY_BALANCE,
            _sticky_retention_property("sticky"),
            _sticky_retention_optimal_property("sticky"),
        ),
        "cooperative-sticky": (
            *_VALIDITY,
            COMPLETE_EXCEPT_TRANSFERRING,
            STICKY_BALANCE_ONCE_COMPLETE,
            COOPERATIVE_REVOKE_BEFORE_ASSIGN,
            _sticky_retention_property("cooperative-sticky"),
            _sticky_retention_optimal_property("cooperative-sticky"),
        ),
    }
)

PROPERTY_NAMES: tuple[str, ...] = tuple(
    dict.fromkeys(p.name for props in ASSIGNOR_PROPERTIES.values() for p in props)
)


def properties_for(assignor_name: str) -> tuple[AssignmentProperty, ...]:
    """The properties an assignor offered under `assignor_name` is held to (validity alone for unknown names)."""
    return ASSIGNOR_PROPERTIES.get(assignor_name, _VALIDITY)


def check_assignment(
    assignor_name: str, group: GroupSubscription, assignment: GroupAssignment
) -> tuple[Violation, ...]:
    """Every violation of the properties `assignor_name` is held to, for this group and assignment."""
    return tuple(
        violation
        for prop in properties_for(assignor_name)
        for violation in prop.check(group, assignment)
    )


def violated_properties(violations: tuple[Violation, ...]) -> frozenset[str]:
    """The names of the properties among `violations`."""
    return frozenset(violation.property for violation in violations)
