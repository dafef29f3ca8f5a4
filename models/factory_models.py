"""Your own model, not in the package: `groupspec check --model package.module:factory`.

A factory is found by importing `package.module` (from `sys.path`: install the package, or put
its directory on PYTHONPATH) and taking its attribute `factory`. It is one of:

- a dataclass whose fields are `documented(...)` parameters and whose instances are models
  (the way `TwoPhaseModel` is both): `--set` values build the instance;
- a function of one argument annotated with such a dataclass of parameters, which returns the
  model: `--set` values build the argument;
- a function of no argument, which returns the model (no `--set`).

`--set name=value` is parsed and range-checked by the parameter's declaration, as for a preset
(models/parameters.py). What comes back must offer the model interface (`checker.model.Model`;
a `checker.plain.PlainModel` subclass does). Anything wrong is a `ModelLoadError` whose one
line says what and where. docs/extending.md, "Your own model", walks through an example.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from groupspec.checker.derived import PropertyDeclarationError, check_declarations
from groupspec.checker.model import Model

from .parameters import Parameter, ParameterError, parse_override, schema
from .preset_models import FACTORY_KIND, LoadedModel, ModelLoadError

# What a model must offer, by name (the members of `checker.model.Model`).
MODEL_MEMBERS = (
    "name",
    "slot_names",
    "groups",
    "properties",
    "initial_components",
    "state_of",
    "components_of",
    "apply_update",
    "after_step",
    "canonical",
    "omits_self_loops",
    "renames_after_step",
    "reduces",
    "component_digest",
    "is_terminal",
    "canonical_form",
)


@dataclasses.dataclass(frozen=True)
class Factory:
    """A factory found by its `package.module:attribute` name: what it is called, its
    dataclass of parameters (None when it takes none), and how it makes the model from an
    instance of that dataclass (None without one)."""

    spec: str
    parameters_type: type | None
    make: Callable[..., object]
    path: Path
    description: str

    @property
    def parameters(self) -> Mapping[str, Parameter]:
        """The factory's declared parameters (none without a dataclass of parameters)."""
        return schema(self.parameters_type) if self.parameters_type is not None else {}


def find_factory(spec: str) -> Factory:
    """The factory `spec` ("package.module:attribute") names; ModelLoadError saying why not."""
    module_name, separator, attribute = spec.partition(":")
    if not separator or not module_name or not attribute:
        raise ModelLoadError(f"--model {spec!r}: expected package.module:factory")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise ModelLoadError(
            f"--model {spec}: no module named {error.name!r} on the Python path "
            "(install its package, or put its directory on PYTHONPATH)"
        ) from None
    except Exception as error:  # the user's module failed to import: say how, on one line
        raise ModelLoadError(
            f"--model {spec}: importing {module_name} failed: {type(error).__name__}: {error}"
        ) from None
    factory: Any = module
    for name in attribute.split("."):
        if not hasattr(factory, name):
            raise ModelLoadError(f"--model {spec}: {module_name} has no attribute {attribute!r}")
        factory = getattr(factory, name)
    path = Path(getattr(module, "__file__", None) or module_name)
    description = (inspect.getdoc(factory) or "").split("\n\n")[0].replace("\n", " ")
    if inspect.isclass(factory) and dataclasses.is_dataclass(factory):
        # The dataclass is the model: its instance, built from the parameters, is what it makes.
        return Factory(spec, factory, lambda parameters: parameters, path, description)
    if not callable(factory):
        raise ModelLoadError(f"--model {spec}: {attribute} is not callable, so not a factory")
    return Factory(spec, _parameters_type(spec, factory), factory, path, description)


def _parameters_type(spec: str, factory: Callable[..., object]) -> type | None:
    """The dataclass of parameters a factory function takes (None when it takes none)."""
    try:
        parameters = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    if not parameters:
        return None
    try:
        hints = typing.get_type_hints(factory)
    except Exception:  # an annotation that does not resolve is no dataclass either
        hints = {}
    declared = hints.get(parameters[0].name)
    if len(parameters) > 1 or not (
        inspect.isclass(declared) and dataclasses.is_dataclass(declared)
    ):
        raise ModelLoadError(
            f"--model {spec}: a factory takes no argument, or one argument annotated with a "
            "dataclass of documented(...) parameters"
        )
    return declared


def load_factory_model(spec: str, overrides: Mapping[str, str] | None = None) -> LoadedModel:
    """The model the factory `spec` makes with the `--set` overrides, ready to check;
    ModelLoadError (one line) for anything wrong: no module, no factory, a bad `--set`, a
    factory that fails or returns something that is not a model."""
    overrides = dict(overrides or {})
    factory = find_factory(spec)
    declared = factory.parameters
    if overrides and factory.parameters_type is None:
        raise ModelLoadError(
            f"--model {spec}: --set {next(iter(overrides))}: the factory takes no parameters"
        )
    values: dict[str, object] = {}
    try:
        for key, text in overrides.items():
            values[key] = parse_override(declared, key, text)
        parameters = factory.parameters_type(**values) if factory.parameters_type else None
    except ParameterError as error:
        raise ModelLoadError(f"--model {spec}: --set {error.key}: {error.message}") from None
    except Exception as error:  # the user's parameters refused the values: say how
        raise ModelLoadError(
            f"--model {spec}: its parameters refused {values}: {type(error).__name__}: {error}"
        ) from None
    try:
        model = factory.make(parameters) if parameters is not None else factory.make()
    except Exception as error:  # the user's factory failed: say how, on one line
        raise ModelLoadError(
            f"--model {spec}: the factory failed: {type(error).__name__}: {error}"
        ) from None
    problem = model_problem(model)
    if problem:
        raise ModelLoadError(f"--model {spec}: {problem}")
    return LoadedModel(
        spec,
        factory.path,
        overrides,
        factory.description or f"the model of {spec}",
        cast("Model[Any]", model),
        {name: getattr(parameters, name) for name in declared},
        known_actions=tuple(getattr(model, "action_kinds", ())),
        kind=FACTORY_KIND,
        declared=declared,
    )


def model_problem(model: object) -> str | None:
    """Why `model` cannot be checked (it lacks part of the model interface, or declares a
    property the engine would not judge), or None."""
    missing = [name for name in MODEL_MEMBERS if not hasattr(model, name)]
    if missing:
        return (
            f"the factory returned {type(model).__name__}, not a model: it lacks "
            f"{', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''} "
            "(subclass checker.plain.PlainModel, or see checker.model.Model)"
        )
    try:
        check_declarations(model)  # type: ignore[arg-type]
    except PropertyDeclarationError as error:
        return str(error)
    return None


__all__ = ["Factory", "Model", "find_factory", "load_factory_model", "model_problem"]
