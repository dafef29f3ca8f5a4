"""ActiveGroupOffsetsKept: the retention check leaves the offsets of a group with members alone
(KIP-211), and catches a coordinator that expires them as if the group were Empty (KAFKA-4682)."""

from __future__ import annotations

from coordinator_driver import GROUP, STABLE, Driver

import groupspec.spec.offsets as offsets_module
from groupspec.spec.events import OffsetRetentionCheck
from groupspec.spec.invariants import ACTION_PROPERTIES

RETENTION_MS = 60_000


def _property():
    return next(p for p in ACTION_PROPERTIES if p.name == "ActiveGroupOffsetsKept").check


def _retention_check_on_a_stable_group():
    """A Stable group of two subscribed to t commits t-0 and u-0 (u no member subscribes to),
    then the retention check runs long after: (before, after) of that step."""
    driver = Driver(
        group_initial_rebalance_delay_ms=0,
        offsets_retention_ms=RETENTION_MS,
        offsets_retention_check_interval_ms=1_000,
    )
    a, _ = driver.form_stable({"client": "a"}, {"client": "b"})
    assert driver.group.state is STABLE
    generation = driver.group.generation_id
    driver.commit({("t", 0): 5, ("u", 0): 7}, generation=generation, member_id=a)
    before = driver.state
    outcome = driver.step(OffsetRetentionCheck(), at=driver.now + 2 * RETENTION_MS)
    return before, outcome


def test_a_stable_group_keeps_the_offsets_of_its_topics_and_loses_the_others():
    before, outcome = _retention_check_on_a_stable_group()
    kept = {tp.topic for tp, _ in outcome.state.group(GROUP).offsets}
    assert kept == {"t"}
    assert _property()(before, OffsetRetentionCheck(), outcome.state, outcome.responses) == []


def test_a_coordinator_that_expires_an_active_groups_offsets_is_caught(monkeypatch):
    # The fault: every group with a protocol is judged as if it were Empty.
    monkeypatch.setattr(
        offsets_module,
        "offset_expiration_condition",
        lambda group: ((lambda value: value.commit_timestamp_ms), None),
    )
    before, outcome = _retention_check_on_a_stable_group()
    assert outcome.state.group(GROUP).offsets == ()
    (problem,) = _property()(before, OffsetRetentionCheck(), outcome.state, outcome.responses)
    assert "t-0 expired" in problem


def test_retention_1_meets_the_fault_only_with_the_check_on_a_stable_group(monkeypatch):
    from groupspec.checker.bfs import search
    from groupspec.models.preset_models import load_model

    monkeypatch.setattr(
        offsets_module,
        "offset_expiration_condition",
        lambda group: ((lambda value: value.commit_timestamp_ms), None),
    )
    result = search(load_model("retention-1").model)
    assert result.problems
    assert result.problems[0].problem.property_name == "ActiveGroupOffsetsKept"
    # The world of old, whose retention check ran only on an Empty group, never met it.
    result = search(load_model("retention-1", {"retention_with_members": "false"}).model)
    assert not result.problems
