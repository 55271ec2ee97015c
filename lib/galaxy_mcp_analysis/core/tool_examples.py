"""A tool's own ``<tests>`` cases as examples an agent can read (pure).

Galaxy keeps each test case as a processed description: inputs by flat name (``cond|param``,
``repeat_0|param``) with a list of values each, outputs as dicts naming the file or value the
test compares against. This turns one case into plain JSON without losing a value.
"""

from collections.abc import (
    Mapping,
    Sequence,
)
from typing import Any


def example_from_test(
    index: int,
    tool_version: str,
    inputs: Mapping[str, Any],
    outputs: Sequence[Mapping[str, Any]],
    output_collections: Sequence[str] = (),
    expect_failure: bool = False,
) -> dict[str, Any]:
    """One test case: its flat inputs (one value, or a list where the test gives several), the
    outputs it checks (name -> the file or value compared), the collections it checks, and
    whether the test expects the tool to fail."""
    example: dict[str, Any] = {
        "index": index,
        "tool_version": tool_version,
        "inputs": {name: _single(value) for name, value in inputs.items()},
        "outputs": {
            str(output.get("name")): {"file": output.get("value")}
            for output in outputs
            if isinstance(output, Mapping)
        },
    }
    if output_collections:
        example["output_collections"] = list(output_collections)
    if expect_failure:
        example["expect_failure"] = True
    return example


def _single(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        values = [str(item) if item is not None else None for item in value]
        return values[0] if len(values) == 1 else values
    return str(value) if value is not None else None
