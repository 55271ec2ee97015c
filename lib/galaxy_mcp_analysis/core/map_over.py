"""Map-over for ``run_tool``: when a bare collection given to a dataset input means "once per element".

Galaxy maps a tool over a collection only when the input's value is in its batch
form, ``{"batch": true, "values": [{"src": "hdca", "id": ...}]}``; a bare
``{"src": "hdca", "id": ...}`` on a single-dataset input is refused. An agent that
passes the bare form can only mean map-over, so it is wrapped, and the wrapped
inputs are reported (``mapped_over``).

Never wrapped:

- inputs the tool declares as collections (``data_collection``): the collection
  is the input;
- ``multiple="true"`` dataset inputs: Galaxy accepts a collection there as one
  input of all its elements (one job), and wrapping would turn that into one job
  per element;
- values already in batch (or any ``values``) form, and anything that is not a
  bare ``hdca`` reference;
- keys that name no dataset input of the tool (Galaxy reports those itself).

Names are those of Galaxy's flat ``inputs`` (what ``run_tool`` sends, the
"legacy" input format): a parameter inside a conditional or section is
``cond|input``, inside the n-th repeat block ``queries_<n>|input2``. Galaxy looks
for batch values only at those flat keys, so nested dictionaries are left alone.
"""

import re
from collections.abc import Iterable
from dataclasses import (
    dataclass,
    field,
)
from typing import Any

from galaxy_mcp_analysis.core.flat_names import (
    ANY_BLOCK,
    path_name,
)

#: What a dataset input is mapped over with; ``<collection_id>`` is the placeholder agents fill in.
COLLECTION_PLACEHOLDER = "<collection_id>"


@dataclass(frozen=True)
class DataInput:
    """A ``data`` or ``data_collection`` parameter of a tool, where it sits in the tool's inputs."""

    #: Parameter names from the top of the tool down, e.g. ("queries", "input2").
    path: tuple[str, ...]
    #: Positions in ``path`` that are repeat blocks (their flat name gets ``_<index>``).
    repeats: frozenset[int] = frozenset()
    #: ``type="data_collection"``: the whole collection is the input.
    collection: bool = False
    #: ``type="data" multiple="true"``: takes many datasets (or one collection) in one job.
    multiple: bool = False

    @property
    def name(self) -> str:
        """The flat key of this input, ``<index>`` standing for a repeat block's number."""
        return path_name(self.path, self.repeats)

    @property
    def maps_over_collections(self) -> bool:
        return not (self.collection or self.multiple)

    def is_named_by(self, key: str) -> bool:
        return self._pattern().fullmatch(key) is not None

    def _pattern(self) -> re.Pattern:
        steps = (re.escape(step) + (r"_\d+" if i in self.repeats else "") for i, step in enumerate(self.path))
        return re.compile(r"\|".join(steps))


@dataclass(frozen=True)
class MapOverPlan:
    #: The inputs to send to Galaxy, bare collections on dataset inputs wrapped.
    inputs: dict[str, Any]
    #: One entry per collection mapped over: {"input": flat key, "collection_id": id, "wrapped": whether a bare
    #: collection was put in the batch form here}.
    mapped_over: list[dict[str, Any]] = field(default_factory=list)


def one_per_name(declared: Iterable[DataInput]) -> list[DataInput]:
    """One declaration per flat name, in order; where two conditional cases share a name,
    the one that must not be wrapped wins, so a collection input is never wrapped by mistake."""
    by_name: dict[str, DataInput] = {}
    for data_input in declared:
        known = by_name.get(data_input.name)
        if known is None or (known.maps_over_collections and not data_input.maps_over_collections):
            by_name[data_input.name] = data_input
    return list(by_name.values())


def batch_form(collection: dict[str, Any]) -> dict[str, Any]:
    """Galaxy's map-over value for one collection reference."""
    return {"batch": True, "values": [collection]}


def plan_map_over(data_inputs: list[DataInput], inputs: dict[str, Any]) -> MapOverPlan:
    """Wrap each bare ``hdca`` given to a single-dataset input into the batch form."""
    planned = dict(inputs)
    mapped_over = []
    for key, value in inputs.items():
        # Collections already in the batch form are mapped over too: listed, so an agent reading the result
        # never takes an empty list for "not mapped".
        mapped_over += [{"input": key, "collection_id": item["id"], "wrapped": False} for item in _batched(value)]
        if not _is_bare_collection(value):
            continue
        target = next((data_input for data_input in data_inputs if data_input.is_named_by(key)), None)
        if target is None or not target.maps_over_collections:
            continue
        planned[key] = batch_form(value)
        mapped_over.append({"input": key, "collection_id": value["id"], "wrapped": True})
    return MapOverPlan(planned, mapped_over)


def _batched(value: Any) -> list[dict[str, Any]]:
    """The collections a value in Galaxy's batch form maps over (none for any other value)."""
    if not (isinstance(value, dict) and value.get("batch") is True and isinstance(value.get("values"), list)):
        return []
    return [item for item in value["values"] if isinstance(item, dict) and item.get("src") == "hdca" and "id" in item]


def map_over_hint(data_input: DataInput) -> dict[str, Any]:
    """What ``get_tool_details`` says about giving this input a collection."""
    example_key = data_input.name.replace(ANY_BLOCK, "0")
    if data_input.collection:
        return {"takes_collection": True, "note": "The collection is the input; it is never wrapped for map-over."}
    if data_input.multiple:
        return {
            "takes_collection": True,
            "note": "A collection here is one input of all its elements (one job); it is never wrapped.",
        }
    return {
        "takes_collection": False,
        "map_over": {example_key: batch_form({"src": "hdca", "id": COLLECTION_PLACEHOLDER})},
        "note": "One job per collection element; a bare {'src': 'hdca'} here is wrapped into this form.",
    }


def _is_bare_collection(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("src") == "hdca"
        and "id" in value
        and not ({"batch", "values"} & value.keys())
    )


#: The ``src`` kinds of run_tool input values that name an existing history or library item.
REFERENCED_SOURCES = ("hda", "hdca", "ldda")
#: How deep input values are searched; Galaxy's own inputs nest only a few levels.
MAX_REFERENCE_DEPTH = 64


def input_references(inputs: Any) -> list[tuple[str, str, str]]:
    """``(path, src, id)`` of every existing item a run_tool ``inputs`` value names, at any depth.

    Covers plain values, batch values and lists of values (multiple inputs). Anything
    deeper than MAX_REFERENCE_DEPTH is left to Galaxy, which rejects it as a parameter.
    """
    found: list[tuple[str, str, str]] = []

    def walk(value: Any, path: str, depth: int) -> None:
        if depth > MAX_REFERENCE_DEPTH:
            return
        if isinstance(value, dict):
            if value.get("src") in REFERENCED_SOURCES and isinstance(value.get("id"), str):
                found.append((path, value["src"], value["id"]))
                return
            for key, inner in value.items():
                walk(inner, f"{path}.{key}" if path else str(key), depth + 1)
        elif isinstance(value, list):
            for index, inner in enumerate(value):
                walk(inner, f"{path}[{index}]", depth + 1)

    walk(inputs, "", 0)
    return found
