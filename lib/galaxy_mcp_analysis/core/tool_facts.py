"""What each MCP tool does, in one row per tool: the table the admin's rules and the audit trail read.

Pure (no Galaxy). Our tools declare their row as arguments of ``mcp.declaration.analysis_tool``,
beside their code; Galaxy's 37 stock tools in the one stock table, ``tools/stock.py``;
``tools.TOOL_FACTS`` joins both, and ``test_every_tool.py`` fails when a tool served by a live
``tools/list`` has no row. The policy's classes, the Galaxy tools a call runs, job counting,
invocation limits, the check of the names in a policy file, and the audit trail's effects,
``touched`` and history all read a tool's row; nothing keeps a list of tool names of its own.
"""

from collections.abc import (
    Callable,
    Mapping,
)
from dataclasses import (
    dataclass,
    field,
)
from typing import Any

#: The classes a policy rule may name instead of tools, each read off a tool's facts (``ToolFacts.classes``).
CLASSES = ("read_only", "destructive", "creates_jobs", "purge")
#: What the argument named by ``Runs`` holds: a Galaxy tool id, a job (its tool runs again), a saved
#: workflow (each step's tool runs), or a user-defined tool's uuid (``user_tool:<uuid>`` in tool rules).
RUN_KINDS = ("tool", "job", "workflow", "user_tool")
#: Where a call's history is read when a tool names no other place: its argument, else its result's field.
HISTORY_PATHS = ("arguments.history_id", "result.history_id")
#: The audit trail's effects of a call that runs a tool: its outputs and its jobs.
RUN_EFFECTS = {
    "created": (("result.outputs[].id", "dataset"), ("result.output_collections[].id", "collection"),
                ("result.implicit_collections[].id", "collection")),
    "jobs": (("result.jobs[].id", "job"),),
}

#: Per kind of effect (created, changed, deleted, jobs): the argument or result paths holding the ids,
#: each with the kind of object it names (``result.a[].b``: field ``b`` of each element of list ``a``).
Effects = Mapping[str, tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class Runs:
    """The Galaxy tools a call runs: named by the argument ``argument``, which holds a ``kind`` of RUN_KINDS."""

    argument: str
    kind: str

    def __post_init__(self):
        if self.kind not in RUN_KINDS:
            raise ValueError(f"Runs.kind {self.kind!r} is not one of {', '.join(RUN_KINDS)}")


#: The tool sets built in (a policy file adds its own): ``core``, the field-report analysis of doc/agent-guide.md
#: (paste, gather, map over, wait, read, diagnose, repair, notebook) in under 20 KB of tools/list
#: (test_field_report_replay).
BUILT_IN_TOOLSETS = ("core",)

#: The kinds of item an example call may name (``Item``): what a test's fixture makes once and hands over by kind.
#: ``job`` is a finished tool job; the ``spare_*`` items are the ones only deleting, restoring and updating calls
#: change; ``url`` is a URL the server can fetch.
ITEM_KINDS = ("history", "dataset", "collection", "job", "page", "revision", "workflow", "invocation", "url",
              "spare_dataset", "spare_page", "spare_workflow")


@dataclass(frozen=True)
class Item:
    """In an example call, the id of an item of this kind (ITEM_KINDS), filled in by ``example_call``."""

    kind: str

    def __post_init__(self):
        if self.kind not in ITEM_KINDS:
            raise ValueError(f"Item.kind {self.kind!r} is not one of {', '.join(ITEM_KINDS)}")


def example_call(example: Any, ids: Mapping[str, Any]) -> Any:
    """``example`` with every ``Item`` replaced by ``ids[item.kind]`` (a fresh copy: callers may change it)."""
    if isinstance(example, Item):
        return ids[example.kind]
    if isinstance(example, Mapping):
        return {name: example_call(value, ids) for name, value in example.items()}
    if isinstance(example, (list, tuple)):
        return [example_call(value, ids) for value in example]
    return example


def example_items(example: Any) -> list[str]:
    """The kinds of item an example call names, in the order its arguments name them."""
    if isinstance(example, Item):
        return [example.kind]
    values = example.values() if isinstance(example, Mapping) else example if isinstance(example, (list, tuple)) else ()
    return [kind for value in values for kind in example_items(value)]


@dataclass(frozen=True)
class ToolFacts:
    """One MCP tool's facts: its annotations, whether it starts jobs, which Galaxy tools it runs, which
    argument makes it purge, where its history is named, and the ids its calls create, change or delete."""

    name: str
    title: str
    read_only: bool
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    #: True, or for a tool that starts a job only in one form of call, the test of a call's arguments
    #: (``create_collection``: pasted elements are uploaded by a job, existing datasets are not).
    starts_jobs: bool | Callable[[Mapping[str, Any]], bool] = False
    runs: Runs | None = None
    #: The argument whose true value makes a call purge (class ``purge``; the audit's ``deleted`` become ``purged``).
    purges_with: str | None = None
    history: tuple[str, ...] = HISTORY_PATHS
    effects: Effects = field(default_factory=dict)
    #: The built-in tool sets (``?toolset=`` on the MCP URL, BUILT_IN_TOOLSETS) that list this tool.
    toolsets: tuple[str, ...] = ()
    #: One valid call (its arguments, ``Item`` where an id goes), never shown to agents: the access matrix, the
    #: hostile-input cases and the description checks of the test suite start from it.
    example: Mapping[str, Any] | None = None

    def __post_init__(self):
        unknown = set(self.toolsets) - set(BUILT_IN_TOOLSETS)
        if unknown:
            raise ValueError(f"{self.name}: toolsets {sorted(unknown)} are not among {', '.join(BUILT_IN_TOOLSETS)}")

    @property
    def invokes_workflows(self) -> bool:
        """Counted by ``invocations_per_hour``."""
        return self.runs is not None and self.runs.kind == "workflow"

    def purges(self, arguments: Mapping[str, Any] | None) -> bool:
        return bool(self.purges_with and arguments is not None and arguments.get(self.purges_with))

    def starts_jobs_in(self, arguments: Mapping[str, Any] | None) -> bool:
        """Whether this call starts jobs; of the tool itself (None) only when every call does."""
        if callable(self.starts_jobs):
            return arguments is not None and self.starts_jobs(arguments)
        return self.starts_jobs

    def classes(self, arguments: Mapping[str, Any] | None = None) -> set[str]:
        """The policy classes of a call (``arguments``), or of the tool itself (None: listing, no purge, and
        ``creates_jobs`` only for a tool whose every call starts jobs)."""
        found = {name for name, on in (("read_only", self.read_only), ("destructive", self.destructive),
                                       ("creates_jobs", self.starts_jobs_in(arguments))) if on}
        if self.purges(arguments):
            found.add("purge")
        return found


def facts_table(rows) -> dict[str, ToolFacts]:
    """The table by name; a tool declared twice is an error (one row per tool)."""
    table: dict[str, ToolFacts] = {}
    for row in rows:
        if row.name in table:
            raise ValueError(f"the tool {row.name!r} has two rows of facts")
        table[row.name] = row
    return table
