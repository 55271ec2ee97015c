"""Issue 9, access matrix: every tool the patch set adds or wraps, called by every kind of caller on
private, shared and published items, through /api/mcp on a real Galaxy.

Callers: the owner, a second regular user, a bad key, no key. Items (one set per visibility):
a history holding a dataset, a collection, a failed job whose log names the set's marker, and a
notebook page with a revision. Set-up uses Galaxy's REST API; the calls under test use MCP only.

What is expected is decided by Galaxy, not by this file: for a read, the second user succeeds
exactly when Galaxy's REST API lets that user read the same object (the "oracle" path of the row);
writes to the owner's items are always refused. Every refusal is a coded error, and nothing a
caller other than the owner receives contains the private set's marker (it is part of every
name, content and log of the private items). The table must name every tool the patch set adds
(mcp_tools.TOOL_SPECS) or wraps (stock tools it overrides or re-describes), so a new tool cannot
be forgotten.
"""

import json
import re
import urllib.error
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from conftest import (
    fetch,
    patch_set_tools,
)
from galaxy_mcp_analysis.core.tool_facts import (
    example_call,
    example_items,
)
from galaxy_mcp_analysis.testing import (
    error_text,
    rest,
)
from galaxy_mcp_analysis.testing.audit import (
    complete,
    last_audit_line,
)
from galaxy_mcp_analysis.tools import TOOL_FACTS

LEVELS = ("private", "shared", "published")
CALLERS = ("owner", "other", "bad_key", "no_key")
BAD_KEY = "0" * 32
CODED = re.compile(r"^\[(VALIDATION_ERROR|NOT_FOUND|AUTHENTICATION_ERROR|AUTHORIZATION_ERROR|NOT_READY|CONFLICT|"
                   r"SYSTEM_ERROR)\] .+\nSuggestion: \S", re.S)
#: Refusals a caller may get for someone else's item (a private item may also be reported as absent).
REFUSED = ("AUTHORIZATION_ERROR", "NOT_FOUND")
INTERNALS = ("Traceback", 'File "/', "site-packages", ".py\"", "/galaxy/", "sqlalchemy", "SELECT ")


# ---- the items ----


@dataclass
class Items:
    level: str
    marker: str
    history_id: str
    dataset_id: str
    collection_id: str
    job_id: str
    page_id: str
    revision_id: str
    url: str = ""
    spare_id: str = ""  # a dataset only the rows that change datasets (update, delete, restore) touch
    workflow_id: str = ""
    invocation_id: str = ""
    spare_page_id: str = ""  # a page and a workflow only the delete and restore rows change
    spare_workflow_id: str = ""


@dataclass
class World:
    galaxy: object
    owner: str
    other: str
    items: dict[str, Items]
    scratch: dict[str, str]  # caller key -> a history of the caller's own

    def key(self, caller: str) -> str | None:
        return {"owner": self.owner, "other": self.other, "bad_key": BAD_KEY, "no_key": None}[caller]

    def rest_allows(self, path: str, caller: str) -> bool:
        try:
            rest(self.galaxy.galaxy_url, path, self.key(caller))
        except urllib.error.HTTPError as e:
            assert e.code in (400, 403, 404), (path, e.code)
            return False
        return True


