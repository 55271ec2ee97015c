"""No valid call to the tool-information tools crashes, on every tool the served Galaxy has, and
get_tool_run_examples gives each tool's own test cases (through /api/mcp on a real Galaxy)."""

from galaxy_mcp_analysis.testing import rest

INFORMATION_TOOLS = ("get_tool_details", "get_tool_run_examples", "get_tool_input_schema", "get_tool_citations")


def test_every_served_tool_answers_every_information_tool_without_a_server_error(galaxy, mcp, api_key):
    tool_ids = sorted({tool["id"] for tool in rest(galaxy.galaxy_url, "/api/tools?in_panel=false", api_key)})
    assert len(tool_ids) > 40, tool_ids
    failed = []
    for name in INFORMATION_TOOLS:
        for tool_id in tool_ids:
            result = mcp.call(name, {"tool_id": tool_id, "api_key": api_key})
            if result.is_error:
                failed.append((name, tool_id, result.content[0].text[:160]))
    assert failed == [], failed


def test_run_examples_are_the_tools_own_test_cases(mcp, api_key):
    examples = mcp.call_ok("get_tool_run_examples", tool_id="sort1", api_key=api_key)
    assert (examples["tool_id"], examples["tool_name"], examples["count"]) == ("sort1", "Sort", len(examples["test_cases"]))
    first = examples["test_cases"][0]
    # sorter.xml's first test, as Galaxy's test framework sends it: flat repeat keys included.
    assert first["inputs"] == {"input": "1.bed", "column": "1", "style": "alpha", "order": "ASC",
                               "column_set_0|other_column": "3", "column_set_0|other_style": "num",
                               "column_set_0|other_order": "DESC"}, first
    assert first["outputs"] == {"out_file1": {"file": "sort_out1.bed"}}, first
    every = mcp.call_ok("get_tool_run_examples", tool_id="sort1", tool_version="*", api_key=api_key)
    assert every["requested_version"] == "*" and every["count"] >= examples["count"]
    missing = mcp.call_error("get_tool_run_examples", tool_id="no_such_tool", api_key=api_key)
    assert missing.startswith("[NOT_FOUND]"), missing
