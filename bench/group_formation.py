"""How a serve-bench member forms its group on any Kafka broker, as a standard consumer would.

After the broker-wide steps (`broker_setup`), on the group's coordinator: JoinGroup (with the
MEMBER_ID_REQUIRED round when the broker asks for it) and SyncGroup with real ConsumerProtocol
subscriptions and assignments; LeaveGroup at the end.

Every answer is checked against what Kafka can answer at that step. An answer Kafka never gives
is a deviation: `FormationError`, whose one-line message names the request, the answer seen and
the answers expected. Answers a Kafka client retries (a coordinator loading, a rebalance) are
retried; a formation that never completes is ended by the caller's timeout, and
`FormationProgress.summary` says what each member still waits for.

One ordering choice: a group leader sends its SyncGroup only after its followers have sent
theirs. Kafka allows any order, so this is standard; it keeps librdkafka's mock cluster, which
answers a follower syncing after its leader with INVALID_REQUEST (docs/serve.md), comparable.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from typing import Any

from kafka.protocol.consumer.group import (
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)

from groupspec.spec.consumer_protocol import encode_assignment, encode_subscription_v0
from groupspec.vocabulary.requests import TopicPartition
from groupspec.wire.request_connection import NoAnswerError, RequestConnection

from .formation_progress import FormationProgress
from .load_protocol import (
    COORDINATOR_RETRIABLE,
    JOIN_VERSION,
    LEAVE_VERSION,
    MEMBER_ID_REQUIRED,
    NONE,
    REBALANCE_ERRORS,
    REBALANCE_IN_PROGRESS,
    RETRY_BACKOFF_S,
    SYNC_VERSION,
    TOPIC,
    UNKNOWN_MEMBER_ID,
    FormationError,
    deviation,
    error_name,
)

PROTOCOL = "range"
SESSION_TIMEOUT_MS = 10_000
REBALANCE_TIMEOUT_MS = 30_000
# How long a leader waits for its followers' SyncGroups to be written, then to be read.
LEADER_WAIT_CAP_S = 1.0
LEADER_SETTLE_S = 0.05
# A member leaves at the end, as a closing consumer does, so a rerun on the same broker does not
# wait for the old members' sessions to expire; the answer does not matter and is not awaited long.
LEAVE_TIMEOUT_S = 1.0


class SyncOrder:
    """One group's SyncGroup order: the leader sends after its followers (see the docstring)."""

    def __init__(self) -> None:
        self._sent: Counter[int] = Counter()
        self._changed = asyncio.Condition()

    async def follower_sent(self, generation: int) -> None:
        """A follower of `generation` has written its SyncGroup."""
        async with self._changed:
            self._sent[generation] += 1
            self._changed.notify_all()

    async def leader_turn(self, generation: int, followers: int) -> None:
        """Return once `followers` SyncGroups of `generation` are written (or after a cap)."""
        async with self._changed:
            # A follower late or gone does not hold the leader up: Kafka needs no order.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self._sent[generation] >= followers),
                    LEADER_WAIT_CAP_S,
                )
        await asyncio.sleep(LEADER_SETTLE_S)


