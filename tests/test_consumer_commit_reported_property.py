"""ConsumerCommitAnswerReported: a consumer that raised an accepted commit to the application as
an error, and confirmed nothing, passed every property (a surviving mutant of the campaign with
infection probes turned `error_code is not NONE` into `error_code <= NONE`, so a success took
the error path); the consumer's steps are now checked for it."""

from groupspec.checker.bfs import search
from groupspec.models.preset_models import load_model
from groupspec.spec.consumer import commit, machine
from groupspec.spec.consumer.state import RequestKind
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import TopicPartition


def _every_answer_is_an_error(ctx, state, sent, body):
    """`commit.on_offset_commit_response` as the surviving mutant has it."""
    for partition in body.partitions:
        if partition.error_code <= ErrorCode.NONE or partition.error_code is not ErrorCode.NONE:
            return commit._on_commit_error(ctx, state, sent, partition.error_code)
    return state


def _refusals_confirmed(ctx, state, sent, body):
    """A handler that raises a refusal and still confirms the partitions."""
    ctx.effects.committed.extend(TopicPartition(p.topic, p.partition) for p in body.partitions)
    return commit.on_offset_commit_response(ctx, state, sent, body)


def _first_problem(monkeypatch, handler, preset):
    handlers = dict(machine._RESPONSE_HANDLERS)
    body_type, _ = handlers[RequestKind.OFFSET_COMMIT]
    handlers[RequestKind.OFFSET_COMMIT] = (body_type, handler)
    monkeypatch.setattr(machine, "_RESPONSE_HANDLERS", handlers)
    result = search(load_model(preset).model)
    assert result.problems, "the consumer misreported a commit's answer and no property said so"
    return result.problems[0].problem


def test_an_accepted_commit_raised_as_an_error_is_caught(monkeypatch):
    problem = _first_problem(monkeypatch, _every_answer_is_an_error, "retention-1")
    assert problem.property_name == "ConsumerCommitAnswerReported"
    assert "an accepted commit" in problem.detail


def test_a_refused_commit_confirmed_is_caught(monkeypatch):
    problem = _first_problem(monkeypatch, _refusals_confirmed, "retention-1")
    assert problem.property_name == "ConsumerCommitAnswerReported"
    assert "a refused commit confirmed" in problem.detail