def make_items(galaxy, mcp, owner, other_id, level, url) -> Items:
    marker = f"SECRET{level.upper()}{uuid.uuid4().hex[:10]}"
    gx = galaxy.galaxy_url
    history_id = mcp.call_ok("create_history", name=f"{marker}-history", api_key=owner)["id"]
    dataset = fetch(galaxy, owner, history_id, {"src": "pasted", "paste_content": f"{marker}-content\tx\n",
                                                "ext": "tabular", "name": f"{marker}-dataset"})
    collection = rest(gx, "/api/dataset_collections", owner, {
        "history_id": history_id, "collection_type": "list", "name": f"{marker}-collection",
        "element_identifiers": [{"name": f"{marker}-element", "src": "hda", "id": dataset["id"]}],
    })
    # Cut1 dies naming the column list it could not parse: the job's stderr carries the marker.
    run = mcp.call_ok("run_tool", history_id=history_id, tool_id="Cut1", api_key=owner, inputs={
        "input": {"src": "hda", "id": dataset["id"]}, "columnList": f"{marker}-LOG", "delimiter": "T"})
    [job] = run["jobs"]
    waited = mcp.call_ok("wait_for_jobs", job_ids=[job["id"]], timeout_seconds=120, api_key=owner)
    assert waited["jobs"][0]["state"] == "error", waited
    assert marker in mcp.call_ok("get_job_errors", job_id=job["id"], api_key=owner)["tool_stderr"]
    page = rest(gx, "/api/pages", owner, {"history_id": history_id, "title": f"{marker}-page",
                                          "content": f"# {marker}-page-text\n", "content_format": "markdown"})
    [revision] = rest(gx, f"/api/pages/{page['id']}/revisions", owner)
    spare = fetch(galaxy, owner, history_id, {"src": "pasted", "paste_content": f"{marker}-spare\n", "ext": "txt",
                                              "name": f"{marker}-spare"})
    workflow, invocation = make_workflow(gx, owner, marker, history_id, dataset["id"])
    spare_page = rest(gx, "/api/pages", owner, {"title": f"{marker}-spare-page", "content_format": "markdown",
                                                "slug": f"spare-{uuid.uuid4().hex[:12]}", "content": "# spare\n"})["id"]
    spare_workflow = rest(gx, "/api/workflows", owner, {"workflow": {
        "class": "GalaxyWorkflow", "label": f"{marker}-spare-workflow", "inputs": {"t": {"type": "data"}},
        "steps": {"cat": {"tool_id": "cat1", "in": {"input1": "t"}}}}, "fill_defaults": True})["id"]
    if level == "private":
        for dataset_id in (dataset["id"], run["outputs"][0]["id"], spare["id"]):
            rest(gx, f"/api/datasets/{dataset_id}/permissions", owner, {"action": "make_private"}, method="PUT")
    elif level == "shared":
        shared = rest(gx, f"/api/histories/{history_id}/share_with_users", owner, {"user_ids": [other_id]},
                      method="PUT")
        assert not shared.get("errors"), shared
        for page_id in (page["id"], spare_page):
            rest(gx, f"/api/pages/{page_id}/share_with_users", owner, {"user_ids": [other_id]}, method="PUT")
        for workflow_id in (workflow, spare_workflow):
            rest(gx, f"/api/workflows/{workflow_id}/share_with_users", owner, {"user_ids": [other_id]}, method="PUT")
    else:
        rest(gx, f"/api/histories/{history_id}/publish", owner, method="PUT")
        for page_id in (page["id"], spare_page):
            rest(gx, f"/api/pages/{page_id}/publish", owner, method="PUT")
        for workflow_id in (workflow, spare_workflow):
            rest(gx, f"/api/workflows/{workflow_id}/publish", owner, method="PUT")
    return Items(level, marker, history_id, dataset["id"], collection["id"], job["id"], page["id"], revision["id"],
                 url, spare_id=spare["id"], workflow_id=workflow, invocation_id=invocation, spare_page_id=spare_page,
                 spare_workflow_id=spare_workflow)


def make_workflow(gx, owner, marker, history_id, dataset_id) -> tuple[str, str]:
    """A one-step workflow named after the marker, and one invocation of it on the set's dataset."""
    document = {"class": "GalaxyWorkflow", "label": f"{marker}-workflow",
                "inputs": {"table": {"type": "data"}}, "steps": {"cat": {"tool_id": "cat1", "in": {"input1": "table"}}}}
    workflow = rest(gx, "/api/workflows", owner, {"workflow": document, "fill_defaults": True})["id"]
    invocation = rest(gx, f"/api/workflows/{workflow}/invocations", owner, {
        "history_id": history_id, "inputs": {"0": {"src": "hda", "id": dataset_id}}, "inputs_by": "step_index"})
    return workflow, invocation["id"]


@pytest.fixture(scope="module")
def world(galaxy, mcp, api_key, other_user_key, file_server):
    other_id = rest(galaxy.galaxy_url, "/api/users/current", other_user_key)["id"]
    url = file_server("access-matrix.txt", b"fetched by url\n")
    items = {level: make_items(galaxy, mcp, api_key, other_id, level, url) for level in LEVELS}
    scratch = {key: mcp.call_ok("create_history", name="scratch", api_key=key)["id"]
               for key in (api_key, other_user_key)}
    built = World(galaxy, api_key, other_user_key, items, scratch)
    # The set-up really is what its name says, by Galaxy's REST API.
    private, published = items["private"], items["published"]
    for path in (f"/api/datasets/{private.dataset_id}", f"/api/pages/{private.page_id}",
                 f"/api/histories/{private.history_id}", f"/api/jobs/{private.job_id}"):
        assert not built.rest_allows(path, "other"), path
    for path in (f"/api/datasets/{published.dataset_id}", f"/api/pages/{published.page_id}",
                 f"/api/histories/{published.history_id}", f"/api/jobs/{published.job_id}"):
        assert built.rest_allows(path, "other"), path
    return built


