"""The 2026-07-28 protocol: the official client opens it with ``server/discover`` (no ``initialize``
handshake, the version and capabilities in every request's envelope). An agent whose client speaks
it gets the same tools, header key, shaped text, coded errors and progress as over the handshake."""

import json

import httpx
import pytest

from conftest import missing_id
from galaxy_mcp_analysis.testing.client import McpClient
from galaxy_mcp_analysis.testing.tools_reference import DOC_PATH
from galaxy_mcp_analysis.tools.orientation import TOOLS_LIST_TTL_SECONDS

ROWS = "b\t2\na\t1\n"


@pytest.fixture(scope="module")
def modern(galaxy, api_key):
    with McpClient(galaxy.mcp_url, headers={"x-api-key": api_key}, modern=True) as client:
        yield client


def test_discover_negotiates_the_per_request_protocol_with_the_same_tools(modern, mcp):
    assert modern.protocol_version == "2026-07-28"
    assert mcp.protocol_version != "2026-07-28"  # the suite's own client uses the handshake
    listed = {tool.name: tool for tool in modern.list_tools()}
    handshake = {tool.name: tool for tool in mcp.list_tools()}
    assert sorted(listed) == sorted(handshake)
    for name, tool in handshake.items():
        assert (listed[name].input_schema, listed[name].annotations) == (tool.input_schema, tool.annotations), name


def test_a_read_a_wait_with_progress_and_an_error_on_the_modern_protocol(galaxy, modern, mcp, api_key):
    assert modern.call_ok("get_user")["email"] == mcp.call_ok("get_user", api_key=api_key)["email"]  # the header key
    history_id = modern.call_ok("create_history", name="modern protocol")["id"]
    created = modern.call_ok("create_dataset_from_text", history_id=history_id, content=ROWS, file_type="tabular")
    result, reported = modern.call_with_progress("wait_for_jobs", {"history_id": history_id, "timeout_seconds": 120})
    assert not result.is_error and result.structured_content["all_terminal"], result
    assert reported and reported[-1][0] == reported[-1][1] == 1, reported
    peek = modern.call("peek_dataset_content", {"dataset_id": created["dataset_id"]})
    assert not peek.is_error
    _summary, _, chunk = peek.content[0].text.partition("\n")
    assert chunk == peek.structured_content["content"] == ROWS
    unknown = missing_id(galaxy)
    error = modern.call_error("peek_dataset_content", dataset_id=unknown)
    assert error.startswith(f"[NOT_FOUND] No history dataset with id {unknown} exists.")


def raw_tools_list(galaxy, api_key, version="2025-06-18") -> bytes:
    """tools/list as a client of ``version`` receives it: the HTTP body's bytes."""
    response = httpx.post(galaxy.mcp_url, timeout=120, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": version,
                                   "x-api-key": api_key})
    assert response.status_code == 200, response.text
    return response.content


def test_tools_list_is_in_one_order_and_hints_caching_only_on_2026(galaxy, modern, mcp, api_key):
    """Issue 52: one deterministic order (the tools' registration order: Galaxy's, then the patch set's, as
    doc/tools.md lists them) on every revision; the 2026-07-28 list may be reused for TOOLS_LIST_TTL_SECONDS by
    this caller only; a 2025-06-18 client's answer has no new field and is the same bytes every time."""
    first, second = raw_tools_list(galaxy, api_key), raw_tools_list(galaxy, api_key)
    assert first == second
    legacy = json.loads(first)["result"]
    assert set(legacy) == {"tools"}  # no ttlMs, cacheScope or resultType for an older client
    order = [tool["name"] for tool in legacy["tools"]]
    assert [tool.name for tool in mcp.list_tools()] == order
    documented = [line[4:] for line in DOC_PATH.read_text().splitlines() if line.startswith("### ")]
    assert documented == order
    listed = modern.list_tools_result()
    assert [tool.name for tool in listed.tools] == order
    assert (listed.ttl_ms, listed.cache_scope) == (TOOLS_LIST_TTL_SECONDS * 1000, "private")
