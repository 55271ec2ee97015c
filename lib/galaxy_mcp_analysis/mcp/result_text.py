"""What a tool result's text block carries when the structured result is large: one copy of the payload.

By default FastMCP sends a dict result twice: as ``structuredContent`` and as a text block
holding the whole result serialized to JSON, which the JSON-RPC envelope then escapes a
second time (a tab of tabular text costs 2 bytes in ``structuredContent`` and 3 in the
text block). A tool that opts in here keeps ``structuredContent`` exactly as before and
gets a text block a reader of text can use directly:

- ``RawText("content")``: a one-line JSON summary of the result's small fields, then the
  payload field's text raw (``peek_dataset_content``: the chunk, byte for byte);
  several payload fields follow each other under a ``--- <field> (<n> characters) ---`` line.
- ``RecordTexts("elements", "content")``: a one-line summary, then per record of a list field a
  ``--- `` line with its other fields and its text field raw (``peek_collection_content``).

A field too long for the summary line follows as a ``--- <field> ---`` section (then the payload
too is labelled): many clients hand the model the text block alone, so no field may be lost there.
- ``Table("contents")``: a one-line summary, then the records of a list field as a
  tab-separated table with one header line (``get_history_contents``), keys written once;
  ``once=("schema",)`` writes a large object that rows repeat once, after the table.

A result that carries images (``core.images.WithImages``: an image dataset read by peek_dataset_content)
gets one MCP ``image`` block per image after its text block; structuredContent describes them.

Opting in is one argument where a tool is declared: ``analysis_tool(..., text=RawText("content"))``
for the patch set's tools (mcp.declaration builds the result, so FastMCP never serializes the
whole result to text), or an entry of the ``{tool name: shape}`` table that ``ShapedText``
(a middleware) applies to Galaxy's stock tools. Errors are never reshaped.
"""

import base64
import json
from collections.abc import (
    Callable,
    Mapping,
)
from dataclasses import dataclass
from typing import Any

from fastmcp.server.middleware import Middleware
from fastmcp.tools.base import ToolResult
from mcp.types import (
    ImageContent,
    TextContent,
)

#: A summary line leaves out a field whose compact JSON is longer than this (structuredContent keeps it).
SUMMARY_VALUE_LIMIT = 200

#: Turns a tool's structured result into the text of its one text block.
TextShape = Callable[[dict[str, Any]], str]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def summary_fields(structured: Mapping[str, Any], leave_out: tuple[str, ...] = (), first: tuple[str, ...] = ()) -> dict:
    """The result's fields for a summary: ``first`` in that order, then the rest, without
    ``leave_out`` and without any value too long for a summary (structuredContent keeps those)."""
    shown: dict[str, Any] = {}
    for name in (*[name for name in first if name in structured], *structured):
        if name in shown or name in leave_out:
            continue
        if len(_compact(structured[name])) <= SUMMARY_VALUE_LIMIT:
            shown[name] = structured[name]
    return shown


def long_sections(structured: Mapping[str, Any], shown: Mapping[str, Any], leave_out: tuple[str, ...]) -> list[str]:
    """A ``--- name ---`` section for each field too long for the summary line: a reader of the text
    alone (many clients give the model only the text block) must not lose a field to its length."""
    return [f"--- {name} ---\n{value if isinstance(value, str) else _compact(value)}"
            for name, value in structured.items() if name not in shown and name not in leave_out]


@dataclass(frozen=True)
class RawText:
    """A summary line, then each named text field raw (absent, empty or non-text ones are skipped)."""

    fields: tuple[str, ...]
    first: tuple[str, ...] = ()

    def __init__(self, *fields: str, first: tuple[str, ...] = ()):
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "first", first)

    def __call__(self, structured: dict[str, Any]) -> str:
        texts = [(name, structured[name]) for name in self.fields if isinstance(structured.get(name), str)]
        raw = tuple(name for name, _ in texts)
        shown = summary_fields(structured, leave_out=raw, first=self.first)
        long_fields = long_sections(structured, shown, raw)
        if len(self.fields) == 1 and not long_fields:
            return _compact(shown) + "".join("\n" + text for _, text in texts)
        parts = [_compact(shown)]
        parts += [f"--- {name} ({len(text):,} characters) ---\n{text}" for name, text in texts if text]
        return "\n".join(parts + long_fields)


@dataclass(frozen=True)
class RecordTexts:
    """A summary line, then each record of the list ``path``: a ``--- {small fields}`` line and its ``text`` raw."""

    path: str
    text: str

    def __call__(self, structured: dict[str, Any]) -> str:
        records = structured.get(self.path)
        if not isinstance(records, list) or not all(isinstance(record, dict) for record in records):
            return _compact(structured)
        shown = summary_fields(structured, leave_out=(self.path,))
        # Said in words: agents that took the whole block for one JSON document failed to parse it (two trials).
        parts = [_compact(shown) + f"\n{self.path}: {len(records)} (each a '---' line of its fields as JSON, then "
                 f"its {self.text} as raw text; not one JSON document)"]
        for record in records:
            text = record.get(self.text)
            raw = (self.text,) if isinstance(text, str) else ()
            # Every small field of the record on its header line, whatever its length: a section after
            # the record's raw text could not be told apart from the text.
            fields = {name: value for name, value in record.items() if name not in raw}
            parts.append(f"--- {_compact(fields)}" + (f"\n{text}" if raw and text else ""))
        return "\n".join(parts + long_sections(structured, shown, (self.path,)))


