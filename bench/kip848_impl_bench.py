"""`groupspec bench impl`'s consumer-protocol load: the optimized KIP-848 coordinator
(`groupspec.impl.kip848`) against its specification (`groupspec.spec.kip848`) as the baseline
measured in the same run, reported as a ratio.

The load: G groups of M static members (instance ids fix the range assignor's member order, so
the spec allows exactly one outcome per step and both sides must answer alike). Each member is
a closed-loop client as Kafka's consumer is: it joins with epoch 0, then heartbeats at the epoch
of its last response reporting the partitions it holds, takes any assignment it is sent at once
(it revokes and acknowledges in one heartbeat), and rejoins with epoch 0 when fenced. The
members join one by one, then every member heartbeats once per round, one second apart; in the
middle round the first member of every group leaves (epoch -1) and joins again the round after,
so the group rebalances twice. Each side runs the whole load with its own clients; the spec
driver takes the one allowed outcome of every step. The responses of both are then compared,
so a ratio is only reported for runs that did the same work.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from groupspec.conformance.kip848_differential import impl_config
from groupspec.impl.clock import ManualClock
from groupspec.impl.kip848 import ConsumerGroupCoordinator
from groupspec.spec.kip848 import (
    ConsumerGroupConfig,
    ConsumerGroupCoordinatorSpec,
    RequestArrived,
    TopicMetadata,
)
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupTopicPartitions,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import RequestRef

ROUND_MS = 1_000
TOPICS = (TopicMetadata("orders", "orders-id", 12), TopicMetadata("audit", "audit-id", 4))
SUBSCRIPTION = ("audit", "orders")


@dataclass(frozen=True)
class Kip848Figures:
    """The consumer-protocol load on both sides."""

    groups: int
    members: int
    rounds: int
    requests: int
    spec_seconds: float
    impl_seconds: float
    spec_requests_per_s: float
    impl_requests_per_s: float
    ratio: float
    responses_compared: int
    responses_differing: int


class _Client:
    """One static member as a closed-loop client."""

    __slots__ = ("_built", "epoch", "group_id", "instance_id", "member_id", "owned")

    def __init__(self, group_id: str, member: int) -> None:
        self.group_id = group_id
        self.member_id = f"{group_id}-m{member}"
        self.instance_id = f"{group_id}-i{member}"
        self.epoch = 0
        self.owned: tuple[ConsumerGroupTopicPartitions, ...] = ()
        self._built: tuple[Any, ConsumerGroupHeartbeatRequest] | None = None

    def request(self) -> ConsumerGroupHeartbeatRequest:
        """Its next heartbeat: a full join at epoch 0, else a heartbeat at its epoch. A request
        is input, not work: one equal to the last is reused rather than built again (as the
        classic bench builds its whole stream beforehand)."""
        key = (self.epoch, self.owned)
        if self._built is not None and self._built[0] == key:
            return self._built[1]
        request = self._build()
        self._built = (key, request)
        return request

    def _build(self) -> ConsumerGroupHeartbeatRequest:
        if self.epoch == 0:
            return ConsumerGroupHeartbeatRequest(
                self.group_id,
                self.member_id,
                0,
                instance_id=self.instance_id,
                rebalance_timeout_ms=300_000,
                subscribed_topic_names=SUBSCRIPTION,
                topic_partitions=(),
            )
        return ConsumerGroupHeartbeatRequest(
            self.group_id,
            self.member_id,
            self.epoch,
            instance_id=self.instance_id,
            topic_partitions=self.owned,
        )

    def leave(self) -> ConsumerGroupHeartbeatRequest:
        """Its leave heartbeat (epoch -1)."""
        return ConsumerGroupHeartbeatRequest(
            self.group_id, self.member_id, -1, instance_id=self.instance_id
        )

    def receive(self, response: ConsumerGroupHeartbeatResponse) -> None:
        """Take the response: its epoch and any assignment; rejoin when refused."""
        if response.error_code is not ErrorCode.NONE or response.member_epoch < 0:
            self.epoch, self.owned = 0, ()
            return
        self.epoch = response.member_epoch
        if response.assignment is not None:
            self.owned = response.assignment.topic_partitions


Send = Callable[[RequestRef, ConsumerGroupHeartbeatRequest, int], ConsumerGroupHeartbeatResponse]


def _drive(send: Send, groups: int, members: int, rounds: int) -> list[Any]:
    """Run the load through `send`; the responses in order."""
    clients = [[_Client(f"g{g}", m) for m in range(members)] for g in range(groups)]
    answers: list[Any] = []
    correlation = 0
    now = 0

    def call(client: _Client, request: ConsumerGroupHeartbeatRequest) -> None:
        nonlocal correlation
        correlation += 1
        response = send(RequestRef(client.member_id, correlation), request, now)
        answers.append(response)
        client.receive(response)

    for group in clients:
        for client in group:
            call(client, client.request())
    middle = rounds // 2
    for number in range(rounds):
        now += ROUND_MS
        for group in clients:
            for index, client in enumerate(group):
                if number == middle and index == 0:
                    call(client, client.leave())
                else:
                    call(client, client.request())
    return answers


def run_spec(groups: int, members: int, rounds: int) -> tuple[float, list[Any]]:
    """The load through the spec (its one outcome per step); (seconds, responses)."""
    spec = ConsumerGroupCoordinatorSpec(_config())
    states = [spec.initial_state()]

    def send(
        ref: RequestRef, request: ConsumerGroupHeartbeatRequest, now: int
    ) -> ConsumerGroupHeartbeatResponse:
        outcome = spec.step(states[0], RequestArrived(ref, request), now)[0]
        states[0] = outcome.state
        (reply,) = outcome.responses
        assert isinstance(reply.body, ConsumerGroupHeartbeatResponse)
        return reply.body

    start = time.perf_counter()
    answers = _drive(send, groups, members, rounds)
    return time.perf_counter() - start, answers


def run_impl(groups: int, members: int, rounds: int) -> tuple[float, list[Any]]:
    """The load through the optimized coordinator; (seconds, responses)."""
    clock = ManualClock(0)
    taken: dict[Any, Any] = {}
    coordinator = ConsumerGroupCoordinator(
        impl_config(_config()), clock=clock, respond=taken.__setitem__
    )
    handle = coordinator.handle

    def send(
        ref: RequestRef, request: ConsumerGroupHeartbeatRequest, now: int
    ) -> ConsumerGroupHeartbeatResponse:
        if now != clock.now_ms():
            clock.set(now)
            coordinator.advance()
        handle(ref, request)
        body: ConsumerGroupHeartbeatResponse = taken.pop(ref)
        return body

    start = time.perf_counter()
    answers = _drive(send, groups, members, rounds)
    return time.perf_counter() - start, answers


def _config() -> ConsumerGroupConfig:
    # range only, recomputed at every epoch bump: one allowed outcome per step.
    return ConsumerGroupConfig(assignors=("range",), assignment_interval_ms=0, topics=TOPICS)


def bench_kip848(groups: int, members: int, rounds: int) -> Kip848Figures:
    """Both sides on the consumer-protocol load, their responses compared."""
    gc.collect()
    spec_seconds, spec_answers = run_spec(groups, members, rounds)
    impl_seconds, impl_answers = run_impl(groups, members, rounds)
    requests = len(impl_answers)
    differing = sum(1 for a, b in zip(spec_answers, impl_answers, strict=False) if a != b)
    differing += abs(len(spec_answers) - len(impl_answers))
    spec_rate = len(spec_answers) / spec_seconds
    impl_rate = requests / impl_seconds
    return Kip848Figures(
        groups=groups,
        members=members,
        rounds=rounds,
        requests=requests,
        spec_seconds=spec_seconds,
        impl_seconds=impl_seconds,
        spec_requests_per_s=spec_rate,
        impl_requests_per_s=impl_rate,
        ratio=impl_rate / spec_rate,
        responses_compared=min(len(spec_answers), requests),
        responses_differing=differing,
    )


def format_kip848(figures: Kip848Figures) -> str:
    """The figures as a short report."""
    return "\n".join(
        [
            f"consumer protocol (KIP-848): {figures.groups} groups × {figures.members} static "
            f"members, {figures.rounds} rounds: {figures.requests:,} heartbeats "
            "(joins, leaves, rejoins)",
            f"  spec  {figures.spec_requests_per_s:12,.0f} requests/s  ({figures.spec_seconds:.2f} s)",
            f"  impl  {figures.impl_requests_per_s:12,.0f} requests/s  ({figures.impl_seconds:.2f} s)",
            f"  ratio {figures.ratio:12,.1f}×",
            f"  responses compared {figures.responses_compared:,}, "
            f"differing {figures.responses_differing:,}",
        ]
    )
