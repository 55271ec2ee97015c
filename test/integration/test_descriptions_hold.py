"""Every description is true: what each served tool's description promises, and the test that proves it.

``PROMISES`` (description_promises.py) maps every tool of the live ``tools/list`` to its promises: a
short phrase quoted from its description (compared with runs of whitespace collapsed) and its proof,
either a test of another module (``test_x.py::test_name``), a test of this module (``test_name``), or
``untested: <why>``. The meta-tests below keep the table honest: a new tool without an entry, a
phrase no longer in its tool's description, an error code a description names but no phrase quotes,
or a reference to a test that does not exist fails. Each field a "Returns ..." sentence names is
checked on one valid call of its tool (the sentence is parsed from the live description).
The tests of this module prove, through /api/mcp with the official client on one shared history,
the promises no other module tests (mostly those of Galaxy's stock tools, whose descriptions we
rewrote); where a promise is already proven elsewhere, the table points there instead.
"""

import ast
import inspect
import re
import time
from pathlib import Path

import pytest

from conftest import (
    held_upload,
    missing_id,
)
from description_promises import PROMISES
from galaxy_mcp_analysis.core.tool_facts import example_call
from galaxy_mcp_analysis.mcp.declaration import TOOL_SPECS
from galaxy_mcp_analysis.testing import rest
from galaxy_mcp_analysis.tools import (
    STOCK_DESCRIPTIONS,
    TOOL_FACTS,
)

HERE = Path(__file__).parent


