"""The optimized coordinator against the committed conformance vectors: edge replay of every
coordinator transition the model checker explores in the reference presets, with the timers it
has armed and its groups checked after every step."""

import json
from pathlib import Path

import pytest
from test_impl_conformance import MUTATIONS

from groupspec.cli.main import main
from groupspec.conformance.impl_adapter import ImplAdapter
from groupspec.conformance.vectors import read_vectors, run_vectors
from groupspec.impl.runtime import Runtime
from groupspec.impl.state import SyncTimer
from groupspec.spec.config import KAFKA_3X, KAFKA_4X

COMMITTED = Path(__file__).resolve().parent / "vectors"
# The kip848-* files are KIP-848 vectors (tests/test_kip848_impl_vectors.py replays them).
ALL_FILES = sorted(
    path.name for path in COMMITTED.glob("*.jsonl.gz") if not path.name.startswith("kip848-")
)
# The impl follows the Kafka 4.x profile only: the files of presets that check the Scala
# coordinator (kafka_version 3.x) are refused, not run (test below).
SCALA_FILES = [name for name in ALL_FILES if name.endswith("-kafka-3x.jsonl.gz")]
FILES = [name for name in ALL_FILES if name not in SCALA_FILES]


@pytest.fixture(scope="module")
def vector_files():
    return {name: read_vectors(COMMITTED / name) for name in FILES}


@pytest.mark.parametrize("name", FILES)
def test_impl_replays_every_explored_coordinator_transition(name, vector_files):
    assert vector_files[name].config.kafka_version == KAFKA_4X
    report = run_vectors(vector_files[name], ImplAdapter())
    assert report.failures == [], report.failures[0].detail
    assert report.state_not_checked is None
    assert report.diverged == 0
    assert report.covered_transitions == report.transitions > 0


@pytest.mark.parametrize("name", SCALA_FILES)
def test_impl_refuses_the_files_of_the_scala_coordinator_naming_the_profile(name):
    vectors = read_vectors(COMMITTED / name)
    assert vectors.config.kafka_version == KAFKA_3X
    report = run_vectors(vectors, ImplAdapter())
    assert report.refused is not None and "kafka_version 3.x" in report.refused
    assert "4.x profile only" in report.refused
    assert not report.passed and report.vectors == report.steps == 0
    # The specification runs them all (test_vectors.py: every committed vector passes on it).


def test_the_cli_says_not_run_for_a_refused_file_and_does_not_pass(tmp_path, capsys):
    path = COMMITTED / "scale-down-kafka-3x.jsonl.gz"
    report_path = tmp_path / "report.json"
    args = ["vectors", "--run", str(path), "--adapter", "impl", "--quiet"]
    assert main([*args, "--json", str(report_path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}: NOT RUN: the adapter refused its configuration: kafka_version 3.x" in out
    (document,) = json.loads(report_path.read_text())
    assert document["passed"] is False and document["vectors"] == 0
    assert "4.x profile only" in document["refused"]


# The differential test catches all of MUTATIONS. Of them, the reference presets reach the
# static replacement (the presets with static members), a leave that does not rebalance
# (scale-down) and a sync timer never armed (any completed join; the vectors' timers show it);
# no current member commits with a stale generation (a gap in the presets, not in the runner),
# and the vectors' clock never moves, so no heartbeat-extended session is re-queued.
REACHED_BY_PRESETS = {
    "static replacement keeps the old member id": ("static-2.jsonl.gz", "mixed.jsonl.gz"),
    "leaving does not rebalance": ("scale-down.jsonl.gz",),
    "the sync timer is never armed": ("eager-2.jsonl.gz",),
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


def _deadline_without_heap_entry(self, group, member, timeout_ms=None):
    """The session deadline is recorded but never queued in the heap: it can never fire."""
    timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
    member.heartbeat_deadline_ms = self.now + timeout


def _sync_timer_without_heap_entry(self, group, delay_ms):
    """The group holds a sync timer, but nothing in the heap will fire it."""
    group.sync_timer = SyncTimer(self.now + delay_ms, group.generation_id)


@pytest.mark.parametrize(
    ("attribute", "fault", "missing"),
    [
        ("schedule_heartbeat", _deadline_without_heap_entry, "HeartbeatExpired(group_id='g'"),
        ("arm_sync_timer", _sync_timer_without_heap_entry, "SyncTimerExpired(group_id='g')"),
    ],
)
def test_a_timer_that_is_never_scheduled_fails_the_vectors_naming_node_and_timer(
    attribute, fault, missing, monkeypatch, vector_files
):
    # Both faults answer every request as Kafka does (firing a timer by name still works):
    # only the timers the vectors carry show that the heap would never fire them.
    monkeypatch.setattr(Runtime, attribute, fault)
    report = run_vectors(vector_files["eager-2.jsonl.gz"], ImplAdapter(), max_failures=1)
    (failure,) = report.failures
    assert f"eager-2 node {failure.node}, step {failure.step} of its vector" in failure.detail
    assert "the responses match, but the armed timers differ: missing" in failure.detail
    assert missing in failure.detail


class WrongGenerationAdapter(ImplAdapter):
    """The impl, but the groups it shows are one generation ahead."""

    def group_projection(self, group_id):
        projection = super().group_projection(group_id)
        if projection is None:
            return None
        return projection.__class__(
            **{**projection.__dict__, "generation_id": projection.generation_id + 1}
        )


def test_a_group_state_difference_fails_the_vectors_naming_node_and_field(vector_files):
    report = run_vectors(vector_files["eager-2.jsonl.gz"], WrongGenerationAdapter(), max_failures=1)
    (failure,) = report.failures
    assert f"eager-2 node {failure.node}, step {failure.step} of its vector" in failure.detail
    assert "the responses match, but group 'g' differs: generation_id: 0 != 1" in failure.detail


class ResponsesOnlyAdapter:
    """An adapter with only the methods of format version 1 (no timers, no groups)."""

    def __init__(self):
        self._impl = ImplAdapter()
        self.reset, self.apply, self.member_ids = (
            self._impl.reset,
            self._impl.apply,
            self._impl.member_ids,
        )


def test_an_adapter_without_state_methods_runs_and_says_what_was_not_checked(
    vector_files, monkeypatch
):
    monkeypatch.setattr(Runtime, "schedule_heartbeat", _deadline_without_heap_entry)
    report = run_vectors(vector_files["limits-2.jsonl.gz"], ResponsesOnlyAdapter())
    assert report.failures == []
    assert report.state_not_checked == "the adapter has no armed_timers or group_projection"


def test_vectors_carry_the_coordinator_config_of_their_world(vector_files):
    # limits-2 sets group.max.size=1; an implementation replaying its vectors with Kafka's
    # default would answer the second JoinGroup differently.
    assert vector_files["limits-2.jsonl.gz"].config.group_max_size == 1
    assert vector_files["eager-2.jsonl.gz"].config.group_max_size == 2**31 - 1
