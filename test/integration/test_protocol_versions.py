"""The 2026-07-28 protocol: the official client opens it with ``server/discover`` (no ``initialize``
handshake, the version and capabilities in every request's envelope). An agent whose client speaks
it gets the same tools, header key, shaped text, coded errors and progress as over the handshake."""

import pytest

from conftest import missing_id
from galaxy_mcp_analysis.testing.client import McpClient

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