def collapsed(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def listed(mcp):
    return {tool.name: tool for tool in mcp.list_tools()}


# ---- the table stays honest ----


def test_every_served_tool_has_its_promises_listed(listed):
    assert sorted(set(listed) - set(PROMISES)) == [], "add the new tool's promises to PROMISES"
    assert sorted(set(PROMISES) - set(listed)) == [], "PROMISES names a tool tools/list does not serve"
    assert all(PROMISES[name] for name in PROMISES)


def test_every_quoted_phrase_is_in_its_tools_live_description(listed):
    stale = [(name, phrase) for name, promises in PROMISES.items() for phrase, _ in promises
             if collapsed(phrase) not in collapsed(listed[name].description)]
    assert stale == [], f"descriptions changed; update PROMISES: {stale}"


def test_every_error_code_a_description_names_is_in_its_table(listed):
    unlisted = {}
    for name, tool in listed.items():
        quoted = " ".join(phrase for phrase, _ in PROMISES.get(name, []))
        missing = set(re.findall(r"\[[A-Z_]+\]", tool.description)) - set(re.findall(r"\[[A-Z_]+\]", quoted))
        if missing:
            unlisted[name] = sorted(missing)
    assert unlisted == {}, f"quote each error code's promise in PROMISES: {unlisted}"


def module_tests(path: Path) -> set[str]:
    """``test_name`` and ``Class::test_name`` of a test module, read with ast (nothing is collected or run)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names |= {f"{node.name}::{item.name}" for item in node.body
                      if isinstance(item, ast.FunctionDef) and item.name.startswith("test_")}
    return names




def test_every_referenced_test_exists():
    proofs = {proof for promises in PROMISES.values() for _, proof in promises}
    missing = []
    for proof in sorted(proofs):
        if proof.startswith("untested: "):
            assert len(proof) > len("untested: ") + 10, proof  # a reason, not a shrug
            continue
        module, name = (proof.split("::", 1) if "::" in proof else (Path(__file__).name, proof))
        path = HERE / module
        if not path.is_file() or name not in module_tests(path):
            missing.append(proof)
    assert missing == [], missing
    # Every test of this module that proves something is named in the table (none is dead weight).
    proving = {proof for proof in proofs if "::" not in proof and not proof.startswith("untested")}
    meta = {"test_every_served_tool_has_its_promises_listed",
            "test_every_quoted_phrase_is_in_its_tools_live_description",
            "test_every_referenced_test_exists", "test_every_tool_naming_its_result_fields_has_a_valid_call",
            "test_every_error_code_a_description_names_is_in_its_table"}
    assert module_tests(Path(__file__)) - meta == proving


# ---- one history shared by the checks below ----


@pytest.fixture(scope="module")
def world(galaxy, mcp, api_key, other_user_key):
    call = lambda tool, **arguments: mcp.call_ok(tool, api_key=api_key, **arguments)  # noqa: E731
    history = call("create_history", name="descriptions hold")["id"]
    made = {name: call("create_dataset_from_text", history_id=history, name=name, content=content, file_type=kind)
            for name, content, kind in (("zeta", "b\t2\na\t1\n", "tabular"), ("alpha", "c\t3\n", "tabular"),
                                        ("long line", "x" * 300 + "\nshort\n", "txt"), ("spare", "s\n", "txt"))}
    call("wait_for_jobs", history_id=history, timeout_seconds=120)
    ids = {name: made[name]["dataset_id"] for name in made}
    collection = call("create_collection", history_id=history, collection_type="list", name="pair",
                      element_identifiers=[{"name": n, "src": "hda", "id": ids[n]} for n in ("zeta", "alpha")],
                      copy_elements=False)
    sorted_run = call("run_tool", history_id=history, tool_id="sort1", inputs={
        "input": {"src": "hda", "id": ids["zeta"]}, "column": 1, "style": "alpha", "order": "ASC"})
    workflow = call("create_workflow", definition={
        "class": "GalaxyWorkflow", "label": "descriptions hold wf", "inputs": {"table": "data"},
        "steps": {"cat": {"tool_id": "cat1", "in": {"input1": "table"}}}})
    invocation = call("invoke_workflow", workflow_id=workflow["workflow_id"], history_id=history,
                      inputs={"table": {"src": "hda", "id": ids["alpha"]}})
    call("wait_for_jobs", history_id=history, timeout_seconds=120)
    page = call("create_page", history_id=history, title="descriptions hold", content="# first\n")
    [first_revision] = call("list_page_revisions", page_id=page["page_id"])["revisions"]
    report = call("create_page", title="another page", slug=f"another-{time.monotonic_ns()}", content="# other\n")
    spare_workflow = call("create_workflow", definition={
        "class": "GalaxyWorkflow", "label": "deleted and restored", "inputs": {"table": "data"},
        "steps": {"cat": {"tool_id": "cat1", "in": {"input1": "table"}}}})
    # Another user's private dataset, for the refusals.
    other_history = mcp.call_ok("create_history", name="not yours", api_key=other_user_key)["id"]
    private = mcp.call_ok("create_dataset_from_text", history_id=other_history, content="secret\n",
                          api_key=other_user_key)["dataset_id"]
    mcp.call_ok("wait_for_jobs", history_id=other_history, timeout_seconds=120, api_key=other_user_key)
    rest(galaxy.galaxy_url, f"/api/datasets/{private}/permissions", other_user_key, {"action": "make_private"},
         method="PUT")
    other_collection = rest(galaxy.galaxy_url, "/api/dataset_collections", other_user_key, {
        "history_id": other_history, "collection_type": "list", "name": "theirs",
        "element_identifiers": [{"name": "s", "src": "hda", "id": private}]})["id"]
    return {"history": history, "ids": ids, "collection": collection["collection_id"], "made": made,
            "sort_job": sorted_run["jobs"][0]["id"], "workflow": workflow["workflow_id"],
            "invocation": invocation["id"], "page": page["page_id"], "first_revision": first_revision["id"],
            "report_revision": report["latest_revision_id"], "report": report["page_id"],
            "spare_workflow": spare_workflow["workflow_id"],
            "other_history": other_history,
            "private": private, "other_collection": other_collection}


# ---- what results carry: each field a description names, one valid call each ----

_OPEN, _CLOSE = "([{", ")]}"


def _top_level(text: str, in_braces: bool = False) -> str:
    """``text`` without its bracketed groups, up to the first '.', ';' or ': ' outside them."""
    kept, depth = [], 0
    for index, char in enumerate(text):
        depth += (char in _OPEN) - (char in _CLOSE)
        if depth == 0 and char not in _CLOSE:
            if char in ".;" or (not in_braces and text.startswith(": ", index)):
                break
            kept.append(char)
    return "".join(kept)


def returned_fields(description: str) -> list[str]:
    """The top-level result fields a "Returns a, b [{...}] and c." sentence names (prose is skipped:
    "the upload job", "Galaxy's outputs"); a sentence opening with {...} names what is inside."""
    text = collapsed(description)
    if "Returns " not in text:
        return []
    text = text.split("Returns ", 1)[1]
    in_braces = text.startswith("{")
    if in_braces:
        depth = 0
        for end, char in enumerate(text):
            depth += (char in _OPEN) - (char in _CLOSE)
            if depth == 0:
                break
        text = text[1:end]
    names = (token.strip().strip('":').strip() for token in re.split(r",|/| and | plus ", _top_level(text, in_braces)))
    return [name for name in names if re.fullmatch(r"[a-z][a-z_]*", name)]


#: Tools whose description names result fields but that no valid call here can reach, and why.
NO_VALID_CALL = {
    "cancel_job": "needs an unfinished job (test_managing.py::test_cancel_a_job_still_waiting_for_its_input)",
    "delete_user_tool": "the served Galaxy has no user-tool role",
    "run_user_tool": "the served Galaxy has no user-tool role",
    "search_iwc_workflows": "this machine has no route to the IWC catalogue",
    "upload_file_from_url": "a URL the server fetches: test_an_upload_from_a_url_is_checked_first",
}

#: Top-level fields named outside a "Returns ..." sentence: tool -> fields.
NAMED_FIELDS = {
    "list_histories": ["histories", "count"],
    "get_dataset_details": ["dataset"],
    "get_collection_details": ["collection"],
    "list_workflows": ["workflows", "count"],
    "get_job_details": ["dataset_id", "job_id", "job"],
    "download_dataset": ["download_url", "name", "extension", "file_size", "state"],
    "get_server_info": ["server", "capabilities", "patch_set"],
    "get_user": ["id", "username", "email", "is_admin", "active", "create_time"],
}

#: Fields a description says a result does not carry: tool -> fields.
ABSENT = {
    "get_dataset_details": ["content"],
    "download_dataset": ["content"],
    "get_job_details": ["parameters", "params", "stderr", "stdout", "exit_code"],
}


def declared_description(name: str) -> str:
    """A tool's description as declared here (analysis_tool's docstring or a STOCK_DESCRIPTIONS entry); the live
    one is compared with it by test_every_tool_naming_its_result_fields_has_a_valid_call."""
    spec = next((spec for spec in TOOL_SPECS if spec.name == name), None)
    return inspect.cleandoc(spec.function.__doc__) if spec else STOCK_DESCRIPTIONS.get(name, "")


#: One valid call per tool that names its result's fields: its declared example (ToolFacts.example); run in
#: name order, so delete_* come before restore_* and the items end restored.
CALLS = {name: facts.example for name, facts in sorted(TOOL_FACTS.items())
         if facts.example is not None and name not in NO_VALID_CALL
         and (returned_fields(declared_description(name)) or name in NAMED_FIELDS)}


def world_items(world: dict) -> dict[str, str]:
    """The shared history's items by the kinds examples name (core.tool_facts.ITEM_KINDS; no URL here)."""
    return {"history": world["history"], "dataset": world["ids"]["zeta"], "collection": world["collection"],
            "job": world["sort_job"], "page": world["page"], "revision": world["first_revision"],
            "workflow": world["workflow"], "invocation": world["invocation"], "spare_dataset": world["ids"]["spare"],
            "spare_page": world["report"], "spare_workflow": world["spare_workflow"]}


