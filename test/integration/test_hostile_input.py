"""Issue 9, hostile input and nothing half-done, through /api/mcp on a real Galaxy.

Hostile input: for every tool the patch set adds or wraps and every parameter its live
inputSchema declares, generated cases (wrong types, missing, empty, huge, negative, malformed
and foreign ids, unicode and control characters, path-like strings, oversized nesting). Each
gets a coded error or a correct result; none a traceback, a path, a [SYSTEM_ERROR] (a 500), a
hang, or a change to the history or page when it failed. New tools and parameters get cases
automatically (a tool without a base call in BASE_CALLS fails the test).

How schema errors look: arguments that do not fit the inputSchema (wrong JSON type, a missing
required argument) are refused by FastMCP before any tool code runs, with pydantic's text
"1 validation error for call[<tool>] ..."; issue 7's error middleware codes them as
[VALIDATION_ERROR]. Until it does, they are counted apart ("schema, uncoded") and
test_schema_errors_are_coded checks that they are.

Nothing half-done: failed create_collection, create_dataset_from_text and page writes leave
the history (every item, hidden and deleted included) and the page (revision list, latest
content) exactly as they were.
"""

import json
import re
import time
import uuid
from dataclasses import (
    dataclass,
    field,
)
from typing import Any

import pytest

from conftest import (
    fetch,
    missing_id,
    patch_set_tools,
    STOCK_TOOLS,
    wait_for_dataset,
)
from galaxy_mcp_analysis.core.tool_facts import example_call
from galaxy_mcp_analysis.testing import (
    error_text,
    rest,
)
from galaxy_mcp_analysis.tools import TOOL_FACTS

MIB = 1024 * 1024
CALL_TIMEOUT = 90  # seconds; wait_for_jobs may legitimately block, but every base call names finished jobs
CODED = re.compile(r"^\[(VALIDATION_ERROR|NOT_FOUND|AUTHENTICATION_ERROR|AUTHORIZATION_ERROR|NOT_READY|CONFLICT|"
                   r"SYSTEM_ERROR)\] .+\nSuggestion: \S", re.S)
SCHEMA_ERROR = re.compile(r"^(Error calling tool '\w+': )?\d+ validation errors? for call\[\w+\]")
STOCK_UNCODED = re.compile(r"^Error calling tool '\w+': ")
INTERNALS = re.compile(r"Traceback|File \"|site-packages|\.py\b|/work/|/tmp/|/usr/|sqlalchemy|psycopg|SELECT .* FROM")
#: An error text longer than this is reported: it makes an agent pay for the echo of its own input.
LONG_ERROR = 16_000
#: The tools that may change the history or a page: a failed call must leave both as they were. Not those that
#: invoke a workflow: an invocation schedules its jobs after the call returns, so the history changes later.
WRITE_TOOLS = {name for name, facts in TOOL_FACTS.items() if not facts.read_only and not facts.invokes_workflows}


# ---- set-up: one history of the caller's, one page, and another user's private items ----


@dataclass
class Ids:
    history: str
    dataset: str
    collection: str
    page: str
    revision: str
    url: str
    foreign: dict[str, str]  # parameter name -> another user's private item of that kind
    tool_job: str = ""  # a finished cat1 job: the examples' job (cancel_job's is refused as finished)
    spare: str = ""  # a dataset only update_dataset, delete_history_items and restore_history_items change
    workflow: str = ""
    invocation: str = ""
    spare_page: str = ""  # a page and a workflow only delete_* and restore_* change
    spare_workflow: str = ""


