"""A loaded tool's declared inputs (Galaxy's ``tool.inputs``: parameters, and the repeats,
conditionals and sections holding them), walked once for every reader of the declaration.

Galaxy's own walker, ``galaxy.tools.parameters.visit_input_values``, walks a *state*: one branch
of each conditional, the repeat blocks the state has. What a tool declares (the map-over hints of
``get_tool_details``, ``get_tool_help``'s input formats, a job's conditional selectors) needs every
branch, and a repeat's inputs once for all its blocks: that is this walk. Each parameter comes
with the names above it and which of them are repeats, from which ``core.flat_names`` makes its
one flat name.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from galaxy_mcp_analysis.core.flat_names import path_name
from galaxy_mcp_analysis.core.map_over import (
    DataInput,
    one_per_name,
)

DATA_TYPES = ("data", "data_collection")


@dataclass(frozen=True)
class Declared:
    """One declared parameter or group, where it sits in the tool's inputs."""

    #: Galaxy's parameter (``ToolParameter``) or group (``Repeat``, ``Conditional``, ``Section``).
    parameter: Any
    #: Names from the top of the tool down to this parameter's own, e.g. ("queries", "input2").
    path: tuple[str, ...]
    #: Positions in ``path`` that are repeats holding this parameter (not the parameter itself).
    repeats: frozenset[int]

    @property
    def kind(self) -> str:
        return self.parameter.type

    @property
    def flat_name(self) -> str:
        """Galaxy's flat name, ``<index>`` for each repeat block: ``queries_<index>|input2``."""
        return path_name(self.path, self.repeats)


def declared_inputs(inputs: dict) -> Iterator[Declared]:
    """Every parameter and group of ``inputs`` (``tool.inputs``) at any depth, a group before what it
    holds, the parameters of every conditional branch in the branches' order."""
    yield from _walk(inputs, (), frozenset())


def _walk(inputs: dict, path: tuple[str, ...], repeats: frozenset[int]) -> Iterator[Declared]:
    for parameter in inputs.values():
        here = path + (parameter.name,)
        yield Declared(parameter, here, repeats)
        if parameter.type == "repeat":
            yield from _walk(parameter.inputs, here, repeats | {len(path)})
        elif parameter.type == "conditional":
            for case in parameter.cases:
                yield from _walk(case.inputs, here, repeats)
        elif parameter.type == "section":
            yield from _walk(parameter.inputs, here, repeats)


def declared_data_inputs(inputs: dict) -> Iterator[Declared]:
    """The dataset and collection parameters among ``declared_inputs(inputs)``."""
    return (declared for declared in declared_inputs(inputs) if declared.kind in DATA_TYPES)


def data_inputs(inputs: dict) -> list[DataInput]:
    """The dataset and collection parameters of ``inputs`` as map-over sees them, one per flat name."""
    return one_per_name(
        DataInput(
            path=declared.path,
            repeats=declared.repeats,
            collection=declared.kind == "data_collection",
            multiple=bool(getattr(declared.parameter, "multiple", False)),
        )
        for declared in declared_data_inputs(inputs)
    )