def test_every_tool_naming_its_result_fields_has_a_valid_call(listed):
    naming = {name for name, tool in listed.items() if returned_fields(tool.description)}
    assert sorted(naming - set(CALLS) - set(NO_VALID_CALL)) == []
    assert len(naming) >= 30 and set(NAMED_FIELDS) <= set(CALLS)
    assert returned_fields(listed["get_job_status"].description) == ["job", "job_id", "empty_outputs",
                                                                     "suspected_silent_failure"]


#: Fields of each listed item (or of the one nested object) a description names: tool -> (key, fields).
ITEM_FIELDS = {
    "search_tools": ("tools", ["id", "name", "version", "description"]),
    "list_histories": ("histories", ["id", "name", "update_time"]),
    "get_job_status": ("job", ["id", "state", "exit_code", "tool_id", "params", "inputs", "outputs"]),
    "get_history_contents": ("contents", ["id", "hid", "name", "history_content_type"]),
    "get_dataset_details": ("dataset", ["name", "state", "extension", "file_size", "genome_build", "peek",
                                        "misc_info"]),
    "get_collection_details": ("collection", ["collection_type", "populated_state", "elements"]),
    "list_workflows": ("workflows", ["id", "name", "tags", "update_time"]),
    "get_job_details": ("job", ["tool_id", "tool_version", "state", "create_time", "update_time"]),
    "get_server_info": ("server", ["version", "url"]),
    "list_pages": ("pages", ["id", "title", "slug", "history_id", "published", "latest_revision_id", "update_time"]),
}


