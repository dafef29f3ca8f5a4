"""The mutation campaign's machinery on a few cosmic-ray mutants judged by static-2 alone.

Mutants are picked by the source line they change, not by cosmic-ray's occurrence number, so
an edit elsewhere in the module does not move them.
"""

import hashlib

import pytest

from groupspec.models.preset_models import load_model
from groupspec.mutation.baseline import measure_baseline
from groupspec.mutation.campaign import (
    CRASH,
    PROPERTY,
    SURVIVED,
    TIMEOUT,
    Budget,
    classify,
    judge,
)
from groupspec.mutation.mutant_rules import RuleLocator
from groupspec.mutation.mutant_run import PresetRecord, WorkerRun
from groupspec.mutation.mutants import (
    SPEC_DIR,
    Mutant,
    compiles,
    diff_lines,
    draw_mutants,
    generate_mutants,
)


@pytest.fixture(scope="module")
def join_mutants():
    return generate_mutants(modules=["join.py", "assignors/roundrobin.py"])


@pytest.fixture(scope="module")
def baseline():
    return measure_baseline(["static-2"], workers=2)


def pick(mutants, module, source_line, operator, after=""):
    """The mutant by `operator` of the first line reading `source_line` after the line `after`."""
    lines = [line.strip() for line in (SPEC_DIR / module).read_text(encoding="utf-8").splitlines()]
    start = lines.index(after) if after else 0
    line = lines.index(source_line, start) + 1
    found = [m for m in mutants if (m.module, m.operator, m.start_line) == (module, operator, line)]
    assert len(found) == 1, f"{module}: {operator} on {source_line!r}: {found}"
    return found[0]


def spec_digest():
    digest = hashlib.sha256()
    for path in sorted(SPEC_DIR.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def test_killed_by_a_property_by_a_crash_and_survivors(join_mutants, baseline):
    before = spec_digest()
    runnable = join_mutants.runnable
    leader = pick(
        runnable,
        "join.py",
        "if group.leader_id is None:",
        "core/ReplaceComparisonOperator_Is_IsNot",
    )
    assert diff_lines(leader) == (
        "- if group.leader_id is None:",
        "+ if group.leader_id is not None:",
    )
    killed = judge(leader, baseline, Budget())
    assert (killed.kind, killed.killer) == (PROPERTY, "static-2")
    assert killed.detail == "TypeOK"

    asserted = pick(
        runnable, "join.py", "assert old is not None", "core/ReplaceComparisonOperator_IsNot_Is"
    )
    crashed = judge(asserted, baseline, Budget())
    assert (crashed.kind, crashed.killer) == (CRASH, "static-2")
    assert crashed.detail.startswith("AssertionError")

    # Whether the replaced static member's join used the new member id: static-2 passes it.
    flag = pick(
        runnable,
        "join.py",
        "return group, True",
        "core/ReplaceTrueWithFalse",
        after="step.fire(JOIN_STATIC_MEMBER_REPLACED)",
    )
    survived = judge(flag, baseline, Budget())
    assert (survived.kind, survived.checked_by) == (SURVIVED, ("static-2",))

    # static-2 uses the range assignor: no check runs roundrobin's code.
    modulo = pick(
        runnable,
        "assignors/roundrobin.py",
        "turn = (turn + 1) % len(members)",
        "core/ReplaceBinaryOperator_Mod_Mul",
    )
    unrun = judge(modulo, baseline, Budget())
    assert (unrun.kind, unrun.checked_by, unrun.seconds) == (SURVIVED, (), 0.0)
    assert spec_digest() == before, "a mutant run wrote to the worktree's spec/"


def test_annotations_and_stillborn_mutants_are_set_apart(join_mutants):
    lines = (SPEC_DIR / "join.py").read_text(encoding="utf-8").splitlines()
    assert join_mutants.in_annotations
    for mutant in join_mutants.in_annotations:
        assert mutant.module == "join.py" or mutant.module == "assignors/roundrobin.py"
    assert not any(m in join_mutants.runnable for m in join_mutants.in_annotations)
    # cosmic-ray reads a keyword-only marker `*` as a multiplication and swaps it.
    stillborn = [
        m
        for m in join_mutants.runnable
        if m.module == "join.py"
        and m.operator == "core/ReplaceBinaryOperator_Mul_Add"
        and "*, " in lines[m.start_line - 1]
    ]
    assert stillborn and not any(compiles(m) for m in stillborn)
    draw = draw_mutants(join_mutants.runnable, 8, seed=3)
    assert len(draw.mutants) == 8 and all(compiles(m) for m in draw.mutants)
    assert draw == draw_mutants(join_mutants.runnable, 8, seed=3)
    assert draw.mutants != draw_mutants(join_mutants.runnable, 8, seed=4).mutants


def test_timeouts_and_dead_workers_are_classified(baseline):
    mutant = Mutant(
        module="join.py",
        operator="core/AddNot",
        occurrence=0,
        start_line=1,
        start_col=0,
        end_line=1,
        end_col=1,
        statement_line=1,
    )
    (preset,) = baseline.presets
    over_states = WorkerRun(
        (PresetRecord("static-2", "incomplete", 9.0, stopped_by="max_states"),), 9.0, False, 0, ""
    )
    assert classify(mutant, baseline.presets, over_states).kind == TIMEOUT
    killed_at_deadline = WorkerRun((), 40.0, True, None, "")
    result = classify(mutant, baseline.presets, killed_at_deadline)
    assert (result.kind, result.killer) == (TIMEOUT, "static-2")
    died = WorkerRun((), 1.0, False, -9, "Killed")
    assert classify(mutant, baseline.presets, died).kind == CRASH
    same = PresetRecord(
        "static-2",
        "pass",
        1.0,
        distinct_states=preset.distinct_states,
        transitions=preset.transitions,
    )
    grew = PresetRecord(
        "static-2",
        "pass",
        1.0,
        distinct_states=preset.distinct_states + 1,
        transitions=preset.transitions,
    )
    assert classify(mutant, baseline.presets, WorkerRun((same,), 1.0, False, 0, "")).changed == ()
    assert classify(mutant, baseline.presets, WorkerRun((grew,), 1.0, False, 0, "")).changed == (
        "static-2",
    )


def test_baseline_budget_and_rules(baseline):
    (preset,) = baseline.presets
    recorded = load_model("static-2").expected
    assert recorded is not None
    assert preset.name == "static-2" and preset.distinct_states == recorded.distinct_states
    assert "join.static_member_replaced" in baseline.rules_reached
    budget = Budget(factor=5, slack_s=10).for_preset(preset)
    assert budget.max_seconds == pytest.approx(5 * preset.seconds + 10)
    assert budget.max_states == 5 * preset.distinct_states + 1
    lines = (SPEC_DIR / "join.py").read_text(encoding="utf-8").splitlines()
    replaced = lines.index("            step.fire(JOIN_STATIC_MEMBER_REPLACED)") + 1
    site = RuleLocator().site("join.py", replaced + 1)
    assert "join.static_member_replaced" in site.rules
