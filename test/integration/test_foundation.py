"""Foundation: the patch set is active in a real Galaxy 26.1 and reachable over /api/mcp."""

import json
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import (
    fetch,
    STOCK_TOOLS,
)
from galaxy_mcp_analysis.mcp.declaration import TOOL_SPECS
from galaxy_mcp_analysis.activation.patches import PATCHES
from galaxy_mcp_analysis.tools import STOCK_DESCRIPTIONS as ALL_STOCK_DESCRIPTIONS
from galaxy_mcp_analysis.testing import (
    LaunchedGalaxy,
    McpClient,
    rest,
)


def patch_set_tools() -> set[str]:
    import galaxy_mcp_analysis.tools  # noqa: F401  (declares TOOL_SPECS)

    return {spec.name for spec in TOOL_SPECS}


def test_tools_list_is_galaxys_37_plus_the_patch_sets(mcp):
    names = [tool.name for tool in mcp.list_tools()]
    assert len(names) == len(set(names))
    assert set(names) == STOCK_TOOLS | patch_set_tools()
    assert "peek_dataset_content" in names


def test_the_server_says_once_that_ids_are_per_kind_and_the_usual_path(mcp):
    instructions = mcp.opened_with.instructions
    assert "Ids are per kind" in instructions and "wait_for_jobs" in instructions
    served = {tool.name for tool in mcp.list_tools()}
    named = set(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", instructions))  # every snake_case name it mentions
    arguments = {"history_id", "dataset_id", "collection_id", "job_id", "include_parameters"}
    assert named - arguments <= served and "list_jobs" in named, named - served


def test_connect_identifies_the_keys_user(mcp, api_key):
    result = mcp.call_ok("connect", api_key=api_key)
    assert result["connected"] is True
    assert result["user"]["email"] == "demo@example.org"
    assert result["server"]["url"].startswith("http") and "url" not in result  # as the description says
    description = {tool.name: tool for tool in mcp.list_tools()}["connect"].description
    assert "server {version, brand, url}" in description


def test_startup_line_names_galaxy_version_and_every_patch(galaxy):
    lines = [line for line in galaxy.log_text().splitlines() if "galaxy-mcp-analysis" in line and "active" in line]
    assert len(lines) == 1, lines
    from galaxy.version import VERSION  # the release under test (make verify-release runs others)

    patch_ids = ", ".join(patch.id for patch in PATCHES)
    assert lines[0].endswith(f"active on Galaxy {VERSION}: patches applied: {patch_ids}")



def test_startup_says_which_admin_rules_are_in_force(galaxy):
    """The session Galaxy names a policy file that is absent until test_policy.py writes it, and an audit file."""
    lines = [line for line in galaxy.log_text().splitlines() if "galaxy-mcp-analysis admin rules:" in line]
    assert lines, "no admin rules line"
    assert lines[0].endswith(f"admin rules: policy file {galaxy.policy_file} (absent: no rules until it exists; "
                             f"read when it changes); audit trail: {galaxy.audit_log}"), lines[0]


def test_oauth_sign_in_is_off_unless_switched_on(galaxy):
    """Without GALAXY_MCP_ANALYSIS_OAUTH (issue 40): no 401, no metadata, no /mcp-oauth/ endpoint."""
    request = urllib.request.Request(galaxy.mcp_url, method="POST", headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream"},
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode())
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200 and "www-authenticate" not in response.headers
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/api/mcp",
                 "/mcp-oauth/register"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(galaxy.galaxy_url + path, data=b"{}"), timeout=60)
        assert refused.value.code in (404, 405), path
    assert "OAuth sign-in for" not in galaxy.log_text()


def test_an_agents_mistake_is_a_warning_line_in_galaxys_log_without_traceback(galaxy, mcp, api_key):
    """A bad id to a stock tool and to one of ours: warnings naming the tool, no ERROR, no traceback
    (before, FastMCP logged each as an ERROR with a 60-line traceback)."""
    before = len(galaxy.log_text())
    for tool, argument in (("get_history_details", "history_id"), ("peek_dataset_content", "dataset_id")):
        assert mcp.call_error(tool, **{argument: "f2db41e1fa331b3e"}, api_key=api_key).startswith("[VALIDATION_ERROR]")
    logged = galaxy.log_text()[before:]
    for tool in ("get_history_details", "peek_dataset_content"):
        assert f"Error calling tool '{tool}'" in logged
    assert "MCP get_history_details: Wrong  id" in logged  # Galaxy's own line, kept
    # Other tests' jobs may log meanwhile: judge the lines about these calls (a traceback names the id too).
    about = [line for line in logged.splitlines()
             if "get_history_details" in line or "peek_dataset_content" in line or "f2db41e1fa331b3e" in line]
    assert len(about) >= 3 and all("WARNING" in line for line in about), about
    assert "MalformedId" not in logged, logged

