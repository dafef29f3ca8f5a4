"""What every handler works with: groups, timers, the log, the policy, the clock's reading.

One `Runtime` per coordinator. Handlers are plain functions taking it first; they mutate groups
in place and send responses through `respond`, so a request costs no copy of group state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from groupspec.vocabulary.errors import APPEND_ERRORS, ErrorCode
from groupspec.vocabulary.responses import ResponseBody

from .config import CoordinatorConfig
from .errors import PolicyError
from .hashing import partition_for
from .log import LogRecord, OffsetsLog
from .policy import Policy
from .state import Group, JoinTimer, Member, Ref, SyncTimer
from .timer_heap import HEARTBEAT, JOIN, RETENTION, SYNC, TimerHeap

Responder = Callable[[Ref, ResponseBody], None]


class Runtime:
    """The coordinator's mutable world and the services handlers call."""

    __slots__ = (
        "blocked",
        "config",
        "groups",
        "loading",
        "log",
        "now",
        "num_partitions",
        "policy",
        "respond",
        "retention_deadline_ms",
        "retention_entry",
        "timers",
        "unowned",
    )

    def __init__(
        self,
        config: CoordinatorConfig,
        policy: Policy,
        respond: Responder,
        unowned_partitions: frozenset[int],
        now_ms: int,
    ) -> None:
        self.config = config
        self.policy = policy
        self.respond = respond
        self.num_partitions = config.offsets_topic_num_partitions
        self.groups: dict[str, Group] = {}
        self.log = OffsetsLog()
        self.timers = TimerHeap()
        self.now = now_ms
        self.unowned: set[int] = set(unowned_partitions)
        self.loading: set[int] = set()
        # True while some partition is unowned or loading: only then do requests pay for
        # hashing their group id to find its partition.
        self.blocked = bool(self.unowned)
        self.retention_deadline_ms = now_ms + config.offsets_retention_check_interval_ms
        self.retention_entry = self.timers.push(self.retention_deadline_ms, RETENTION, None, None)

    # -- partitions -------------------------------------------------------------------------

    def partition_of(self, group_id: str) -> int:
        """The offsets partition that owns `group_id`."""
        return partition_for(group_id, self.num_partitions)

    def coordinator_error(self, group_id: str) -> ErrorCode | None:
        """NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS for the group's partition, if any."""
        if not self.blocked:
            return None
        partition = partition_for(group_id, self.num_partitions)
        if partition in self.unowned:
            return ErrorCode.NOT_COORDINATOR
        if partition in self.loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return None

    def partitions_changed(self) -> None:
        """Recompute the fast-path flag after the unowned or loading set changed."""
        self.blocked = bool(self.unowned or self.loading)

    # -- timers -----------------------------------------------------------------------------

    def schedule_heartbeat(
        self, group: Group, member: Member, timeout_ms: int | None = None
    ) -> None:
        """(Re)arm a member's session timer; by default for its session timeout."""
        deadline = self.now + (member.session_timeout_ms if timeout_ms is None else timeout_ms)
        member.heartbeat_deadline_ms = deadline
        entry = member.heartbeat_entry
        # A later deadline reuses the entry already in the heap: it is re-pushed when it surfaces.
        if entry is None or deadline < entry[0]:
            member.heartbeat_entry = self.timers.push(deadline, HEARTBEAT, group, member)

    def arm_join_timer(
        self,
        group: Group,
        delay_ms: int,
        initial_delay_ms: int | None = None,
        initial_remaining_ms: int | None = None,
    ) -> None:
        """Arm the group's join timer `delay_ms` from now (replacing any armed one)."""
        timer = JoinTimer(self.now + delay_ms, initial_delay_ms, initial_remaining_ms)
        group.join_timer = timer
        self.timers.push(timer.deadline_ms, JOIN, group, timer)

    def arm_sync_timer(self, group: Group, delay_ms: int) -> None:
        """Arm the group's pending-sync timer for its current generation."""
        timer = SyncTimer(self.now + delay_ms, group.generation_id)
        group.sync_timer = timer
        self.timers.push(timer.deadline_ms, SYNC, group, timer)

    def arm_retention(self) -> None:
        """Schedule the next offset retention check one interval from now."""
        self.retention_deadline_ms = self.now + self.config.offsets_retention_check_interval_ms
        self.retention_entry = self.timers.push(self.retention_deadline_ms, RETENTION, None, None)

    # -- the log ----------------------------------------------------------------------------

    def append(
        self, partition: int, group_id: str, records: Sequence[LogRecord]
    ) -> ErrorCode | None:
        """Append `records` for `group_id`; returns the append error if the policy says it fails."""
        error = self.policy.append_error(group_id, records)
        if error is None:
            self.log.append(partition, records)
            return None
        if error not in APPEND_ERRORS:
            raise PolicyError(f"append_error returned {error!r}, not an append error")
        return error

    # -- choices ----------------------------------------------------------------------------

    def leader_after_removal(self, group: Group) -> str | None:
        """The policy's next leader among the remaining members (None if there are none)."""
        if not group.members:
            return None
        candidates = list(group.members)
        if len(candidates) == 1:
            return candidates[0]
        return _checked(
            "leader_after_removal",
            self.policy.leader_after_removal(group.group_id, candidates),
            candidates,
        )

    def leader_at_join_completion(self, group: Group, candidates: list[str]) -> str:
        """The policy's leader among members that rejoined."""
        if len(candidates) == 1:
            return candidates[0]
        return _checked(
            "leader_at_join_completion",
            self.policy.leader_at_join_completion(group.group_id, candidates),
            candidates,
        )

    def protocol_vote_tie(self, group: Group, tied: list[str]) -> str:
        """The policy's winner among protocols tied for most votes."""
        return _checked(
            "protocol_vote_tie", self.policy.protocol_vote_tie(group.group_id, tied), tied
        )

    def new_member_id(self, group: Group, prefix: str) -> str:
        """A fresh member id from the policy, checked not to collide within the group."""
        member_id = self.policy.new_member_id(group.group_id, prefix)
        if not isinstance(member_id, str) or member_id == "":
            raise PolicyError(f"new_member_id returned {member_id!r}, not a non-empty string")
        if member_id in group.members or member_id in group.pending_members:
            raise PolicyError(f"new_member_id returned {member_id!r}, already used in the group")
        return member_id


def _checked(what: str, chosen: str, options: list[str]) -> str:
    if chosen not in options:
        raise PolicyError(f"{what} returned {chosen!r}, not one of {options}")
    return chosen
