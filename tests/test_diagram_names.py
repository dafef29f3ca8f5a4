"""Diagrams tell the story a person would see: the actual leader, distinct member ids, and
titles that the drawn run bears out (whatever the checker's canonical forms)."""

from __future__ import annotations

import re

from groupspec.checker.bfs import search
from groupspec.checker.counterexample import reconstruct_lasso
from groupspec.checker.liveness import check_liveness
from groupspec.checker.views import ModelView
from groupspec.diagrams.explore import explore
from groupspec.diagrams.generate import scenario_diagram
from groupspec.diagrams.graphs import group_node
from groupspec.diagrams.scenarios import scenario_named
from groupspec.diagrams.sequence_diagram import FAULT, MESSAGE, SequenceDiagram
from groupspec.diagrams.sequence_events import counterexample_diagram
from groupspec.models.bugs import bug_named
from groupspec.models.preset_models import load_model
from groupspec.spec.consumer import ConsumerPhase, phase

LEADER = re.compile(r"^JoinGroup\(NONE, .*member=([^,]+), leader=\1[,)]")
MEMBER = re.compile(r"^JoinGroup\(NONE, .*member=([^,]+),")


def _catalog_diagram(name: str) -> SequenceDiagram:
    bug = bug_named(name)
    loaded = load_model(bug.preset, bug.all_overrides())
    result = search(loaded.model)
    diagram = counterexample_diagram(loaded.model, result, title=name)
    assert diagram is not None
    return diagram


def test_the_kip_429_footer_names_the_client_that_leads_in_the_drawn_run():
    """Under symmetry the search judged a state whose slots were swapped; the footer must
    still name the client the picture shows as leader."""
    diagram = _catalog_diagram("KIP-429")
    leaders = [
        event.lane
        for event in diagram.events
        if event.kind == MESSAGE and event.origin == 0 and LEADER.match(event.text)
    ]
    assert leaders, "the drawn run shows no leader"
    leader = diagram.lanes[leaders[-1]].name
    assert f"violated: {leader}: " in diagram.outcome, (leader, diagram.outcome)


def test_the_static_restart_gives_the_restarted_member_a_new_id():
    """The replacement's member id differs from the fenced one (and from every id before)."""
    diagram = scenario_diagram(scenario_named("static-restart"))
    crash = next(
        index
        for index, event in enumerate(diagram.events)
        if event.kind == FAULT and "crashes and restarts" in event.text
    )
    lane = diagram.events[crash].lane
    ids_before: set[str] = set()
    own_before, own_after = [], []
    for index, event in enumerate(diagram.events):
        match = MEMBER.match(event.text) if event.kind == MESSAGE and event.origin == 0 else None
        if match is None:
            continue
        if index < crash:
            ids_before.add(match.group(1))
            if event.lane == lane:
                own_before.append(match.group(1))
        elif event.lane == lane:
            own_after.append(match.group(1))
    assert own_before and own_after, "the restarted client joined before and after its crash"
    assert own_after[-1] not in ids_before, (own_before, own_after)


def test_a_liveness_counterexample_title_claims_only_what_its_run_bears_out():
    """KAFKA-12890's drawn run ends where Convergence is out of reach. The title may not say
    the group stays in a state it leaves; what it does say (a follower waits for its assignment
    forever) holds in every state reachable from there."""
    bug = bug_named("KAFKA-12890")
    loaded = load_model(bug.preset, bug.all_overrides())
    world = loaded.model
    result = search(world, record_graph=True)
    violation = check_liveness(world, result)[0].violations[0]
    lasso = reconstruct_lasso(world, violation)
    end = (lasso.stem + lasso.cycle)[-1].state
    group_states: set[str] = set()
    always_waiting = True

    def visit(state, step):  # type: ignore[no-untyped-def]
        nonlocal always_waiting
        group_states.add(group_node(world, step.state))
        phases = [phase(slot.consumer) for slot in step.state.clients]
        always_waiting &= ConsumerPhase.AWAITING_SYNC in phases

    explore(ModelView(world, initial=(end,), judged=False), visit)
    title = bug.what_went_wrong
    for claimed in re.findall(r"in (\w+) forever", title):
        assert group_states == {claimed}, f"title says {claimed} forever; reachable: {group_states}"
    assert "Stable" in group_states  # the leader's SyncGroup still completes the rebalance
    assert "waits for its assignment forever" in title
    assert always_waiting