def test_stock_tools_run_through_the_analysis_operations_manager(mcp, api_key):
    # get_server_info is one of Galaxy's own tools; the patch_set entry comes from our subclass.
    info = mcp.call_ok("get_server_info", api_key=api_key)
    assert info["patch_set"]["patches"] == [patch.id for patch in PATCHES]


def test_a_bad_key_is_refused_by_new_tools(mcp):
    error = mcp.call_error("peek_dataset_content", dataset_id="f2db41e1fa331b3e", api_key="not-a-key")
    assert error.startswith("[AUTHENTICATION_ERROR] ")
    assert "\nSuggestion: " in error


def test_bootstrap_admin_key_cannot_act_as_a_user(mcp, galaxy):
    error = mcp.call_error("peek_dataset_content", dataset_id="f2db41e1fa331b3e", api_key=galaxy.admin_api_key)
    assert error.startswith("[AUTHENTICATION_ERROR] ")


@pytest.fixture(scope="module")
def stock_then_patched(tmp_path_factory, new_database_url):
    """One data dir served first by stock Galaxy (switch off), then restarted with the patch set on."""
    data_dir = tmp_path_factory.mktemp("switch") / "data"
    database_url = new_database_url()  # None: sqlite in data_dir; PostgreSQL in that pass
    observed = {}
    with LaunchedGalaxy(data_dir, patches=False, database_url=database_url) as stock:
        observed["stock_content_type"] = mcp_response_content_type(stock.mcp_url)
        with McpClient(stock.mcp_url) as client:
            observed["stock_listed"] = {tool.name: tool for tool in client.list_tools()}
            observed["stock_tools"] = set(observed["stock_listed"])
            observed["stock_info"] = client.call_ok("get_server_info", api_key=stock.api_key)
            observed["history"] = client.call_ok("create_history", name="kept across restarts", api_key=stock.api_key)
        observed["stock_log"] = stock.log_text()
        observed["stock_key"] = stock.api_key
    observed["stock_exit"] = (stock.process.returncode, stock.leftover_processes)
    observed["server_json_after_stop"] = (data_dir / "server.json").exists()
    # Smaller read and paste caps show the options reaching a restarted server.
    caps = {"GALAXY_MCP_ANALYSIS_MAX_READ_BYTES": "4096", "GALAXY_MCP_ANALYSIS_MAX_PASTE_BYTES": "100"}
    patched = LaunchedGalaxy(data_dir, env=caps, database_url=database_url)
    with patched:
        observed["patched_content_type"] = mcp_response_content_type(patched.mcp_url)
        with McpClient(patched.mcp_url) as client:
            observed["patched_listed"] = {tool.name: tool for tool in client.list_tools()}
            observed["patched_tools"] = set(observed["patched_listed"])
            observed["patched_key"] = patched.api_key
            observed["history_after"] = client.call_ok(
                "get_history_details", history_id=observed["history"]["id"], api_key=patched.api_key
            )
            observed["capped_read"] = _capped_read(patched, client)
            observed["pastes"] = {size: client.call("create_dataset_from_text", {
                "history_id": observed["history"]["id"], "content": "x" * size, "api_key": patched.api_key})
                for size in (100, 101)}
    return observed


def _capped_read(server, client):
    history_id = client.call_ok("create_history", name="cap", api_key=server.api_key)["id"]
    dataset = fetch(server, server.api_key, history_id, {"src": "pasted", "paste_content": "x" * 9000, "ext": "txt"})
    return client.call_ok("peek_dataset_content", dataset_id=dataset["id"], max_bytes=100000, api_key=server.api_key)


def mcp_response_content_type(mcp_url: str) -> str:
    """The media type /api/mcp answers a JSON-RPC request with (a client accepting both, as the SDK's does)."""
    request = urllib.request.Request(mcp_url, method="POST", data=json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
    }).encode(), headers={"content-type": "application/json", "accept": "application/json, text/event-stream"})
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
        return response.headers.get_content_type()


def test_switched_off_galaxy_is_stock(stock_then_patched):
    stock, patched = stock_then_patched["stock_listed"], stock_then_patched["patched_listed"]
    assert set(stock) == STOCK_TOOLS
    assert "patch_set" not in stock_then_patched["stock_info"]
    assert "galaxy-mcp-analysis" not in stock_then_patched["stock_log"]
    # Galaxy's own descriptions and no annotations: none of what the patch set's surface gives the same tools.
    redescribed = {name for name in STOCK_TOOLS if patched[name].description != stock[name].description}
    replaced = set(ALL_STOCK_DESCRIPTIONS)  # tool names, and tool.parameter for one parameter's text
    # Stock tools declared again by the patch set (run_tool, get_tool_details: tool_version) have its descriptions.
    declared_again = STOCK_TOOLS & {spec.name for spec in TOOL_SPECS}
    assert declared_again == {"run_tool", "get_tool_details"}
    assert redescribed == {key for key in replaced if "." not in key} | declared_again
    for key in sorted(key for key in replaced if "." in key):
        tool, parameter = key.split(".")
        texts = [listed[tool].input_schema["properties"][parameter].get("description") for listed in (stock, patched)]
        assert texts[0] != texts[1] == ALL_STOCK_DESCRIPTIONS[key], key
    assert [name for name in STOCK_TOOLS if stock[name].annotations is not None] == []
    assert all(patched[name].annotations is not None for name in STOCK_TOOLS)
    # Results as SSE streams when switched off; plain JSON bodies with the patch set (mcp-json-responses).
    assert stock_then_patched["stock_content_type"] == "text/event-stream"
    assert stock_then_patched["patched_content_type"] == "application/json"


