"""Random walks over any model: reproducible by seed, same properties as the exhaustive check."""

import json

from test_exploration_engine import CountToThree

from groupspec.checker.derived import invariant_problems, invariants
from groupspec.checker.replay import follow
from groupspec.checker.walk import random_walks
from groupspec.cli.main import main
from groupspec.models.preset_models import load_model
from groupspec.models.two_phase import TwoPhaseModel


def test_same_seed_same_walks():
    model = TwoPhaseModel(4)
    first = random_walks(model, seed=3, runs=5, steps=30)
    again = random_walks(model, seed=3, runs=5, steps=30)
    assert (first.steps, first.distinct_states, first.action_counts) == (
        again.steps,
        again.distinct_states,
        again.action_counts,
    )
    other = random_walks(model, seed=4, runs=5, steps=30)
    assert other.action_counts != first.action_counts


def test_walks_find_a_seeded_bug_with_a_replayable_trace():
    model = TwoPhaseModel(3, tm_commits_early=True)
    report = random_walks(model, seed=1, runs=200, steps=20)
    violation = report.violations[0]
    assert violation.property_name == "Consistent"
    _, steps = follow(model, violation.trace)
    assert invariant_problems(model, invariants(model)[1], steps[-1].state)


def test_walks_detect_deadlocks():
    report = random_walks(CountToThree(three_is_final=False), seed=1, runs=1, steps=10)
    assert [v.kind for v in report.violations] == ["deadlock"]
    assert report.violations[0].trace == ("inc", "inc", "inc")
    assert (
        random_walks(CountToThree(three_is_final=True), seed=1, runs=1, steps=10).violations == []
    )


def test_group_presets_walk_beyond_exhaustive_bounds(tmp_path, capsys):
    loaded = load_model("eager-2", {"max_generation": "4", "commits": "2"})
    report = random_walks(loaded.model, seed=7, runs=5, steps=200)
    assert report.violations == []
    assert report.steps > 100
    out = tmp_path / "walk.json"
    code = main(
        ["simulate", "eager-2", "--runs", "3", "--steps", "50", "--quiet", "--json", str(out)]
    )
    assert code == 0
    assert json.loads(out.read_text())["presets"]["eager-2"]["walks"] == 3
    assert main(["simulate", "eager-2", "--set", "max_generation=x", "--quiet"]) == 2
    assert "--set max_generation" in capsys.readouterr().err