@pytest.fixture(scope="module")
def ids(galaxy, mcp, api_key, other_user_key, file_server):
    gx = galaxy.galaxy_url
    history = mcp.call_ok("create_history", name="hostile input", api_key=api_key)["id"]
    dataset = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": "a\tb\n", "ext": "tabular"})
    collection = rest(gx, "/api/dataset_collections", api_key, {
        "history_id": history, "collection_type": "list",
        "element_identifiers": [{"name": "a", "src": "hda", "id": dataset["id"]}]})
    page = rest(gx, "/api/pages", api_key, {"history_id": history, "content": "# base\n", "content_format": "markdown"})
    [revision] = rest(gx, f"/api/pages/{page['id']}/revisions", api_key)
    # Another user's private history, dataset, job, page and revision (and below, workflow and collection):
    # the foreign ids.
    theirs = mcp.call_ok("create_history", name="FOREIGN-history", api_key=other_user_key)["id"]
    secret = fetch(galaxy, other_user_key, theirs, {"src": "pasted", "paste_content": "FOREIGN-content\n",
                                                    "ext": "txt", "name": "FOREIGN-dataset"})
    rest(gx, f"/api/datasets/{secret['id']}/permissions", other_user_key, {"action": "make_private"}, method="PUT")
    their_job = mcp.call_ok("get_job_details", dataset_id=secret["id"], api_key=other_user_key)["job_id"]
    their_page = rest(gx, "/api/pages", other_user_key, {"history_id": theirs, "content": "# FOREIGN-page\n",
                                                          "content_format": "markdown"})
    [their_revision] = rest(gx, f"/api/pages/{their_page['id']}/revisions", other_user_key)
    foreign = {"history_id": theirs, "dataset_id": secret["id"], "job_id": their_job, "page_id": their_page["id"],
               "revision_id": their_revision["id"], "dataset_ids": secret["id"], "job_ids": their_job}
    tool_run = mcp.call_ok("run_tool", history_id=history, tool_id="cat1", inputs={"input1": {"src": "hda",
                                                                                             "id": dataset["id"]}},
                           api_key=api_key)
    marks = change_marks(galaxy, api_key, history, with_pages=False)
    spare = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": "spare\n", "ext": "txt"})
    added = change_marks(galaxy, api_key, history, with_pages=False)
    workflow = {"class": "GalaxyWorkflow", "inputs": {"table": {"type": "data"}},
                "steps": {"cat": {"tool_id": "cat1", "in": {"input1": "table"}}}}
    mine = rest(gx, "/api/workflows", api_key, {"workflow": workflow, "fill_defaults": True})["id"]
    foreign["workflow_id"] = rest(gx, "/api/workflows", other_user_key, {"workflow": workflow})["id"]
    foreign["collection_id"] = rest(gx, "/api/dataset_collections", other_user_key, {
        "history_id": theirs, "collection_type": "list", "name": "FOREIGN-collection",
        "element_identifiers": [{"name": "FOREIGN-element", "src": "hda", "id": secret["id"]}]})["id"]
    invocation = rest(gx, f"/api/workflows/{mine}/invocations", api_key, {
        "history_id": history, "inputs": {"0": {"src": "hda", "id": dataset["id"]}}, "inputs_by": "step_index"})
    # The invocation schedules its job later: wait for it, or the first cases would see the history change.
    mcp.call_ok("wait_for_jobs", invocation_id=invocation["id"], timeout_seconds=120, api_key=api_key)
    mcp.call_ok("wait_for_jobs", history_id=history, timeout_seconds=120, api_key=api_key)
    # run_case's shortcut holds: the marks move with a new item and with a change in place (nothing runs now).
    settled = change_marks(galaxy, api_key, history, with_pages=False)
    rest(gx, f"/api/histories/{history}/contents/{spare['id']}", api_key, {"name": "spare.txt"}, method="PUT")
    renamed = change_marks(galaxy, api_key, history, with_pages=False)
    assert marks < added and settled[0] < renamed[0], (marks, added, settled, renamed)
    spare_page = rest(gx, "/api/pages", api_key, {"title": "spare", "slug": f"spare-{uuid.uuid4().hex[:12]}",
                                                  "content": "# spare\n", "content_format": "markdown"})["id"]
    spare_workflow = rest(gx, "/api/workflows", api_key, {"workflow": workflow, "fill_defaults": True})["id"]
    return Ids(history, dataset["id"], collection["id"], page["id"], revision["id"],
               file_server("hostile.txt", b"served\n"), foreign, tool_run["jobs"][0]["id"], spare["id"],
               workflow=mine, invocation=invocation["id"], spare_page=spare_page, spare_workflow=spare_workflow)


def base_calls(ids: Ids) -> dict[str, dict[str, Any]]:
    """One valid call per tool the patch set adds or wraps: its declared example (ToolFacts.example) on this
    module's items; each case changes one parameter of it."""
    items = {"history": ids.history, "dataset": ids.dataset, "collection": ids.collection, "job": ids.tool_job,
             "page": ids.page, "revision": ids.revision, "workflow": ids.workflow, "invocation": ids.invocation,
             "url": ids.url, "spare_dataset": ids.spare, "spare_page": ids.spare_page,
             "spare_workflow": ids.spare_workflow}
    return {name: example_call(TOOL_FACTS[name].example, items) for name in patch_set_tools()
            if TOOL_FACTS[name].example is not None}


# ---- generated cases ----

HUGE = "x" * (2 * MIB)
STOCK_HUGE = "x" * 2048
STRINGS = {
    "empty": "", "unicode-control": "ünï🧬\u202e\x00\x01\x1b[2J\r\n", "dotdot-path": "../../etc/passwd",
    "file-url": "file:///etc/passwd", "malformed-id": "not-an-id!", "unknown-id": "0123456789abcdef",
}
#: A wrong JSON type for a string (an object, and a missing required argument, are test_schema_errors_are_coded's).
WRONG_FOR_STRING = {"int": 123}
INTEGERS = {"negative": -1, "min-int64": -(2**63), "huger": 10**40, "float": 1.5, "string": "ten"}
BOOLEANS = {"string": "maybe", "int-2": 2}


