"""Any installed assignor named as `module:attribute`, as `groupspec assignors --assignor` takes it.

The contract (docs/assignors.md, "Judging your own assignor from the command line"):

- `module` is imported as Python imports it (it must be on `sys.path`: installed, or in the
  current directory); `attribute` is looked up in it, dots allowed (`module:Class.factory`).
- The attribute is either an assignor — an object with `name` (a non-empty str),
  `supported_protocols` (a non-empty tuple of `RebalanceProtocol`), `assign(group)` and
  `subscription_user_data(owned, generation)`, the `Assignor` protocol of
  `groupspec.spec.assignors.base`; a `CallableAssignor` wrapping a plain-data function is one —
  or a factory callable with no arguments (a class included) that returns one assignor or an
  iterable of them.
- A plain-data function `(members, partition_counts) -> assignment` is not enough on its own:
  it does not say which protocol it implements (and so which properties it is held to), which
  rebalance protocols it supports, nor what user data its members send. Wrap it in a
  `CallableAssignor` in your module and name that.

Anything else raises `AssignorReferenceError` with a one-line message naming the reference.
What an assignor does once it runs (raising, returning garbage) is not an error here: the
scenario runner reports it as a finding.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable

from groupspec.spec.assignment import RebalanceProtocol
from groupspec.spec.assignors.base import Assignor


class AssignorReferenceError(ValueError):
    """A `module:attribute` reference that does not name an assignor or a factory of them."""


def _describe(error: BaseException) -> str:
    text = (
        f"{type(error).__name__}: {error}".splitlines()[0] if str(error) else type(error).__name__
    )
    return text if len(text) <= 160 else text[:157] + "..."


def _problem(candidate: object) -> str | None:
    """Why `candidate` is not an assignor, or None if it is one."""
    name = getattr(candidate, "name", None)
    if not isinstance(name, str) or not name:
        return "has no non-empty str `name`"
    protocols = getattr(candidate, "supported_protocols", None)
    if (
        not isinstance(protocols, tuple)
        or not protocols
        or not all(isinstance(p, RebalanceProtocol) for p in protocols)
    ):
        return f"{name!r}: `supported_protocols` is not a non-empty tuple of RebalanceProtocol"
    for method in ("assign", "subscription_user_data"):
        if not callable(getattr(candidate, method, None)):
            return f"{name!r}: has no `{method}` method"
    return None


def _is_assignor(candidate: object) -> bool:
    return not isinstance(candidate, type) and _problem(candidate) is None


def _requires_arguments(factory: object) -> bool:
    try:
        signature = inspect.signature(factory)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False  # builtins without a signature: let the call decide
    return any(
        parameter.default is inspect.Parameter.empty
        and parameter.kind
        in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
        for parameter in signature.parameters.values()
    )


def _import_attribute(reference: str) -> object:
    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute:
        raise AssignorReferenceError(
            f"--assignor {reference!r}: expected MODULE:ATTRIBUTE, e.g. mypackage.assignors:mine"
        )
    try:
        target: object = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise AssignorReferenceError(
            f"--assignor {reference!r}: no module named {error.name or module_name!r} "
            "(is it installed, or on PYTHONPATH?)"
        ) from None
    except Exception as error:  # the module's own code failed: any exception is possible
        raise AssignorReferenceError(
            f"--assignor {reference!r}: importing {module_name} raised {_describe(error)}"
        ) from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise AssignorReferenceError(
                f"--assignor {reference!r}: {module_name} has no attribute {attribute!r}"
            )
        target = getattr(target, part)
    return target


def load_assignors(reference: str) -> tuple[Assignor, ...]:
    """The assignors `module:attribute` names (see the module docstring for the contract)."""
    target = _import_attribute(reference)
    if _is_assignor(target):
        return (target,)  # type: ignore[return-value]
    if not callable(target):
        raise AssignorReferenceError(
            f"--assignor {reference!r}: {type(target).__name__} is neither an assignor nor a "
            "factory of assignors"
        )
    if _requires_arguments(target):
        raise AssignorReferenceError(
            f"--assignor {reference!r}: a callable with required arguments is not an assignor "
            "factory; wrap a plain-data assign function in CallableAssignor (docs/assignors.md)"
        )
    try:
        made = target()
    except Exception as error:  # the factory's own code failed: any exception is possible
        raise AssignorReferenceError(
            f"--assignor {reference!r}: calling it raised {_describe(error)}"
        ) from None
    candidates = list(made) if isinstance(made, Iterable) and not _is_assignor(made) else [made]
    if not candidates:
        raise AssignorReferenceError(f"--assignor {reference!r}: the factory returned no assignor")
    for candidate in candidates:
        problem = _problem(candidate)
        if problem is not None:
            raise AssignorReferenceError(
                f"--assignor {reference!r}: the factory returned a {type(candidate).__name__} "
                f"that is not an assignor ({problem})"
            )
    return tuple(candidates)
