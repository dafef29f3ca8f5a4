"""`groupspec diagram`: derived state machines, searched scenarios, sequence SVGs, freshness."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from groupspec.checker.derived import initial_states
from groupspec.cli import diagram_command
from groupspec.cli.main import main
from groupspec.diagrams.explore import Exploration, GoalNotFoundError, explore, shortest_run
from groupspec.diagrams.generate import Diagram, graphviz_outputs, rendered_version, stale_files
from groupspec.diagrams.graphs import (
    DiagramSource,
    SourceTally,
    edge_summary,
    group_hops,
    group_machine,
    legal_path,
    tally,
)
from groupspec.diagrams.render import dot_version, machine_dot
from groupspec.diagrams.scenarios import SCENARIOS, find_run, scenario_named
from groupspec.diagrams.sequence_diagram import (
    LOCAL,
    MESSAGE,
    Lane,
    PanelSection,
    SequenceDiagram,
    SequenceEvent,
    render_svg,
    validate,
)
from groupspec.models.preset_models import load_model
from groupspec.models.world_state import GROUP_ID
from groupspec.spec.consumer import phase
from groupspec.vocabulary.group_state import LEGAL_PREVIOUS_STATES, GroupState

DOCS = Path(__file__).resolve().parent.parent / "docs" / "diagrams"
GROUP_STATES = [state.value for state in GroupState]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """Every diagram, generated once by the command the docs name."""
    out = tmp_path_factory.mktemp("diagrams")
    assert main(["diagram", "--out", str(out), "--workers", "2"]) == 0
    return out


def _files(directory: Path) -> list[Diagram]:
    return [Diagram(path.name, path.read_bytes()) for path in sorted(directory.iterdir())]


# -- freshness ------------------------------------------------------------------------------


def test_committed_diagrams_are_current(generated):
    """docs/diagrams/ holds exactly what `groupspec diagram --out docs/diagrams` writes.

    The .dot sources and the sequence SVGs are compared always. Graphviz's SVGs are compared
    when the installed `dot` is the version that rendered the committed ones (layouts differ
    between Graphviz versions; their .dot sources still pin them)."""
    files = _files(generated)
    assert sorted(p.name for p in DOCS.iterdir()) == [f.name for f in files], (
        "docs/diagrams/ has missing or extra files: run `groupspec diagram`"
    )
    skip = diagram_command._other_graphviz_versions(DOCS, files)
    assert set(skip) <= set(graphviz_outputs(files))
    stale = stale_files(DOCS, files, skip=skip)
    assert not stale, f"stale diagrams {stale}: run `groupspec diagram --out docs/diagrams`"


def test_a_stale_diagram_is_detected(generated, tmp_path):
    copy = tmp_path / "diagrams"
    shutil.copytree(generated, copy)
    files = _files(generated)
    assert stale_files(copy, files) == []
    svg = copy / "sequence-startup-3.svg"
    svg.write_text(svg.read_text().replace("JoinTimerExpired", "JoinTimerFired", 1))
    (copy / "group-state-machine.dot").unlink()
    assert stale_files(copy, files) == ["group-state-machine.dot", "sequence-startup-3.svg"]
    assert diagram_command._check(copy, files, 0.0) == 1


def test_check_option_accepts_a_current_directory(generated, capsys):
    assert diagram_command._check(generated, _files(generated), 0.0) == 0
    assert "are current" in capsys.readouterr().out
    # --format dot generates no rendered SVG: only sources and sequence diagrams are compared.
    rendered = set(graphviz_outputs(_files(generated)))
    sources = [f for f in _files(generated) if f.name not in rendered]
    assert diagram_command._check(generated, sources, 0.0) == 0


def test_check_refuses_png(capsys):
    assert main(["diagram", "--check", "--format", "png"]) == 2
    assert "--check compares SVG" in capsys.readouterr().err


def test_generation_is_deterministic(generated):
    scenario = scenario_named("eager-scale-out")
    from groupspec.diagrams.generate import scenario_svg

    assert (
        scenario_svg(scenario).encode() == (generated / "sequence-eager-scale-out.svg").read_bytes()
    )


def test_rendered_svgs_name_their_graphviz_version(generated):
    version = rendered_version((generated / "group-state-machine.svg").read_bytes())
    assert version is not None and version in dot_version()
    assert rendered_version((generated / "sequence-startup-3.svg").read_bytes()) is None


# -- the group state machine ------------------------------------------------------------------


def test_group_machine_shows_every_state_and_the_reference_transitions(generated):
    """All five states; every legal transition of §1 reached but Dead -> Dead (the worlds drop
    a Dead group from memory at once), which is drawn dashed. docs/index.md says so."""
    dot = (generated / "group-state-machine.dot").read_text()
    for state in GROUP_STATES:
        assert re.search(rf"^\s*{state} \[", dot, re.M), state
    legal = {
        (source.value, target.value)
        for target, sources in LEGAL_PREVIOUS_STATES.items()
        for source in sources
    }
    for source, target in legal:
        line = next(
            line for line in dot.splitlines() if re.match(rf"\s*{source} -> {target} \[", line)
        )
        if (source, target) == ("Dead", "Dead"):
            assert "not reached" in line and "dashed" in line
        else:
            assert "not reached" not in line and "×" in line, line


def _small_tallies() -> list[SourceTally]:
    return [
        tally(DiagramSource("failover", (("clients", "1"), ("partitions", "1")))),
        tally(DiagramSource("cooperative-3", (("clients", "2"), ("max_generation", "2")))),
    ]


def test_group_machine_never_leaves_the_spec_table():
    graph = group_machine(_small_tallies())
    rows = edge_summary(graph)
    assert not [row for row in rows if row["spec"] == "illegal"]
    legal = {
        (source.value, target.value)
        for target, sources in LEGAL_PREVIOUS_STATES.items()
        for source in sources
    }
    # Every legal transition is drawn, reached or not.
    assert legal <= {(row["from"], row["to"]) for row in rows}
    unreached = {(row["from"], row["to"]) for row in rows if not row["reached"]}
    assert unreached <= legal
    counts = {(row["from"], row["to"]): row["actions"] for row in rows}
    assert counts[("Stable", "Dead")] == {"Unload": counts[("Stable", "Dead")]["Unload"]}
    assert counts[("unloaded", "loading")].keys() == {"StartLoading"}


def test_an_illegal_hop_would_be_drawn_in_red():
    fake = SourceTally(
        DiagramSource("made-up"),
        Exploration(1, 1),
        ((("Empty", "Stable", "HandleSyncGroup"), 3),),
        ("Empty",),
        (),
        (),
    )
    graph = group_machine([fake])
    (row,) = [r for r in edge_summary(graph) if (r["from"], r["to"]) == ("Empty", "Stable")]
    assert row["spec"] == "illegal"
    dot = machine_dot(graph, name="g", title="t", caption=[], node_order=list(graph.nodes))
    line = next(line for line in dot.splitlines() if "Empty -> Stable" in line)
    assert "ILLEGAL" in line and "#c0392b" in line


def test_compound_steps_are_split_into_legal_hops():
    world = load_model("eager-2", {"clients": "1", "commits": "0"}).model
    hops: Counter[tuple[tuple[str, str], ...]] = Counter()

    def visit(state, step):
        found = tuple(group_hops(world, state, step.state))
        if len(found) > 1:
            hops[found] += 1

    explore(world, visit)
    # The only member's session expires in Stable: a rebalance starts and its join phase
    # completes at once with nobody left.
    assert (("Stable", "PreparingRebalance"), ("PreparingRebalance", "Empty")) in hops
    for found in hops:
        for source, target in found:
            if source in GROUP_STATES and target in GROUP_STATES:
                assert GroupState(source) in LEGAL_PREVIOUS_STATES[GroupState(target)]


def test_legal_path_follows_the_table():
    assert legal_path(GroupState.STABLE, GroupState.EMPTY) == [
        ("Stable", "PreparingRebalance"),
        ("PreparingRebalance", "Empty"),
    ]
    assert legal_path(GroupState.DEAD, GroupState.DEAD) == []


# -- consumer machines ------------------------------------------------------------------------


def test_consumer_machines_show_the_cooperative_follow_up_rebalance(generated):
    cooperative = (generated / "consumer-cooperative.dot").read_text()
    # After SyncGroup a cooperative member that must revoke rejoins at once.
    line = next(
        line
        for line in cooperative.splitlines()
        if re.match(r'\s*"awaiting sync" -> "rejoin needed"', line)
    )
    assert "SyncGroup response NONE" in line
    # The leader rejoins when partitions are added (its metadata snapshot changed).
    line = next(
        line for line in cooperative.splitlines() if re.match(r'\s*stable -> "rejoin needed"', line)
    )
    assert "PartitionsAdded (fault)" in line
    eager = (generated / "consumer-eager.dot").read_text()
    assert "Crash (fault)" in eager
    # Each machine is derived from the presets of its protocol only.
    assert "cooperative-3" not in eager and "cooperative-3" in cooperative
    assert "eager-2" not in cooperative
    for dot in (eager, cooperative):
        assert "not reached" in dot  # fatal and closed: no world reaches them


# -- scenarios --------------------------------------------------------------------------------


def test_cooperative_scale_out_revokes_before_it_reassigns():
    found = find_run(scenario_named("cooperative-scale-out"))
    generations = []
    owners: dict[str, set[int]] = {}
    for step in found.run.steps:
        group = step.state.coordinator.group(GROUP_ID)
        if group is not None and group.generation_id not in generations:
            generations.append(group.generation_id)
        current = {}
        for index, slot in enumerate(step.state.clients):
            for partition in slot.consumer.owned:
                current.setdefault(str(partition), set()).add(index)
        for partition, holders in current.items():
            assert len(holders) == 1, f"{partition} owned twice after {step.label}"
        for partition, holders in current.items():
            owners.setdefault(partition, set()).update(holders)
    assert generations == [0, 1, 2, 3]
    assert any(len(holders) == 2 for holders in owners.values())  # a partition moved
    assert len(found.milestone_steps) == 2
    final = found.run.final
    assert all(phase(slot.consumer).value == "stable" for slot in final.clients)


def test_static_restart_keeps_the_generation():
    found = find_run(scenario_named("static-restart"))
    labels = [step.label for step in found.run.steps]
    assert "fault c1 crashes and restarts" in labels or "fault c2 crashes and restarts" in labels
    assert found.run.final.coordinator.group(GROUP_ID).generation_id == 1
    assert found.run.final.budgets.crashes == 0


def test_every_scenario_reaches_its_milestones_in_order(generated):
    for scenario in SCENARIOS:
        svg = (generated / f"sequence-{scenario.name}.svg").read_text()
        assert svg.count("milestone ") >= len(scenario.milestones)
        for number in range(1, len(scenario.milestones) + 1):
            assert f"milestone {number} reached" in svg


def test_shortest_run_is_shortest_and_fails_cleanly():
    model = load_model("two-phase").model

    def committed(state, step):
        return any(rm.state == "committed" for rm in step.state.rms)

    (start,) = initial_states(model)
    run = shortest_run(model, start, committed)
    # Three RMs prepare, the TM hears all three, commits, and one RM receives it.
    assert len(run.steps) == 8
    assert run.steps[-1].action == "RMRcvCommitMsg"
    with pytest.raises(GoalNotFoundError):
        shortest_run(
            model,
            start,
            committed,
            allowed=lambda step: step.action != "TMCommit",
        )


# -- sequence diagrams ------------------------------------------------------------------------


def _diagram(**changes) -> SequenceDiagram:
    events = (
        SequenceEvent(LOCAL, 1, "Poll", ("a", "b"), annotation="▸ joining"),
        SequenceEvent(MESSAGE, 0, "JoinGroup #1", ("c", "b"), origin=1, annotation="▸ Empty"),
    )
    base = SequenceDiagram("t", ("sub",), (Lane("coordinator"), Lane("c1")), ("x", "y"), events)
    from dataclasses import replace

    return replace(base, **changes)


def test_sequence_svg_is_deterministic_and_escapes_text():
    diagram = _diagram(outcome="invariant <X> violated")
    assert render_svg(diagram) == render_svg(diagram)
    svg = render_svg(diagram)
    assert "invariant &lt;X&gt; violated" in svg
    assert 'marker-end="url(#arrow)"' in svg


def test_sequence_marks_and_cycles_add_bands():
    plain = render_svg(_diagram())
    marked = render_svg(_diagram(marks=((0, "milestone 1 reached"),), cycle_start=1))
    assert "milestone 1 reached" in marked and "repeat forever" in marked
    height = re.compile(r'height="(\d+)" viewBox')
    assert int(height.search(marked).group(1)) > int(height.search(plain).group(1))


def test_sequence_validation_rejects_a_message_without_sender():
    bad = _diagram(events=(SequenceEvent(MESSAGE, 0, "x", ("a", "b")),))
    with pytest.raises(ValueError, match="origin"):
        validate(bad)


# -- check --diagram ----------------------------------------------------------------------------


def test_check_writes_the_counterexample_as_a_sequence_diagram(tmp_path, capsys):
    out = tmp_path / "ce.svg"
    assert (
        main(
            [
                "check",
                "two-phase",
                "--set",
                "tm_commits_early=true",
                "--quiet",
                "--diagram",
                str(out),
            ]
        )
        == 1
    )
    svg = out.read_text()
    assert "RMChooseToAbort(rm2)" in svg and "invariant Consistent violated" in svg
    assert main(["check", "two-phase", "--quiet", "--diagram", str(tmp_path / "none.svg")]) == 0
    assert not (tmp_path / "none.svg").exists()
    assert "no counterexample" in capsys.readouterr().err


def test_check_draws_a_group_world_counterexample_with_lifelines(tmp_path):
    out = tmp_path / "kip429.svg"
    code = main(
        [
            "check",
            "cooperative-3",
            "--set",
            "clients=2",
            "--fault",
            "KIP-429",
            "--no-liveness",
            "--quiet",
            "--diagram",
            str(out),
        ]
    )
    assert code == 1
    svg = out.read_text()
    for lane in ("coordinator", "c1", "c2"):
        assert f">{lane}</text>" in svg
    assert "CooperativeRevokeBeforeAssign violated" in svg
    assert svg.count("<circle") >= 5  # client-local steps (polls, heartbeats)
    # The failing step is marked, and the state the property judges is drawn below: the
    # members' claims, which no message label shows.
    assert ">✗ 26</text>" in svg
    assert "what CooperativeRevokeBeforeAssign judges, after step 26" in svg
    assert ">claims: t-0, t-1</text>" in svg


def test_a_failing_step_and_the_state_read_are_drawn():
    panel = (PanelSection("c1", ((0, "owned: t-0", True), (0, "generation: 2", False))),)
    diagram = _diagram(failing_step=2, panel_title="what X reads, after step 2:", panel=panel)
    svg = render_svg(diagram)
    assert ">✗ 2</text>" in svg and ">1</text>" in svg
    assert 'fill="#c0392b" font-weight="bold">owned: t-0</text>' in svg  # changed: bold red
    assert 'fill="#222222" font-weight="normal">generation: 2</text>' in svg
    with pytest.raises(ValueError, match="failing step 3"):
        validate(_diagram(failing_step=3))


def test_an_interactive_diagram_has_a_clickable_group_per_step():
    svg = render_svg(_diagram(), interactive=True)
    assert re.findall(r'<g class="step" data-step="(\d+)">', svg) == ["0", "1", "2"]
    assert 'class="step"' not in render_svg(_diagram())


def test_check_draws_a_liveness_counterexample(tmp_path):
    out = tmp_path / "k12890.svg"
    code = main(
        [
            "check",
            "eager-2",
            "--fault",
            "KAFKA-12890",
            "--set",
            "evictions=0",
            "--set",
            "commits=0",
            "--quiet",
            "--diagram",
            str(out),
        ]
    )
    assert code == 1
    svg = out.read_text()
    assert "liveness Convergence violated" in svg
    assert "is never sent" in svg  # the fault that leaves the group stuck


def test_check_rejects_a_diagram_in_a_missing_directory(tmp_path, capsys):
    missing = tmp_path / "nope" / "x.svg"
    assert main(["check", "two-phase", "--diagram", str(missing)]) == 2
    assert "--diagram: directory" in capsys.readouterr().err


def test_the_catalog_counterexamples_are_drawn(generated):
    from groupspec.diagrams.generate import COUNTEREXAMPLE_BUGS
    from groupspec.models.bugs import bug_named

    for name in COUNTEREXAMPLE_BUGS:
        svg = (generated / f"counterexample-{name}.svg").read_text()
        assert f"{bug_named(name).property_name} violated" in svg
        assert f"--fault {name}" in svg
