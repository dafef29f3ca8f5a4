"""upgrade-2: a rolling upgrade half-way, two members offering different protocol lists. The
hand-written fault `protocol-not-supported-by-all` (mutation/faults.py: the protocol vote
counts protocols some member does not support) passed every reference preset, since none had
members whose lists differ; on upgrade-2 the Refinement property sees a generation run a
protocol one member lacks.

Its two generations also show which protocol each member follows: Kafka's consumer follows the
highest protocol every one of its assignors supports (EAGER for cooperative-sticky with range),
and one that followed its first assignor's COOPERATIVE would, as leader, run range under the
cooperative rules and fail with IllegalStateException, which NoConsumerInternalError reports.
"""

from groupspec.checker.bfs import search
from groupspec.models.preset_models import load_model
from groupspec.spec.assignment import RebalanceProtocol
from groupspec.spec.assignors.base import Assignor
from groupspec.spec.consumer import machine
from groupspec.spec.state import Group


def _every_protocol_offered(group: Group) -> frozenset[str]:
    """`Group.candidate_protocols` as the fault has it: any member's protocols, not all's."""
    return frozenset(group.supported_protocol_counts())


def test_the_members_offer_different_protocol_lists_and_the_group_runs_range():
    model = load_model("upgrade-2", {}).model
    assert model.parameters.assignors_of(0) != model.parameters.assignors_of(1)
    assert not search(model).problems


def _first_violation(unseen: str) -> tuple[str, str]:
    """The property upgrade-2's check finds violated first, and its detail."""
    result = search(load_model("upgrade-2", {}).model)
    assert result.problems, unseen
    problem = result.problems[0].problem
    return problem.property_name, problem.detail


def test_a_vote_among_protocols_some_member_lacks_is_caught(monkeypatch):
    monkeypatch.setattr(Group, "candidate_protocols", _every_protocol_offered)
    name, detail = _first_violation("a generation ran a protocol one member does not support")
    assert name == "Refinement"
    assert "which not every member supports" in detail


def _first_assignors_best(assignors: tuple[Assignor, ...]) -> RebalanceProtocol:
    """The cosmic-ray survivor's protocol selection: the first assignor's highest protocol."""
    return max(assignors[0].supported_protocols)


def test_a_consumer_following_only_its_first_assignors_protocol_is_caught(monkeypatch):
    monkeypatch.setattr(machine, "select_rebalance_protocol", _first_assignors_best)
    name, detail = _first_violation("an upgraded member followed COOPERATIVE with range")
    assert name == "NoConsumerInternalError"
    assert "IllegalStateException on JoinGroup" in detail