# ---- the table: how to call each tool on a set of items, and what Galaxy allows ----

READ, WRITE, LISTING = "read", "write", "listing"


@dataclass(frozen=True)
class Row:
    tool: str
    label: str
    kind: str
    arguments: Callable[[Items, World, str], dict]
    #: For reads (and Galaxy-governed writes): the REST path whose answer for this caller decides.
    oracle: Callable[[Items], str] | None = None
    #: The coded refusal the owner gets (cancel_job of the set's finished job), instead of a result.
    owner_code: str | None = None


def dataset_embed(items: Items) -> str:
    return f"```galaxy\nhistory_dataset_display(history_dataset_id={items.dataset_id})\n```\n"


def own_history(world: World, caller: str) -> str:
    """The caller's own history where there is one (a bad or missing key has none: use the owner's)."""
    return world.scratch.get(world.key(caller) or "", world.scratch[world.owner])


#: Each kind of item an example call names (core.tool_facts.ITEM_KINDS): where a set of items keeps it, and, for a
#: read, the REST path whose answer for the caller decides.
ITEM_FIELDS = {"history": "history_id", "dataset": "dataset_id", "collection": "collection_id", "job": "job_id",
               "page": "page_id", "revision": "revision_id", "workflow": "workflow_id", "invocation": "invocation_id",
               "url": "url", "spare_dataset": "spare_id", "spare_page": "spare_page_id",
               "spare_workflow": "spare_workflow_id"}
ORACLES = {
    "history": lambda i: f"/api/histories/{i.history_id}",
    "dataset": lambda i: f"/api/datasets/{i.dataset_id}",
    "collection": lambda i: f"/api/dataset_collections/{i.collection_id}?instance_type=history",
    "job": lambda i: f"/api/jobs/{i.job_id}",
    "page": lambda i: f"/api/pages/{i.page_id}",
    "revision": lambda i: f"/api/pages/{i.page_id}/revisions/{i.revision_id}",
    "workflow": lambda i: f"/api/workflows/{i.workflow_id}",
    "invocation": lambda i: f"/api/invocations/{i.invocation_id}",
}


def example_row(tool: str) -> Row:
    """The row of a tool's declared example call (ToolFacts.example) on a set of items: a write if the tool is not
    read-only, else a read decided by the last item it names (a listing when it names none)."""
    facts = TOOL_FACTS[tool]
    kinds = example_items(facts.example)
    arguments = lambda i, w, c: example_call(facts.example, {kind: getattr(i, field)  # noqa: E731
                                                               for kind, field in ITEM_FIELDS.items()})
    if not facts.read_only:
        return Row(tool, kinds[0] if kinds else "no item", WRITE, arguments)
    if not kinds:
        return Row(tool, "no item", LISTING, arguments)
    return Row(tool, kinds[-1], READ, arguments, ORACLES[kinds[-1]])


