"""No valid call to the tool-information tools crashes, on every tool the served Galaxy has, and
get_tool_run_examples gives each tool's own test cases, get_tool_help its help as text (through /api/mcp on a real Galaxy)."""

from galaxy_mcp_analysis.testing import rest

INFORMATION_TOOLS = ("get_tool_details", "get_tool_run_examples", "get_tool_input_schema", "get_tool_citations",
                     "get_tool_help")


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


def test_help_is_plain_text_with_what_tells_how_to_use_the_tool(galaxy, mcp, api_key):
    grep = mcp.call_ok("get_tool_help", tool_id="Grep1", api_key=api_key)
    assert (grep["tool_id"], grep["name"], grep["help_format"], grep["eof"]) == ("Grep1", "Select", "restructuredtext", True)
    # tool_version as every other tool names it; version, its old name, kept for one release.
    served = rest(galaxy.galaxy_url, "/api/tools/Grep1", api_key)["version"]
    assert grep["tool_version"] == grep["version"] == served, (grep["tool_version"], grep["version"], served)
    text = grep["help_text"]
    # The regular-expression syntax the agent needed, as text: list markers kept, reST markup gone.
    assert "- \\d matches a digit, same as [0-9]." in text, text[:600]
    assert "**" not in text and ".. class::" not in text, text[:600]
    assert grep["help_bytes"] == len(text.encode()) and grep["next_offset"] is None
    assert grep["input_formats"]["input"]["formats"] == ["txt"], grep["input_formats"]
    assert grep["output_formats"] == {"out_file1": "the format of input input"}, grep["output_formats"]
    assert grep["panel_section"]["name"], grep
    sort = mcp.call_ok("get_tool_help", tool_id="sort1", api_key=api_key)
    assert "    Q     d    7   II    jhu  45" in sort["help_text"]  # a literal block keeps its columns


def test_help_is_paged_by_bytes_and_tiles_the_text(mcp, api_key):
    whole = mcp.call_ok("get_tool_help", tool_id="Grep1", api_key=api_key)["help_text"]
    pieces, offset = [], 0
    while offset is not None:
        page = mcp.call_ok("get_tool_help", tool_id="Grep1", offset=offset, max_bytes=700, api_key=api_key)
        assert len(page["help_text"].encode()) <= 700, page
        pieces.append(page["help_text"])
        offset = page["next_offset"]
    assert len(pieces) > 2 and "".join(pieces) == whole
    beyond = mcp.call_ok("get_tool_help", tool_id="Grep1", offset=10**15, api_key=api_key)
    assert (beyond["help_text"], beyond["eof"], beyond["next_offset"]) == ("", True, None), beyond
    assert mcp.call_error("get_tool_help", tool_id="Grep1", offset=-1, api_key=api_key).startswith("[VALIDATION_ERROR]")
    assert mcp.call_error("get_tool_help", tool_id="no_such_tool", api_key=api_key).startswith("[NOT_FOUND]")


def test_a_keyword_search_says_why_each_tool_matched(mcp, api_key):
    found = mcp.call_ok("search_tools_by_keywords", keywords=["digit", "sort"], api_key=api_key)
    hits = {hit["id"]: hit for hit in found["tools"]}
    # Grep1 is found through its help ("\d matches a digit"), which neither its name nor description holds,
    # and through its panel section, "Filter and Sort".
    assert hits["Grep1"]["matched_keywords"] == ["digit", "sort"], hits["Grep1"]
    assert hits["Grep1"]["matched_in"]["digit"] == ["search index (help, labels or other indexed text)"], hits["Grep1"]
    assert hits["Grep1"]["matched_in"]["sort"] == ["section"], hits["Grep1"]
    assert hits["sort1"]["matched_keywords"] == ["sort"] and "id" in hits["sort1"]["matched_in"]["sort"]
    assert all(hit["matched_keywords"] for hit in found["tools"]), found
    twice = mcp.call_ok("search_tools_by_keywords", keywords=["digit", "digit"], api_key=api_key)
    assert {hit["id"]: hit["matched_keywords"] for hit in twice["tools"]}["Grep1"] == ["digit"], twice
