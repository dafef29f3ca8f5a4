"""What `groupspec record` and `groupspec workload` share: the header's coordinator settings
and the per-API event counts they print."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from typing import Any

from groupspec.wire.trace_format import API_KEYS, CLOSE, REQUEST, RESPONSE

COORDINATOR_SETTING_HELP = (
    "a broker setting for the trace header, in the specification's CoordinatorConfig "
    "names (e.g. group_initial_rebalance_delay_ms=3000); repeatable; settings not "
    "given are Kafka's defaults to the validator"
)


def add_coordinator_setting_option(
    parser: argparse.ArgumentParser, help_text: str = COORDINATOR_SETTING_HELP
) -> None:
    """`--coordinator-setting KEY=VALUE`, repeatable."""
    parser.add_argument(
        "--coordinator-setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=help_text,
    )


def coordinator_settings(pairs: Sequence[str]) -> dict[str, Any]:
    """`["a=1", "b=x"]` -> {"a": 1, "b": "x"} (integers, numbers, true/false typed);
    ValueError names a malformed pair."""
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise ValueError(f"--coordinator-setting {pair!r}: expected KEY=VALUE")
        settings[key] = _typed(text.strip())
    return settings


def _typed(text: str) -> Any:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def format_counts(counts: Counter[tuple[str, str]]) -> str:
    """One line per API seen, `JoinGroup  requests 12  responses 12`, then the closes."""
    lines = []
    for api in sorted(API_KEYS, key=API_KEYS.__getitem__):
        requests, responses = counts[(api, REQUEST)], counts[(api, RESPONSE)]
        if requests or responses:
            lines.append(f"  {api:<16} requests {requests:>5}  responses {responses:>5}")
    lines.append(f"  {'connections closed':<16} {counts[(CLOSE, CLOSE)]:>5}")
    return "\n".join(lines)
