"""Conditionals as Galaxy runs them: a test value that no ``<when>`` names selects an empty branch.

Galaxy's tool loader (``Tool.parse_input_elem``) adds an empty case for each legal value of a
conditional's test parameter that has no ``<when>`` ("assuming empty inputs") and runs requests
that select it: wrappers often write only ``<when value="true">``, or a ``<when>`` for the one
option that needs more parameters. Galaxy's typed model (``tool.parameters``) holds only the
written ``<when>`` blocks, so its request model refuses those values. ``with_implicit_branches``
gives the typed model the same empty branches, so the preflight judges the tool Galaxy runs.
It reads Galaxy's parameter models by their attributes and imports nothing of Galaxy.
"""

from collections.abc import (
    Callable,
    Sequence,
)
from typing import Any

from galaxy_mcp_analysis.core.tool_inputs import (
    CONDITIONAL,
    REPEAT,
    SECTION,
    same_discriminator,
)


def test_values(test_parameter) -> list[Any] | None:
    """A test parameter's legal values as branch discriminators (booleans typed); None when not static."""
    if test_parameter.parameter_type == "gx_boolean":
        return [True, False]
    options = getattr(test_parameter, "options", None)
    return None if options is None else [option.value for option in options]


def default_test_value(test_parameter) -> Any:
    """The test value Galaxy uses when a request gives none (as ``cond_test_parameter_default_value``)."""
    if test_parameter.parameter_type == "gx_boolean":
        return bool(test_parameter.value)
    return getattr(test_parameter, "default_value", None)


def implicit_branches(conditional) -> list[tuple[Any, bool]]:
    """``(discriminator, is_default_when)`` of each legal test value no written branch names."""
    values = test_values(conditional.test_parameter)
    if not values:
        return []
    has_default = any(when.is_default_when for when in conditional.whens)
    default = default_test_value(conditional.test_parameter)
    return [
        (value, not has_default and default is not None and same_discriminator(value, default))
        for value in values
        if not any(same_discriminator(when.discriminator, value) for when in conditional.whens)
    ]


def with_implicit_branches(parameters: Sequence, make_when: Callable[..., Any]) -> list:
    """A copy of a tool's parameter models in which every conditional, at any depth, has an empty branch
    for each test value without a ``<when>``; ``make_when`` is Galaxy's ``ConditionalWhen``."""
    completed = []
    for parameter in parameters:
        kind = parameter.parameter_type
        if kind == CONDITIONAL:
            whens = [when.model_copy(update={"parameters": with_implicit_branches(when.parameters, make_when)})
                     for when in parameter.whens]
            whens += [make_when(discriminator=value, parameters=[], is_default_when=is_default)
                      for value, is_default in implicit_branches(parameter)]
            parameter = parameter.model_copy(update={"whens": whens})
        elif kind in (SECTION, REPEAT):
            parameter = parameter.model_copy(
                update={"parameters": with_implicit_branches(parameter.parameters, make_when)})
        completed.append(parameter)
    return completed