#: Cells JSON spells without json.dumps (a 100-row table has about 1,100 cells; most are these).
_SCALAR_CELLS = {None: "null", True: "true", False: "false"}


def _cell(value: Any) -> str:
    """A table cell: a string as it is (quoted as JSON if it could break the row or read as JSON), else JSON."""
    if isinstance(value, str):
        if "\t" not in value and "\n" not in value and "\r" not in value and not value.startswith('"'):
            return value
    elif value is None or value is True or value is False:
        return _SCALAR_CELLS[value]
    elif type(value) is int:
        return str(value)
    return _compact(value)


def _flat(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A record's fields with nested objects spread into dotted columns (``object.state``)."""
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict) and value:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


@dataclass(frozen=True)
class Table:
    """A summary line, then the records of the list at ``path`` as a tab-separated table with a header.

    Each record's keys are written once (in the header) instead of once per record, nested
    objects become dotted columns, and no value is quoted twice. A column named in ``once``
    (a large object many records repeat, such as a step's tool schema) is not spread: its cell
    names a section after the table where each distinct value is written once. A field too
    long for the summary line follows as its own section, so a reader of text loses nothing.
    With ``columns``, the table keeps those columns (in that order) and a section after it names
    the ones it left out (HTML peeks, urls, model classes), which structuredContent still holds.
    An ``inline`` column's object stays in one cell as ``key=value; ...``: records whose objects have
    different keys (each job's own parameters) would otherwise spread into a wide, mostly empty table.
    """

    path: tuple[str, ...]
    once: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    inline: tuple[str, ...] = ()

    def __init__(self, *path: str, once: tuple[str, ...] = (), columns: tuple[str, ...] = (),
                 inline: tuple[str, ...] = ()):
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "once", once)
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "inline", inline)

    def __call__(self, structured: dict[str, Any]) -> str:
        records: Any = structured
        for key in self.path:
            records = records.get(key) if isinstance(records, dict) else None
        if not isinstance(records, list) or not all(isinstance(record, dict) for record in records):
            return _compact(structured)
        # The summary: the small fields of the result and of each dict on the way to the list;
        # the long ones become sections after the table.
        summary: dict[str, Any] = {}
        long_fields: dict[str, Any] = {}
        container: Any = structured
        for depth, key in enumerate(self.path):
            shown = summary_fields(container, leave_out=(key,))
            summary.update(shown)
            prefix = ".".join(self.path[:depth])
            long_fields.update({
                f"{prefix}.{name}" if prefix else name: value
                for name, value in container.items() if name != key and name not in shown
            })
            container = container[key]
        shared: dict[str, str] = {}  # compact JSON of a value -> the name of its section
        rows = [self._row(record, shared) for record in records]
        columns = list(dict.fromkeys(key for row in rows for key in row))
        left_out = [column for column in columns if self.columns and column not in self.columns]
        if self.columns:
            columns = [column for column in self.columns if column in columns]
        lines = [_compact(summary), f"{'.'.join(self.path)}: {len(rows)} rows", "\t".join(columns)]
        lines += ["\t".join(row.get(key, "") for key in columns) for row in rows]
        if left_out:
            lines.append(f"--- columns left out (structuredContent has them) ---\n{', '.join(left_out)}")
        lines += [f"--- {name} ---\n{value}" for value, name in shared.items()]
        lines += [f"--- {name} ---\n{_compact(value)}" for name, value in long_fields.items()]
        return "\n".join(lines)

    def _row(self, record: Mapping[str, Any], shared: dict[str, str]) -> dict[str, str]:
        """A record's cells; a ``once`` column's object is replaced by its section's name."""
        row: dict[str, str] = {}
        for key, value in record.items():
            if key in self.once and isinstance(value, dict | list) and value:
                text = _compact(value)
                row[key] = shared.setdefault(text, f"{key} {len(shared) + 1}")
            elif key in self.inline and isinstance(value, dict):
                row[key] = _cell("; ".join(f"{name}={cell if isinstance(cell, str) else _compact(cell)}"
                                           for name, cell in value.items()))
            elif isinstance(value, dict) and value:
                row.update({name: _cell(cell) for name, cell in _flat(value, f"{key}.").items()})
            else:
                row[key] = _cell(value)
        return row


def shaped_result(structured: dict[str, Any], shape: TextShape) -> ToolResult:
    """A tool result whose structuredContent is ``structured`` and whose one text block is ``shape``'s,
    followed by an ``image`` block for each image the result carries (core.images.WithImages), in order."""
    blocks: list[TextContent | ImageContent] = [TextContent(type="text", text=shape(structured))]
    blocks += [ImageContent(type="image", data=base64.b64encode(image.data).decode("ascii"), mime_type=image.mime_type)
               for image in getattr(structured, "images", ())]
    return ToolResult(content=blocks, structured_content=dict(structured))


class ShapedText(Middleware):
    """Reshape the text block of successful results of the tools in ``shapes`` (Galaxy's stock tools)."""

    def __init__(self, shapes: Mapping[str, TextShape]):
        self.shapes = dict(shapes)

    async def on_call_tool(self, context, call_next):
        result = await call_next(context)
        shape = self.shapes.get(context.message.name)
        if shape is None or result.is_error or not isinstance(result.structured_content, dict):
            return result
        result.content = [TextContent(type="text", text=shape(result.structured_content))]
        return result
