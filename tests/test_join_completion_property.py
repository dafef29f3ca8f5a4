"""JoinCompletion: a coordinator that keeps a dynamic member that had not rejoined when the join
phase completes passed every other property (a surviving mutant of the mutation campaign
inverted `Member.is_static`); the world now checks each completed join. That static members
keep their place through a join they missed is every static preset's check passing (static-2's
in tests/test_exploration_engine.py)."""

from groupspec.checker.bfs import search
from groupspec.models.preset_models import load_model
from groupspec.spec.state import Member


def _instance_less_is_static(member: Member) -> bool:
    """`Member.is_static` as the surviving mutant has it (`is not` became `is`)."""
    return member.group_instance_id is None


def test_a_join_that_keeps_a_dynamic_laggard_is_caught(monkeypatch):
    monkeypatch.setattr(Member, "is_static", property(_instance_less_is_static))
    result = search(load_model("eager-2", {"commits": "0"}).model)
    assert result.problems, "a dynamic member that never rejoined stayed, and no property said so"
    problem = result.problems[0].problem
    assert problem.property_name == "JoinCompletion"
    assert "completed its join keeping dynamic member" in problem.detail


def test_a_join_completed_with_a_leader_that_had_not_rejoined_is_caught(monkeypatch):
    # The hand-written fault `leader-not-rejoined-kept` (mutation/faults.py): a static leader
    # that missed the join stays leader, gets no JoinGroup response, and nobody assigns. No
    # property saw it until JoinCompletion read the new generation's leader.
    from groupspec.spec import rebalance

    def elect_keeping_the_leader(step, group):
        if group.leader_id is None:
            return group, False
        if group.member(group.leader_id) is not None:
            return group, True
        return original(step, group)

    original = rebalance.elect_joined_leader
    monkeypatch.setattr(rebalance, "elect_joined_leader", elect_keeping_the_leader)
    result = search(load_model("static-2", {}).model)
    assert result.problems, "a leader that had not rejoined led the new generation unseen"
    problem = result.problems[0].problem
    assert problem.property_name == "JoinCompletion"
    assert "with leader" in problem.detail and "which had not rejoined" in problem.detail
