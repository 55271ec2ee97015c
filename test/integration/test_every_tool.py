"""Every tool at /api/mcp (Galaxy's 37 and ours): annotations, coded errors, header auth, the reference doc."""

import json
import re

import pytest

from conftest import (
    fetch,
    missing_id,
    patch_set_tools,
    STOCK_TOOLS,
)
from galaxy_mcp_analysis.core.errors import ErrorCode
from galaxy_mcp_analysis.testing import tools_reference
from galaxy_mcp_analysis.mcp.errors import (
    leaks_internals,
    looks_internal,
)
from galaxy_mcp_analysis.mcp.declaration import TOOL_SPECS
from galaxy_mcp_analysis.testing import (
    ERROR_TEXTS,
    McpClient,
    rest,
)
from galaxy_mcp_analysis.mcp.declaration import annotations_of
from galaxy_mcp_analysis.tools import TOOL_FACTS

ANNOTATION_FIELDS = ("title", "read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint")
# Every code of the one mapping: ERROR_TEXTS gathers the whole run's errors, policy and sign-in refusals too
# (FORBIDDEN, RATE_LIMITED) when their modules ran first.
CODED = re.compile(rf"^\[({'|'.join(code.value for code in ErrorCode)})\] \S")


@pytest.fixture(scope="module")
def listed(mcp):
    return {tool.name: tool for tool in mcp.list_tools()}


def expected_annotations() -> dict:
    return {name: annotations_of(facts) for name, facts in TOOL_FACTS.items()}


def assert_coded(text: str, code: str) -> None:
    assert text.startswith(f"[{code}] "), text
    assert CODED.match(text), text
    assert text.splitlines()[-1].startswith("Suggestion: ") and len(text.splitlines()[-1]) > len("Suggestion: ")
    assert not looks_internal(text), text


# ---- annotations and descriptions ----


def test_every_tool_is_annotated_as_the_table_says(listed):
    expected = expected_annotations()
    assert set(listed) == set(expected) == STOCK_TOOLS | {spec.name for spec in TOOL_SPECS}
    for name, tool in listed.items():
        for field in ANNOTATION_FIELDS:
            assert getattr(tool.annotations, field) is not None, (name, field)
            assert getattr(tool.annotations, field) == getattr(expected[name], field), (name, field)
        assert tool.title == tool.annotations.title


def test_every_served_tool_has_its_facts(listed):
    """The policy and the audit trail know a tool only by its row of the facts table (core.tool_facts): a tool
    served by this live tools/list (Galaxy's or ours) without a row, or a row of no served tool, fails here."""
    assert set(listed) - set(TOOL_FACTS) == set(), "served without facts"
    assert set(TOOL_FACTS) - set(listed) == set(), "facts of a tool not served"
    starting = {name for name, facts in TOOL_FACTS.items() if facts.starts_jobs}
    assert starting == {"run_tool", "rerun_job", "invoke_workflow", "upload_file_from_url", "create_dataset_from_text",
                        "run_user_tool", "create_collection",  # create_collection: its pasted elements' upload
                        "create_upload_url"}  # its URL's upload job (class creates_jobs: a policy can deny it)
    assert {name: facts.runs.kind for name, facts in TOOL_FACTS.items() if facts.runs} == {
        "run_tool": "tool", "rerun_job": "job", "invoke_workflow": "workflow", "run_user_tool": "user_tool"}
    for name, facts in TOOL_FACTS.items():  # the argument that names what a call runs, purges with, is the tool's
        properties = listed[name].input_schema["properties"]
        named = [facts.runs.argument] if facts.runs else []
        named += [facts.purges_with] if facts.purges_with else []
        named += [path.split(".", 1)[1] for path in facts.history if path.startswith("arguments.") and
                  "history_id" not in path]
        assert set(named) <= set(properties), (name, named)


