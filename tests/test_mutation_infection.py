"""Weak mutation (mutation/infection.py): a survivor is probed for whether its mutated
expression ever computes another value in the presets' runs.

Mutants are picked by the source line they change (tests/test_mutation.py's `pick`), so an edit
elsewhere in a module does not move them. retention-1, the cheapest reference preset, judges.
"""

import ast

import pytest
from test_mutation import pick, spec_digest

from groupspec.mutation.baseline import measure_baseline
from groupspec.mutation.campaign import SURVIVED, Budget, judge
from groupspec.mutation.infection import (
    INFECTED,
    NO_PROBE,
    NOT_INFECTED,
    infection,
    probe_source,
)
from groupspec.mutation.mutant_run import PresetBudget
from groupspec.mutation.mutants import UnknownMutantError, generate_mutants, pick_mutants

RETENTION = (PresetBudget("retention-1", max_seconds=600.0),)


@pytest.fixture(scope="module")
def mutants():
    return generate_mutants(modules=["sync.py", "leave.py", "state.py"]).runnable


def test_an_identity_test_swapped_for_equality_on_an_enum_is_not_infected(mutants):
    before = spec_digest()
    same = pick(
        mutants, "sync.py", "if group.state is DEAD:", "core/ReplaceComparisonOperator_Is_Eq"
    )
    found = infection(same, RETENTION, deadline_s=600.0)
    assert found.verdict == NOT_INFECTED and not found.counts_as_infected
    assert spec_digest() == before, "a probe wrote to the worktree's spec/"


def test_an_ordering_of_enum_members_raises_and_is_infected(mutants):
    other = pick(
        mutants, "sync.py", "if group.state is DEAD:", "core/ReplaceComparisonOperator_Is_Gt"
    )
    found = infection(other, RETENTION, deadline_s=600.0)
    assert found.verdict == INFECTED and found.counts_as_infected
    assert "TypeError" in found.detail


def test_a_loop_made_to_run_zero_times_is_infected_when_it_had_work(mutants):
    # retention-1's consumer leaves: LeaveGroup names one member, so the loop runs.
    loop = pick(
        mutants, "leave.py", "for identity in request.members:", "core/ZeroIterationForLoop"
    )
    found = infection(loop, RETENTION, deadline_s=600.0)
    assert found.verdict == INFECTED and "runs 1 times" in found.detail


def test_a_removed_decorator_has_no_probe_and_counts_as_infected(mutants):
    removed = next(m for m in mutants if m.operator == "core/RemoveDecorator")
    assert probe_source(removed) is None
    found = infection(removed, RETENTION, deadline_s=600.0)
    assert found.verdict == NO_PROBE and found.counts_as_infected


def test_the_probe_keeps_the_original_value_and_evaluates_both(mutants):
    same = pick(
        mutants, "sync.py", "if group.state is DEAD:", "core/ReplaceComparisonOperator_Is_Eq"
    )
    text = probe_source(same)
    assert text is not None
    tree = ast.parse(text)
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "__groupspec_weak_probe__"
    ]
    assert len(calls) == 1
    original, mutated, _ = calls[0].args
    assert ast.unparse(original) == "lambda: group.state is DEAD"
    assert ast.unparse(mutated) == "lambda: group.state == DEAD"


def test_the_campaign_probes_survivors_whose_code_runs(mutants):
    baseline = measure_baseline(["retention-1"])
    same = pick(
        mutants, "sync.py", "if group.state is DEAD:", "core/ReplaceComparisonOperator_Is_Eq"
    )
    result = judge(same, baseline, Budget(), probe_survivors=True)
    assert result.kind == SURVIVED and result.infection is not None
    assert result.infection.verdict == NOT_INFECTED
    unprobed = judge(same, baseline, Budget())
    assert unprobed.infection is None


def test_mutants_are_named_again_by_their_ident(mutants):
    chosen = pick_mutants(mutants, [mutants[3].ident, mutants[1].ident, mutants[3].ident])
    assert chosen == (mutants[3], mutants[1])
    with pytest.raises(UnknownMutantError, match=r"sync\.py:core/Nothing:0"):
        pick_mutants(mutants, ["sync.py:core/Nothing:0"])


def _probed(text):
    tree = ast.parse(text)
    (call,) = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "__groupspec_weak_probe__"
    ]
    return ast.unparse(call.args[0]), ast.unparse(call.args[1])


def test_an_operand_of_a_call_free_condition_is_probed_with_the_whole_condition():
    leader = generate_mutants(modules=["consumer/leader.py"]).runnable
    masked = pick(
        leader,
        "consumer/leader.py",
        "if ctx.setup.protocol is RebalanceProtocol.COOPERATIVE and assignor.name != COOPERATIVE_STICKY:",
        "core/ReplaceComparisonOperator_Is_Gt",
    )
    original, mutated = _probed(probe_source(masked))
    assert original == (
        "lambda: ctx.setup.protocol is RebalanceProtocol.COOPERATIVE "
        "and assignor.name != COOPERATIVE_STICKY"
    )
    assert mutated.startswith("lambda: ctx.setup.protocol > RebalanceProtocol.COOPERATIVE and")