@pytest.mark.parametrize("tool", sorted(CALLS))
def test_results_carry_the_fields_they_name(galaxy, mcp, api_key, listed, world, tool):
    fields = returned_fields(listed[tool].description) or NAMED_FIELDS[tool]
    absent = ABSENT.get(tool, [])
    result = mcp.call_ok(tool, api_key=api_key, **example_call(CALLS[tool], world_items(world)))
    assert [field for field in fields if field not in result] == [], (tool, fields, sorted(result))
    assert [field for field in absent if field in result] == [], (tool, sorted(result))
    if tool in ITEM_FIELDS:
        key, item_fields = ITEM_FIELDS[tool]
        items = result[key] if isinstance(result[key], list) else [result[key]]
        assert items, (tool, result)
        for item in items:
            assert [field for field in item_fields if field not in item] == [], (tool, sorted(item))
            assert [field for field in absent if field in item] == [], (tool, sorted(item))
    if tool == "get_history_contents":
        datasets = [item for item in result["contents"] if item["history_content_type"] == "dataset"]
        assert datasets and all(item["state"] and item["extension"] for item in datasets), datasets
        assert result["pagination"]["total_items"] >= len(result["contents"]), result["pagination"]
    if tool == "get_collection_details":
        elements = result["collection"]["elements"]
        assert [e["element_identifier"] for e in elements] == ["zeta", "alpha"]
        assert all(e["object"]["id"] and e["object"]["state"] == "ok" for e in elements), elements
    if tool == "get_job_details":  # the job that made the paste, as Galaxy's REST API knows it
        job = rest(galaxy.galaxy_url, f"/api/jobs/{result['job_id']}", api_key)
        assert (result["job"]["tool_id"], result["job"]["state"]) == (job["tool_id"], "ok") == ("__DATA_FETCH__", "ok")
        assert result["job_id"] == world["made"]["zeta"]["job_id"] and result["dataset_id"] == world["ids"]["zeta"]
    if tool == "get_server_info":
        assert result["server"]["version"] == "26.1" and result["patch_set"]["name"] == "galaxy-mcp-analysis", result
        assert result["server"]["url"] == galaxy.galaxy_url, result
    if tool == "get_user":
        assert (result["email"], result["is_admin"], result["active"]) == ("demo@example.org", False, True), result


# ---- errors each description names, for the stock tools nothing else provokes ----


def test_a_missing_or_invalid_key_is_refused(galaxy):
    from galaxy_mcp_analysis.testing import McpClient

    with McpClient(galaxy.mcp_url) as anonymous:
        for tool in ("connect", "get_user"):
            assert anonymous.call_error(tool).startswith("[AUTHENTICATION_ERROR]")
            assert anonymous.call_error(tool, api_key="f" * 32).startswith("[AUTHENTICATION_ERROR]")


def test_unknown_and_foreign_items_get_the_codes_descriptions_name(galaxy, mcp, api_key, world):
    unknown = missing_id(galaxy)
    unknown_item = {"src": "hda", "id": unknown}
    expected = [
        ("run_tool", {"history_id": world["history"], "tool_id": "no_such_tool", "inputs": {}}, "NOT_FOUND"),
        ("get_job_status", {"job_id": unknown}, "NOT_FOUND"),
        ("get_history_details", {"history_id": unknown}, "NOT_FOUND"),
        ("get_history_details", {"history_id": world["other_history"]}, "AUTHORIZATION_ERROR"),
        ("get_history_contents", {"history_id": unknown}, "NOT_FOUND"),
        ("get_history_contents", {"history_id": world["other_history"]}, "AUTHORIZATION_ERROR"),
        ("get_dataset_details", {"dataset_id": unknown}, "NOT_FOUND"),
        ("get_dataset_details", {"dataset_id": world["private"]}, "AUTHORIZATION_ERROR"),
        ("get_collection_details", {"collection_id": unknown}, "NOT_FOUND"),
        ("get_collection_details", {"collection_id": world["other_collection"]}, "AUTHORIZATION_ERROR"),
        ("get_invocation_details", {"invocation_id": unknown}, "NOT_FOUND"),
        ("cancel_workflow_invocation", {"invocation_id": unknown}, "NOT_FOUND"),
        ("get_tool_panel", {"view": "no_such_view"}, "VALIDATION_ERROR"),
        ("get_tool_citations", {"tool_id": "no_such_tool"}, "NOT_FOUND"),
        ("get_job_details", {"dataset_id": unknown}, "NOT_FOUND"),
        ("download_dataset", {"dataset_id": unknown}, "NOT_FOUND"),
        ("create_dataset_from_text", {"history_id": unknown, "content": "x\n"}, "NOT_FOUND"),
        ("get_job_parameters", {"job_id": unknown}, "NOT_FOUND"),
        ("get_page", {"page_id": unknown}, "NOT_FOUND"),
        ("list_page_revisions", {"page_id": unknown}, "NOT_FOUND"),
        ("get_page_revision", {"page_id": world["page"], "revision_id": world["report_revision"]}, "NOT_FOUND"),
        ("revert_page_revision", {"page_id": world["page"], "revision_id": unknown}, "NOT_FOUND"),
        ("update_page", {"page_id": unknown, "content": "# x\n"}, "NOT_FOUND"),
        ("create_page", {"history_id": unknown, "content": "# x\n"}, "NOT_FOUND"),
        ("update_collection", {"collection_id": unknown, "name": "x"}, "NOT_FOUND"),
        ("delete_history_items", {"history_id": world["history"], "items": [unknown_item]}, "NOT_FOUND"),
        ("restore_history_items", {"history_id": world["history"], "items": [unknown_item]}, "NOT_FOUND"),
        ("check_tool_inputs", {"history_id": world["history"], "tool_id": "no_such_tool", "inputs": {}}, "NOT_FOUND"),
        ("check_tool_inputs", {"history_id": world["history"], "tool_id": "cat1",
                               "inputs": {"input1": {"src": "hda", "id": unknown}}}, "NOT_FOUND"),
        ("wait_for_jobs", {"job_ids": [unknown], "timeout_seconds": 0}, "NOT_FOUND"),
    ]
    texts = [mcp.call_error(tool, api_key=api_key, **arguments) for tool, arguments, _ in expected]
    wrong = [(tool, code, text) for (tool, _, code), text in zip(expected, texts) if not text.startswith(f"[{code}]")]
    assert wrong == [], wrong