def test_annotations_declare_the_hints_of_each_kind_of_tool(listed):
    """The declared MCP hints (read-only, destructive, open-world) per tool; what each tool does is tested
    in its own module, not here."""
    hints = {name: tool.annotations for name, tool in listed.items()}
    read_only = {name for name, a in hints.items() if a.read_only_hint}
    # Reading is read-only (and so neither destructive nor changing anything on repeat).
    assert {name for name in listed if name.startswith(("get_", "list_", "search_"))} <= read_only
    assert all(hints[name].idempotent_hint and not hints[name].destructive_hint for name in read_only)
    for name in ("run_tool", "upload_file_from_url", "create_dataset_from_text", "create_collection", "create_history",
                 "create_upload_url",
                 "invoke_workflow", "run_user_tool", "create_page", "update_page", "import_workflow_from_iwc"):
        assert not hints[name].read_only_hint and not hints[name].idempotent_hint, name
    assert {name for name, a in hints.items() if a.destructive_hint} == {
        "delete_user_tool", "cancel_workflow_invocation",
        "rerun_job", "cancel_job", "delete_history_items",  # issue 16: rewires paused jobs, stops a job, deletes
        "delete_page", "delete_workflow",  # issue 43
    }
    assert {name for name, a in hints.items() if a.open_world_hint} == {
        "search_iwc_workflows", "get_iwc_workflow_details", "import_workflow_from_iwc", "upload_file_from_url",
        "recommend_biocontainer",
    }


def test_descriptions_are_tight_and_name_the_next_tools(listed):
    for name, tool in listed.items():
        description = tool.description
        assert 80 <= len(description) <= 1700, (name, len(description))
        assert "Next" in description or "Debugging path" in description, name
        for code in re.findall(r"\[([A-Z_]+)\]", description):
            assert CODED.match(f"[{code}] x"), (name, code)
    # tools/list stays at or under 1.3 KB per tool on average (65,041 bytes for 50 tools before issue 16).
    assert tools_reference.tools_list_bytes(tools_reference.tool_dicts(listed.values())) <= 1.3 * 1024 * len(listed)


def test_every_id_list_parameter_says_what_it_takes(listed):
    undescribed = sorted(f"{name}.{parameter}" for name, tool in listed.items()
                         for parameter, schema in tool.input_schema["properties"].items()
                         if parameter.endswith("_ids") and not schema.get("description"))
    assert undescribed == [], undescribed


def test_api_key_is_optional_in_every_schema(listed):
    for name, tool in listed.items():
        schema = tool.input_schema
        assert "api_key" in schema["properties"], name
        assert "api_key" not in schema.get("required", []), name
        assert "x-api-key" in schema["properties"]["api_key"]["description"], name


def test_doc_tools_md_is_the_live_tools_list(listed):
    live = tools_reference.render(tools_reference.tool_dicts(listed.values()), tools_reference.new_tool_names())
    committed = tools_reference.DOC_PATH.read_text()
    assert committed == live, "doc/tools.md is stale: run `make tools-doc` and commit it"


def test_the_readme_counts_the_tools_tools_list_serves(listed):
    readme = (tools_reference.DOC_PATH.parents[1] / "README.md").read_text()
    assert re.findall(r"lists all (\d+) tools", readme) == [str(len(listed))], "README.md's tool count has drifted"


# ---- errors: each code through the real server ----


