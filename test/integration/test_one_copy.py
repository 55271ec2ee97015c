"""Large results carry their payload once (issue 20): a reader of the text block and a reader of
structuredContent get the same bytes, through the official client and through plain JSON-RPC POSTs."""

import json
import urllib.request

import httpx
import pytest

from conftest import fetch
from galaxy_mcp_analysis.testing import rest

# Tabs, newlines, a backslash, quotes and multi-byte UTF-8: everything the JSON envelope escapes.
ROWS = "".join(f'chr{i % 3}\t{i * 10}\t{i * 10 + 9}\tpeak_{i}\t"q"\\é😀\n' for i in range(400))
SUMMARY_FIELDS = ("offset", "length", "next_offset", "eof", "encoding")


@pytest.fixture(scope="module")
def tabular(galaxy, mcp, api_key):
    history_id = mcp.call_ok("create_history", name="one copy", api_key=api_key)["id"]
    return fetch(galaxy, api_key, history_id, {"src": "pasted", "paste_content": ROWS, "ext": "tabular"})


def text_of(result) -> str:
    assert [block.type for block in result.content] == ["text"]
    return result.content[0].text


def split_text_block(text: str) -> tuple[dict, str]:
    summary, _, chunk = text.partition("\n")
    return json.loads(summary), chunk


def test_a_chunk_read_as_text_and_as_structured_content_is_the_same_bytes(mcp, api_key, tabular):
    text_reader, structured_reader = b"", b""
    offset, calls = 0, 0
    while offset is not None:
        result = mcp.call("peek_dataset_content", {"dataset_id": tabular["id"], "offset": offset,
                                                    "max_bytes": 4096, "api_key": api_key})
        assert not result.is_error
        structured = result.structured_content
        summary, chunk = split_text_block(text_of(result))
        assert list(summary)[:5] == list(SUMMARY_FIELDS)
        assert {name: summary[name] for name in SUMMARY_FIELDS} == {name: structured[name] for name in SUMMARY_FIELDS}
        assert chunk.encode() == structured["content"].encode()
        assert "content" not in summary  # the chunk is in the text block once
        text_reader += chunk.encode()
        structured_reader += structured["content"].encode()
        offset, calls = summary["next_offset"], calls + 1  # the text reader follows its own summary line
    assert calls > 3
    assert text_reader == structured_reader == ROWS.encode()


def post_json_rpc(galaxy, api_key, method: str, params: dict, request_id: int = 1, protocol: str = "2025-06-18") -> dict:
    """One plain HTTP POST to /api/mcp, no SDK: what a hand-written client sends."""
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    request = urllib.request.Request(galaxy.mcp_url, data=body, method="POST", headers={
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": protocol,
        "x-api-key": api_key,
    })
    with urllib.request.urlopen(request, timeout=120) as response:
        assert response.headers.get_content_type() == "application/json"
        return json.loads(response.read())


def test_a_raw_json_rpc_reader_gets_what_the_official_client_gets(galaxy, mcp, api_key, tabular):
    arguments = {"dataset_id": tabular["id"], "offset": 100, "max_bytes": 2000}
    raw = post_json_rpc(galaxy, api_key, "tools/call", {"name": "peek_dataset_content", "arguments": arguments})
    assert raw["id"] == 1 and "error" not in raw
    result = raw["result"]
    assert result["isError"] is False
    sdk = mcp.call_ok("peek_dataset_content", **arguments, api_key=api_key)
    assert result["structuredContent"] == sdk
    [block] = result["content"]
    summary, chunk = split_text_block(block["text"])
    assert chunk.encode() == sdk["content"].encode() == ROWS.encode()[sdk["offset"] : sdk["next_offset"]]
    assert summary["next_offset"] == sdk["next_offset"]
    # A raw reader of tools/list sees the same tool the SDK sees.
    listed = post_json_rpc(galaxy, api_key, "tools/list", {}, request_id=2)["result"]["tools"]
    assert "peek_dataset_content" in {tool["name"] for tool in listed}


