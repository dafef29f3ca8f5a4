"""ConsumerClosedIsFinal: a consumer that went on handling answers after close() passed every
property (a surviving mutant of the mutation campaign took `_on_response`'s `or` for `and`, so
only a consumer both closed and failed ignored late answers); the consumer's steps are now
checked for it."""

from groupspec.checker.bfs import search
from groupspec.models.preset_models import load_model
from groupspec.spec.consumer import machine
from groupspec.spec.consumer.rules import CLIENT_RESPONSE_IGNORED_AFTER_END


def _handles_answers_after_close(ctx, state, event):
    """`machine._on_response` as the surviving mutant has it (`or` became `and`)."""
    sent = state.request(event.correlation_id)
    state = state.without_request(event.correlation_id)
    if state.closed and state.failure is not None:
        ctx.fire(CLIENT_RESPONSE_IGNORED_AFTER_END)
        return state
    _, handler = machine._RESPONSE_HANDLERS[sent.kind]
    return handler(ctx, state, sent, event.body)


def test_a_consumer_that_handles_answers_after_close_is_caught(monkeypatch):
    monkeypatch.setattr(machine, "_on_response", _handles_answers_after_close)
    result = search(load_model("retention-1").model)
    assert result.problems, "a closed consumer acted on a late answer, and no property said so"
    problem = result.problems[0].problem
    assert problem.property_name == "ConsumerClosedIsFinal"
    assert "closed consumer went from" in problem.detail
