"""The KIP-848 consumer's committed-offset fetches (spec/kip848/consumer/offset_fetches.py) and
the world's steps that send and deliver them (models/kip848_world.py, `offset_fetches`): sent at
the member's id and latest epoch, retried at a newer epoch on STALE_MEMBER_EPOCH, failed on
UNKNOWN_MEMBER_ID, answered without changing the coordinator."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kip848_world_search import first_step

from groupspec.models.kip848_params import Kip848Parameters
from groupspec.models.kip848_world import Kip848World
from groupspec.models.parameters import ParameterError
from groupspec.models.preset_models import load_model
from groupspec.spec.kip848.consumer.machine import ConsumerState, KafkaConsumer
from groupspec.spec.kip848.consumer.offset_fetches import OffsetFetch, fetch, on_fetch_response
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import TopicPartition

T00 = TopicPartition("t0", 0)
STABLE = KafkaConsumer("c1", state=ConsumerState.STABLE, member_epoch=3, owned=(T00,))


def test_a_member_fetches_what_it_holds_with_its_id_and_latest_epoch():
    step = fetch(STABLE)
    assert step is not None and step.rule == "cg_client.fetch.sent"
    assert step.fetch == OffsetFetch("c1", 3, (T00,))
    request = step.fetch.request("g")
    assert (request.member_id, request.member_epoch, request.api_version) == ("c1", 3, 9)
    assert request.partitions == (T00,) and request.require_stable


def test_no_fetch_without_partitions_or_epoch():
    assert fetch(replace(STABLE, owned=())) is None
    assert fetch(replace(STABLE, state=ConsumerState.FENCED, member_epoch=0)) is None
    assert fetch(replace(STABLE, state=ConsumerState.JOINING, member_epoch=0)) is None


def test_a_stale_fetch_is_retried_at_the_newer_epoch_only():
    sent = OffsetFetch("c1", 2, (T00,))
    retried = on_fetch_response(STABLE, sent, ErrorCode.STALE_MEMBER_EPOCH)
    assert (retried.rule, retried.fetch) == (
        "cg_client.fetch.retried",
        OffsetFetch("c1", 3, (T00,)),
    )
    same = on_fetch_response(STABLE, OffsetFetch("c1", 3, (T00,)), ErrorCode.STALE_MEMBER_EPOCH)
    assert (same.rule, same.fetch) == ("cg_client.fetch.failed", None)
    assert on_fetch_response(STABLE, sent, ErrorCode.NONE).rule == "cg_client.fetch.completed"
    unknown = on_fetch_response(STABLE, sent, ErrorCode.UNKNOWN_MEMBER_ID)
    assert (unknown.rule, unknown.fetch) == ("cg_client.fetch.failed", None)


def test_a_coordinator_error_is_retried_while_the_member_has_an_epoch():
    sent = OffsetFetch("c1", 3, (T00,))
    moved = on_fetch_response(STABLE, sent, ErrorCode.NOT_COORDINATOR)
    assert (moved.rule, moved.fetch) == ("cg_client.fetch.retried", sent)
    left = replace(STABLE, state=ConsumerState.UNSUBSCRIBED, member_epoch=-1, owned=())
    gone = on_fetch_response(left, sent, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    assert (gone.rule, gone.fetch) == ("cg_client.fetch.failed", None)


def test_fetches_are_off_by_default_and_refused_for_librdkafka():
    assert Kip848Parameters().offset_fetches == 0
    with pytest.raises(ParameterError, match="offset_fetches"):
        Kip848Parameters(client="librdkafka", offset_fetches=1)


# -- the world's steps ---------------------------------------------------------------------------


def _world(name: str) -> Kip848World:
    world = load_model(name).model
    assert isinstance(world, Kip848World)
    return world


def test_a_fetch_spends_the_budget_and_goes_on_its_way():
    before, step = first_step(
        _world("kip848-fetches-2"), "cg_client.fetch.sent", action="fetch_offsets"
    )
    assert (before.offset_fetches, step.state.offset_fetches) == (1, 0)
    ((index, sent),) = step.state.fetches_in_flight
    consumer = before.consumers[index]
    assert consumer is not None
    assert sent == OffsetFetch(consumer.member_id, consumer.member_epoch, consumer.owned)


def test_a_fetch_at_the_members_epoch_gets_the_offsets_and_changes_nothing():
    world = _world("kip848-fetches-2")
    before, step = first_step(world, "cg_offset_fetch.member", action="coordinator_fetches")
    assert "cg_client.fetch.completed" in step.rules
    assert step.state == replace(before, fetches_in_flight=())


def test_a_fetch_overtaken_by_its_members_next_epoch_is_retried_at_it():
    world = _world("kip848-fetches-2")
    before, step = first_step(world, "cg_client.fetch.retried", action="coordinator_fetches")
    assert "cg_offset_fetch.stale_member_epoch" in step.rules
    ((index, sent),) = before.fetches_in_flight
    member = before.coordinator.group("g").member(sent.member_id)  # type: ignore[union-attr]
    consumer = before.consumers[index]
    assert member is not None and consumer is not None
    assert sent.epoch != member.member_epoch
    assert step.state.fetches_in_flight == ((index, replace(sent, epoch=consumer.member_epoch)),)
    assert step.state.coordinator == before.coordinator


def test_a_fetch_whose_member_left_fails():
    world = _world("kip848-misbehaving-1")
    before, step = first_step(world, "cg_offset_fetch.unknown_member", action="coordinator_fetches")
    ((_, sent),) = before.fetches_in_flight
    assert before.coordinator.group("g").member(sent.member_id) is None  # type: ignore[union-attr]
    # The consumer missed max.poll.interval.ms and left; it reads UNKNOWN_MEMBER_ID and gives up.
    assert "cg_client.fetch.failed" in step.rules
    assert step.state == replace(before, fetches_in_flight=())
