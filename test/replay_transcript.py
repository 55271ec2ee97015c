"""Record MCP calls as a walkthrough for doc/agent-guide.md, with volatile values normalised.

The replay test (test/integration/test_field_report_replay.py) calls every tool through a
``Transcript``. Each call is kept raw; ``render`` turns the calls of each guide block into text
once the run is over, so names given late (a job identified by a later call) apply everywhere.

Galaxy encodes every kind of id with the same secret, so a history, a dataset and a job with
the same database id share one encoded id. Ids are therefore named by (kind, id), and the
kind of an id is read from where it sits: its key (``job_id``, ``history_dataset_id=`` in
page markdown), the ``src`` or ``model_class`` of its object, or the list it is in (``jobs``).
Timestamps and waiting times, which change from run to run, become ``<time>``/``<seconds>``.
"""

import json
import re
from dataclasses import (
    dataclass,
    field,
)
from typing import Any

#: The kind of the id stored under a key, wherever that key appears.
KIND_OF_KEY = {
    "history_id": "history",
    "job_id": "job",
    "job_ids": "job",
    "dataset_id": "dataset",
    "dataset_ids": "dataset",
    "history_dataset_id": "dataset",
    "collection_id": "collection",
    "history_dataset_collection_id": "collection",
    "page_id": "page",
    "workflow_id": "workflow",
    "invocation_id": "invocation",
    "revision_id": "revision",
    "revision_ids": "revision",
    "latest_revision_id": "revision",
    "new_revision_id": "revision",
    "reverted_to": "revision",
    "rerun_of": "job",
    "resumed_jobs": "job",
    "metadata_job_id": "job",
    "replaced_dataset_id": "dataset",
}
#: The kind of the "id" of objects listed under a key.
KIND_OF_ITEMS = {
    "jobs": "job",
    "outputs": "dataset",
    "empty_outputs": "dataset",
    "implicit_collections": "collection",
    "output_collections": "collection",
    "revisions": "revision",
    "pages": "page",
}
KIND_OF_SRC = {"hda": "dataset", "hdca": "collection", "ldda": "library dataset"}
KIND_OF_MODEL = {
    "History": "history",
    "HistoryDatasetAssociation": "dataset",
    "HistoryDatasetCollectionAssociation": "collection",
    "Job": "job",
}
#: Values that change between identical runs.
VOLATILE_KEYS = {"create_time": "<time>", "update_time": "<time>", "waited_seconds": "<seconds>"}

ENCODED_ID = re.compile(r"\b[0-9a-f]{16}(?:[0-9a-f]{16})*\b")
ID_ARGUMENT = re.compile(r"\b(\w+_id)=(['\"]?)([0-9a-f]{16}(?:[0-9a-f]{16})*)\2(?![0-9a-f])")
TIMESTAMP = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?\b")

REFERRED_LENGTH = 200  # a document shown once is referred to, not repeated, when longer than this
ORDINALS = ("", "the second ", "the third ", "a later ")
ONE_LINE = 130  # a response longer than this, as compact JSON, gets one key per line
LONG_STRING = 600
LIST_ITEMS = 8  # longer lists keep their first LIST_ITEMS - 1 items and say how many more