def deep_list(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def deep_dict(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def nested_elements(ids: Ids, depth: int) -> tuple[str, list]:
    """A collection_type and element_identifiers nested `depth` levels deep (valid in shape)."""
    elements: list = [{"name": "a", "src": "hda", "id": ids.dataset}]
    for _ in range(depth - 1):
        elements = [{"name": "a", "src": "new_collection", "collection_type": ":".join(["list"] * _next(elements)),
                     "element_identifiers": elements}]
    return ":".join(["list"] * depth), elements


def _next(elements: list) -> int:
    depth, level = 1, elements
    while level[0].get("src") == "new_collection":
        depth, level = depth + 1, level[0]["element_identifiers"]
    return depth


def names_ids(parameter: str) -> bool:
    return parameter.endswith(("_id", "_ids"))


def without_id_shapes(strings: dict[str, str]) -> dict[str, str]:
    """A parameter that is no id (a name, a content, a key): "not-an-id!" tells nothing "unknown-id" does not."""
    return {label: value for label, value in strings.items() if label != "malformed-id"}


def types_of(schema: dict) -> set[str]:
    options = schema.get("anyOf", [schema])
    return {option.get("type", "object") for option in options}


def item_type(schema: dict) -> str | None:
    for option in schema.get("anyOf", [schema]):
        if option.get("type") == "array":
            return option.get("items", {}).get("type")
    return None


def cases_for(parameter: str, schema: dict, ids: Ids, huge: str = HUGE) -> dict[str, Any]:
    """label -> value for one parameter, from its JSON schema."""
    kinds = types_of(schema)
    cases: dict[str, Any] = {}
    if "null" not in kinds:
        cases["null"] = None
    foreign = ids.foreign.get(parameter)
    if "string" in kinds:
        cases.update(STRINGS if names_ids(parameter) else without_id_shapes(STRINGS))
        cases[f"huge-{len(huge)}-chars"] = huge
        cases.update(WRONG_FOR_STRING)
        if foreign:
            cases["foreign-id"] = foreign
    if "integer" in kinds:
        cases.update(INTEGERS)
    if "boolean" in kinds:
        cases.update(BOOLEANS)
    if "array" in kinds:
        inner = item_type(schema)
        cases.update({"empty-list": [], "string-not-list": "x", "list-of-null": [None], "deep-list-200": deep_list(200),
                      "object-not-list": {"a": 1}})
        if inner == "string":
            cases.update({"list-of-empty": [""], "10000-malformed-ids": ["zz"] * 10_000,
                          "list-of-paths": ["../../etc/passwd"]})
            if foreign:
                cases["foreign-id"] = [foreign]
        else:
            element = {"name": "a", "src": "hda", "id": ids.dataset}
            cases.update({
                "list-of-empty-object": [{}],
                "10000-elements": [{**element, "name": f"e{i}"} for i in range(10_000)],
                "10000-malformed": [{"name": f"e{i}", "src": "hda", "id": "zz"} for i in range(10_000)],
                "path-like-src": [{**element, "src": "../../etc/passwd"}],
                "file-url-id": [{**element, "id": "file:///etc/passwd"}],
                "unicode-name": [{**element, "name": "ünï🧬\x00"}],
                "huge-name": [{**element, "name": HUGE}],
                "foreign-element": [{**element, "id": ids.foreign["dataset_id"]}],
                "deep-dict-element": [deep_dict(200)],
            })
    if kinds == {"object"}:
        cases.update({"empty-object": {}, "deep-dict-200": deep_dict(200), "list-not-object": [1],
                      "string-not-object": "x", "path-key": {"../../etc/passwd": 1},
                      "foreign-input": {"input1": {"src": "hda", "id": ids.foreign["dataset_id"]}},
                      "path-input": {"input1": {"src": "hda", "id": "../../etc/passwd"}},
                      "huge-value": {"input1": huge}})
    return cases


# ---- one case ----


@dataclass
class Tally:
    cases: int = 0
    parameters: int = 0
    succeeded: int = 0
    coded: int = 0
    schema_uncoded: list[str] = field(default_factory=list)
    #: JSON nested deeper than the MCP SDK's parser takes: a JSON-RPC "Parse error" (-32700); nothing runs.
    protocol_refusals: list[str] = field(default_factory=list)
    #: [SYSTEM_ERROR] for a path-like argument echoed in Galaxy's message (errors.looks_internal; issue 7).
    path_echo_system_errors: list[str] = field(default_factory=list)
    stock_uncoded: list[str] = field(default_factory=list)
    long_errors: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    by_tool: dict[str, int] = field(default_factory=dict)
    #: The history (and, for page writes, the page) as last seen, by with_pages; valid until a write succeeds.
    views: dict[bool, tuple] = field(default_factory=dict)


PAGE_TOOLS = {"create_page", "update_page", "revert_page_revision"}


def snapshot(galaxy, api_key, ids: Ids, with_pages: bool = True) -> tuple:
    """What a failed write could change: every item of the history (hidden, deleted included) and, with_pages
    (a page write: only those can make or change a page), the pages attached to it and the base page's
    revisions and latest content."""
    gx = galaxy.galaxy_url
    keys = ("id", "hid", "name", "history_content_type", "visible", "deleted", "purged", "element_count")
    contents = rest(gx, f"/api/histories/{ids.history}/contents", api_key)
    if not with_pages:
        return (sorted(tuple(item.get(key) for key in keys) for item in contents),)
    pages = rest(gx, f"/api/pages?history_id={ids.history}", api_key)
    page = rest(gx, f"/api/pages/{ids.page}", api_key)
    return (
        sorted(tuple(item.get(key) for key in keys) for item in contents),
        sorted((p["id"], p["title"], p.get("latest_revision_id")) for p in pages),
        [(r["id"], r["edit_source"]) for r in rest(gx, f"/api/pages/{ids.page}/revisions", api_key)],
        page["content"],
    )


def change_marks(galaxy, api_key, history_id: str, with_pages: bool = True) -> tuple:
    """Galaxy's own marks of a change, one small read each: the history's update_time (Galaxy's database
    triggers move it with every change to a row of its datasets and collections, as the history panel's polling
    relies on) and its count of items; with_pages, each page of the history with its latest revision and update
    time. Same marks: nothing of the snapshot can have changed; other marks: the snapshot is compared."""
    gx = galaxy.galaxy_url
    history = rest(gx, f"/api/histories/{history_id}?keys=update_time,count", api_key)
    marks = (history["update_time"], history["count"])
    if not with_pages:
        return marks
    pages = rest(gx, f"/api/pages?history_id={history_id}", api_key)
    return marks, sorted((p["id"], p["title"], p.get("latest_revision_id"), p.get("update_time")) for p in pages)


def view(galaxy, api_key, ids: Ids, with_pages: bool) -> tuple:
    """(marks, snapshot), the marks read first: a change landing between the two is in the snapshot and moves
    the next marks, so it is compared, never hidden."""
    return change_marks(galaxy, api_key, ids.history, with_pages), snapshot(galaxy, api_key, ids, with_pages)


def run_case(galaxy, mcp, api_key, ids, tally: Tally, tool: str, label: str, arguments: dict, verify) -> None:
    tally.cases += 1
    tally.by_tool[tool] = tally.by_tool.get(tool, 0) + 1
    context = f"{tool}[{label}]"
    before = None
    with_pages = tool in PAGE_TOOLS
    if tool in WRITE_TOOLS:
        before = tally.views.get(with_pages) or view(galaxy, api_key, ids, with_pages)
        tally.views[with_pages] = before
    try:
        result = mcp.call(tool, {**arguments, "api_key": api_key}, timeout=CALL_TIMEOUT)
    except TimeoutError:
        tally.failures.append(f"{context}: no answer within {CALL_TIMEOUT}s (hang)")
        return
    except Exception as e:  # the transport failed: an HTTP 500 or a dropped connection
        if "Parse error" in str(e):
            tally.protocol_refusals.append(context)
            return
        tally.failures.append(f"{context}: transport error {type(e).__name__}: {str(e)[:200]}")
        return
    if not result.is_error:
        tally.succeeded += 1
        tally.views.clear()
        if tool in WRITE_TOOLS:  # let new items settle (an upload is renamed when its job ends)
            mcp.call_ok("wait_for_jobs", history_id=ids.history, timeout_seconds=120, api_key=api_key)
        problem = verify(tool, arguments, result.structured_content)
        if problem:
            tally.failures.append(f"{context}: succeeded with a wrong result: {problem}")
        return
    text = error_text(result)
    if INTERNALS.search(text):
        tally.failures.append(f"{context}: internals in the error: {text[:300]!r}")
    if len(text) > LONG_ERROR:
        tally.long_errors.append(f"{context}: {len(text)} characters")
    if CODED.match(text):
        tally.coded += 1
        if text.startswith("[SYSTEM_ERROR]") and "/etc/passwd" in json.dumps(arguments):
            tally.path_echo_system_errors.append(context)
        elif text.startswith("[SYSTEM_ERROR]"):
            tally.failures.append(f"{context}: unexpected server error: {text[:300]!r}")
    elif SCHEMA_ERROR.match(text):
        tally.schema_uncoded.append(context)
    elif tool in STOCK_TOOLS and STOCK_UNCODED.match(text):
        tally.stock_uncoded.append(f"{context}: {text[:120]!r}")
    else:
        tally.failures.append(f"{context}: uncoded error {text[:300]!r}")
    if before is not None:  # a refused write changed nothing: the marks first, the whole snapshot if they moved
        marks = change_marks(galaxy, api_key, ids.history, with_pages)
        if marks != before[0]:
            tally.views = {with_pages: (marks, snapshot(galaxy, api_key, ids, with_pages))}
            if tally.views[with_pages][1] != before[1]:
                tally.failures.append(f"{context}: failed ({text[:100]!r}) but changed the history or page")


def verifier(galaxy, mcp, api_key, pending: list):
    """Checks a successful write's result against what was asked (datasets are checked at the end)."""

    def verify(tool: str, arguments: dict, result: dict) -> str | None:
        if tool == "create_dataset_from_text":
            content = arguments.get("content")
            if isinstance(content, str) and result.get("bytes") != len(content.encode()):
                return f"bytes {result.get('bytes')} for {len(content.encode())} bytes of content"
            pending.append((result["dataset_id"], content))
        elif tool == "create_collection":
            elements = arguments.get("element_identifiers")
            if result.get("element_count") != len(elements):
                return f"element_count {result.get('element_count')} for {len(elements)} elements"
        elif tool in ("create_page", "update_page") and isinstance(arguments.get("content"), str):
            page = mcp.call_ok("get_page", page_id=result["page_id"], api_key=api_key)
            if page["content_editor"] != arguments["content"]:
                return "the saved page differs from the content sent"
        return None

    return verify


#: One tally for the whole module (the totals test reports it); pasted datasets to read back at the end.
TALLY = Tally()
PENDING: list = []
STARTED = time.monotonic()


@pytest.mark.parametrize("tool", sorted(patch_set_tools()))
def test_hostile_input(galaxy, mcp, api_key, ids, tool):
    """Every parameter of one tool, each replaced by every generated case of its schema type."""
    tally, cases_before = TALLY, TALLY.cases
    failures_before = len(tally.failures)
    schema = {t.name: t for t in mcp.list_tools()}[tool].input_schema
    base = base_calls(ids)
    assert tool in base, f"add a base call for {tool}"
    verify = verifier(galaxy, mcp, api_key, PENDING)
    run_case(galaxy, mcp, api_key, ids, tally, tool, "unexpected-argument", {**base[tool], "surprise": 1}, verify)
    for parameter, parameter_schema in schema["properties"].items():
        if parameter == "api_key":
            continue
        tally.parameters += 1
        # Stock tools get a 2 KiB string, not 2 MiB: see test_a_long_error_of_a_stock_tool_does_not_stall_galaxy.
        huge = STOCK_HUGE if tool in STOCK_TOOLS else HUGE
        for label, value in cases_for(parameter, parameter_schema, ids, huge).items():
            arguments = {**base[tool], parameter: value}
            run_case(galaxy, mcp, api_key, ids, tally, tool, f"{parameter}={label}", arguments, verify)
    # Still healthy after the batch.
    assert mcp.call_ok("get_server_info", api_key=api_key), f"server unhealthy after {tool}"
    assert tally.cases > cases_before
    pasted, PENDING[:] = list(PENDING), []
    assert not verify_pasted(galaxy, mcp, api_key, pasted)
    assert not tally.failures[failures_before:], "\n".join(tally.failures[failures_before:])
    # Coded schema errors, short errors, and path-like ids that are the caller's mistake: this tool's cases.
    for kind in ("schema_uncoded", "stock_uncoded", "long_errors", "path_echo_system_errors"):
        assert not [case for case in getattr(tally, kind) if case.startswith(f"{tool}[")], (kind, getattr(tally, kind))


@pytest.fixture(scope="module", autouse=True)
def hostile_input_totals(record_testsuite_property):
    """The counts for doc/reliability.md, printed once the module's tests ran (also junit properties
    `hostile_*`). A report, not a check: each test_hostile_input[<tool>] asserts its own cases."""
    yield
    tally = TALLY
    if not tally.cases:
        return
    summary = {
        "tools": len(tally.by_tool), "parameters": tally.parameters, "cases": tally.cases,
        "succeeded": tally.succeeded, "coded_errors": tally.coded,
        "schema_errors_uncoded": len(tally.schema_uncoded), "stock_errors_uncoded": len(tally.stock_uncoded),
        "long_errors": len(tally.long_errors), "protocol_refusals": len(tally.protocol_refusals),
        "path_echo_system_errors": len(tally.path_echo_system_errors), "failures": len(tally.failures),
        "seconds": round(time.monotonic() - STARTED),
    }
    print("\nhostile input:", json.dumps(summary), "\nper tool:", json.dumps(tally.by_tool))
    for name in ("schema_uncoded", "stock_uncoded", "long_errors", "protocol_refusals", "path_echo_system_errors"):
        if getattr(tally, name):
            print(f"{name}:", *getattr(tally, name)[:8], sep="\n  ")
    for key, value in summary.items():
        record_testsuite_property(f"hostile_{key}", value)


def verify_pasted(galaxy, mcp, api_key, pending) -> list[str]:
    """Every pasted dataset a hostile case created holds exactly the content sent."""
    problems = []
    for dataset_id, content in pending:
        state = wait_for_dataset(galaxy, api_key, dataset_id)["state"]
        if state != "ok":
            problems.append(f"pasted dataset {dataset_id} ended {state}")
            continue
        read = mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, allow_binary=True, api_key=api_key)
        data = read["content"] if read["encoding"] == "utf-8" else None
        if data is not None and data != content:
            problems.append(f"pasted dataset {dataset_id} reads back {data[:40]!r}, sent {content[:40]!r}")
    return problems


def guard_calls(ids: Ids, value_for) -> list[tuple[str, dict]]:
    """For every tool the patch set adds or wraps: its base call with each string parameter in turn replaced
    by value_for(tool, parameter, schema) (skipped when that returns None)."""
    calls = []
    for tool, base in sorted(base_calls(ids).items()):
        if tool not in patch_set_tools():
            continue
        schema = TOOL_SCHEMAS[tool]
        for parameter, parameter_schema in schema["properties"].items():
            if parameter != "api_key" and "string" in types_of(parameter_schema):
                value = value_for(tool, parameter, parameter_schema)
                if value is not None:
                    calls.append((tool, {**base, parameter: value}))
    return calls


TOOL_SCHEMAS: dict[str, dict] = {}


@pytest.fixture(scope="module")
def schemas(mcp):
    TOOL_SCHEMAS.update({tool.name: tool.input_schema for tool in mcp.list_tools()})
    return TOOL_SCHEMAS


def test_schema_errors_are_coded(mcp, api_key, ids, schemas):
    """Issue 7's middleware codes FastMCP's argument-validation errors: a wrong JSON type and a missing required
    argument, for every tool the patch set adds or wraps."""
    calls = guard_calls(ids, lambda tool, parameter, schema: {"an": "object"})
    for tool, base in sorted(base_calls(ids).items()):
        for name in set(TOOL_SCHEMAS[tool].get("required", [])) - {"api_key"}:
            calls.append((tool, {key: value for key, value in base.items() if key != name}))
    assert len(calls) >= 2 * len(patch_set_tools())
    uncoded = []
    for tool, arguments in calls:
        text = mcp.call_error(tool, **arguments, api_key=api_key)
        if not CODED.match(text) or not text.startswith("[VALIDATION_ERROR] "):
            uncoded.append(f"{tool}: {text[:160]!r}")
    assert not uncoded, uncoded


def test_errors_do_not_echo_huge_arguments(mcp, api_key, ids, schemas):
    """A 2 MiB argument must not come back as a 2 MiB error text (issue 7 shortens echoed arguments); stock
    tools get 2 KiB (see test_a_long_error_of_a_stock_tool_does_not_stall_galaxy)."""
    long = []
    huge = lambda tool, parameter, schema: STOCK_HUGE if tool in STOCK_TOOLS else HUGE  # noqa: E731
    for tool, arguments in guard_calls(ids, huge):
        result = mcp.call(tool, {**arguments, "api_key": api_key}, timeout=CALL_TIMEOUT)
        if result.is_error and len(error_text(result)) > LONG_ERROR:
            long.append(f"{tool}: {len(error_text(result))} characters")
    assert not long, long


def test_deeply_nested_collections_are_created_or_refused_cleanly(galaxy, mcp, api_key, ids):
    """Nesting that matches its collection_type: a 4-level list is made; 17 and 60 levels are refused, changing
    nothing (a 60-level list used to be created, and then every listing of the history failed with HTTP 500)."""
    for depth in (4, 17, 60):
        collection_type, elements = nested_elements(ids, depth)
        before = snapshot(galaxy, api_key, ids)
        result = mcp.call("create_collection", {"history_id": ids.history, "collection_type": collection_type,
                                                "element_identifiers": elements, "api_key": api_key},
                          timeout=CALL_TIMEOUT)
        if result.is_error:
            text = error_text(result)
            assert CODED.match(text) and not text.startswith("[SYSTEM_ERROR]"), text[:500]
            assert snapshot(galaxy, api_key, ids) == before
        else:
            assert result.structured_content["collection_type"] == collection_type
            assert result.structured_content["element_count"] == 1
        assert (depth == 4) != result.is_error, error_text(result)[:300]
    assert rest(galaxy.galaxy_url, f"/api/histories/{ids.history}/contents", api_key)  # still lists


#: A stock tool's error echoing an id this long took FastMCP's rich log handler minutes on the event loop (quadratic:
#: 20,000 characters 9.1 s, so 100,000 about 4 minutes), during which Galaxy answered nothing.
LONG_STOCK_ID = "x" * 100_000
#: Bounded wait for each answer below: far above a healthy answer, far below the stall the bug caused.
ANSWER_WAIT_SECONDS = 60


def test_a_long_error_of_a_stock_tool_does_not_stall_galaxy(galaxy, mcp, api_key):
    """A stock tool echoing a 100 KB id in its error must not stop Galaxy answering other requests (FastMCP's rich
    log handler highlighted the message on the event loop in quadratic time; fixed by mcp-plain-logging).
    /api/version is asked again and again for as long as the long call is in flight, so some request falls
    into any stall; each must be answered within the bounded wait."""
    import threading

    outcome = {}

    def long_call():
        outcome["result"] = mcp.call("download_dataset", {"dataset_id": LONG_STOCK_ID, "api_key": api_key},
                                     timeout=600)

    call = threading.Thread(target=long_call, daemon=True)
    call.start()
    answered = 0
    while call.is_alive() or not answered:
        rest(galaxy.galaxy_url, "/api/version", api_key, timeout=ANSWER_WAIT_SECONDS)  # raises past the wait
        answered += 1
        call.join(0.1)
    assert outcome["result"].is_error and CODED.match(error_text(outcome["result"]))


# ---- nothing half-done ----


def paste(galaxy, mcp, api_key, history_id, content, **arguments) -> str:
    created = mcp.call_ok("create_dataset_from_text", history_id=history_id, content=content, api_key=api_key,
                          **arguments)
    assert wait_for_dataset(galaxy, api_key, created["dataset_id"])["state"] == "ok"
    return created["dataset_id"]


def full_view(galaxy, api_key, history_id: str, page_ids: tuple[str, ...] = ()) -> tuple:
    """Every item of the history (hidden, deleted included) with its visibility, the collection count,
    and each page's revision list and latest content."""
    gx = galaxy.galaxy_url
    keys = ("id", "hid", "name", "history_content_type", "visible", "deleted", "purged", "state", "element_count")
    contents = rest(gx, f"/api/histories/{history_id}/contents", api_key)
    history = rest(gx, f"/api/histories/{history_id}", api_key)
    pages = [(rest(gx, f"/api/pages/{page_id}/revisions", api_key),
              *(lambda page: (page["title"], page["content"], page["latest_revision_id"]))(
                  rest(gx, f"/api/pages/{page_id}", api_key)))
             for page_id in page_ids]
    return (
        sorted(tuple(item.get(key) for key in keys) for item in contents),
        sum(item["history_content_type"] == "dataset_collection" for item in contents),
        history["size"], history["update_time"], pages,
    )


@pytest.fixture(scope="module")
def settled(galaxy, mcp, api_key, other_user_key):
    """A history of 500 ok datasets and a notebook page with two revisions; another user's private dataset."""
    history_id = mcp.call_ok("create_history", name="nothing half-done", api_key=api_key)["id"]
    many = rest(galaxy.galaxy_url, "/api/tools/fetch", api_key, {"history_id": history_id, "targets": [{
        "destination": {"type": "hdas"},
        "elements": [{"src": "pasted", "paste_content": f"s{i}\n", "ext": "txt", "name": f"s{i}"} for i in range(500)],
    }]}, timeout=300)  # 500 datasets at once: minutes on a loaded machine
    dataset_ids = [output["id"] for output in many["outputs"]]
    mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=120, api_key=api_key)
    page = mcp.call_ok("create_page", history_id=history_id, content="# first\n", api_key=api_key)
    mcp.call_ok("update_page", page_id=page["page_id"], content="# second\n", api_key=api_key)
    theirs = mcp.call_ok("create_history", name="theirs", api_key=other_user_key)["id"]
    foreign = paste(galaxy, mcp, other_user_key, theirs, "FOREIGN\n")
    rest(galaxy.galaxy_url, f"/api/datasets/{foreign}/permissions", other_user_key, {"action": "make_private"},
         method="PUT")
    return {"history_id": history_id, "dataset_ids": dataset_ids, "page_id": page["page_id"], "foreign": foreign,
            "their_history": theirs, "missing": missing_id(galaxy)}