# ---- stock tools: behaviours ----


def test_search_tools_finds_by_name_help_and_section_in_any_case(mcp, api_key):
    found = mcp.call_ok("search_tools", query="SoRt", api_key=api_key)
    assert "sort1" in [tool["id"] for tool in found["tools"]] and found["count"] == len(found["tools"]), found
    through_help = [tool["id"] for tool in found["tools"]
                    if "sort" not in f"{tool['id']} {tool['name']} {tool['description']}".lower()]
    assert through_help, found  # e.g. __APPLY_RULES__, whose help tells how to sort
    for tool_id in through_help:  # ... or Grep1, in the panel section "Filter and Sort"
        help_ = mcp.call_ok("get_tool_help", tool_id=tool_id, api_key=api_key)
        section = (help_.get("panel_section") or {}).get("name") or ""
        assert "sort" in f"{help_['help_text']} {section}".lower(), (tool_id, section)


def test_list_histories_pages_filters_and_orders(galaxy, mcp, api_key, world):
    marker = f"paging{time.monotonic_ns()}"
    made = [mcp.call_ok("create_history", name=f"{marker} {n}", api_key=api_key)["id"] for n in range(3)]
    named = mcp.call_ok("list_histories", name=marker.upper(), api_key=api_key)
    assert [h["id"] for h in named["histories"]] == made[::-1] and named["count"] == 3, named
    # Renaming the oldest updates it but does not move it: the order is by creation.
    rest(galaxy.galaxy_url, f"/api/histories/{made[0]}", api_key, {"name": f"{marker} 0 renamed"}, method="PUT")
    again = mcp.call_ok("list_histories", name=marker, api_key=api_key)["histories"]
    assert [h["id"] for h in again] == made[::-1] and again[-1]["update_time"] > again[0]["update_time"], again
    page = mcp.call_ok("list_histories", name=marker, limit=1, offset=1, api_key=api_key)
    assert [h["id"] for h in page["histories"]] == [made[1]], page
    default = mcp.call_ok("list_histories", api_key=api_key)
    assert default["pagination"]["limit"] == 50 and default["count"] == min(50, default["count"]), default


def test_list_history_ids_are_pairs_within_the_limit(mcp, api_key, world):
    every = mcp.call_ok("list_history_ids", api_key=api_key)
    assert 2 <= every["count"] == len(every["histories"]) <= 100
    assert all(set(pair) == {"id", "name"} for pair in every["histories"]), every["histories"][:3]
    assert world["history"] in [pair["id"] for pair in every["histories"]]
    assert mcp.call_ok("list_history_ids", limit=1, api_key=api_key)["count"] == 1


