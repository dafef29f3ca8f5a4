"""Helpers for the consumer state-machine tests: a consumer driven step by step, every step
checked against the consumer invariants and action properties, and canned coordinator answers."""

from __future__ import annotations

from groupspec.spec.assignment import Cluster, Subscription
from groupspec.spec.consumer import (
    ConsumerConfig,
    ConsumerSpec,
    HeartbeatDue,
    Poll,
    ResponseReceived,
    check_consumer_state,
    check_consumer_step,
)
from groupspec.spec.consumer_protocol import (
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    SyncGroupRequest,
    TopicPartition,
)
from groupspec.vocabulary.responses import (
    FindCoordinatorResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    JoinGroupResponseMember,
    OffsetCommitPartitionResponse,
    OffsetCommitResponse,
    SyncGroupResponse,
)

GROUP = "g"
CLUSTER = Cluster.of({"t": 4, "u": 2})
EAGER_ASSIGNORS = ("range",)
COOPERATIVE_ASSIGNORS = ("cooperative-sticky",)


def tp(topic, partition):
    return TopicPartition(topic, partition)


def config(*, static=False, cooperative=False, topics=("t",), **overrides):
    """A consumer config: dynamic or static, EAGER (range) or COOPERATIVE (cooperative-sticky)."""
    options = {
        "group_id": GROUP,
        "topics": topics,
        "client_id": "c1",
        "group_instance_id": "i1" if static else None,
        "assignors": COOPERATIVE_ASSIGNORS if cooperative else EAGER_ASSIGNORS,
    }
    options.update(overrides)
    return ConsumerConfig(**options)


class ConsumerDriver:
    """A consumer stepped one event at a time; every step is checked and remembered."""

    def __init__(self, cfg=None, *, assignor_objects=None, cluster=CLUSTER, **config_options):
        self.config = cfg if cfg is not None else config(**config_options)
        self.spec = ConsumerSpec(self.config, assignor_objects)
        self.state = self.spec.initial_state(cluster)
        self.outcomes = []

    @property
    def last(self):
        return self.outcomes[-1]

    def step(self, event):
        outcome = self.spec.step(self.state, event)
        violations = check_consumer_step(self.config, self.state, event, outcome)
        violations += check_consumer_state(outcome.state)
        assert not violations, violations
        self.state = outcome.state
        self.outcomes.append(outcome)
        return outcome

    # -- requests in flight ---------------------------------------------------------------

    def in_flight(self, kind):
        """The single in-flight request of `kind` (a RequestKind)."""
        (entry,) = self.state.in_flight_of(kind)
        return entry

    def sent(self, request_type):
        """The last request of `request_type` this driver's consumer sent."""
        for outcome in reversed(self.outcomes):
            for send in reversed(outcome.sends):
                if isinstance(send.request, request_type):
                    return send
        raise AssertionError(f"no {request_type.__name__} sent")

    def only_send(self, outcome=None):
        """The single request the last (or given) step sent."""
        (send,) = (outcome or self.last).sends
        return send.request

    def respond(self, request_type, body):
        """Answer the last `request_type` request (which must still be in flight)."""
        send = self.sent(request_type)
        assert self.state.request(send.correlation_id) is not None, "not in flight"
        return self.step(ResponseReceived(send.correlation_id, body))

    # -- canned protocol exchanges --------------------------------------------------------

    def find_coordinator(self):
        """Poll with no coordinator known and answer FindCoordinator."""
        out = self.step(Poll())
        assert isinstance(self.only_send(out), FindCoordinatorRequest)
        return self.respond(
            FindCoordinatorRequest, FindCoordinatorResponse(ErrorCode.NONE, GROUP, 0)
        )

    def poll_join(self):
        """Poll and return the JoinGroup it sends."""
        self.step(Poll())
        request = self.only_send()
        assert isinstance(request, JoinGroupRequest), request
        return request

    def answer_join(
        self,
        member_id="m1",
        generation=1,
        *,
        leader=None,
        protocol=None,
        members=None,
        skip_assignment=False,
    ):
        """Answer the pending JoinGroup successfully; a leader gets `members` (default: itself)."""
        request = self.sent(JoinGroupRequest).request
        protocol = protocol or request.protocols[0].name
        leader = member_id if leader is None else leader
        if members is None:
            members = ()
            if leader == member_id:
                metadata = {p.name: p.metadata for p in request.protocols}[protocol]
                members = (
                    JoinGroupResponseMember(member_id, self.config.group_instance_id, metadata),
                )
        body = JoinGroupResponse(
            ErrorCode.NONE,
            member_id=member_id,
            generation_id=generation,
            protocol_type="consumer",
            protocol_name=protocol,
            leader=leader,
            skip_assignment=skip_assignment,
            members=members,
        )
        return self.respond(JoinGroupRequest, body)

    def answer_sync(self, partitions=(), error=ErrorCode.NONE, *, raw=None):
        """Answer the pending SyncGroup with `partitions` (or raw assignment bytes)."""
        assignment = raw if raw is not None else encode_assignment(partitions)
        protocol = self.state.generation.protocol_name
        body = SyncGroupResponse(error, "consumer", protocol, assignment)
        return self.respond(SyncGroupRequest, body)

    def join_as_follower(self, partitions, member_id="m1", generation=1):
        """From any state with a coordinator: poll, join as follower, sync with `partitions`."""
        self.poll_join()
        self.answer_join(member_id, generation, leader="leader")
        return self.answer_sync(partitions)

    def stable(self, partitions=None, member_id="m1", generation=1):
        """A fresh consumer brought to Stable owning `partitions` (default t-0, t-1), as a follower."""
        if partitions is None:
            partitions = (tp("t", 0), tp("t", 1))
        self.find_coordinator()
        self.join_as_follower(partitions, member_id, generation)
        return self

    def heartbeat(self, error=ErrorCode.NONE):
        self.step(HeartbeatDue())
        assert isinstance(self.only_send(), HeartbeatRequest)
        return self.respond(HeartbeatRequest, HeartbeatResponse(error))

    def commit_response(self, error):
        request = self.sent(OffsetCommitRequest).request
        body = OffsetCommitResponse(
            tuple(
                OffsetCommitPartitionResponse(p.topic, p.partition, error)
                for p in request.partitions
            )
        )
        return self.respond(OffsetCommitRequest, body)

    def leave_sent(self, outcome=None):
        return [
            s.request
            for s in (outcome or self.last).sends
            if isinstance(s.request, LeaveGroupRequest)
        ]


def member_metadata(topics, owned=(), generation=-1, version=3):
    """A ConsumerProtocolSubscription as another member would send it."""
    return encode_subscription(Subscription.of(topics, owned, generation), version)


def subscription_of(join_request, protocol=None):
    """The subscription a JoinGroup offers under `protocol` (default: its first)."""
    for offered in join_request.protocols:
        if protocol is None or offered.name == protocol:
            return decode_subscription(offered.metadata)
    raise AssertionError(f"{protocol} not offered")
