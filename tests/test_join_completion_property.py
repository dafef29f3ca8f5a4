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