#: Rows written here: a second form of call (another item, another caller's history), and the tools whose example
#: row would expect the wrong thing (a read-only dry run that must run in the caller's history, a write Galaxy lets
#: any reader make, a listing that shows or hides an item, a finished job's refusal, a new name keeping the marker).
HAND_WRITTEN = [
    Row("update_page", "title", WRITE, lambda i, w, c: {"page_id": i.page_id, "title": "renamed"}),
    # A datatype change: Galaxy's metadata job runs for the owner (the example only renames).
    Row("update_dataset", "file type", WRITE, lambda i, w, c: {"dataset_id": i.spare_id, "file_type": "tabular"}),
    Row("get_job_errors", "job", READ, lambda i, w, c: {"job_id": i.job_id}, lambda i: f"/api/jobs/{i.job_id}?full=true"),
    Row("get_job_errors", "dataset", READ, lambda i, w, c: {"dataset_id": i.dataset_id},
        lambda i: f"/api/datasets/{i.dataset_id}"),
    Row("wait_for_jobs", "history", READ, lambda i, w, c: {"history_id": i.history_id, "timeout_seconds": 0},
        lambda i: f"/api/histories/{i.history_id}"),
    Row("list_page_revisions", "page", READ, lambda i, w, c: {"page_id": i.page_id},
        lambda i: f"/api/pages/{i.page_id}/revisions"),
    Row("list_pages", "history", LISTING,
        lambda i, w, c: {"history_id": i.history_id, "show_shared": True, "show_published": True},
        lambda i: f"/api/pages?history_id={i.history_id}&show_shared=true&show_published=true"),
    Row("validate_page_content", "dataset", LISTING, lambda i, w, c: {"content": dataset_embed(i)},
        lambda i: f"/api/datasets/{i.dataset_id}"),
    # Galaxy attaches a page to any history the caller can read (PageManager.create: check_accessible).
    Row("create_page", "history", READ, lambda i, w, c: {"history_id": i.history_id, "content": "# mine\n"},
        lambda i: f"/api/histories/{i.history_id}"),
    Row("create_page", "embed", READ, lambda i, w, c: {"title": "t", "slug": f"s-{uuid.uuid4().hex[:12]}",
                                                     "content": dataset_embed(i)},
        lambda i: f"/api/datasets/{i.dataset_id}"),
    # Pasted elements: uploaded into the history, so refused exactly like a paste into it.
    Row("create_collection", "pasted", WRITE, lambda i, w, c: {
        "history_id": i.history_id, "collection_type": "list",
        "element_identifiers": [{"name": "a", "src": "pasted", "content": "x\n"}]}),
    # The caller's own history, the item as an element: allowed exactly when the caller may read it.
    Row("create_collection", "element", READ, lambda i, w, c: {
        "history_id": own_history(w, c), "collection_type": "list",
        "element_identifiers": [{"name": "a", "src": "hda", "id": i.dataset_id}]},
        lambda i: f"/api/datasets/{i.dataset_id}"),
    Row("create_collection", "hdca-element", READ, lambda i, w, c: {
        "history_id": own_history(w, c), "collection_type": "list:list",
        "element_identifiers": [{"name": "a", "src": "hdca", "id": i.collection_id}]},
        lambda i: f"/api/dataset_collections/{i.collection_id}?instance_type=history"),
    Row("run_tool", "input", READ, lambda i, w, c: {
        "history_id": own_history(w, c), "tool_id": "cat1", "inputs": {"input1": {"src": "hda", "id": i.dataset_id}}},
        lambda i: f"/api/datasets/{i.dataset_id}"),
    # A dry run of run_tool: the history must be the caller's to run in, the inputs the caller's to read.
    Row("check_tool_inputs", "history", WRITE, lambda i, w, c: {
        "history_id": i.history_id, "tool_id": "cat1", "inputs": {"input1": {"src": "hda", "id": i.dataset_id}}}),
    Row("check_tool_inputs", "input", READ, lambda i, w, c: {
        "history_id": own_history(w, c), "tool_id": "cat1", "inputs": {"input1": {"src": "hda", "id": i.dataset_id}}},
        lambda i: f"/api/datasets/{i.dataset_id}"),
    # Into the caller's own history: allowed exactly when the caller may read the job (and so its input).
    Row("rerun_job", "own history", READ, lambda i, w, c: {"job_id": i.job_id, "history_id": own_history(w, c)},
        lambda i: f"/api/jobs/{i.job_id}"),
    Row("rerun_job", "replace outputs", WRITE, lambda i, w, c: {"job_id": i.job_id, "replace_outputs": True}),
    Row("cancel_job", "job", WRITE, lambda i, w, c: {"job_id": i.job_id}, owner_code="CONFLICT"),
    # The new name keeps the set's marker: what other callers must never see stays in the collection's name.
    Row("update_collection", "collection", WRITE, lambda i, w, c: {"collection_id": i.collection_id,
                                                                  "name": f"{i.marker}-renamed", "tags": ["matrix"]}),
    # A history's name, annotation and tags, by each caller; the new name keeps the set's marker.
    Row("update_history", "history", WRITE, lambda i, w, c: {"history_id": i.history_id, "name": f"{i.marker}-history",
                                                            "annotation": f"by {c}", "tags": [f"by_{c}"]}),
    Row("check_workflow_inputs", "workflow", READ, lambda i, w, c: {
        "workflow_id": i.workflow_id, "history_id": own_history(w, c), "inputs": {}},
        lambda i: f"/api/workflows/{i.workflow_id}"),
    # A workflow the caller may read is invoked into the caller's own history, on the set's dataset.
    Row("invoke_workflow", "workflow", READ, lambda i, w, c: {
        "workflow_id": i.workflow_id, "history_id": own_history(w, c),
        "inputs": {"table": {"src": "hda", "id": i.dataset_id}}},
        lambda i: f"/api/workflows/{i.workflow_id}"),
    Row("wait_for_jobs", "invocation", READ, lambda i, w, c: {"invocation_id": i.invocation_id, "timeout_seconds": 0},
        lambda i: f"/api/invocations/{i.invocation_id}"),
    Row("create_workflow", "no item", LISTING, lambda i, w, c: {"dry_run": True, "definition": {
        "class": "GalaxyWorkflow", "inputs": {"t": "data"}, "steps": {"c": {"tool_id": "cat1", "in": {"input1": "t"}}}}}),
]
#: Tools whose only rows are HAND_WRITTEN (the others also get their example's row).
NO_EXAMPLE_ROW = {"get_job_errors", "list_page_revisions", "list_pages", "validate_page_content", "create_page",
                  "check_tool_inputs", "cancel_job", "update_collection", "update_history", "check_workflow_inputs",
                  "invoke_workflow", "create_workflow"}