class Names:
    """Placeholders for encoded ids, by (kind, id); unnamed ids become ``<kind>``."""

    def __init__(self):
        self.by_kind: dict[tuple[str, str], str] = {}

    def name(self, kind: str, encoded_id: str, placeholder: str) -> None:
        self.by_kind[(kind, encoded_id)] = f"<{placeholder}>"

    def of(self, kind: str | None, encoded_id: str) -> str:
        if kind is not None:
            return self.by_kind.get((kind, encoded_id), f"<{kind}>")
        # No context: a name only if exactly one kind of object has this id.
        found = {name for (_, value), name in self.by_kind.items() if value == encoded_id}
        return found.pop() if len(found) == 1 else "<id>"

    def text(self, text: str) -> str:
        """Ids inside free text (page markdown, error messages), by the argument that holds them."""
        text = ID_ARGUMENT.sub(lambda m: f"{m[1]}={m[2]}{self.of(KIND_OF_KEY.get(m[1]), m[3])}{m[2]}", text)
        text = ENCODED_ID.sub(lambda m: self.of(None, m[0]), text)
        return TIMESTAMP.sub("<time>", text)

    def value(self, value: Any, kind: str | None = None, key: str | None = None) -> Any:
        """A copy of a JSON value with ids named and volatile values replaced."""
        if key in VOLATILE_KEYS and value is not None:
            return VOLATILE_KEYS[key]
        if isinstance(value, dict):
            return self._object(value, kind)
        if isinstance(value, list):
            return [self.value(item, kind, key) for item in value]
        if isinstance(value, str):
            if kind is not None and ENCODED_ID.fullmatch(value):
                return self.of(kind, value)
            return self.text(value)
        return value

    def _object(self, value: dict, kind: str | None) -> dict:
        own_kind = (
            KIND_OF_SRC.get(value.get("src"))
            or KIND_OF_MODEL.get(value.get("model_class"))
            or (KIND_OF_SRC.get(value.get("element_type")) if "identifier" in value else None)
            or kind
        )
        element_kind = "collection" if value.get("element_type") == "dataset_collection" else "dataset"
        copy = {}
        for key, item in value.items():
            if key == "id":
                item_kind = own_kind
            elif key == "object":  # a collection element's dataset (or inner collection)
                item_kind = element_kind
            else:
                item_kind = KIND_OF_KEY.get(key) or KIND_OF_ITEMS.get(key)
            copy[key] = self.value(item, item_kind, key)
        return copy


def pick(value: Any, spec: Any) -> Any:
    """The parts of a response named by spec: True (all), a list of keys, or {key: spec}."""
    if spec is True:
        return value
    if isinstance(value, list):
        return [pick(item, spec) for item in value]
    if not isinstance(value, dict):
        return value
    if isinstance(spec, (list, tuple)):
        spec = {key: True for key in spec}
    return {key: pick(value[key], sub) for key, sub in spec.items() if key in value}


def trim(value: Any) -> Any:
    """Shorten long lists and strings so a response stays readable in the guide."""
    if isinstance(value, dict):
        return {key: trim(item) for key, item in value.items()}
    if isinstance(value, list):
        if len(value) > LIST_ITEMS:
            return [trim(item) for item in value[: LIST_ITEMS - 1]] + [f"... {len(value) - LIST_ITEMS + 1} more"]
        return [trim(item) for item in value]
    if isinstance(value, str) and len(value) > LONG_STRING:
        return value[:LONG_STRING] + f"... ({len(value) - LONG_STRING} more characters)"
    return value


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def render_response(value: Any, indent: int = 0) -> str:
    """Compact JSON where it fits on a line; otherwise one key (or list item) per line."""
    one_line = compact(value)
    if len(one_line) + indent <= ONE_LINE or not isinstance(value, (dict, list)) or not value:
        return one_line
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{pad}{compact(key)}: {render_response(item, indent + 2)}" for key, item in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + render_response(item, indent + 2) for item in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def is_document(value: Any) -> bool:
    return isinstance(value, str) and value.count("\n") >= 3


def render_argument(key: str, value: Any, indent: int = 0) -> str:
    if is_document(value):
        return f'{key}="""\n{value}"""'  # page markdown, read as it is written
    return f"{key}={render_response(value, indent + len(key) + 1)}"


def render_call(tool: str, arguments: list[tuple[str, Any]]) -> str:
    """tool(k=v, ...) on one line if it fits and holds no document, else one argument per line."""
    one_line = f"{tool}({', '.join(f'{key}={compact(value)}' for key, value in arguments)})"
    if len(one_line) <= ONE_LINE and not any(is_document(value) for _, value in arguments):
        return one_line
    return f"{tool}(\n" + ",\n".join("  " + render_argument(key, value, 2) for key, value in arguments) + "\n)"


def refer(value: Any, seen: dict[str, str]) -> Any:
    """Documents already shown in an earlier call become a reference to that call."""
    if isinstance(value, dict):
        return {key: refer(item, seen) for key, item in value.items()}
    if isinstance(value, list):
        return [refer(item, seen) for item in value]
    # Short documents (a small table read back) are clearer shown again.
    return f"<same text as {seen[value]}>" if value in seen and len(value) > REFERRED_LENGTH else value


