"""GroupMaxSize: Convergence lets a consumer turned away by group.max.size go, so the world must
also check that the coordinator turned it away only when the group was full."""

import pytest

from groupspec.checker.bfs import search
from groupspec.models.preset_models import load_model
from groupspec.spec import join
from groupspec.vocabulary.group_state import DEAD, EMPTY, PREPARING_REBALANCE


def _turn_everyone_away(config, group, member_id):
    """`accept_joining_member` as the mutant the campaign found surviving has it (its last
    `<` became `is`): a Stable or CompletingRebalance group that is not full refuses a new
    member."""
    if group.state in (EMPTY, DEAD):
        return True
    member = group.member(member_id)
    if group.state is PREPARING_REBALANCE:
        return (member is not None and member.is_awaiting_join) or (
            group.num_awaiting_join() < config.group_max_size
        )
    return member is not None or len(group.members) is config.group_max_size


def test_a_coordinator_that_turns_members_away_from_a_group_not_full_is_caught(monkeypatch):
    monkeypatch.setattr(join, "accept_joining_member", _turn_everyone_away)
    result = search(load_model("eager-2", {"commits": "0"}).model)
    assert result.problems, "every consumer turned away, and no property said so"
    assert result.problems[0].problem.property_name == "GroupMaxSize"
    assert "GROUP_MAX_SIZE_REACHED while the group held 1 of at most" in (
        result.problems[0].problem.detail
    )


@pytest.mark.parametrize("preset", ["limits-2"])
def test_a_full_group_may_still_turn_members_away(preset):
    result = search(load_model(preset).model)
    assert not result.problems