ROWS = [*(example_row(tool) for tool in sorted(patch_set_tools() - NO_EXAMPLE_ROW)), *HAND_WRITTEN]


def row_id(row: Row) -> str:
    return f"{row.tool}[{row.label}]"


def test_every_tool_the_patch_set_adds_or_wraps_has_a_row(mcp):
    live = {tool.name for tool in mcp.list_tools()}
    ours = patch_set_tools()
    assert ours <= live, f"declared but not served: {ours - live}"
    assert len(ours) >= 19
    missing = ours - {row.tool for row in ROWS}
    assert not missing, f"add access-matrix rows for {sorted(missing)}"
    assert {row.tool for row in ROWS} <= live


def call(mcp, world: World, row: Row, items: Items, caller: str):
    arguments = row.arguments(items, world, caller)
    key = world.key(caller)
    if key is not None:
        arguments["api_key"] = key
    elif caller == "no_key" and items.level == "shared":
        arguments["api_key"] = ""  # an empty key; the other levels omit it altogether
    return mcp.call(row.tool, arguments), arguments


def owner_view(world: World, items: Items) -> tuple:
    """What a refused write could change: the history (name, annotation, tags) and its items (hidden and deleted
    too), the page and its revisions, whether the spare page and workflow are deleted."""
    gx, owner = world.galaxy.galaxy_url, world.owner
    contents = rest(gx, f"/api/histories/{items.history_id}/contents", owner)
    page = rest(gx, f"/api/pages/{items.page_id}", owner)
    history = rest(gx, f"/api/histories/{items.history_id}", owner)
    return (
        (history["name"], history["annotation"], history["tags"]),
        rest(gx, f"/api/pages/{items.spare_page_id}", owner)["deleted"],
        rest(gx, f"/api/workflows/{items.spare_workflow_id}", owner)["deleted"],
        [tuple(c.get(k) for k in ("id", "hid", "name", "visible", "deleted", "purged")) for c in contents],
        (page["title"], page["content"], page["latest_revision_id"]),
        rest(gx, f"/api/pages/{items.page_id}/revisions", owner),
    )