def test_sigterm_stops_galaxy_and_its_workers_cleanly(stock_then_patched):
    assert stock_then_patched["stock_exit"] == (0, False)
    assert stock_then_patched["server_json_after_stop"] is False


def test_restart_keeps_data_users_and_keys(stock_then_patched):
    assert stock_then_patched["patched_key"] == stock_then_patched["stock_key"]
    assert stock_then_patched["history_after"]["history"]["name"] == "kept across restarts"
    assert stock_then_patched["patched_tools"] == STOCK_TOOLS | patch_set_tools()


def test_read_cap_is_configurable(stock_then_patched):
    read = stock_then_patched["capped_read"]
    assert read["capped"] is True
    assert read["max_bytes_applied"] == 4096
    assert read["length"] == 4096
    assert read["next_offset"] == 4096


def test_paste_cap_is_configurable(stock_then_patched):
    at_cap, over = stock_then_patched["pastes"][100], stock_then_patched["pastes"][101]
    assert not at_cap.is_error and at_cap.structured_content["bytes"] == 100
    assert over.is_error
    assert over.content[0].text.startswith("[VALIDATION_ERROR] content is 101 bytes; the server accepts at most 100")


def _serve(*args, timeout=60):
    return subprocess.run(
        [sys.executable, "-m", "galaxy_mcp_analysis.serve", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_busy_port_is_a_one_line_error(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = _serve("--data-dir", str(tmp_path / "data"), "--port", str(port))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is already in use; run with PORT=<another port>."
    ]


def test_unwritable_data_dir_is_a_one_line_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = _serve("--data-dir", str(blocker / "data"), "--port", "1")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: DATA_DIR {blocker / 'data'} is not writable")


def test_galaxy_outside_the_verified_series_refuses_to_start(tmp_path):
    # Only the version lookup is replaced; the refusal path is the real one.
    script = (
        "import galaxy_mcp_analysis.activation.registry as r\n"
        "r.galaxy_version = lambda: '25.0.1'\n"
        "from galaxy_mcp_analysis.fast_factory import factory\n"
        "factory()\n"
    )
    # A hang guard, not a time limit: on a loaded 2-core machine this import took over 120 s.
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 1
    assert "refuses to start Galaxy" in result.stderr
    assert "Galaxy 25.0.1 is outside the supported series 26.1.x" in result.stderr
    assert "GALAXY_MCP_ANALYSIS_ALLOW_UNVERIFIED=true" in result.stderr
    assert "Traceback" not in result.stderr


def test_rest_api_still_answers(galaxy):
    assert rest(galaxy.galaxy_url, "/api/version", galaxy.api_key)["version_major"] == "26.1"
    assert Path(galaxy.data_dir, "server.json").exists()


def test_the_served_toolbox_is_galaxys_default_and_says_what_it_left_out(galaxy):
    banner = re.search(r"Tools  Galaxy's default toolbox: (\d+) served, (\d+) left out .*\((.+)\)", galaxy.log_text())
    assert banner, galaxy.log_tail()
    left_out = Path(banner[3]).read_text().splitlines()
    assert int(banner[2]) == len(left_out) and any(line.startswith("liftOver1 ") for line in left_out), left_out
    panel = rest(galaxy.galaxy_url, "/api/tools?in_panel=false", galaxy.api_key)
    served = {tool["id"] for tool in panel}
    assert {"Filter1", "join1", "Grouping1", "Count1", "cat1", "__BUILD_LIST__"} <= served
    assert "liftOver1" not in served and int(banner[1]) >= 90
    sections = {tool.get("panel_section_name") for tool in panel}
    assert {"Text Manipulation", "Filter and Sort", "Join, Subtract and Group", "Collection Operations"} <= sections


def test_create_history_returns_what_its_description_names(mcp, api_key):
    """An agent trial read "returns its id, name and create_time" and found no create_time (Galaxy's summary view)."""
    description = {tool.name: tool for tool in mcp.list_tools()}["create_history"].description
    named = description.split("returns its ", 1)[1].split(".", 1)[0].replace(" and ", ", ").split(", ")
    created = mcp.call_ok("create_history", name="described", api_key=api_key)
    assert named == ["id", "name", "update_time"] and all(created.get(field) for field in named), (named, created)
