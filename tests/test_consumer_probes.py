"""The consumer-protocol probes without a broker: their generated block in docs/kafka.md is
current, their rules and the denominator's reasons name real rules, every rule one broker can
show has a probe or the reason none has, and `groupspec ci` runs them against Kafka only. The
probes themselves run against Kafka 4.4.0 in tests/test_kafka_consumer_protocol.py."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from groupspec.cli.ci_command import job_commands
from groupspec.cli.main import main
from groupspec.cli.probe_tables import (
    CONSUMER_BEGIN,
    END,
    consumer_probe_rules,
    consumer_probes_markdown,
    single_broker_rules,
)
from groupspec.coverage.presets import known_consumer_protocol_rules
from groupspec.record.workload.probe_client import subscription
from groupspec.record.workload.probes_consumer import (
    CONSUMER_PROBES,
    NOT_JUDGED_YET,
    NOT_JUDGED_YET_FAMILIES,
    NOT_ON_ONE_BROKER,
    NOT_ON_ONE_BROKER_FAMILIES,
    not_judged_yet,
    not_on_one_broker,
)
from groupspec.record.workload.probes_consumer_all import ALL_CONSUMER_PROBES
from groupspec.record.workload.probes_consumer_classic import (
    CLASSIC_MEMBER_PROBES,
    assigned_partitions,
)
from groupspec.spec.consumer_protocol import decode_subscription, encode_assignment
from groupspec.vocabulary.requests import TopicPartition

KAFKA_MD = Path(__file__).resolve().parent.parent / "docs" / "kafka.md"
KNOWN = frozenset(known_consumer_protocol_rules())


def test_the_consumer_probe_block_in_docs_kafka_md_is_current():
    text = KAFKA_MD.read_text(encoding="utf-8")
    start = text.index(CONSUMER_BEGIN) + len(CONSUMER_BEGIN)
    assert text[start : text.index(END, start)] == "\n" + consumer_probes_markdown(), (
        "docs/kafka.md is stale: run `groupspec probe --list --update-doc docs/kafka.md`"
    )


def test_every_rule_named_is_a_non_defensive_consumer_protocol_rule():
    for probe in ALL_CONSUMER_PROBES.values():
        assert set(probe.rules) <= KNOWN, (probe.name, sorted(set(probe.rules) - KNOWN))
        assert len(set(probe.rules)) == len(probe.rules), probe.name
    assert set(NOT_ON_ONE_BROKER) <= KNOWN
    assert set(NOT_JUDGED_YET) <= KNOWN
    for family in (*NOT_ON_ONE_BROKER_FAMILIES, *NOT_JUDGED_YET_FAMILIES):
        assert any(rule.startswith(family) for rule in KNOWN), family


def test_no_probe_claims_a_rule_outside_the_denominator_or_not_judged():
    for rule in consumer_probe_rules():
        assert not_on_one_broker(rule) is None, rule
        assert not_judged_yet(rule) is None, rule


def test_every_rule_one_broker_can_show_has_a_probe_or_a_reason():
    probed = consumer_probe_rules()
    bare = [r for r in single_broker_rules() if r not in probed and not_judged_yet(r) is None]
    assert bare == []


def test_the_denominator_leaves_out_failover_replay_other_profiles_and_broker_settings():
    wanted = set(single_broker_rules())
    assert not any(r.startswith(("cg_failover.", "cg_replay.")) for r in wanted)
    assert "cg_offset_commit.epoch_mismatch" not in wanted  # the 3.9 and 4.0-4.2 profiles
    assert "cg_heartbeat.group_max_size_reached" in wanted  # the probes' broker has a small one
    assert {"cg_classic.join_new_member", "cg_convert.upgrade"} <= wanted  # classic members
    assert len(wanted) < len(KNOWN)


def _ci(target: str, probes: list[str] | None = None) -> argparse.Namespace:
    return argparse.Namespace(
        out=Path("out"),
        target=target,
        client="all",
        scenario="all",
        no_workloads=True,
        no_probes=False,
        probe=probes,
        baseline=None,
        validate_options=[],
    )


def test_ci_runs_the_consumer_protocol_probes_against_kafka_only():
    probe_commands = [c for c in job_commands(_ci("kafka")) if c[0] == "probe"]
    assert [("--consumer-protocol" in c) for c in probe_commands] == [False, True]
    assert all("--consumer-protocol" not in c for c in job_commands(_ci("serve")))
    chosen = job_commands(_ci("kafka", ["cg-fencing"]))
    consumer = ["probe", "--target", "kafka", "--consumer-protocol", "--trace-dir", "out/traces"]
    assert [c for c in chosen if c[0] == "probe"] == [[*consumer, "--probe", "cg-fencing"]]


def test_ci_refuses_a_consumer_protocol_probe_for_another_target(tmp_path, capsys):
    out = str(tmp_path / "o")
    code = main(["ci", "--target", "serve", "--out", out, "--no-workloads", "--probe", "cg-static"])
    assert code == 2
    assert "--target kafka" in capsys.readouterr().err


@pytest.mark.parametrize("target", ["serve", "127.0.0.1:9092"])
def test_probe_refuses_the_consumer_protocol_against_another_target(tmp_path, capsys, target):
    args = ["probe", "--target", target, "--consumer-protocol", "--trace-dir", str(tmp_path)]
    assert main(args) == 2
    assert "--target kafka" in capsys.readouterr().err


def test_the_classic_member_probes_join_the_table_without_shadowing_one():
    assert set(CONSUMER_PROBES).isdisjoint(CLASSIC_MEMBER_PROBES)
    assert ALL_CONSUMER_PROBES == {**CONSUMER_PROBES, **CLASSIC_MEMBER_PROBES}
    assert all(name.startswith("cg-classic-") for name in CLASSIC_MEMBER_PROBES)


def test_a_classic_probe_member_reports_what_it_owns_as_the_specification_reads_it():
    # A classic member rejoining a consumer group reports its partitions in a subscription v1;
    # without them the subscription stays v0, which carries none.
    owned = subscription("orders", owned={"orders": [3, 1]})
    read = decode_subscription(owned)
    assert read.topics == ("orders",)
    assert set(read.owned_partitions) == {TopicPartition("orders", 1), TopicPartition("orders", 3)}
    assert decode_subscription(subscription("orders")).owned_partitions == ()
    # What SyncGroup gives it, read back from the consumer protocol's assignment.
    given = encode_assignment([TopicPartition("orders", 0), TopicPartition("orders", 2)])
    assert assigned_partitions(given) == frozenset({0, 2})
    assert assigned_partitions(b"") == frozenset()