def test_history_details_summarise_without_listing(galaxy, mcp, api_key, world):
    mcp.call_ok("wait_for_jobs", history_id=world["history"], timeout_seconds=120, api_key=api_key)
    result = mcp.call_ok("get_history_details", history_id=world["history"], api_key=api_key)
    history = result["history"]
    rows = mcp.call_ok("get_history_contents", history_id=world["history"], deleted=False, api_key=api_key)["contents"]
    states = [row["state"] for row in rows if row["history_content_type"] == "dataset"]
    assert (history["name"], history["state"]) == ("descriptions hold", "ok") and history["size"] > 0, history
    assert {state: count for state, count in history["state_details"].items() if count} == {"ok": len(states)}, history
    assert history["count"] == len(rows) > len(states) >= 5, history  # datasets and the collection
    assert "contents" not in result and "contents" not in history, sorted(history)


def test_history_contents_come_in_each_order(mcp, api_key, world):
    def names(order):
        page = mcp.call_ok("get_history_contents", history_id=world["history"], order=order, api_key=api_key)
        return [(item["hid"], item["name"]) for item in page["contents"]]

    ascending = names("hid-asc")
    assert [hid for hid, _ in ascending] == sorted(hid for hid, _ in ascending) and len(ascending) >= 5
    assert names("hid-dsc") == ascending[::-1]
    assert [name for _, name in names("name-asc")] == sorted(name for _, name in ascending)
    assert sorted(names("create_time-dsc")) == sorted(ascending) == sorted(names("update_time-dsc"))


def test_collection_elements_are_capped_by_max_elements(mcp, api_key, world):
    capped = mcp.call_ok("get_collection_details", collection_id=world["collection"], max_elements=1, api_key=api_key)
    assert [e["element_identifier"] for e in capped["collection"]["elements"]] == ["zeta"], capped
    assert capped["collection"]["elements_truncated"] is True and capped["collection"]["total_elements"] == 2


def test_an_upload_from_a_url_is_checked_first(galaxy, mcp, api_key, world, file_server):
    url = file_server("descriptions-hold.tsv", b"u\t1\n")
    uploaded = mcp.call_ok("upload_file_from_url", history_id=world["history"], url=url, file_type="tabular",
                           api_key=api_key)
    [job], [dataset] = uploaded["jobs"], uploaded["outputs"]
    assert job["id"] and dataset["id"] and dataset["hid"] and dataset["state"] in ("new", "queued", "running", "ok")
    refused = mcp.call_error("upload_file_from_url", history_id=world["history"], url=url, file_type="tabularr",
                             api_key=api_key)
    assert refused.startswith("[VALIDATION_ERROR]") and "tabular" in refused, refused
    bad_url = mcp.call_error("upload_file_from_url", history_id=world["history"], url="not a url", api_key=api_key)
    assert bad_url.startswith("[VALIDATION_ERROR]"), bad_url
    purged = mcp.call_ok("create_history", name="purged", api_key=api_key)["id"]
    rest(galaxy.galaxy_url, f"/api/histories/{purged}", api_key, {"purge": True}, method="DELETE")
    conflict = mcp.call_error("upload_file_from_url", history_id=purged, url=url, api_key=api_key)
    assert conflict.startswith("[CONFLICT]"), conflict