def expect_refused(world: World, row: Row, result, text: str, codes: tuple[str, ...], context) -> None:
    assert result.is_error, (context, result.structured_content)
    assert CODED.match(text), f"{context}: uncoded refusal {text[:300]!r}"
    assert text[1:].split("]")[0] in codes, (context, text)


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("row", ROWS, ids=row_id)
def test_access(mcp, world, row, caller):
    for level in LEVELS:
        items = world.items[level]
        guarded = row.kind == WRITE and caller != "owner"
        before = owner_view(world, items) if guarded else None
        result, arguments = call(mcp, world, row, items, caller)
        check_audit_line(world, row, caller, arguments, result, items)
        if guarded:
            assert owner_view(world, items) == before, f"a refused {row_id(row)} changed the owner's items"
        context = f"{row_id(row)} as {caller} on {level} items"
        text = error_text(result) if result.is_error else str(result.structured_content)
        for internal in INTERNALS:
            assert internal not in text, (context, text[:500])
        if caller == "owner" and row.owner_code:
            expect_refused(world, row, result, text, (row.owner_code,), context)
            continue
        if caller == "owner":
            assert not result.is_error, (context, text[:500])
            if row.kind == WRITE:  # let the owner's new items settle (Galaxy renames an upload when it ends)
                mcp.call_ok("wait_for_jobs", history_id=items.history_id, timeout_seconds=120, api_key=world.owner)
            continue
        # Nothing of a private item ever reaches anyone but its owner; nothing at all reaches a bad key.
        secrets = [world.items[lvl].marker for lvl in (LEVELS if caller != "other" else ("private",))]
        for secret in secrets:
            assert secret not in text, (context, text[:500])
        if caller in ("bad_key", "no_key"):
            expect_refused(world, row, result, text, ("AUTHENTICATION_ERROR",), context)
            continue
        allowed = world.rest_allows(row.oracle(items), caller) if row.oracle else True
        if row.tool == "list_pages":  # a listing is always allowed; what matters is whether it shows the page
            listed = rest(world.galaxy.galaxy_url, row.oracle(items), world.key(caller))
            allowed = items.page_id in [page["id"] for page in listed]
        if row.kind == WRITE:
            expect_refused(world, row, result, text, REFUSED, context)
        elif row.kind == READ:
            if allowed:
                assert not result.is_error, (context, text[:500])
            else:
                expect_refused(world, row, result, text, REFUSED + ("VALIDATION_ERROR",) * _refused_as_input(row),
                               context)
        else:
            assert not result.is_error, (context, text[:500])
            check_listing(row, items, result.structured_content, allowed, context)


_user_ids: dict[str, str] = {}


def check_audit_line(world: World, row: Row, caller: str, arguments: dict, result, items: Items) -> None:
    """The call just made is the audit trail's newest line, complete, naming the caller, what it touched
    (each id with its kind) and, for a call about one of the owner's items, that item's history."""
    line = last_audit_line(world.galaxy.audit_log)
    key = world.key(caller)
    if caller in ("owner", "other") and key not in _user_ids:
        _user_ids[key] = rest(world.galaxy.galaxy_url, "/api/users/current", key)["id"]
    assert complete(line), line
    assert (line["tool"], line["user_id"]) == (row.tool, _user_ids.get(key)), line
    assert line["arguments"] == {name: value for name, value in arguments.items() if name != "api_key"}, line
    assert not key or key not in json.dumps(line)
    outcome = error_text(result)[1:].split("]")[0] if result.is_error else "ok"
    assert line["outcome"] == outcome, (line, error_text(result)[:200])
    touched = [found for kind in ("created", "changed", "deleted", "purged", "jobs") for found in line[kind]]
    assert sorted(touched) == sorted(found for by_kind in line["touched"].values() for ids in by_kind.values()
                                     for found in ids), line
    if result.is_error or row.tool in READ_ONLY_TOOLS:
        assert touched == [], line
    elif row.kind == WRITE and row.tool not in CREATES_LATER:  # the owner's write: its line names what it touched
        assert touched, (line, result.structured_content)
    if caller == "owner" and not result.is_error and row.tool in ABOUT_ONE_ITEM:
        assert line["history_id"] == arguments.get("history_id", items.history_id), line


#: Writes whose call itself creates nothing: create_upload_url's URL; the upload's own audit line names the
#: dataset and job it made (test_upload_url.py).
CREATES_LATER = {"create_upload_url"}
#: Tools whose call names one item (a job, a dataset) and whose audit line names that item's history.
ABOUT_ONE_ITEM = {"cancel_job", "rerun_job", "update_dataset", "update_collection", "get_job_errors",
                  "peek_dataset_content", "peek_collection_content", "update_history"}


#: Tools of the table that never write (their owner rows succeed and touch nothing): the read-only ones, and
#: create_workflow, whose row is a dry run.
READ_ONLY_TOOLS = {name for name, facts in TOOL_FACTS.items() if facts.read_only} | {"create_workflow"}


def _refused_as_input(row: Row) -> bool:
    """Tools that check a referenced id as part of their input: an unreadable one is invalid input there."""
    return row.tool == "create_page" and row.label == "embed"


def check_listing(row: Row, items: Items, result: dict, allowed: bool, context) -> None:
    if row.tool == "list_pages":
        assert (items.page_id in [page["id"] for page in result["pages"]]) == allowed, (context, result)
    elif row.tool == "validate_page_content":
        assert result["valid"] == allowed, (context, result)
        if not allowed:
            assert result["errors"][0]["rule"] == "unknown_reference", (context, result)