@pytest.mark.parametrize("protocol", ["2024-11-05", "2025-03-26"])
def test_a_client_older_than_structured_content_reads_the_chunk_from_the_text(galaxy, api_key, tabular, protocol):
    """Protocols before 2025-06-18 have no structuredContent: such a client reads the text block only."""
    arguments = {"dataset_id": tabular["id"], "offset": 0, "max_bytes": 1500}
    raw = post_json_rpc(galaxy, api_key, "tools/call", {"name": "peek_dataset_content", "arguments": arguments},
                        protocol=protocol)
    [block] = raw["result"]["content"]
    summary, chunk = split_text_block(block["text"])
    assert chunk.encode() == ROWS.encode()[: summary["next_offset"]]
    assert summary["offset"] == 0 and summary["eof"] is False


def test_history_contents_as_text_is_a_table_of_every_item(galaxy, mcp, api_key, tabular):
    history_id = tabular["history_id"]
    second = fetch(galaxy, api_key, history_id, {"src": "pasted", "paste_content": "x\n", "ext": "txt",
                                                 "name": "second\titem"})
    result = mcp.call("get_history_contents", {"history_id": history_id, "api_key": api_key})
    structured = result.structured_content
    lines = text_of(result).split("\n")
    summary = json.loads(lines[0])
    assert summary["history_id"] == history_id and summary["pagination"] == structured["pagination"]
    assert lines[1] == f"contents: {len(structured['contents'])} rows"
    header = lines[2].split("\t")
    rows = table_rows(lines)
    assert [row["id"] for row in rows] == [item["id"] for item in structured["contents"]]
    assert {row["id"]: row["name"] for row in rows}[second["id"]] == json.dumps("second\titem")
    assert len(lines[0]) + sum(map(len, lines[1:])) < len(json.dumps(structured))
    assert header[:5] == ["hid", "id", "name", "history_content_type", "state"] and "url" not in header


def test_collection_elements_as_text_carry_no_html_peeks(galaxy, mcp, api_key, tabular):
    """Galaxy details each element's dataset in about 40 fields, its HTML peek among them; the text
    table keeps what an agent acts on and names the rest, which structuredContent keeps."""
    made = mcp.call_ok("create_collection", history_id=tabular["history_id"], collection_type="list",
                       element_identifiers=[{"name": "only", "src": "hda", "id": tabular["id"]}], api_key=api_key)
    result = mcp.call("get_collection_details", {"collection_id": made["collection_id"], "api_key": api_key})
    [element] = result.structured_content["collection"]["elements"]
    assert "<" in element["object"]["peek"]  # Galaxy's peek is HTML
    text = text_of(result)
    lines = text.split("\n")
    [row] = table_rows(lines)
    assert lines[2].split("\t")[:3] == ["element_index", "element_identifier", "element_type"]
    assert row["element_identifier"] == "only" and row["object.state"] == "ok" and row["object.id"]
    assert "<table" not in text and "object.peek" in text.split("--- columns left out")[1]


def test_job_logs_as_text_are_raw(galaxy, mcp, api_key, tabular):
    """A job that failed with a stderr: every non-empty log is in the text block raw, nothing else is."""
    run = mcp.call_ok("run_tool", history_id=tabular["history_id"], tool_id="Cut1", api_key=api_key,
                      inputs={"input": {"src": "hda", "id": tabular["id"]}, "columnList": "not-a-column",
                              "delimiter": "T"})
    [job] = run["jobs"]
    waited = mcp.call_ok("wait_for_jobs", job_ids=[job["id"]], timeout_seconds=120, api_key=api_key)
    assert waited["all_terminal"], waited
    result = mcp.call("get_job_errors", {"job_id": job["id"], "api_key": api_key})
    structured = result.structured_content
    summary, _, logs = text_of(result).partition("\n")
    assert json.loads(summary)["job_id"] == structured["job_id"] == job["id"]
    assert structured["state"] == "error" and "not-a-column" in structured["tool_stderr"], structured
    fields = ("tool_stderr", "tool_stdout", "job_stderr", "job_stdout", "command_line", "info")
    sections = [f"--- {field} ({len(structured[field]):,} characters) ---\n{structured[field]}"
                for field in fields if isinstance(structured.get(field), str) and structured[field]]
    # A field too long for the summary (here `outputs` with Galaxy's message) follows as its own section:
    # a reader of the text alone loses nothing.
    shown = json.loads(summary)
    longer = [f"--- {name} ---\n{value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(',', ':'))}"
              for name, value in structured.items() if name not in shown and name not in fields]
    assert logs == "\n".join(sections + longer)
    assert {name for name in structured if name not in fields} <= set(shown) | {s.split(" ---")[0][4:] for s in longer}
    for field in fields:
        assert field not in shown


