"""The optimized coordinator against the committed conformance vectors: edge replay of every
coordinator transition the model checker explores in the reference presets."""

from pathlib import Path

import pytest
from test_impl_conformance import MUTATIONS

from groupspec.conformance.impl_adapter import ImplAdapter
from groupspec.conformance.vectors import read_vectors, run_vectors

COMMITTED = Path(__file__).resolve().parent / "vectors"
FILES = sorted(path.name for path in COMMITTED.glob("*.jsonl.gz"))


@pytest.fixture(scope="module")
def vector_files():
    return {name: read_vectors(COMMITTED / name) for name in FILES}


@pytest.mark.parametrize("name", FILES)
def test_impl_replays_every_explored_coordinator_transition(name, vector_files):
    report = run_vectors(vector_files[name], ImplAdapter())
    assert report.failures == [], report.failures[0].detail
    assert report.diverged == 0
    assert report.covered_transitions == report.transitions > 0


# The differential test catches all of MUTATIONS. Of them, the reference presets reach the
# static replacement (the presets with static members) and a leave that does not rebalance
# (scale-down); no sync timer fires without an eviction, and no current member commits with a
# stale generation (a gap in the presets, not in the runner).
REACHED_BY_PRESETS = {
    "static replacement keeps the old member id": ("static-2.jsonl.gz", "mixed.jsonl.gz"),
    "leaving does not rebalance": ("scale-down.jsonl.gz",),
}


@pytest.mark.parametrize("mutation", sorted(REACHED_BY_PRESETS))
def test_a_seeded_fault_fails_the_vectors(mutation, monkeypatch, vector_files):
    owner, attribute, replacement = MUTATIONS[mutation]
    monkeypatch.setattr(owner, attribute, replacement)
    caught = [
        name
        for name in REACHED_BY_PRESETS[mutation]
        if run_vectors(vector_files[name], ImplAdapter(), max_failures=1).failures
    ]
    assert caught, f"no vector file catches: {mutation}"


def test_vectors_carry_the_coordinator_config_of_their_world(vector_files):
    # limits-2 sets group.max.size=1; an implementation replaying its vectors with Kafka's
    # default would answer the second JoinGroup differently.
    assert vector_files["limits-2.jsonl.gz"].config.group_max_size == 1
    assert vector_files["eager-2.jsonl.gz"].config.group_max_size == 2**31 - 1