class GroupMember:
    """One member's identity in its group, and the JoinGroup/SyncGroup round that forms it."""

    def __init__(
        self, group: str, index: int, partitions: int, order: SyncOrder, progress: FormationProgress
    ) -> None:
        self.group, self.index, self.partitions = group, index, partitions
        self.label = f"{group}/{index}"
        self.member_id = ""
        self.generation = -1
        self._order = order
        self._progress = progress

    async def join(self, connection: RequestConnection) -> None:
        """JoinGroup then SyncGroup until the member holds an assignment of a generation."""
        while True:
            joined = await self._join_once(connection)
            if joined is not None and await self._sync(connection, joined):
                self._progress.done(self.label)
                return

    async def leave(self, connection: RequestConnection) -> None:
        """LeaveGroup, as a closing consumer sends it (its answer is not judged)."""
        request = LeaveGroupRequest(group_id=self.group, member_id=self.member_id)
        with contextlib.suppress(TimeoutError, NoAnswerError):
            await asyncio.wait_for(
                connection.call(request, LeaveGroupResponse, LEAVE_VERSION), LEAVE_TIMEOUT_S
            )

    def _retry(self, request: str, code: int) -> None:
        self._progress.answered(self.label, f"{request} {error_name(code)}")

    async def _join_once(self, connection: RequestConnection) -> Any:
        request = f"JoinGroup v{JOIN_VERSION}"
        self._progress.waiting(self.label, f"a {request} response")
        response = await connection.call(
            JoinGroupRequest(
                group_id=self.group,
                session_timeout_ms=SESSION_TIMEOUT_MS,
                rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
                member_id=self.member_id,
                group_instance_id=None,
                protocol_type="consumer",
                protocols=[
                    JoinGroupRequest.JoinGroupRequestProtocol(
                        name=PROTOCOL, metadata=encode_subscription_v0((TOPIC,))
                    )
                ],
            ),
            JoinGroupResponse,
            JOIN_VERSION,
        )
        code = response.error_code
        if code == NONE:
            self.member_id, self.generation = response.member_id, response.generation_id
            return response
        if code == MEMBER_ID_REQUIRED and not self.member_id and response.member_id:
            self.member_id = response.member_id
            return None
        if code in (UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS) or code in COORDINATOR_RETRIABLE:
            self._retry(request, code)
            self.member_id = "" if code == UNKNOWN_MEMBER_ID else self.member_id
            await asyncio.sleep(RETRY_BACKOFF_S)
            return None
        allowed = {NONE, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS} | COORDINATOR_RETRIABLE
        if not self.member_id:
            allowed.add(MEMBER_ID_REQUIRED)
        raise deviation(f"{request} of {self.label}", code, allowed)

    async def _sync(self, connection: RequestConnection, joined: Any) -> bool:
        request = f"SyncGroup v{SYNC_VERSION}"
        leader = joined.leader == self.member_id
        assignments = []
        if leader:
            members = sorted(m.member_id for m in joined.members)
            if self.member_id not in members:
                raise FormationError(
                    f"JoinGroup v{JOIN_VERSION} of {self.label} named it leader but listed "
                    f"{len(members)} members without it"
                )
            assignments = [
                SyncGroupRequest.SyncGroupRequestAssignment(
                    member_id=member_id,
                    assignment=encode_assignment(
                        (
                            TopicPartition(TOPIC, p)
                            for p in range(self.partitions)
                            if p % len(members) == rank
                        ),
                        version=0,
                    ),
                )
                for rank, member_id in enumerate(members)
            ]
            await self._order.leader_turn(self.generation, len(members) - 1)
        self._progress.waiting(self.label, f"a {request} response")
        sent = connection.send(
            SyncGroupRequest(
                group_id=self.group,
                generation_id=self.generation,
                member_id=self.member_id,
                group_instance_id=None,
                assignments=assignments,
            ),
            SYNC_VERSION,
        )
        if not leader:
            await self._order.follower_sent(self.generation)
        response = await connection.receive(SyncGroupResponse, SYNC_VERSION, sent)
        code = response.error_code
        if code == NONE:
            return True
        if code in REBALANCE_ERRORS or code in COORDINATOR_RETRIABLE:
            self._retry(request, code)
            self.member_id = "" if code == UNKNOWN_MEMBER_ID else self.member_id
            if code in COORDINATOR_RETRIABLE:
                await asyncio.sleep(RETRY_BACKOFF_S)
            return False
        role = "leader" if leader else "follower"
        raise deviation(
            f"{request} of {self.label} (a {role}, generation {self.generation})",
            code,
            {NONE} | REBALANCE_ERRORS | COORDINATOR_RETRIABLE,
        )