def table_rows(lines: list[str]) -> list[dict]:
    """The rows of a text block's table (its header on line 3), up to the first section."""
    header = lines[2].split("\t")
    body = lines[3:]
    end = next((i for i, line in enumerate(body) if line.startswith("--- ")), len(body))
    return [dict(zip(header, line.split("\t"))) for line in body[:end]]


def test_jobs_as_text_are_a_table_of_every_job(mcp, api_key, tabular):
    result = mcp.call("list_jobs", {"history_id": tabular["history_id"], "api_key": api_key})
    structured = result.structured_content
    lines = text_of(result).split("\n")
    assert json.loads(lines[0])["total"] == structured["total"] >= 1
    rows = table_rows(lines)
    assert [(row["job_id"], row["state"]) for row in rows] == [(job["job_id"], job["state"]) for job in structured["jobs"]]
    assert [json.loads(row["outputs"]) for row in rows] == [job["outputs"] for job in structured["jobs"]]


def test_a_workflow_schema_as_text_writes_each_tool_schema_once(galaxy, mcp, api_key):
    sort = {"tool_id": "sort1", "state": {"column": "1", "style": "num", "order": "ASC", "header_lines": 0}}
    document = {"class": "GalaxyWorkflow", "inputs": {"table": {"type": "data", "format": "tabular"}}, "steps": {
        "first": {**sort, "in": {"input": "table"}},
        "cut": {"tool_id": "Cut1", "in": {"input": "first/out_file1"}, "state": {"columnList": "c1", "delimiter": "T"}},
        "again": {**sort, "in": {"input": "cut/out_file1"}},
    }}
    workflow_id = rest(galaxy.galaxy_url, "/api/workflows", api_key, {"workflow": document, "fill_defaults": True})["id"]
    result = mcp.call("get_workflow_input_schema", {"workflow_id": workflow_id, "api_key": api_key})
    structured = result.structured_content
    text = text_of(result)
    lines = text.split("\n")
    rows = table_rows(lines)
    sections = dict(part.split(" ---\n", 1) for part in text.split("\n--- ")[1:])
    # A reader of text rebuilds every step's schema, each tool's written once.
    assert [row["tool_id"] for row in rows] == [step["tool_id"] for step in structured["parameters"]]
    assert [json.loads(sections[row["schema"]]) for row in rows] == [step["schema"] for step in structured["parameters"]]
    assert sorted(name for name in sections if name.startswith("schema ")) == ["schema 1", "schema 2"]
    # A field too long for the summary line (the steps) follows as its own section.
    summary = json.loads(lines[0])
    for name, value in structured.items():
        if name != "parameters":
            assert summary.get(name, json.loads(sections.get(name, "null"))) == value, name
    assert len(text) < len(json.dumps(structured, separators=(",", ":")))


def test_mcp_routes_first_is_applied_on_the_live_server(galaxy, mcp, api_key):
    """The live server applied the patch and answers on /api/mcp with no redirect; the route order it makes
    in Galaxy's real API route table is checked in test/unit/galaxy_library/test_routes_first.py (a separate process's
    route list is out of this test's reach)."""
    patches = mcp.call_ok("get_server_info", api_key=api_key)["patch_set"]["patches"]
    assert "mcp-routes-first" in patches and "tool-request-model" in patches, patches
    answer = httpx.post(galaxy.mcp_url, headers={"x-api-key": api_key, "accept": "application/json, text/event-stream",
                                                 "mcp-protocol-version": "2025-06-18"},
                        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, follow_redirects=False, timeout=60)
    assert answer.status_code == 200 and "peek_dataset_content" in answer.text, answer.text[:300]