def elements(dataset_ids) -> list[dict]:
    return [{"name": f"e{i}", "src": "hda", "id": dataset_id} for i, dataset_id in enumerate(dataset_ids)]


def refused_collections(settled) -> dict[str, tuple[str, list, str]]:
    ids = settled["dataset_ids"]
    middle = elements(ids[:20])
    middle[10] = {"name": "e10", "src": "hda", "id": "not-an-id"}
    duplicated = elements(ids[:20])
    duplicated[15]["name"] = "e3"
    wrong_pair = [{"name": "s1", "src": "new_collection", "collection_type": "paired",
                   "element_identifiers": [{"name": "forward", "src": "hda", "id": ids[0]},
                                           {"name": "reverse", "src": "hda", "id": ids[1]}]},
                  {"name": "s2", "src": "new_collection", "collection_type": "paired",
                   "element_identifiers": [{"name": "forward", "src": "hda", "id": ids[2]}]}]
    unknown = elements(ids[:20])
    unknown[10] = {"name": "e10", "src": "hda", "id": settled["missing"]}  # well-formed, names no dataset
    return {
        "malformed id mid-list": ("list", middle, "VALIDATION_ERROR"),
        "unknown id mid-list": ("list", unknown, "NOT_FOUND"),
        "duplicate names": ("list", duplicated, "VALIDATION_ERROR"),
        "foreign id after 500 elements": ("list", elements(ids) + [{"name": "last", "src": "hda",
                                                                    "id": settled["foreign"]}], "AUTHORIZATION_ERROR"),
        "malformed id after 500 elements": ("list", elements(ids) + [{"name": "last", "src": "hda",
                                                                      "id": "0123456789abcdef"}], "VALIDATION_ERROR"),
        "second pair incomplete": ("list:paired", wrong_pair, "VALIDATION_ERROR"),
        # Galaxy stores '../x' as './../x'; every REST listing of the history then fails (HTTP 500).
        "element tag Galaxy cannot read back": ("list", [{**elements(ids[:2])[0], "tags": ["qc", "../x"]}],
                                                "VALIDATION_ERROR"),
    }