def test_each_error_code_through_the_real_server(galaxy, mcp, api_key, other_user_key, history_id, file_server):
    # Galaxy's stock tools: the original Galaxy exception behind their wrappers decides the code.
    malformed = mcp.call_error("get_history_details", history_id="not-an-id", api_key=api_key)
    assert_coded(malformed, "VALIDATION_ERROR")
    assert "Error calling tool" not in malformed and "failed:" not in malformed
    unknown_tool = mcp.call_error("get_tool_details", tool_id="no_such_tool", api_key=api_key)
    assert_coded(unknown_tool, "NOT_FOUND")
    assert "search_tools" in unknown_tool.split("Suggestion:")[1]
    assert_coded(mcp.call_error("list_histories", api_key="not-a-key"), "AUTHENTICATION_ERROR")
    # An id naming no workflow (a history's id names a workflow too once enough workflows exist).
    assert_coded(mcp.call_error("get_workflow_details", workflow_id=missing_id(galaxy), api_key=api_key), "NOT_FOUND")
    # The patch set's tools, same codes.
    others = mcp.call_error("create_dataset_from_text", history_id=history_id, content="x\n", api_key=other_user_key)
    assert_coded(others, "AUTHORIZATION_ERROR")
    url = file_server("deferred-every-tool.txt", b"later\n")
    deferred = fetch(galaxy, api_key, history_id, {"src": "url", "url": url, "ext": "txt", "deferred": True})
    assert_coded(mcp.call_error("peek_dataset_content", dataset_id=deferred["id"], api_key=api_key), "NOT_READY")
    purged = mcp.call_ok("create_history", name="purged", api_key=api_key)["id"]
    rest(galaxy.galaxy_url, f"/api/histories/{purged}", api_key, {"purge": True}, method="DELETE")
    assert_coded(mcp.call_error("create_dataset_from_text", history_id=purged, content="x\n", api_key=api_key),
                 "CONFLICT")
    # An unexpected failure inside a stock tool: no internals, a correlation id that the log has too.
    # (This machine has no route to the IWC catalogue, so Galaxy's fetch of it fails unexpectedly.)
    crash = mcp.call("search_iwc_workflows", {"query": "rna", "api_key": api_key})
    if not crash.is_error:
        pytest.skip("the IWC catalogue answered: this machine has a network route; no unexpected failure to show")
    crash = crash.content[0].text
    assert_coded(crash, "SYSTEM_ERROR")
    correlation_id = re.search(r"correlation id ([0-9a-f]{12})", crash).group(1)
    assert f"[correlation id {correlation_id}]" in galaxy.log_text()


def test_unknown_tools_and_bad_arguments_are_coded_too(mcp, api_key):
    assert_coded(mcp.call_error("peek_dataset", dataset_id="x", api_key=api_key), "NOT_FOUND")
    bad = mcp.call_error("list_histories", limit="many", api_key=api_key)
    assert_coded(bad, "VALIDATION_ERROR")
    assert "limit" in bad.splitlines()[0]


#: One patch-set tool per kind of id the lookup layer (operations/lookup.py) resolves: the tool, the
#: argument the id is passed as, the id's place in that argument, and the other arguments it needs.
LOOKED_UP = (
    ("list_jobs", "history_id", str, {}, "No history with id"),
    ("peek_dataset_content", "dataset_id", str, {}, "No history dataset with id"),
    ("update_dataset", "dataset_id", str, {"name": "x"}, "No history dataset with id"),
    ("update_collection", "collection_id", str, {"name": "x"}, "No history collection with id"),
    ("get_job_errors", "job_id", str, {}, "No job with id"),
    ("cancel_job", "job_id", str, {}, "No job with id"),
    ("wait_for_jobs", "job_ids", lambda value: [value], {}, "No job with id"),
    ("wait_for_jobs", "dataset_ids", lambda value: [value], {}, "No history dataset with id"),
    ("get_workflow_input_schema", "workflow_id", str, {}, "No workflow with id"),
    ("get_page_revision", "page_id", str, {"revision_id": "0123456789abcdef"}, "No page with id"),
)


@pytest.mark.parametrize(
    "tool,argument,place,others,missing", LOOKED_UP, ids=[f"{row[0]}-{row[1]}" for row in LOOKED_UP]
)
def test_each_kind_of_id_is_refused_naming_its_argument(galaxy, mcp, api_key, tool, argument, place, others, missing):
    """A malformed id is a [VALIDATION_ERROR] naming the argument it came in; a well-formed one naming
    nothing is [NOT_FOUND] naming the id."""
    malformed = mcp.call_error(tool, **{argument: place("not-an-id!"), **others, "api_key": api_key})
    assert_coded(malformed, "VALIDATION_ERROR")
    assert malformed.startswith(f"[VALIDATION_ERROR] {argument} 'not-an-id!' is not a valid encoded id."), malformed
    unknown_id = missing_id(galaxy)
    unknown = mcp.call_error(tool, **{argument: place(unknown_id), **others, "api_key": api_key})
    assert_coded(unknown, "NOT_FOUND")
    assert unknown.startswith(f"[NOT_FOUND] {missing} {unknown_id} exists."), unknown


