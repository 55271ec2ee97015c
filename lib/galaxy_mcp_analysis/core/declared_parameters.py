"""Every parameter a tool declares in Galaxy's typed model, at any depth and in every branch.

A request's values are walked by ``core.tool_inputs.walk``, which follows the branch each conditional's value
selects and the blocks the request has. What a tool declares (its data inputs with their map-over hints, its
selects whose options Galaxy computes per request) needs every branch, and a repeat's parameters once for all
its blocks: that is this walk, one for every reader of the typed declaration (``core.tool_schema``). Galaxy's
legacy objects (``tool.inputs``, for tools the typed model lacks) have theirs in ``operations.declared_inputs``.
"""

from collections.abc import (
    Iterator,
    Sequence,
)
from dataclasses import dataclass
from typing import Any

from galaxy_mcp_analysis.core.tool_inputs import (
    CONDITIONAL,
    REPEAT,
    SECTION,
)


@dataclass(frozen=True)
class DeclaredParameter:
    """One declared parameter that is not a group, where it sits."""

    #: Galaxy's typed parameter.
    parameter: Any
    #: Its path in the request's terms, ``[]`` for a repeat's blocks: ``queries[].input2``.
    path: str
    #: Names from the top of the tool down to the parameter's own.
    names: tuple[str, ...]
    #: Positions in ``names`` that are repeats holding the parameter.
    repeats: frozenset[int]
    #: The branches it sits in, ``{"cond.test": discriminator}`` (None at no conditional).
    when: dict[str, Any] | None


def declared_parameters(parameters: Sequence) -> Iterator[DeclaredParameter]:
    """Each parameter of ``parameters`` (``tool.parameters``) that is not a group, in declaration order, every
    branch of each conditional in its order (a conditional's test parameter is not listed)."""
    return _walk(parameters, "", (), None, frozenset())


def _walk(parameters: Sequence, path: str, names: tuple[str, ...], when: dict[str, Any] | None,
          repeats: frozenset[int]) -> Iterator[DeclaredParameter]:
    for parameter in parameters:
        kind = parameter.parameter_type
        here = f"{path}.{parameter.name}" if path else parameter.name
        inner = names + (parameter.name,)
        if kind == CONDITIONAL:
            for branch in parameter.whens:
                selected = (when or {}) | {f"{here}.{parameter.test_parameter.name}": branch.discriminator}
                yield from _walk(list(branch.parameters), here, inner, selected, repeats)
        elif kind == SECTION:
            yield from _walk(list(parameter.parameters), here, inner, when, repeats)
        elif kind == REPEAT:
            yield from _walk(list(parameter.parameters), f"{here}[]", inner, when, repeats | {len(names)})
        else:
            yield DeclaredParameter(parameter, here, inner, repeats, when)
