"""KIP-848's derived state machines (diagrams/kip848_graphs.py): the consumer group's states,
the members' reconciliation and the Java consumer's MemberState merged with its table.

`tests/test_diagrams.py` regenerates every diagram and fails when a committed one is stale, the
KIP-848 ones included; the tests here read the committed sources (so current) and feed the
projection synthetic and small explored inputs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from groupspec.diagrams.explore import Exploration
from groupspec.diagrams.generate import (
    KIP848_SOURCES,
    kip848_client_dot,
    kip848_group_dot,
    kip848_member_dot,
)
from groupspec.diagrams.graphs import DiagramSource, edge_summary
from groupspec.diagrams.kip848_graphs import (
    NO_PROCESS,
    Kip848Tally,
    client_hops,
    client_machine,
    kip848_tally,
    kip848_world,
    member_hops,
)
from groupspec.diagrams.style import FAULT_COLOUR
from groupspec.spec.kip848.consumer.machine import LEGAL_PREDECESSORS, ConsumerState

DOCS = Path(__file__).resolve().parent.parent / "docs" / "diagrams"


def _legal() -> set[tuple[str, str]]:
    return {
        (source.value, target.value)
        for target, sources in LEGAL_PREDECESSORS.items()
        for source in sources
    }


def _tally(client_edges=(), member_edges=(), group_edges=()) -> Kip848Tally:
    return Kip848Tally(
        DiagramSource("made-up"),
        Exploration(1, 1),
        tuple(group_edges),
        (),
        tuple(member_edges),
        (),
        tuple(client_edges),
        tuple({edge[0][0] for edge in client_edges}),
    )


def test_an_illegal_consumer_move_would_be_drawn_flagged():
    """An explored move MemberState's table forbids (Unsubscribed straight to Stable) is drawn
    red and marked ILLEGAL; the table's moves no step made are drawn dashed."""
    fake = _tally(client_edges=[(("Unsubscribed", "Stable", "response NONE"), 3)])
    graph = client_machine([fake])
    rows = {(row["from"], row["to"]): row for row in edge_summary(graph)}
    assert rows[("Unsubscribed", "Stable")]["spec"] == "illegal"
    assert {key for key, row in rows.items() if not row["reached"]} == _legal()
    dot = kip848_client_dot([fake])
    line = next(line for line in dot.splitlines() if "Unsubscribed -> Stable" in line)
    assert "ILLEGAL in MemberState's table" in line and FAULT_COLOUR in line
    unreached = next(line for line in dot.splitlines() if "Joining -> Stable" in line)
    assert "legal in MemberState's table" in unreached and "dashed" in unreached


def test_a_legal_move_and_a_crash_are_not_flagged():
    fake = _tally(
        client_edges=[
            (("Joining", "Reconciling", "response NONE"), 2),
            (("Stable", NO_PROCESS, "crash"), 1),
        ]
    )
    rows = {(r["from"], r["to"]): r for r in edge_summary(client_machine([fake]))}
    assert rows[("Joining", "Reconciling")]["spec"] == "legal"
    assert rows[("Joining", "Reconciling")]["reached"]
    assert rows[("Stable", NO_PROCESS)]["spec"] == "outside"
    assert not [key for key, row in rows.items() if row["spec"] == "illegal"]


@pytest.fixture(scope="module")
def poll_expiry_tally() -> Kip848Tally:
    """One consumer whose poll timer may expire once, and nothing else (a few hundred states)."""
    return kip848_tally(
        DiagramSource(
            "kip848-faults-1",
            (
                ("crashes", "0"),
                ("leaves", "0"),
                ("subscription_changes", "0"),
                ("message_losses", "0"),
                ("poll_expiries", "1"),
            ),
        )
    )


def test_explored_consumer_moves_stay_inside_the_table(poll_expiry_tally):
    """A poll expiry moves through PrepareLeaving to Leaving in one step; it is drawn as both
    hops, each in the table, so nothing explored is flagged."""
    rows = edge_summary(client_machine([poll_expiry_tally]))
    reached = {(r["from"], r["to"]) for r in rows if r["reached"]}
    assert not [r for r in rows if r["spec"] == "illegal"]
    assert ("Stable", "PrepareLeaving") in reached and ("PrepareLeaving", "Leaving") in reached
    assert ("Leaving", "Stale") in reached and ("Stale", "Joining") in reached
    assert ("Stable", "Leaving") not in reached


def test_member_hops_name_the_reconciliation_rules():
    """The member machine's edges carry the rules of spec/kip848/rules.py that moved it."""
    world = kip848_world(DiagramSource("kip848-2"))
    state = world.initial_states()[0]
    labels: list[tuple[str, str, str]] = []
    client: list[tuple[str, str, str]] = []
    # c1 subscribes, heartbeats, the coordinator takes it in: a new member, Stable at once.
    for action in ("subscribe(c1)", "heartbeat(c1)", "coordinator_receives(c1)"):
        step = next(t for t in world.transitions(state) if t.label == action)
        labels += member_hops(state, step)
        client += client_hops(state, step)
        state = step.state
    assert labels == [
        ("not a member", "Stable", "cg_heartbeat.join_client_member_id + cg_reconcile.to_stable")
    ]
    assert client == [("Unsubscribed", "Joining", "subscribe")]


def _dot(name: str) -> str:
    return (DOCS / f"{name}.dot").read_text(encoding="utf-8")


def test_committed_client_machine_reaches_every_member_state_legally():
    """All ten MemberStates are reached by the diagram's presets and no explored move leaves
    the table (the committed source is current: tests/test_diagrams.py)."""
    dot = _dot("kip848-consumer-member-states")
    for state in ConsumerState:
        node = next(line for line in dot.splitlines() if re.match(rf"\s*{state.value} \[", line))
        assert "not reached" not in node, state
    assert "ILLEGAL" not in dot
    for source, target in _legal():
        assert re.search(rf"^\s*{source} -> {target} \[", dot, re.M), (source, target)


def test_committed_group_and_member_machines_name_their_presets():
    for dot in (_dot("kip848-group-states"), _dot("kip848-member-reconciliation")):
        for source in KIP848_SOURCES:
            assert source.describe() in dot
    group = _dot("kip848-group-states")
    assert re.search(r"^\s*Reconciling -> Stable \[", group, re.M)
    assert "Not reached: Assigning" in group
    member = _dot("kip848-member-reconciliation")
    assert "cg_reconcile.revoke_first" in member and "cg_reconcile.to_unreleased" in member


def test_machine_sources_are_drawn_in_caption_order():
    fake = _tally(
        group_edges=[(("no group", "Stable", "coordinator_receives join"), 1)],
        member_edges=[(("not a member", "Stable", "cg_reconcile.to_stable"), 1)],
    )
    assert "made-up" in kip848_group_dot([fake]) and "made-up" in kip848_member_dot([fake])


def test_docs_quote_the_state_count_the_diagrams_say():
    """docs/diagrams.md quotes the states explored for KIP-848's machines; the committed
    caption (generated) says how many."""
    caption = re.search(r"([\d,]+) distinct states", _dot("kip848-group-states"))
    assert caption is not None
    text = (DOCS.parent / "diagrams.md").read_text(encoding="utf-8")
    assert f"together {caption.group(1)} states" in " ".join(text.split())