@pytest.mark.parametrize("hide_source_items", [False, True])
def test_refused_collections_change_nothing(galaxy, mcp, api_key, settled, hide_source_items):
    before = full_view(galaxy, api_key, settled["history_id"])
    for label, (collection_type, identifiers, code) in refused_collections(settled).items():
        error = mcp.call_error("create_collection", history_id=settled["history_id"], collection_type=collection_type,
                               element_identifiers=identifiers, hide_source_items=hide_source_items, api_key=api_key)
        assert error.startswith(f"[{code}] "), (label, error[:300])
        assert "FOREIGN" not in error
        assert full_view(galaxy, api_key, settled["history_id"]) == before, label


def test_refused_tool_runs_change_nothing(galaxy, mcp, api_key, settled):
    """run_tool into the caller's own history, refused before (our input check) or by Galaxy (its parameter
    validation, an unknown tool): no job, no output, no change to the history."""
    mine, dataset = settled["history_id"], settled["dataset_ids"][0]
    before = full_view(galaxy, api_key, mine)
    jobs_before = rest(galaxy.galaxy_url, f"/api/jobs?history_id={mine}&limit=1000", api_key)
    refusals = [
        ("cat1", {"input1": {"src": "hda", "id": settled["foreign"]}}, "AUTHORIZATION_ERROR"),
        ("cat1", {"input1": {"src": "hda", "id": settled["missing"]}}, "NOT_FOUND"),
        ("cat1", {"input1": {"src": "hda", "id": "not-an-id"}}, "VALIDATION_ERROR"),
        ("Remove beginning1", {"input": {"src": "hda", "id": dataset}, "num_lines": "ten"}, None),
        ("sort1", {"input": {"src": "hda", "id": dataset}, "column": "c1", "order": "sideways"}, None),
        ("no_such_tool", {"input1": {"src": "hda", "id": dataset}}, "NOT_FOUND"),
    ]
    for tool_id, inputs, code in refusals:
        error = mcp.call_error("run_tool", history_id=mine, tool_id=tool_id, inputs=inputs, api_key=api_key)
        assert CODED.match(error) and not error.startswith("[SYSTEM_ERROR]"), (tool_id, error[:300])
        assert code is None or error.startswith(f"[{code}] "), (tool_id, error[:300])
        assert "FOREIGN" not in error
    assert full_view(galaxy, api_key, mine) == before
    assert rest(galaxy.galaxy_url, f"/api/jobs?history_id={mine}&limit=1000", api_key) == jobs_before