@dataclass
class Call:
    tool: str
    arguments: dict[str, Any]
    response: Any  # structured content, or the error text
    is_error: bool
    show: Any  # None: counted but not shown; else the pick() spec of the response
    block: str


@dataclass
class Transcript:
    """Every MCP call of a run, grouped into the guide's blocks."""

    client: Any
    api_key: str
    names: Names = field(default_factory=Names)
    calls: list[Call] = field(default_factory=list)
    block: str = "start"

    def ok(self, tool: str, /, show: Any = True, **arguments) -> dict[str, Any]:
        result = self.client.call(tool, {**arguments, "api_key": self.api_key})
        self.calls.append(Call(tool, arguments, self._content(result), result.is_error, show, self.block))
        if result.is_error:
            raise AssertionError(f"{tool} failed: {self.calls[-1].response}")
        return result.structured_content

    def error(self, tool: str, /, show: Any = True, **arguments) -> str:
        result = self.client.call(tool, {**arguments, "api_key": self.api_key})
        self.calls.append(Call(tool, arguments, self._content(result), result.is_error, show, self.block))
        if not result.is_error:
            raise AssertionError(f"{tool} succeeded but an error was expected: {result.structured_content}")
        return self.calls[-1].response

    @staticmethod
    def _content(result) -> Any:
        if result.is_error:
            return "\n".join(getattr(block, "text", "") for block in result.content)
        return result.structured_content

    def render(self) -> dict[str, str]:
        """{block: the block's calls as text}; hidden calls are summed up after the call they follow."""
        blocks: dict[str, list[str]] = {}
        hidden: dict[str, list[str]] = {}
        seen: dict[str, str] = {}  # documents shown so far, and in which call
        for call in self.calls:
            entries = blocks.setdefault(call.block, [])
            if call.show is None:
                hidden.setdefault(call.block, []).append(call.tool)
                continue
            self._flush(entries, hidden.pop(call.block, []))
            entries.append(self._render_call(call, seen))
        for block, entries in blocks.items():
            self._flush(entries, hidden.pop(block, []))
        return {block: "````\n" + "\n\n".join(entries) + "\n````\n" for block, entries in blocks.items()}

    @staticmethod
    def _flush(entries: list[str], tools: list[str]) -> None:
        for tool in dict.fromkeys(tools):
            count = tools.count(tool)
            entries.append(f"# ... {count} more {tool} call{'s' if count > 1 else ''} like this")

    def _render_call(self, call: Call, seen: dict[str, str]) -> str:
        arguments = []
        for key, value in call.arguments.items():
            value = self.names.value(value, KIND_OF_KEY.get(key), key)
            arguments.append((key, refer(value, seen)))
            if is_document(value) and value not in seen:
                earlier = sum(label.endswith(f" {call.tool} above") for label in seen.values())
                seen[value] = f"the {key} of {ORDINALS[min(earlier, 3)]}{call.tool} above"
        head = render_call(call.tool, arguments)
        if call.is_error:
            return head + "\n-> error:\n" + "\n".join("   " + line for line in self.names.text(call.response).splitlines())
        # Names first: they read model_class, src and element_type, which pick() may drop.
        shown = trim(refer(pick(self.names.value(call.response), call.show), seen))
        return head + "\n-> " + render_response(shown)


BLOCK = re.compile(r"<!-- replay:(?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /replay:(?P=name) -->", re.S)


def guide_blocks(guide: str) -> dict[str, str]:
    """{name: body} of every generated block in the guide."""
    return {match["name"]: match["body"] for match in BLOCK.finditer(guide)}


def update_guide(guide: str, blocks: dict[str, str]) -> str:
    """The guide with each generated block's body replaced; every block needs its markers already."""
    missing = set(blocks) - set(guide_blocks(guide))
    if missing:
        raise ValueError(f"doc/agent-guide.md has no markers for {sorted(missing)}: add "
                         f"'<!-- replay:NAME -->' and '<!-- /replay:NAME -->' lines where each belongs")
    return BLOCK.sub(lambda m: f"<!-- replay:{m['name']} -->\n{blocks.get(m['name'], m['body'])}"
                               f"<!-- /replay:{m['name']} -->", guide)
