"""The KIP-848 consumer as a static member and through a coordinator failover
(spec/kip848/consumer/machine.py): group.instance.id on every heartbeat, a leave with epoch -2,
retries on NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS, and the callbacks a leave or a
fence had already started."""

from __future__ import annotations

from dataclasses import replace

import pytest

from groupspec.spec.kip848 import ConsumerGroupConfig
from groupspec.spec.kip848.consumer import machine
from groupspec.spec.kip848.consumer.machine import ConsumerState, KafkaConsumer
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupHeartbeatAssignment,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import TopicPartition

CONFIG = ConsumerGroupConfig()
T00, T10 = TopicPartition("t0", 0), TopicPartition("t1", 0)
S = ConsumerState


def stable(instance_id: str | None) -> KafkaConsumer:
    """c1 Stable at epoch 2 holding t0-0, nothing in flight."""
    joined = machine.subscribe(KafkaConsumer("c1", instance_id=instance_id), ("t0", "t1"))
    assert joined is not None
    sent = machine.heartbeat(joined.consumer, CONFIG)
    assert sent is not None
    assignment = ConsumerGroupHeartbeatAssignment(machine.topic_partitions(CONFIG, [T00]))
    answer = ConsumerGroupHeartbeatResponse(
        ErrorCode.NONE, member_id="c1", member_epoch=2, assignment=assignment
    )
    reconciling = machine.on_response(sent.consumer, CONFIG, answer).consumer
    assigned = machine.assign(reconciling)
    assert assigned is not None
    acked = machine.heartbeat(assigned.consumer, CONFIG)
    assert acked is not None
    done = machine.on_response(
        acked.consumer,
        CONFIG,
        ConsumerGroupHeartbeatResponse(ErrorCode.NONE, member_id="c1", member_epoch=2),
    )
    assert (done.consumer.state, done.consumer.owned) == (S.STABLE, (T00,))
    return done.consumer


def test_a_static_member_sends_its_instance_id_on_every_heartbeat():
    beat = machine.heartbeat(stable("i1"), CONFIG)
    assert beat is not None and beat.request is not None
    assert beat.request.instance_id == "i1"
    dynamic = machine.heartbeat(stable(None), CONFIG)
    assert dynamic is not None and dynamic.request is not None
    assert dynamic.request.instance_id is None


@pytest.mark.parametrize(("instance_id", "epoch"), [("i1", -2), (None, -1)])
def test_a_leave_carries_minus_two_for_a_static_member(instance_id, epoch):
    prepare = machine.leave(stable(instance_id))
    assert prepare is not None
    released = machine.release_for_leave(prepare.consumer)
    assert released is not None and released.consumer.member_epoch == epoch
    leave = machine.heartbeat(released.consumer, CONFIG)
    assert leave is not None and leave.request is not None
    assert (leave.request.member_epoch, leave.request.instance_id) == (epoch, instance_id)
    assert leave.consumer.state is S.UNSUBSCRIBED


@pytest.mark.parametrize(
    "error",
    [
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ],
)
def test_a_coordinator_error_is_retried_with_every_field(error):
    consumer = stable("i1")
    sent = machine.heartbeat(consumer, CONFIG)
    assert sent is not None and sent.request is not None
    assert sent.request.subscribed_topic_names is None  # an interval heartbeat: fields left out
    step = machine.on_response(sent.consumer, CONFIG, ConsumerGroupHeartbeatResponse(error))
    assert step.rules == ("cg_client.error.coordinator",)
    after = step.consumer
    assert (after.state, after.member_epoch, after.owned, after.in_flight) == (
        S.STABLE,
        2,
        (T00,),
        False,
    )
    again = machine.heartbeat(after, CONFIG)
    assert again is not None and again.request is not None
    assert again.request.subscribed_topic_names == ("t0", "t1")
    assert again.request.rebalance_timeout_ms != -1
    assert again.request.topic_partitions is not None


def test_a_coordinator_error_to_a_leave_is_not_retried():
    prepare = machine.leave(stable(None))
    assert prepare is not None
    released = machine.release_for_leave(prepare.consumer)
    assert released is not None
    leave = machine.heartbeat(released.consumer, CONFIG)
    assert leave is not None
    answer = ConsumerGroupHeartbeatResponse(ErrorCode.NOT_COORDINATOR)
    step = machine.on_response(leave.consumer, CONFIG, answer)
    assert step.rules == ("cg_client.response.not_in_group",)
    assert step.consumer.state is S.UNSUBSCRIBED


def test_a_fence_while_preparing_to_leave_completes_the_revocation_callback():
    prepare = machine.leave(stable(None))
    assert prepare is not None
    waiting = replace(prepare.consumer, in_flight=True)
    answer = ConsumerGroupHeartbeatResponse(ErrorCode.FENCED_MEMBER_EPOCH)
    step = machine.on_response(waiting, CONFIG, answer)
    assert step.consumer.state is S.UNSUBSCRIBED and step.consumer.owned == ()
    assert [(c.name, c.partitions) for c in step.callbacks] == [("onPartitionsRevoked", (T00,))]


def test_unsubscribing_a_fenced_consumer_runs_the_pending_lost_callback():
    sent = machine.heartbeat(stable(None), CONFIG)
    assert sent is not None
    answer = ConsumerGroupHeartbeatResponse(ErrorCode.FENCED_MEMBER_EPOCH)
    fenced = machine.on_response(sent.consumer, CONFIG, answer).consumer
    assert fenced.state is S.FENCED and fenced.owned == (T00,)
    left = machine.leave(fenced)
    assert left is not None and left.consumer.state is S.UNSUBSCRIBED
    assert [(c.name, c.partitions) for c in left.callbacks] == [("onPartitionsLost", (T00,))]


def test_unreleased_instance_id_is_fatal():
    joined = machine.subscribe(KafkaConsumer("c1-2", instance_id="i1"), ("t0",))
    assert joined is not None
    sent = machine.heartbeat(joined.consumer, CONFIG)
    assert sent is not None and sent.request is not None and sent.request.instance_id == "i1"
    answer = ConsumerGroupHeartbeatResponse(ErrorCode.UNRELEASED_INSTANCE_ID)
    assert machine.on_response(sent.consumer, CONFIG, answer).consumer.state is S.FATAL
