"""The foreign_answers fault: answers another broker may give, and the consumer's rules for them."""

from groupspec.checker.bfs import search
from groupspec.models.foreign_answers import failed_by_foreign_answer, foreign_answers
from groupspec.models.presets import load_preset
from groupspec.spec.consumer.outcome import ApplicationError, fatal
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.responses import (
    HeartbeatResponse,
    JoinGroupResponse,
    JoinGroupResponseMember,
    SyncGroupResponse,
)

CONSUMER_RULES_OF_FOREIGN_ANSWERS = (
    "client.discovery.fatal",
    "client.join.unexpected_error",
    "client.join.inconsistent_protocol_type",
    "client.leader.unknown_assignor",
    "client.leader.subscription_undecodable",
    "client.sync.unexpected_error",
    "client.sync.fatal_error",
    "client.sync.inconsistent_protocol",
    "client.sync.assignment_undecodable",
    "client.sync.assignment_too_short",
    "client.heartbeat.failed_retry",
    "client.commit.rebalance_in_progress",
)


def test_only_successes_are_replaced_and_each_answer_differs_from_the_original():
    leader = JoinGroupResponse(
        ErrorCode.NONE,
        member_id="m",
        generation_id=1,
        protocol_type="consumer",
        protocol_name="range",
        leader="m",
        members=(JoinGroupResponseMember("m", None, b"\x00\x01"),),
    )
    answers = foreign_answers(leader)
    assert len(answers) == 4 and leader not in answers
    assert len(foreign_answers(SyncGroupResponse(ErrorCode.NONE, assignment=b"\x00\x01"))) == 5
    assert foreign_answers(HeartbeatResponse(ErrorCode.REBALANCE_IN_PROGRESS)) == ()


def test_a_fencing_is_never_taken_for_a_foreign_answer():
    # The coordinator itself fences static members: such a failure must keep counting against
    # Convergence (the static-failover finding depends on it).
    fenced = fatal("SyncGroup", ErrorCode.FENCED_INSTANCE_ID, "FencedInstanceIdException")
    assert not failed_by_foreign_answer(fenced)
    assert not failed_by_foreign_answer(None)
    assert failed_by_foreign_answer(ApplicationError("SchemaException", "SyncGroup"))
    authorization = fatal("SyncGroup", ErrorCode.GROUP_AUTHORIZATION_FAILED)
    assert failed_by_foreign_answer(authorization)


def test_foreign_answers_reach_the_consumer_rules_and_the_group_still_converges():
    result = search(load_preset("foreign-1", {"closes": "0", "session_timeouts": "0"}))
    assert result.complete and result.verdict == "pass", result.problems
    for rule_id in CONSUMER_RULES_OF_FOREIGN_ANSWERS:
        assert result.rule_counts[rule_id] > 0, rule_id
    plain = search(load_preset("foreign-1", {"foreign_answers": "0"}))
    assert not any(plain.rule_counts[rule_id] for rule_id in CONSUMER_RULES_OF_FOREIGN_ANSWERS)