def test_workflows_are_listed_searched_and_versioned(galaxy, mcp, api_key, other_user_key, world):
    workflow = world["workflow"]
    searched = mcp.call_ok("list_workflows", search="descriptions hold", api_key=api_key)
    assert [w["id"] for w in searched["workflows"]] == [workflow], searched
    assert mcp.call_ok("list_workflows", limit=1, api_key=api_key)["count"] == 1
    # Shared with the caller: listed by default; another user's published one only with show_published.
    document = {"class": "GalaxyWorkflow", "label": "shared-by-other", "inputs": {"t": "data"},
                "steps": {"c": {"tool_id": "cat1", "in": {"input1": "t"}}}}
    gx = galaxy.galaxy_url
    theirs = rest(gx, "/api/workflows", other_user_key, {"workflow": document, "fill_defaults": True})["id"]
    published = rest(galaxy.galaxy_url, "/api/workflows", other_user_key,
                     {"workflow": {**document, "label": "published-by-other"}, "fill_defaults": True})["id"]
    me = rest(galaxy.galaxy_url, "/api/users/current", api_key)["id"]
    rest(gx, f"/api/workflows/{theirs}/share_with_users", other_user_key, {"user_ids": [me]}, method="PUT")
    rest(galaxy.galaxy_url, f"/api/workflows/{published}/publish", other_user_key, method="PUT")
    listed = {w["id"] for w in mcp.call_ok("list_workflows", limit=500, api_key=api_key)["workflows"]}
    assert theirs in listed and published not in listed
    assert published in {w["id"] for w in mcp.call_ok("list_workflows", show_published=True, limit=500,
                                                        api_key=api_key)["workflows"]}
    # Details: steps, inputs by label and index; an older version by number.
    details = mcp.call_ok("get_workflow_details", workflow_id=workflow, api_key=api_key)["workflow"]
    [(index, step_input)] = details["inputs"].items()
    assert step_input["label"] == "table" and index == "0" and len(details["steps"]) == 2, details
    stored = rest(galaxy.galaxy_url, f"/api/workflows/{workflow}/download?format=json-download", api_key)
    rest(galaxy.galaxy_url, f"/api/workflows/{workflow}", api_key, {"workflow": {**stored, "name": "renamed v2"}},
         method="PUT")
    latest = mcp.call_ok("get_workflow_details", workflow_id=workflow, api_key=api_key)["workflow"]
    assert latest["name"] == "renamed v2", latest
    assert mcp.call_ok("get_workflow_details", workflow_id=workflow, version=0,
                       api_key=api_key)["workflow"]["name"] == "descriptions hold wf"
    # Invocations, filtered by workflow and by history.
    for arguments in ({"workflow_id": workflow}, {"history_id": world["history"]}):
        found = mcp.call_ok("get_invocations", api_key=api_key, **arguments)
        assert [i["id"] for i in found["invocations"]] == [world["invocation"]] and found["count"] == 1, found
        assert found["invocations"][0]["state"], found


def test_a_cancelled_invocation_runs_no_further_step(galaxy, mcp, api_key, world, held_files):
    """The workflow's input is an upload held open, so its one step cannot have run when it is cancelled."""
    job_id, dataset_id, release = held_upload(galaxy, mcp, api_key, world["history"], held_files, "wf-input.tsv")
    invocation = mcp.call_ok("invoke_workflow", workflow_id=world["workflow"], history_id=world["history"],
                             inputs={"table": {"src": "hda", "id": dataset_id}}, api_key=api_key)["id"]
    cancelled = mcp.call_ok("cancel_workflow_invocation", invocation_id=invocation, api_key=api_key)
    assert cancelled["invocation"]["state"] in ("cancelling", "cancelled"), cancelled["invocation"]["state"]
    release.set()
    mcp.call_ok("wait_for_jobs", job_ids=[job_id], timeout_seconds=120, api_key=api_key)
    waited = mcp.call_ok("wait_for_jobs", invocation_id=invocation, timeout_seconds=60, api_key=api_key)
    assert all(job["state"] != "ok" for job in waited["jobs"] if job["tool_id"] == "cat1"), waited


def test_the_tool_panel_and_citations_are_as_described(mcp, api_key):
    panel = mcp.call_ok("get_tool_panel", api_key=api_key)
    sections = {entry["id"]: entry["tools"] for entry in panel["tool_panel"].values()
                if entry.get("model_class") == "ToolSection"}
    assert "sort1" in sections["filter"] and "__FLATTEN__" in sections["collection_operations"], sections  # "Filter and Sort"
    cited = mcp.call_ok("get_tool_citations", tool_id="sort1", api_key=api_key)
    assert (cited["tool_name"], cited["tool_version"], cited["citations"]) == ("Sort", "1.2.0", []), cited


def test_keyword_hits_come_most_keywords_first(mcp, api_key):
    found = mcp.call_ok("search_tools_by_keywords", keywords=["sort", "column", "tab"], api_key=api_key)
    counts = [len(hit["matched_keywords"]) for hit in found["tools"]]
    assert counts == sorted(counts, reverse=True) and counts[0] > 1 and found["count"] == len(counts), counts


def test_download_dataset_gives_a_url_that_serves_the_bytes(galaxy, mcp, api_key, world):
    result = mcp.call_ok("download_dataset", dataset_id=world["ids"]["zeta"], api_key=api_key)
    assert "b\t2" not in str(result)
    url = result["download_url"]
    path = url.split("://", 1)[-1].split("/", 1)[1] if "://" in url else url.lstrip("/")
    import urllib.request

    request = urllib.request.Request(f"{galaxy.galaxy_url}/{path}", headers={"x-api-key": api_key})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.read() == b"b\t2\na\t1\n"


