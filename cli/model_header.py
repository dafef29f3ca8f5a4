"""The header a command prints about the model it runs: what it is, as it was run.

A preset's description is written for the preset as shipped. Once `--set` or `--fault` changed
it, that text may be wrong ("no faults" with a fault on, "may evict one live member" with
evictions=0), so the header then lists the effective changes instead, each with the preset's
own value and what the parameter means.
"""

from __future__ import annotations

from groupspec.models.preset_models import LoadedModel, parameter_changes


def shown(value: object) -> str:
    """A parameter value as a person would type it after `--set NAME=`."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(shown(item) for item in value)
    return str(value) if value != "" else "none"


def header_lines(loaded: LoadedModel) -> list[str]:
    """The model's header: its preset's description, or the changes that make it another."""
    changes = parameter_changes(loaded)
    if not changes:
        return [f"{loaded.preset}: {loaded.description}"]
    given = " ".join(f"{change.name}={shown(change.value)}" for change in changes)
    factory = loaded.declared is not None
    lines = [
        f"{loaded.preset} with {given}: {loaded.description}"
        if factory
        else f"{loaded.preset} with {given} (the preset's own description no longer applies; "
        "`groupspec presets` shows it)"
    ]
    # A factory's model has no preset: its parameters' defaults stand in for one.
    source = "default" if factory else "preset"
    for change in changes:
        meaning = f": {change.meaning}" if change.meaning else ""
        lines.append(
            f"  {change.name} = {shown(change.value)} "
            f"({source}: {shown(change.preset_value)}){meaning}"
        )
    return lines
