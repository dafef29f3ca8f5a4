"""The consumer (client) state machine: one test per transition and per error response, for the
EAGER and COOPERATIVE protocols, dynamic and static members (reference §2–§9 "Client")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from consumer_driver import (
    GROUP,
    ConsumerDriver,
    config,
    member_metadata,
    subscription_of,
    tp,
)

from groupspec.coverage.rule_index import CONSUMER_SIDE, rule_places
from groupspec.spec.assignment import Cluster, GroupAssignment, RebalanceProtocol
from groupspec.spec.consumer import (
    CONSUMER_RULE_IDS,
    CONSUMER_RULES,
    Close,
    CommitRequested,
    ConsumerConfig,
    ConsumerEventNotEnabledError,
    ConsumerPhase,
    ConsumerSpec,
    Disconnected,
    HeartbeatDue,
    MemberState,
    MetadataChanged,
    PartitionsAssigned,
    PartitionsLost,
    PartitionsRevoked,
    Poll,
    PollTimeoutExpired,
    ResponseReceived,
    SessionTimeoutExpired,
    SubscriptionChanged,
    phase,
)
from groupspec.spec.consumer_protocol import decode_assignment, encode_assignment
from groupspec.vocabulary.errors import ErrorCode, InputError, InvalidConfigError
from groupspec.vocabulary.requests import (
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    SyncGroupRequest,
)
from groupspec.vocabulary.responses import (
    FindCoordinatorResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupResponse,
    OffsetCommitPartitionResponse,
    OffsetCommitResponse,
    SyncGroupResponse,
)

CONSUMER_DIR = Path(__file__).resolve().parent.parent / "spec" / "consumer"
KINDS = [
    pytest.param(False, False, id="eager-dynamic"),
    pytest.param(False, True, id="eager-static"),
    pytest.param(True, False, id="cooperative-dynamic"),
    pytest.param(True, True, id="cooperative-static"),
]
T0, T1, T2, T3 = tp("t", 0), tp("t", 1), tp("t", 2), tp("t", 3)


def kinds_driver(cooperative, static, **options):
    return ConsumerDriver(cooperative=cooperative, static=static, **options)


def error_kinds(outcome):
    return [error.kind for error in outcome.errors]


# -- configuration and protocol selection ------------------------------------------------------


def test_default_assignors_select_eager_with_range_first():
    spec = ConsumerSpec(ConsumerConfig(group_id=GROUP, topics=("t",)))
    assert spec.protocol is RebalanceProtocol.EAGER
    assert [a.name for a in spec.setup.assignors] == ["range", "cooperative-sticky"]


def test_cooperative_sticky_alone_selects_cooperative():
    assert ConsumerSpec(config(cooperative=True)).protocol is RebalanceProtocol.COOPERATIVE


@dataclass(frozen=True)
class CooperativeOnly:
    """A third-party COOPERATIVE assignor: gives every member what the script says."""

    script: tuple = ()
    name: str = "coop-only"
    supported_protocols: tuple = (RebalanceProtocol.COOPERATIVE,)

    def subscription_user_data(self, owned, generation):
        return None

    def assign(self, group):
        scripted = dict(self.script)
        return GroupAssignment.of({m: scripted.get(m, ()) for m in group.member_ids})


def test_assignors_without_a_common_protocol_are_a_config_error():
    from groupspec.spec.assignors.registry import assignor_named

    assignors = {"range": assignor_named("range"), "coop-only": CooperativeOnly()}
    with pytest.raises(InvalidConfigError, match="commonly supported"):
        ConsumerSpec(config(assignors=("range", "coop-only")), assignors)


def test_an_unknown_assignor_name_is_a_config_error():
    with pytest.raises(InvalidConfigError, match="no assignor named"):
        ConsumerSpec(config(assignors=("nope",)))


@pytest.mark.parametrize(
    "overrides",
    [
        {"group_id": ""},
        {"topics": ()},
        {"topics": ["t"]},
        {"assignors": ()},
        {"assignors": ("range", "range")},
        {"session_timeout_ms": 0},
        {"heartbeat_interval_ms": 45_000},
        {"join_group_version": 10},
        {"subscription_version": 4},
        {"group_instance_id": ""},
        {"group_instance_id": "i1", "join_group_version": 4},
        {"group_instance_id": "i1", "heartbeat_version": 2},
        {"group_instance_id": "i1", "offset_commit_version": 6},
    ],
)
def test_invalid_configs_are_refused(overrides):
    options = {"group_id": GROUP, "topics": ("t",)}
    options.update(overrides)
    with pytest.raises(InvalidConfigError):
        ConsumerConfig(**options)


# -- coordinator discovery -----------------------------------------------------------------------


def test_poll_without_coordinator_sends_find_coordinator_once():
    d = ConsumerDriver()
    out = d.step(Poll())
    assert d.only_send(out) == FindCoordinatorRequest(GROUP)
    assert "client.discovery.find_coordinator_sent" in out.rules
    again = d.step(Poll())
    assert again.sends == () and "client.discovery.lookup_pending" in again.rules
    d.respond(FindCoordinatorRequest, FindCoordinatorResponse(ErrorCode.NONE, GROUP, 7))
    assert d.state.coordinator == 7
    assert phase(d.state) is ConsumerPhase.UNJOINED


@pytest.mark.parametrize("error", [ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR])
def test_find_coordinator_retriable_error_retries_on_next_poll(error):
    d = ConsumerDriver()
    d.step(Poll())
    out = d.respond(FindCoordinatorRequest, FindCoordinatorResponse(error, GROUP))
    assert "client.discovery.retriable_error" in out.rules and not d.state.coordinator_known
    assert isinstance(d.only_send(d.step(Poll())), FindCoordinatorRequest)


@pytest.mark.parametrize("error", [ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.INVALID_REQUEST])
def test_find_coordinator_fatal_error(error):
    d = ConsumerDriver()
    d.step(Poll())
    out = d.respond(FindCoordinatorRequest, FindCoordinatorResponse(error, GROUP))
    assert out.errors[0].error is error and phase(d.state) is ConsumerPhase.FATAL
    with pytest.raises(ConsumerEventNotEnabledError):
        d.step(Poll())


# -- joining ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("cooperative", "static"), KINDS)
def test_first_join_request_shape(cooperative, static):
    d = kinds_driver(cooperative, static)
    d.find_coordinator()
    out = d.step(Poll())
    request = d.only_send(out)
    assert isinstance(request, JoinGroupRequest)
    assert request.member_id == ""
    assert request.group_instance_id == ("i1" if static else None)
    assert request.protocol_type == "consumer"
    assert request.session_timeout_ms == 45_000 and request.rebalance_timeout_ms == 300_000
    assert [p.name for p in request.protocols] == list(d.config.assignors)
    subscription = subscription_of(request)
    assert subscription.topics == ("t",)
    assert subscription.owned_partitions == () and subscription.generation == -1
    assert d.state.member_state is MemberState.PREPARING_REBALANCE
    assert phase(d.state) is ConsumerPhase.JOINING
    assert "client.join.sent_without_member_id" in out.rules
    # Nothing owned and no generation: onJoinPrepare has nothing to give up.
    assert "client.prepare.reset_nothing_owned" in out.rules and out.callbacks == ()


def test_offers_every_assignor_in_preference_order():
    d = ConsumerDriver(assignors=("range", "roundrobin", "cooperative-sticky"))
    d.find_coordinator()
    request = d.poll_join()
    assert [p.name for p in request.protocols] == ["range", "roundrobin", "cooperative-sticky"]
    assert d.spec.protocol is RebalanceProtocol.EAGER


@pytest.mark.parametrize("cooperative", [False, True])
def test_member_id_required_round_trip(cooperative):
    d = ConsumerDriver(cooperative=cooperative)
    d.find_coordinator()
    d.poll_join()
    out = d.respond(
        JoinGroupRequest, JoinGroupResponse(ErrorCode.MEMBER_ID_REQUIRED, member_id="c1-abc")
    )
    assert "client.join.member_id_required" in out.rules and out.sends == ()
    assert d.state.generation.member_id == "c1-abc"
    assert d.state.generation.generation_id == -1 and d.state.rejoin_needed
    # The next poll joins again with the id; onJoinPrepare already ran for this rebalance.
    request = d.poll_join()
    assert request.member_id == "c1-abc"
    assert not any(r.startswith("client.prepare") for r in d.last.rules)
    assert "client.join.sent_with_member_id" in d.last.rules


def test_join_group_v0_has_no_rebalance_timeout():
    d = ConsumerDriver(join_group_version=0)
    d.find_coordinator()
    request = d.poll_join()
    assert request.api_version == 0 and request.rebalance_timeout_ms == -1


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_encoding_versions(version):
    d = ConsumerDriver(cooperative=True, subscription_version=version)
    d.stable(partitions=(T0,))
    d.step(SubscriptionChanged(("t", "u")))
    request = d.poll_join()
    assert int.from_bytes(request.protocols[0].metadata[:2], "big") == version
    subscription = subscription_of(request)
    assert subscription.topics == ("t", "u")
    assert subscription.owned_partitions == ((T0,) if version >= 1 else ())
    assert subscription.generation == (1 if version >= 2 else -1)


@pytest.mark.parametrize(("cooperative", "static"), KINDS)
def test_join_success_as_follower_sends_empty_sync(cooperative, static):
    d = kinds_driver(cooperative, static)
    d.find_coordinator()
    d.poll_join()
    out = d.answer_join("m1", 3, leader="other")
    sync = d.only_send(out)
    assert isinstance(sync, SyncGroupRequest)
    assert (sync.generation_id, sync.member_id, sync.assignments) == (3, "m1", ())
    assert sync.group_instance_id == ("i1" if static else None)
    assert sync.protocol_type == "consumer" and sync.protocol_name == d.config.assignors[0]
    assert d.state.member_state is MemberState.COMPLETING_REBALANCE
    assert phase(d.state) is ConsumerPhase.AWAITING_SYNC
    assert "client.join.joined_as_follower" in out.rules
    assert d.spec.is_enabled(d.state, HeartbeatDue())


@pytest.mark.parametrize(("cooperative", "static"), KINDS)
def test_join_success_as_leader_assigns_every_member(cooperative, static):
    d = kinds_driver(cooperative, static)
    d.find_coordinator()
    own = d.poll_join().protocols[0].metadata
    members = (
        JoinGroupResponseMember("m1", "i1" if static else None, own),
        JoinGroupResponseMember("m2", None, member_metadata(("t",))),
    )
    out = d.answer_join("m1", 1, members=members)
    sync = d.only_send(out)
    assert "client.join.joined_as_leader" in out.rules and "client.leader.assigned" in out.rules
    given = {a.member_id: decode_assignment(a.assignment)[0] for a in sync.assignments}
    assert set(given) == {"m1", "m2"}
    assert sorted(given["m1"] + given["m2"]) == [T0, T1, T2, T3]
    assert d.state.is_leader and d.state.assignment_snapshot == (("t", 4),)


def test_static_leader_skips_assignment():
    d = ConsumerDriver(static=True)
    d.find_coordinator()
    d.poll_join()
    out = d.answer_join("m1", 4, skip_assignment=True)
    assert d.only_send(out).assignments == ()
    assert "client.leader.skip_assignment" in out.rules and d.state.is_leader


def test_leader_with_unknown_protocol_fails():
    d = ConsumerDriver()
    d.find_coordinator()
    d.poll_join()
    members = (JoinGroupResponseMember("m1", None, member_metadata(("t",))),)
    out = d.answer_join("m1", 1, protocol="roundrobin", members=members)
    assert "client.leader.unknown_assignor" in out.rules
    assert phase(d.state) is ConsumerPhase.FATAL and out.sends == ()


def test_leader_with_undecodable_metadata_fails():
    d = ConsumerDriver()
    d.find_coordinator()
    d.poll_join()
    out = d.answer_join("m1", 1, members=(JoinGroupResponseMember("m1", None, b"\x00"),))
    assert out.errors[0].kind == "SchemaException" and phase(d.state) is ConsumerPhase.FATAL


def _coop_only_leader(script, owned_by_other):
    assignor = CooperativeOnly(script=script)
    d = ConsumerDriver(config(assignors=("coop-only",)), assignor_objects={"coop-only": assignor})
    d.find_coordinator()
    own = d.poll_join().protocols[0].metadata
    members = (
        JoinGroupResponseMember("m1", None, own),
        JoinGroupResponseMember("m2", None, member_metadata(("t",), owned_by_other, 1)),
    )
    return d, d.answer_join("m1", 2, members=members)


def test_cooperative_leader_validates_third_party_assignment():
    d, out = _coop_only_leader((("m1", (T0,)), ("m2", (T1,))), owned_by_other=(T1,))
    assert "client.leader.cooperative_assignment_validated" in out.rules
    assert isinstance(d.only_send(out), SyncGroupRequest)


def test_cooperative_leader_refuses_direct_transfer():
    # m2 owns t-1; giving it to m1 in the same rebalance breaks KIP-429.
    d, out = _coop_only_leader((("m1", (T0, T1)), ("m2", ())), owned_by_other=(T1,))
    assert phase(d.state) is ConsumerPhase.FATAL
    assert "client.leader.illegal_cooperative_assignment" in out.rules
    assert out.errors[0].kind == "IllegalStateException" and out.sends == ()


@pytest.mark.parametrize(("cooperative", "static"), KINDS)
def test_join_unknown_member_id_resets_member_id(cooperative, static):
    d = kinds_driver(cooperative, static).stable()
    d.step(SubscriptionChanged(("t", "u")))
    d.poll_join()
    out = d.respond(JoinGroupRequest, JoinGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID))
    assert "client.join.unknown_member_id_reset" in out.rules
    assert d.state.generation.member_id == "" and d.state.generation.generation_id == -1
    assert d.state.member_state is MemberState.UNJOINED
    request = d.poll_join()
    assert request.member_id == ""
    if cooperative:
        # COOPERATIVE kept the partitions through the first JoinGroup; now they are lost.
        assert d.last.callbacks == (PartitionsLost((T0, T1)),)
    assert subscription_of(request).owned_partitions == ()


def test_join_unknown_member_id_for_older_generation_only_rejoins():
    d = _stable_with_commit_then_rejoining(cooperative=True)
    # The commit fails with ILLEGAL_GENERATION while the JoinGroup is in flight: reset.
    d.commit_response(ErrorCode.ILLEGAL_GENERATION)
    assert d.state.generation.generation_id == -1
    out = d.respond(JoinGroupRequest, JoinGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID))
    assert "client.join.unknown_member_id_stale" in out.rules
    assert d.state.generation.member_id == "m1"  # kept: the error answered an older generation
    request = d.poll_join()
    assert d.last.callbacks == (PartitionsLost((T0, T1)),)
    assert request.member_id == "m1" and subscription_of(request).generation == -1


@pytest.mark.parametrize("error", [ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR])
def test_join_coordinator_errors_rediscover(error):
    d = ConsumerDriver()
    d.find_coordinator()
    d.poll_join()
    out = d.respond(JoinGroupRequest, JoinGroupResponse(error))
    assert "client.join.coordinator_lost" in out.rules
    assert not d.state.coordinator_known and d.state.rejoin_needed
    assert isinstance(d.only_send(d.step(Poll())), FindCoordinatorRequest)


@pytest.mark.parametrize(
    "error", [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.REBALANCE_IN_PROGRESS]
)
@pytest.mark.parametrize("cooperative", [False, True])
def test_join_retriable_errors_rejoin_with_same_generation(error, cooperative):
    d = ConsumerDriver(cooperative=cooperative).stable()
    d.step(SubscriptionChanged(("t", "u")))
    first = d.poll_join()
    out = d.respond(JoinGroupRequest, JoinGroupResponse(error))
    assert "client.join.retry" in out.rules and d.state.generation.generation_id == 1
    again = d.poll_join()
    assert again.member_id == first.member_id == "m1"
    assert subscription_of(again).generation == 1


FATAL_JOIN = [
    (ErrorCode.FENCED_INSTANCE_ID, "FencedInstanceIdException"),
    (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "InconsistentGroupProtocolException"),
    (ErrorCode.INVALID_SESSION_TIMEOUT, "InvalidSessionTimeoutException"),
    (ErrorCode.INVALID_GROUP_ID, "InvalidGroupIdException"),
    (ErrorCode.GROUP_AUTHORIZATION_FAILED, "GroupAuthorizationException"),
    (ErrorCode.GROUP_MAX_SIZE_REACHED, "GroupMaxSizeReachedException"),
    (ErrorCode.UNSUPPORTED_VERSION, "UnsupportedVersionException"),
    (ErrorCode.ILLEGAL_GENERATION, "KafkaException"),
    (ErrorCode.UNKNOWN_SERVER_ERROR, "KafkaException"),
]


@pytest.mark.parametrize(("error", "kind"), FATAL_JOIN)
@pytest.mark.parametrize("static", [False, True])
def test_join_fatal_errors(error, kind, static):
    d = ConsumerDriver(static=static)
    d.find_coordinator()
    d.poll_join()
    out = d.respond(JoinGroupRequest, JoinGroupResponse(error))
    assert error_kinds(out) == [kind] and out.errors[0].api == "JoinGroup"
    assert phase(d.state) is ConsumerPhase.FATAL
    assert d.spec.enabled_events(d.state) == (Close(), Disconnected())


def test_join_success_with_foreign_protocol_type_is_fatal():
    d = ConsumerDriver()
    d.find_coordinator()
    d.poll_join()
    body = JoinGroupResponse(ErrorCode.NONE, "m1", 1, "connect", "range", "m1")
    out = d.respond(JoinGroupRequest, body)
    assert "client.join.inconsistent_protocol_type" in out.rules
    assert out.errors[0].error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def _stable_with_commit_then_rejoining(**options):
    """Stable, a commit in flight, then a heartbeat says the group rebalances and poll rejoins."""
    d = ConsumerDriver(**options).stable()
    d.step(CommitRequested(((T0, 5),)))
    d.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    d.poll_join()
    return d


def test_join_response_after_reset_is_dropped_and_retried():
    d = _stable_with_commit_then_rejoining()
    # The commit (sent at generation 1, unchanged) fails: the member resets while joining.
    out = d.commit_response(ErrorCode.UNKNOWN_MEMBER_ID)
    assert error_kinds(out) == ["CommitFailedException"]
    assert d.state.member_state is MemberState.UNJOINED
    out = d.answer_join("m1", 2, leader="other")
    assert "client.join.response_after_reset" in out.rules and out.sends == ()
    assert d.state.generation.generation_id == -1 and d.state.rejoin_needed


# -- syncing --------------------------------------------------------------------------------


@pytest.mark.parametrize(("cooperative", "static"), KINDS)
def test_sync_success_makes_member_stable(cooperative, static):
    d = kinds_driver(cooperative, static)
    d.find_coordinator()
    d.poll_join()
    d.answer_join("m1", 1, leader="other")
    out = d.answer_sync((T1, T0))
    assert "client.sync.stable" in out.rules and "client.sync.assignment_adopted" in out.rules
    assert out.callbacks == (PartitionsAssigned((T0, T1)),)
    assert d.state.member_state is MemberState.STABLE and d.state.owned == (T0, T1)
    assert phase(d.state) is ConsumerPhase.STABLE and not d.state.rejoin_needed
    assert d.step(Poll()).sends == ()


def test_eager_rebalance_revokes_everything_before_joining():
    d = ConsumerDriver().stable()
    d.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    d.poll_join()
    assert d.last.callbacks == (PartitionsRevoked((T0, T1)),)
    assert d.state.owned == ()
    assert subscription_of(d.sent(JoinGroupRequest).request).generation == 1
    d.answer_join("m1", 2, leader="other")
    out = d.answer_sync((T1, T2))
    assert out.callbacks == (PartitionsAssigned((T1, T2)),)


def test_eager_calls_revoked_even_when_owning_nothing():
    d = ConsumerDriver().stable(partitions=())
    d.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    d.poll_join()
    assert d.last.callbacks == (PartitionsRevoked(()),)


def test_cooperative_rebalance_keeps_owned_then_revokes_and_rejoins():
    d = ConsumerDriver(cooperative=True).stable()
    d.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    request = d.poll_join()
    assert d.last.callbacks == () and "client.prepare.cooperative_keep_owned" in d.last.rules
    assert subscription_of(request).owned_partitions == (T0, T1)
    d.answer_join("m1", 2, leader="other")
    out = d.answer_sync((T0, T2))
    assert out.callbacks == (PartitionsRevoked((T1,)), PartitionsAssigned((T2,)))
    assert "client.sync.cooperative_revoke_and_rejoin" in out.rules
    assert d.state.owned == (T0, T2) and phase(d.state) is ConsumerPhase.REJOIN_NEEDED
    follow_up = d.poll_join()
    assert subscription_of(follow_up).owned_partitions == (T0, T2)


@pytest.mark.parametrize("cooperative", [False, True])
def test_assignment_outside_subscription_means_rejoin(cooperative):
    d = ConsumerDriver(cooperative=cooperative)
    d.find_coordinator()
    d.poll_join()
    d.answer_join("m1", 1, leader="other")
    out = d.answer_sync((T0, tp("u", 0)))
    assert "client.sync.assignment_mismatch" in out.rules and out.callbacks == ()
    assert d.state.member_state is MemberState.STABLE and d.state.owned == ()
    assert phase(d.state) is ConsumerPhase.REJOIN_NEEDED
    assert isinstance(d.only_send(d.step(Poll())), JoinGroupRequest)


def _in_sync(**options):
    d = ConsumerDriver(**options)
    d.find_coordinator()
    d.poll_join()
    d.answer_join("m1", 2, leader="other")
    return d


@pytest.mark.parametrize("static", [False, True])
def test_sync_rebalance_in_progress_rejoins_keeping_generation(static):
    d = _in_sync(static=static)
    out = d.answer_sync(error=ErrorCode.REBALANCE_IN_PROGRESS)
    assert "client.sync.rebalance_in_progress" in out.rules
    assert d.state.generation.generation_id == 2 and d.state.rejoin_needed
    assert phase(d.state) is ConsumerPhase.REJOIN_NEEDED
    request = d.poll_join()
    assert request.member_id == "m1" and subscription_of(request).generation == 2


@pytest.mark.parametrize(
    ("error", "member_id"),
    [(ErrorCode.UNKNOWN_MEMBER_ID, ""), (ErrorCode.ILLEGAL_GENERATION, "m1")],
)
@pytest.mark.parametrize(("cooperative", "static"), KINDS)
def test_sync_generation_errors_reset(error, member_id, cooperative, static):
    d = _in_sync(cooperative=cooperative, static=static)
    out = d.answer_sync(error=error)
    assert "client.sync.reset_generation" in out.rules
    assert d.state.generation.member_id == member_id
    assert d.state.generation.generation_id == -1
    assert d.state.member_state is MemberState.UNJOINED and d.state.needs_join_prepare
    assert d.poll_join().member_id == member_id


@pytest.mark.parametrize("error", [ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR])
def test_sync_coordinator_errors_rediscover(error):
    d = _in_sync()
    out = d.answer_sync(error=error)
    assert "client.sync.coordinator_lost" in out.rules and not d.state.coordinator_known
    assert d.state.generation.generation_id == 2


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ErrorCode.GROUP_AUTHORIZATION_FAILED, "GroupAuthorizationException"),
        (ErrorCode.FENCED_INSTANCE_ID, "FencedInstanceIdException"),
        (ErrorCode.UNKNOWN_SERVER_ERROR, "KafkaException"),
        (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "KafkaException"),
    ],
)
def test_sync_fatal_errors(error, kind):
    d = _in_sync(static=True)
    out = d.answer_sync(error=error)
    assert error_kinds(out) == [kind] and phase(d.state) is ConsumerPhase.FATAL


def test_sync_with_other_protocol_name_is_fatal():
    d = _in_sync()
    body = SyncGroupResponse(ErrorCode.NONE, "consumer", "roundrobin", encode_assignment(()))
    out = d.respond(SyncGroupRequest, body)
    assert "client.sync.inconsistent_protocol" in out.rules
    assert phase(d.state) is ConsumerPhase.FATAL


def test_sync_with_empty_assignment_bytes_is_fatal():
    d = _in_sync()
    out = d.answer_sync(raw=b"")
    assert "client.sync.assignment_too_short" in out.rules
    assert out.errors[0].kind == "IllegalStateException"


def test_sync_with_garbage_assignment_is_fatal():
    d = _in_sync()
    out = d.answer_sync(raw=b"\x00\x00\x00")
    assert "client.sync.assignment_undecodable" in out.rules


@pytest.mark.parametrize("static", [False, True])
def test_sync_answer_after_poll_timeout_is_dropped(static):
    d = _in_sync(static=static)
    d.step(PollTimeoutExpired())
    out = d.answer_sync((T0,))
    assert "client.sync.response_after_reset" in out.rules
    assert d.state.owned == () and d.state.member_state is MemberState.UNJOINED


def test_stale_sync_generation_error_does_not_reset_again():
    d = _in_sync()
    d.step(PollTimeoutExpired())
    out = d.answer_sync(error=ErrorCode.ILLEGAL_GENERATION)
    assert "client.sync.stale_error" in out.rules


# -- heartbeats -------------------------------------------------------------------------------


def test_heartbeat_thread_runs_only_once_joined():
    d = ConsumerDriver()
    for event in (HeartbeatDue(), SessionTimeoutExpired(), PollTimeoutExpired()):
        assert not d.spec.is_enabled(d.state, event)
    d.find_coordinator()
    d.poll_join()
    assert not d.spec.is_enabled(d.state, HeartbeatDue())
    d.answer_join("m1", 1, leader="other")
    assert d.spec.is_enabled(d.state, HeartbeatDue())
    d.step(HeartbeatDue())
    assert not d.spec.is_enabled(d.state, HeartbeatDue())
    with pytest.raises(ConsumerEventNotEnabledError):
        d.step(HeartbeatDue())


@pytest.mark.parametrize("static", [False, True])
def test_heartbeat_request_shape_and_success(static):
    d = ConsumerDriver(static=static).stable(generation=5)
    d.step(HeartbeatDue())
    assert d.only_send() == HeartbeatRequest(GROUP, 5, "m1", "i1" if static else None)
    out = d.respond(HeartbeatRequest, HeartbeatResponse(ErrorCode.NONE))
    assert out.rules == ("client.heartbeat.ok",)


def test_heartbeat_rebalance_in_progress_while_stable_requests_rejoin():
    d = ConsumerDriver().stable()
    out = d.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    assert "client.heartbeat.rebalance_in_progress_rejoin" in out.rules
    assert phase(d.state) is ConsumerPhase.REJOIN_NEEDED


def test_heartbeat_rebalance_in_progress_while_rebalancing_is_ignored():
    d = _in_sync()
    out = d.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    assert out.rules == ("client.heartbeat.rebalance_in_progress_ignored",)
    assert phase(d.state) is ConsumerPhase.AWAITING_SYNC


@pytest.mark.parametrize("error", [ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR])
def test_heartbeat_coordinator_errors_drop_the_pending_sync(error):
    d = _in_sync()
    out = d.heartbeat(error)
    assert "client.heartbeat.coordinator_lost" in out.rules
    assert "client.coordinator.join_future_failed" in out.rules
    assert d.state.in_flight == () and d.state.rejoin_needed
    assert phase(d.state) is ConsumerPhase.REJOIN_NEEDED


@pytest.mark.parametrize(
    ("error", "member_id"),
    [(ErrorCode.ILLEGAL_GENERATION, "m1"), (ErrorCode.UNKNOWN_MEMBER_ID, "")],
)
@pytest.mark.parametrize(("cooperative", "static"), KINDS)
def test_heartbeat_generation_errors_reset_and_lose_partitions(
    error, member_id, cooperative, static
):
    d = kinds_driver(cooperative, static).stable()
    out = d.heartbeat(error)
    assert "client.heartbeat.reset_generation" in out.rules
    assert d.state.generation.member_id == member_id
    assert d.state.member_state is MemberState.UNJOINED
    request = d.poll_join()
    assert d.last.callbacks == (PartitionsLost((T0, T1)),)
    assert subscription_of(request).owned_partitions == ()
    assert request.member_id == member_id


def test_heartbeat_fenced_instance_is_fatal():
    d = ConsumerDriver(static=True).stable()
    out = d.heartbeat(ErrorCode.FENCED_INSTANCE_ID)
    assert error_kinds(out) == ["FencedInstanceIdException"]
    assert phase(d.state) is ConsumerPhase.FATAL


@pytest.mark.parametrize(
    "error",
    [ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID],
)
def test_stale_heartbeat_errors_are_ignored(error):
    d = _in_sync(static=True, topics=("t", "u"))
    d.step(HeartbeatDue())
    old_heartbeat = d.last.sends[0]
    assert old_heartbeat.request.generation_id == 2
    d.answer_sync((T0,))
    d.step(SubscriptionChanged(("t",)))
    d.poll_join()
    d.answer_join("m1", 3, leader="other")
    # The generation-2 heartbeat is answered only now: the member is at generation 3.
    out = d.step(ResponseReceived(old_heartbeat.correlation_id, HeartbeatResponse(error)))
    assert out.rules == ("client.heartbeat.stale_error_ignored",)
    assert d.state.generation.generation_id == 3


@pytest.mark.parametrize(
    "error", [ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.UNKNOWN_SERVER_ERROR]
)
def test_other_heartbeat_errors_only_retry(error):
    d = ConsumerDriver().stable()
    out = d.heartbeat(error)
    assert out.rules == ("client.heartbeat.failed_retry",)
    assert phase(d.state) is ConsumerPhase.STABLE


@pytest.mark.parametrize("cooperative", [False, True])
def test_session_timeout_marks_coordinator_unknown_and_keeps_generation(cooperative):
    d = ConsumerDriver(cooperative=cooperative).stable()
    d.step(HeartbeatDue())
    out = d.step(SessionTimeoutExpired())
    assert "client.heartbeat.session_timeout" in out.rules
    assert not d.state.coordinator_known and d.state.in_flight == ()
    assert d.state.member_state is MemberState.STABLE and d.state.owned == (T0, T1)
    d.find_coordinator()
    assert d.step(Poll()).sends == ()  # still Stable: no rejoin needed


# -- poll timeout ------------------------------------------------------------------------------


@pytest.mark.parametrize(("cooperative", "static"), KINDS)
def test_poll_timeout_leaves_if_dynamic_and_resets(cooperative, static):
    d = kinds_driver(cooperative, static).stable()
    out = d.step(PollTimeoutExpired())
    leaves = d.leave_sent(out)
    if static:
        assert leaves == [] and "client.leave.skipped_static" in out.rules
    else:
        assert len(leaves) == 1 and leaves[0].members[0].member_id == "m1"
    assert d.state.generation.member_id == "" and d.state.generation.generation_id == -1
    assert d.state.member_state is MemberState.UNJOINED and d.state.owned == (T0, T1)
    request = d.poll_join()
    assert d.last.callbacks == (PartitionsLost((T0, T1)),)
    assert request.member_id == "" and request.group_instance_id == ("i1" if static else None)


# -- commits ------------------------------------------------------------------------------------


@pytest.mark.parametrize("static", [False, True])
def test_commit_when_stable(static):
    d = ConsumerDriver(static=static).stable(generation=3)
    out = d.step(CommitRequested(((T1, 9), (T0, 4))))
    request = d.only_send(out)
    assert isinstance(request, OffsetCommitRequest)
    assert (request.generation_id, request.member_id) == (3, "m1")
    assert request.group_instance_id == ("i1" if static else None)
    assert [(p.partition, p.committed_offset) for p in request.partitions] == [(0, 4), (1, 9)]
    out = d.commit_response(ErrorCode.NONE)
    assert out.committed == (T0, T1) and out.errors == ()


def test_commit_while_rebalancing_fails_locally():
    d = _in_sync()
    out = d.step(CommitRequested(((T0, 1),)))
    assert out.sends == () and error_kinds(out) == ["RebalanceInProgressException"]


def test_commit_while_unjoined_fails_locally():
    d = ConsumerDriver().stable()
    d.step(PollTimeoutExpired())
    out = d.step(CommitRequested(((T0, 1),)))
    assert out.sends == () and error_kinds(out) == ["CommitFailedException"]


def test_commit_without_coordinator_fails_retriably():
    d = ConsumerDriver()
    out = d.step(CommitRequested(((T0, 1),)))
    assert error_kinds(out) == ["RetriableCommitFailedException"]


def test_commit_edge_inputs():
    d = ConsumerDriver().stable()
    assert d.step(CommitRequested(())).rules == ("client.commit.nothing_to_commit",)
    out = d.step(CommitRequested(((T0, -1),)))
    assert error_kinds(out) == ["IllegalArgumentException"] and out.sends == ()
    with pytest.raises(InputError):
        d.step(CommitRequested(((T0, 1), (T0, 2))))


COMMIT_ERRORS = [
    (
        ErrorCode.GROUP_AUTHORIZATION_FAILED,
        "GroupAuthorizationException",
        "client.commit.error_raised",
    ),
    (ErrorCode.OFFSET_METADATA_TOO_LARGE, "KafkaException", "client.commit.error_raised"),
    (ErrorCode.UNKNOWN_SERVER_ERROR, "KafkaException", "client.commit.error_raised"),
    (
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        "RetriableCommitFailedException",
        "client.commit.retriable",
    ),
    (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        "RetriableCommitFailedException",
        "client.commit.retriable",
    ),
    (
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        "RetriableCommitFailedException",
        "client.commit.coordinator_lost",
    ),
    (ErrorCode.NOT_COORDINATOR, "RetriableCommitFailedException", "client.commit.coordinator_lost"),
    (
        ErrorCode.REQUEST_TIMED_OUT,
        "RetriableCommitFailedException",
        "client.commit.coordinator_lost",
    ),
    (
        ErrorCode.REBALANCE_IN_PROGRESS,
        "RebalanceInProgressException",
        "client.commit.rebalance_in_progress",
    ),
    (ErrorCode.UNKNOWN_MEMBER_ID, "CommitFailedException", "client.commit.reset_generation"),
    (ErrorCode.ILLEGAL_GENERATION, "CommitFailedException", "client.commit.reset_generation"),
    (ErrorCode.FENCED_INSTANCE_ID, "FencedInstanceIdException", "client.commit.fenced"),
]


@pytest.mark.parametrize(("error", "kind", "rule"), COMMIT_ERRORS)
@pytest.mark.parametrize("cooperative", [False, True])
def test_commit_error_responses(error, kind, rule, cooperative):
    d = ConsumerDriver(static=True, cooperative=cooperative).stable()
    d.step(CommitRequested(((T0, 1),)))
    out = d.commit_response(error)
    assert error_kinds(out) == [kind] and rule in out.rules
    generation = d.state.generation
    if error is ErrorCode.REBALANCE_IN_PROGRESS:
        assert generation.generation_id == 1 and phase(d.state) is ConsumerPhase.REJOIN_NEEDED
    if error is ErrorCode.UNKNOWN_MEMBER_ID:
        assert generation.member_id == "" and generation.generation_id == -1
    if error is ErrorCode.ILLEGAL_GENERATION:
        assert generation.member_id == "m1" and generation.generation_id == -1
    if rule == "client.commit.coordinator_lost":
        assert not d.state.coordinator_known
    if error is ErrorCode.FENCED_INSTANCE_ID:
        assert phase(d.state) is ConsumerPhase.FATAL


@pytest.mark.parametrize(
    ("error", "rule"),
    [
        (ErrorCode.ILLEGAL_GENERATION, "client.commit.stale_generation_rebalancing"),
        (ErrorCode.UNKNOWN_MEMBER_ID, "client.commit.stale_generation_rebalancing"),
        (ErrorCode.FENCED_INSTANCE_ID, "client.commit.fenced_stale"),
    ],
)
def test_stale_commit_errors_while_rejoining_are_rebalance_in_progress(error, rule):
    d = _stable_with_commit_then_rejoining(static=True)
    # Move to generation 2 and start yet another rebalance before the old commit is answered.
    d.answer_join("m1", 2, leader="other")
    d.answer_sync(error=ErrorCode.REBALANCE_IN_PROGRESS)
    d.poll_join()  # PreparingRebalance at generation 2; the commit was sent at generation 1
    out = d.commit_response(error)
    assert rule in out.rules and error_kinds(out) == ["RebalanceInProgressException"]
    assert d.state.generation.generation_id == 2


def test_stale_fenced_commit_outside_rebalance_is_commit_failed():
    d = _stable_with_commit_then_rejoining(static=True)
    d.answer_join("m1", 2, leader="other")
    out = d.commit_response(ErrorCode.FENCED_INSTANCE_ID)
    assert "client.commit.fenced_stale" in out.rules
    assert error_kinds(out) == ["CommitFailedException"]


def test_commit_response_for_other_partitions_is_refused():
    d = ConsumerDriver().stable()
    d.step(CommitRequested(((T0, 1),)))
    body = OffsetCommitResponse((OffsetCommitPartitionResponse("t", 3, ErrorCode.NONE),))
    with pytest.raises(InputError):
        d.respond(OffsetCommitRequest, body)


def test_disconnect_fails_commit_in_flight_retriably():
    d = ConsumerDriver().stable()
    d.step(CommitRequested(((T0, 1),)))
    out = d.step(Disconnected())
    assert error_kinds(out) == ["RetriableCommitFailedException"]
    assert "client.coordinator.commit_failed" in out.rules


# -- subscription and metadata changes ----------------------------------------------------------


@pytest.mark.parametrize("cooperative", [False, True])
def test_subscription_change_rejoins_and_revokes_per_protocol(cooperative):
    d = ConsumerDriver(cooperative=cooperative, topics=("t", "u"))
    d.stable(partitions=(T0, tp("u", 0)))
    out = d.step(SubscriptionChanged(("t",)))
    assert out.rules == ("client.subscription.changed",)
    assert phase(d.state) is ConsumerPhase.REJOIN_NEEDED
    request = d.poll_join()
    assert "client.poll.rejoin_subscription_changed" in d.last.rules
    if cooperative:
        assert d.last.callbacks == (PartitionsRevoked((tp("u", 0),)),)
        assert subscription_of(request).owned_partitions == (T0,)
    else:
        assert d.last.callbacks == (PartitionsRevoked((T0, tp("u", 0))),)
    assert subscription_of(request).topics == ("t",)


def test_unchanged_subscription_needs_no_rejoin():
    d = ConsumerDriver().stable()
    assert d.step(SubscriptionChanged(("t",))).rules == ("client.subscription.unchanged",)
    assert d.step(Poll()).sends == ()


def test_leader_rejoins_when_partition_count_changes():
    d = ConsumerDriver()
    d.find_coordinator()
    d.poll_join()
    d.answer_join("m1", 1)
    d.answer_sync((T0, T1, T2, T3))
    d.step(MetadataChanged(Cluster.of({"t": 4, "u": 5})))  # not the group's topic
    assert phase(d.state) is ConsumerPhase.STABLE
    d.step(MetadataChanged(Cluster.of({"t": 6, "u": 2})))
    assert phase(d.state) is ConsumerPhase.REJOIN_NEEDED
    d.poll_join()
    assert "client.poll.rejoin_metadata_changed" in d.last.rules


def test_follower_ignores_partition_count_changes():
    d = ConsumerDriver().stable()
    d.step(MetadataChanged(Cluster.of({"t": 8})))
    assert d.step(Poll()).sends == ()


# -- close ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("cooperative", "static"), KINDS)
def test_close_revokes_and_leaves_if_dynamic(cooperative, static):
    d = kinds_driver(cooperative, static).stable()
    d.step(HeartbeatDue())
    out = d.step(Close())
    assert out.callbacks == (PartitionsRevoked((T0, T1)),)
    assert len(d.leave_sent(out)) == (0 if static else 1)
    assert phase(d.state) is ConsumerPhase.CLOSED
    assert d.spec.enabled_events(d.state) == (Disconnected(),)
    with pytest.raises(ConsumerEventNotEnabledError):
        d.step(Poll())
    late = d.respond(HeartbeatRequest, HeartbeatResponse(ErrorCode.NONE))
    assert late.rules == ("client.response.ignored_after_end",)
    if not static:
        out = d.respond(LeaveGroupRequest, LeaveGroupResponse(ErrorCode.NONE))
        assert out.rules == ("client.response.ignored_after_end",)


def test_close_mid_rebalance_loses_partitions():
    d = ConsumerDriver(cooperative=True).stable()
    d.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    d.poll_join()
    out = d.step(Close())
    assert out.callbacks == (PartitionsLost((T0, T1)),)
    assert "client.close.partitions_lost" in out.rules


def test_close_after_fatal_error_is_allowed():
    d = _in_sync()
    d.answer_sync(error=ErrorCode.UNKNOWN_SERVER_ERROR)
    out = d.step(Close())
    assert phase(d.state) is ConsumerPhase.CLOSED and len(d.leave_sent(out)) == 1


@pytest.mark.parametrize("error", [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID])
def test_leave_group_response_changes_nothing(error):
    d = ConsumerDriver().stable()
    d.step(PollTimeoutExpired())
    before = d.state
    out = d.respond(LeaveGroupRequest, LeaveGroupResponse(error))
    acknowledged = error is ErrorCode.NONE
    assert out.rules == (
        ("client.leave.acknowledged",) if acknowledged else ("client.leave.error_ignored",)
    )
    assert d.state == before.without_request(d.sent(LeaveGroupRequest).correlation_id)


def test_unjoined_member_closes_without_leaving():
    d = ConsumerDriver()
    d.find_coordinator()
    out = d.step(Close())
    assert "client.leave.skipped_not_member" in out.rules and out.sends == ()


# -- connection loss and refused inputs ----------------------------------------------------------


@pytest.mark.parametrize("cooperative", [False, True])
def test_disconnect_during_join_rediscovers_and_rejoins_with_generation(cooperative):
    d = ConsumerDriver(cooperative=cooperative).stable()
    d.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    d.poll_join()
    out = d.step(Disconnected())
    assert "client.coordinator.disconnected" in out.rules and d.state.in_flight == ()
    assert "client.coordinator.join_future_failed" in out.rules
    d.find_coordinator()
    request = d.poll_join()
    assert request.member_id == "m1" and subscription_of(request).generation == 1
    assert d.last.callbacks == ()  # onJoinPrepare already ran for this rebalance


def test_disconnect_needs_a_connection():
    d = ConsumerDriver()
    assert not d.spec.is_enabled(d.state, Disconnected())
    with pytest.raises(ConsumerEventNotEnabledError):
        d.step(Disconnected())


def test_responses_must_match_a_request_in_flight():
    d = ConsumerDriver()
    with pytest.raises(ConsumerEventNotEnabledError, match="correlation id 9"):
        d.step(ResponseReceived(9, HeartbeatResponse(ErrorCode.NONE)))
    d.step(Poll())
    with pytest.raises(InputError, match="FindCoordinator"):
        d.step(ResponseReceived(1, HeartbeatResponse(ErrorCode.NONE)))


def test_bad_application_inputs_are_refused():
    d = ConsumerDriver()
    with pytest.raises(InputError):
        d.step(SubscriptionChanged(()))
    with pytest.raises(InputError):
        d.step(MetadataChanged({"t": 1}))
    with pytest.raises(InputError):
        d.spec.step(d.state, "poll")


def test_poll_waits_while_a_join_is_in_flight():
    d = ConsumerDriver(cooperative=True).stable()
    d.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    d.poll_join()
    out = d.step(Poll())
    assert out.rules == ("client.poll.join_in_flight",) and out.sends == ()


# -- catalog ---------------------------------------------------------------------------------


def test_consumer_rule_catalog_matches_the_code():
    ids = [rule.rule_id for rule in CONSUMER_RULES]
    assert len(ids) == len(set(ids))
    assert set(rule_places(CONSUMER_SIDE)) == CONSUMER_RULE_IDS