def test_refused_pastes_change_nothing(galaxy, mcp, api_key, other_user_key, settled):
    mine, theirs = settled["history_id"], settled["their_history"]
    before = full_view(galaxy, api_key, mine), full_view(galaxy, other_user_key, theirs)
    refusals = [
        ({"history_id": mine, "content": "x" * (MIB + 1)}, api_key, "VALIDATION_ERROR"),
        ({"history_id": mine, "content": "a\tb\n", "file_type": "no-such-type"}, api_key, "VALIDATION_ERROR"),
        ({"history_id": mine, "content": ""}, api_key, "VALIDATION_ERROR"),
        ({"history_id": theirs, "content": "intruder\n"}, api_key, "AUTHORIZATION_ERROR"),
        ({"history_id": mine, "content": "intruder\n"}, other_user_key, "AUTHORIZATION_ERROR"),
    ]
    for arguments, key, code in refusals:
        error = mcp.call_error("create_dataset_from_text", api_key=key, **arguments)
        assert error.startswith(f"[{code}] "), (arguments.get("file_type"), error[:300])
    assert (full_view(galaxy, api_key, mine), full_view(galaxy, other_user_key, theirs)) == before


def test_refused_page_writes_change_nothing(galaxy, mcp, api_key, other_user_key, settled):
    history_id, page_id = settled["history_id"], settled["page_id"]
    other_page = mcp.call_ok("create_page", title="other", slug=f"other-{page_id}", content="# other\n",
                             api_key=api_key)
    [their_revision] = mcp.call_ok("list_page_revisions", page_id=other_page["page_id"], api_key=api_key)["revisions"]
    page_ids = (page_id, other_page["page_id"])
    before = full_view(galaxy, api_key, history_id, page_ids)
    pages_before = mcp.call_ok("list_pages", api_key=api_key)["total_count"]
    embed = f"```galaxy\nhistory_dataset_display(history_dataset_id={settled['foreign']})\n```\n"
    refusals = [
        ("update_page", {"page_id": page_id, "content": "```galaxy\nnot_a_directive()\n```\n"}, api_key),
        ("update_page", {"page_id": page_id, "content": "```galaxy\nhistory_dataset_display(history_dataset_id=x)\n"},
         api_key),
        ("update_page", {"page_id": page_id, "content": embed, "title": "renamed too"}, api_key),
        ("update_page", {"page_id": page_id, "content": "# hijacked\n"}, other_user_key),
        ("update_page", {"page_id": "0123456789abcdef", "content": "# lost\n"}, api_key),
        ("revert_page_revision", {"page_id": page_id, "revision_id": their_revision["id"]}, api_key),
        ("revert_page_revision", {"page_id": page_id, "revision_id": "0123456789abcdef"}, api_key),
        ("create_page", {"history_id": history_id, "content": embed}, api_key),
        ("create_page", {"history_id": history_id, "content": "```galaxy\ngenerate_time()\ngenerate_time()\n```\n"},
         api_key),
        ("create_page", {"title": "t", "slug": "Not A Slug!", "content": "# x\n"}, api_key),
    ]
    for tool, arguments, key in refusals:
        error = mcp.call_error(tool, api_key=key, **arguments)
        assert CODED.match(error) and not error.startswith("[SYSTEM_ERROR]"), (tool, arguments, error[:300])
        assert "FOREIGN" not in error
    assert full_view(galaxy, api_key, history_id, page_ids) == before
    assert mcp.call_ok("list_pages", api_key=api_key)["total_count"] == pages_before