def test_an_unreachable_quay_io_is_said_not_hidden(mcp, api_key):
    found = mcp.call_ok("recommend_biocontainer", packages=["samtools"], api_key=api_key)
    if found["verified"] is not None:
        pytest.skip("quay.io answered: this machine has a network route")
    assert (found["found"], found["image"]) == (False, None) and "quay.io" in " ".join(found["notes"]), found


def test_user_tools_are_refused_where_the_server_has_none(mcp, api_key):
    representation = {"class": "GalaxyUserTool", "id": "echo_hi", "version": "0.1", "name": "echo hi",
                      "container": "busybox",
                      "shell_command": "echo hi > out.txt", "inputs": [],
                      "outputs": [{"name": "out", "type": "data", "format": "txt", "from_work_dir": "out.txt"}]}
    refused = mcp.call_error("create_user_tool", representation=representation, api_key=api_key)
    assert refused.startswith("[AUTHORIZATION_ERROR]"), refused
    malformed = mcp.call_error("create_user_tool", representation={**representation, "id": "t"}, api_key=api_key)
    assert malformed.startswith("[VALIDATION_ERROR]") and "representation.id" in malformed, malformed


# ---- the patch set's tools: what no other module checks ----


def test_a_line_longer_than_max_bytes_is_cut_and_says_so(mcp, api_key, world):
    read = mcp.call_ok("peek_dataset_content", dataset_id=world["ids"]["long line"], max_bytes=100, whole_lines=True,
                       api_key=api_key)
    assert read["line_truncated"] is True and read["content"] == "x" * 100 and read["next_offset"] == 100, read
    rest_of_it = mcp.call_ok("peek_dataset_content", dataset_id=world["ids"]["long line"], offset=301, max_bytes=100,
                             whole_lines=True, api_key=api_key)
    assert (rest_of_it["content"], rest_of_it["line_truncated"], rest_of_it["eof"]) == ("short\n", False, True), \
        rest_of_it


def test_a_revert_names_the_new_revision_and_its_source(mcp, api_key, world):
    page = world["page"]
    first = {"id": world["first_revision"]}
    mcp.call_ok("update_page", page_id=page, content="# second\n", api_key=api_key)
    reverted = mcp.call_ok("revert_page_revision", page_id=page, revision_id=first["id"], api_key=api_key)
    now = mcp.call_ok("get_page", page_id=page, api_key=api_key)
    assert reverted["reverted_to"] == first["id"] and reverted["new_revision_id"] == now["latest_revision_id"], reverted
    assert reverted["new_revision_id"] != first["id"] and now["content_editor"] == "# first\n", now


def test_help_names_the_tools_requirements(mcp, api_key):
    helped = mcp.call_ok("get_tool_help", tool_id="sort1", api_key=api_key)
    assert {"name": "grep", "version": "3.11", "type": "package"} in helped["requirements"], helped["requirements"]
    assert helped["citations"] == [], helped["citations"]  # sorter.xml declares none


def test_a_paste_is_a_tool_input_at_once(mcp, api_key, world):
    """The paste is not waited for: the tool's job waits on it, and a wait by the paste's dataset id follows it."""
    pasted = mcp.call_ok("create_dataset_from_text", history_id=world["history"], content="at\tonce\n",
                         file_type="tabular", api_key=api_key)
    run = mcp.call_ok("run_tool", history_id=world["history"], tool_id="cat1",
                      inputs={"input1": {"src": "hda", "id": pasted["dataset_id"]}}, api_key=api_key)
    by_dataset = mcp.call_ok("wait_for_jobs", dataset_ids=[pasted["dataset_id"]], timeout_seconds=120, api_key=api_key)
    assert [job["job_id"] for job in by_dataset["jobs"]] == [pasted["job_id"]], by_dataset
    assert by_dataset["all_terminal"], by_dataset
    mcp.call_ok("wait_for_jobs", job_ids=[run["jobs"][0]["id"]], timeout_seconds=120, api_key=api_key)
    read = mcp.call_ok("peek_dataset_content", dataset_id=run["outputs"][0]["id"], api_key=api_key)
    assert read["content"] == "at\tonce\n", read


def test_a_number_below_its_minimum_is_out_of_range(mcp, api_key, world):
    checked = mcp.call_ok("check_tool_inputs", history_id=world["history"], tool_id="Show beginning1", api_key=api_key,
                          inputs={"input": {"src": "hda", "id": world["ids"]["zeta"]}, "lineNum": 0})
    assert checked["valid"] is False, checked
    assert [(e["path"], e["rule"]) for e in checked["errors"]] == [("inputs.lineNum", "out_of_range")], checked
