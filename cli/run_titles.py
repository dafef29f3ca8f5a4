"""How a diagram or an explorer page names the check it comes from."""

from __future__ import annotations

from collections.abc import Mapping


def run_title(preset: str, overrides: Mapping[str, object]) -> str:
    """The preset, its fault and its other overrides: "eager-2 with fault KAFKA-2555 (a=1)"."""
    fault = overrides.get("fault") or ""
    title = preset + (f" with fault {fault}" if fault else "")
    shown = {key: value for key, value in overrides.items() if key != "fault"}
    if shown:
        title += " (" + ", ".join(f"{key}={value}" for key, value in shown.items()) + ")"
    return title


def check_command_line(preset: str, overrides: Mapping[str, object]) -> str:
    """The `groupspec check` command that checks `preset` with `overrides`."""
    words = ["groupspec check", preset]
    for key, value in overrides.items():
        words.append(f"--fault {value}" if key == "fault" else f"--set {key}={value}")
    return " ".join(words)