def test_list_pages_refuses_negative_paging(mcp, api_key):
    """sqlite reads LIMIT -1 as "no limit" and PostgreSQL refuses it mid-query: both are refused up front."""
    for arguments in ({"limit": -1}, {"limit": 0}, {"offset": -5}, {"offset": 10**40}):
        error = mcp.call_error("list_pages", api_key=api_key, **arguments)
        assert error.startswith("[VALIDATION_ERROR] limit must be >= 1 and offset >= 0"), error
    error = mcp.call_error("list_pages", search="x" * 50_001, api_key=api_key)  # sqlite's LIKE limit is 50,000
    assert error.startswith("[VALIDATION_ERROR] search is 50001 characters long"), error


def test_a_path_like_argument_is_a_validation_error_not_a_server_error(mcp, api_key, ids, schemas):
    """An echoed 'file:///etc/passwd' id is the caller's mistake, not a leaked server path (issue 7)."""
    def path_like(tool, parameter, schema):
        return "file:///etc/passwd" if parameter.endswith("_id") else None

    calls = guard_calls(ids, path_like)
    assert len(calls) >= 15  # every id parameter
    for tool, arguments in calls:
        result = mcp.call(tool, {**arguments, "api_key": api_key}, timeout=CALL_TIMEOUT)
        if result.is_error:  # a tool may ignore an argument the others make moot (get_job_details: history_id)
            text = error_text(result)
            assert CODED.match(text) and not text.startswith("[SYSTEM_ERROR]"), (tool, arguments, text[:300])
