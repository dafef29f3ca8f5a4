"""Every probe against Apache Kafka 3.9's broker, whose classic groups the Scala
GroupCoordinator serves: each trace passes under the 3.x profile with every event judged, and
exercises the rules the probe is written for that the Scala coordinator has (a rule of the Java
coordinator alone, such as `join.group_created`, has a `.kafka_3x` twin there)."""

from __future__ import annotations

import pytest
from probe_support import Judged, problems, run_and_judge

from groupspec.record.workload.probes import NOT_DRIVABLE, PROBES
from groupspec.spec.rules import reachable_rule_ids

SCALA_RULES = reachable_rule_ids("3.x")


@pytest.fixture(scope="module")
def kafka_39_run(tmp_path_factory) -> dict[str, Judged]:
    """Every probe against Kafka 3.9, each trace judged."""
    return run_and_judge("kafka-3.9", tmp_path_factory.mktemp("kafka-39-probes"))


@pytest.mark.parametrize("name", list(PROBES))
def test_each_probe_passes_on_kafka_3_9_under_the_3x_profile(kafka_39_run, name):
    judged = kafka_39_run[name]
    assert judged.verdict.kafka_version == "3.x"
    assert problems(judged, frozenset(PROBES[name].rules) & SCALA_RULES) == []


def test_on_kafka_3_9_the_probes_exercise_the_drivable_rules_less_the_java_coordinators(
    kafka_39_run,
):
    """docs/coverage.md: 75 of the 4.x catalog's 92, since the 3 rules of the Java coordinator
    alone are taken by their `.kafka_3x` twins."""
    exercised = frozenset().union(*(j.verdict.rules for j in kafka_39_run.values()))
    java_only = reachable_rule_ids("4.x") - SCALA_RULES
    drivable = reachable_rule_ids("4.x") - set(NOT_DRIVABLE)
    assert exercised & reachable_rule_ids("4.x") == drivable - java_only
    assert len(drivable - java_only) == 75
    assert {f"{rule}.kafka_3x" for rule in java_only & drivable} <= exercised
