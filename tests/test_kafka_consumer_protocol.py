"""Apache Kafka 4.x's consumer protocol (KIP-848) as the ground truth: confluent-kafka and Kafka's
Java consumer with `group.protocol=consumer`, in every scenario of
`record/workload/consumer_protocol.py` (members joining one by one, leaving, a crash whose session
expires, a static member restarting, a subscription change), consuming and committing what a
producer writes meanwhile, recorded through the recording proxy and judged by the
consumer-protocol oracle (docs/kafka.md, "The consumer protocol").

One Kafka 4.x broker serves the module (`broker`: groupspec's settings, and the small
group.consumer.max.size the `cg-max-size` probe needs, which no run of the campaign reaches); the
runs go two at a time, each on a group and topic of its own, then the consumer-protocol probes
run back to back (docs/kafka.md, "Consumer-protocol probes").
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from groupspec.cli.probe_tables import consumer_probe_rules, single_broker_rules
from groupspec.coverage.presets import known_consumer_protocol_rules
from groupspec.oracle.trace.validate import PASS, Verdict, validate_trace
from groupspec.record.kafka.broker import KafkaBroker
from groupspec.record.workload.consumer_protocol import CLIENTS, SCENARIOS, record_scenario
from groupspec.record.workload.probes_consumer import (
    PROBE_BROKER_SETTINGS,
)
from groupspec.record.workload.probes_consumer_all import (
    ALL_CONSUMER_PROBES,
    run_all_consumer_probes,
)

RUNS = [(client, name) for client in CLIENTS for name in SCENARIOS]
AT_LEAST_RULES = 19
# What the runs show together: joins, leaves, a crash fenced by its session timeout, a static
# member's temporary leave and its replacement, and reconciliation through revocation.
EXPECTED_RULES = {
    "cg_heartbeat.group_created",
    "cg_heartbeat.join_client_member_id",
    "cg_heartbeat.member_left",
    "cg_heartbeat.new_static_member",
    "cg_heartbeat.static_member_temporarily_left",
    "cg_heartbeat.static_member_replaced",
    "cg_heartbeat.response_with_assignment",
    "cg_heartbeat.response_without_assignment",
    "cg_assignment.computed",
    "cg_reconcile.revoke_first",
    "cg_reconcile.to_unreleased",
    "cg_reconcile.to_stable",
    "cg_reconcile.rebalance_timeout_armed",
    "cg_timer.session_expired",
    "cg_heartbeat.subscription_changed",
    # confluent-kafka fetches its offsets without member id and epoch, the Java consumer with
    # them (OffsetFetch v10, topics by id); both commit at their member epoch (OffsetCommit v9,
    # and v10 by topic id).
    "cg_offset_fetch.without_member",
    "cg_offset_fetch.member",
    "cg_offset_commit.epoch_matches",
    # The mixed runs: a classic consumer joins the consumer group, syncs, rejoins when told to,
    # commits at its generation and leaves.
    "cg_classic.join_new_member",
    "cg_classic.sync_assignment",
    "cg_classic.heartbeat_rejoin",
    "cg_classic.offset_commit",
    "cg_classic.leave",
}


@pytest.fixture(scope="module")
def broker() -> Iterator[KafkaBroker]:
    """The module's Kafka 4.x broker, with the probes' consumer-protocol settings."""
    started = KafkaBroker(consumer_groups=PROBE_BROKER_SETTINGS)
    started.start()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def campaign(broker: KafkaBroker, tmp_path_factory) -> dict[str, Verdict]:
    """Every run against the module's broker, each judged under the 4.x profile."""
    folder = tmp_path_factory.mktemp("consumer-protocol")

    def one(run: tuple[str, str]) -> tuple[str, Verdict]:
        client, name = run
        trace = record_scenario(broker, client, SCENARIOS[name], folder)
        return f"{client}-{name}", validate_trace(trace, {"kafka_version": "4.x"}, shrink=False)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(one, RUNS))


def test_every_run_passes(campaign):
    assert len(campaign) == len(RUNS) == 8
    failed = {name: v for name, v in campaign.items() if v.status != PASS}
    # In full, since a divergence of a real broker is hard to reproduce: where, why, the state.
    assert not failed, "\n".join(
        f"{name} ({v.source}): line {d.line} {d.api} v{d.version} {d.field}: {d.reason}\n"
        f"observed {d.observed}\nallowed {d.allowed}\n{d.state}"
        for name, v in failed.items()
        for d in v.divergences[:1]
    )


def test_every_event_is_judged(campaign):
    # The consumer groups' OffsetFetch included: judged by member id and epoch
    # (spec/kip848/offsets.py), confluent-kafka's v9 by topic name, the Java consumer's v10 by id.
    for name, verdict in campaign.items():
        counts = verdict.counts
        assert counts.skipped_apis == {}, name
        assert counts.judged == counts.events, name
        assert verdict.judged_fraction == 1.0, name
        assert counts.responses_checked > 10, name


def test_the_runs_exercise_the_consumer_protocol(campaign):
    exercised = set().union(*(v.rules for v in campaign.values()))
    assert exercised >= EXPECTED_RULES, sorted(EXPECTED_RULES - exercised)
    # docs/kafka.md: at least 19 of the non-defensive consumer-protocol rules.
    assert len(exercised & set(known_consumer_protocol_rules())) >= AT_LEAST_RULES


# -- probes: a few rules at a time, on the same broker -----------------------------------------


@pytest.fixture(scope="module")
def probed(broker: KafkaBroker, tmp_path_factory) -> dict[str, Verdict]:
    """Every consumer-protocol probe against the module's broker, each judged."""
    # A folder that does not exist yet: the probes make it.
    folder = tmp_path_factory.mktemp("consumer-protocol-probes") / "traces"
    results = run_all_consumer_probes(folder, broker=broker)
    assert [r.error for r in results if r.error] == []
    return {
        r.name: validate_trace(r.trace, {"kafka_version": "4.x"}, shrink=False) for r in results
    }


@pytest.mark.parametrize("name", sorted(ALL_CONSUMER_PROBES))
def test_each_probe_passes_every_event_judged_and_exercises_its_rules(probed, name):
    verdict = probed[name]
    assert verdict.status == PASS, verdict.divergence
    assert verdict.judged_fraction == 1.0
    missing = set(ALL_CONSUMER_PROBES[name].rules) - verdict.rules
    assert not missing, sorted(missing)


def test_probes_and_runs_together_cover_the_documented_figure(campaign, probed):
    exercised = set().union(*(v.rules for v in [*campaign.values(), *probed.values()]))
    wanted = set(single_broker_rules())
    # docs/kafka.md's figure: the rules the probes exercise of those one broker can show (each
    # probe's checked above); the campaign adds none outside them.
    assert consumer_probe_rules() <= exercised
    assert exercised & wanted == consumer_probe_rules() & wanted, sorted(
        (exercised & wanted) - consumer_probe_rules()
    )