#: Page tools whose ids Galaxy's page service resolves: a malformed id is refused before it is asked.
MALFORMED_PAGE_IDS = (
    ("get_page", "page_id", {}),
    ("update_page", "page_id", {"title": "x"}),
    ("list_page_revisions", "page_id", {}),
    ("revert_page_revision", "page_id", {"revision_id": "well-formed"}),
    ("revert_page_revision", "revision_id", {"page_id": "well-formed"}),
)


@pytest.mark.parametrize("tool,argument,others", MALFORMED_PAGE_IDS, ids=[f"{t}-{a}" for t, a, _ in MALFORMED_PAGE_IDS])
def test_a_malformed_page_or_revision_id_is_refused_naming_its_argument(galaxy, mcp, api_key, tool, argument, others):
    others = {name: missing_id(galaxy) if value == "well-formed" else value for name, value in others.items()}
    malformed = mcp.call_error(tool, **{argument: "not-an-id!", **others, "api_key": api_key})
    assert_coded(malformed, "VALIDATION_ERROR")
    assert malformed.startswith(f"[VALIDATION_ERROR] {argument} 'not-an-id!' is not a valid encoded id."), malformed
    assert "list_pages" in malformed and "Wrong id" not in malformed


# ---- the key from the HTTP request ----


def test_the_header_authenticates_every_tool(galaxy, api_key):
    for headers in ({"x-api-key": api_key}, {"Authorization": f"Bearer {api_key}"}):
        with McpClient(galaxy.mcp_url, headers=headers) as client:
            assert client.call_ok("get_user")["email"] == "demo@example.org"  # a stock tool
            history = client.call_ok("create_history", name="header auth")["id"]
            made = client.call_ok("create_dataset_from_text", history_id=history, content="a\n")  # ours
            assert made["dataset_id"]
            # The argument keeps working next to a header that agrees.
            assert client.call_ok("list_history_ids", api_key=api_key)["count"] >= 1


def test_a_header_and_a_different_argument_are_refused(galaxy, api_key, other_user_key):
    with McpClient(galaxy.mcp_url, headers={"x-api-key": api_key}) as client:
        for tool, arguments in (("get_user", {}), ("list_pages", {})):
            error = client.call_error(tool, api_key=other_user_key, **arguments)
            assert_coded(error, "AUTHENTICATION_ERROR")
            assert other_user_key not in error and api_key not in error
    with McpClient(galaxy.mcp_url, headers={"x-api-key": api_key, "Authorization": f"Bearer {other_user_key}"}) as client:
        assert_coded(client.call_error("get_user"), "AUTHENTICATION_ERROR")


def test_no_key_anywhere_names_both_ways(mcp):
    error = mcp.call_error("get_user")
    assert_coded(error, "AUTHENTICATION_ERROR")
    assert "x-api-key" in error and "api_key" in error


def test_no_error_text_of_this_module_leaks_internals(galaxy, mcp, api_key, listed):
    """Provokes its own errors: every tool the patch set adds or wraps, called with no arguments, and with
    each id argument alone malformed and well-formed but unknown. Checks those and every error text this
    process received before (run with the module, the tests above); test/conftest.py checks the whole
    suite the same way at the end."""
    provoked = len(ERROR_TEXTS)
    for name in sorted(patch_set_tools()):
        mcp.call(name, {"api_key": api_key})
        for parameter, schema in listed[name].input_schema["properties"].items():
            if parameter.endswith("_id") and "string" in json.dumps(schema):
                for value in ("not-an-id!", missing_id(galaxy)):
                    mcp.call(name, {parameter: value, "api_key": api_key})
    assert len(ERROR_TEXTS) - provoked > len(patch_set_tools())
    assert [text for _, text, arguments in ERROR_TEXTS if leaks_internals(text, arguments)] == []
    assert all(CODED.match(text) for _, text, _ in ERROR_TEXTS), [t for _, t, _ in ERROR_TEXTS if not CODED.match(t)]
