"""Fixtures shared by the suite: one launched Galaxy per session, MCP clients, users."""

import itertools
import json
import os
import threading
import time
import uuid
from pathlib import Path

import pytest

from galaxy_mcp_analysis.testing import (
    HeldFiles,
    create_user,
    LaunchedGalaxy,
    McpClient,
    rest,
    serve_directory,
)

# The job engines' one Galaxy and its per-engine users (test/job_engines_galaxy.py), for test_job_engines*.py.
from job_engines_galaxy import (  # noqa: E402,F401
    engine_galaxy,
    engines_galaxy,
)

#: The 37 tools Galaxy 26.1.2's own MCP server registers.
STOCK_TOOLS = frozenset(
    """
    connect search_tools get_tool_details list_histories run_tool get_job_status create_history
    get_history_details get_history_contents get_dataset_details get_collection_details
    upload_file_from_url list_workflows get_workflow_details invoke_workflow get_invocations
    get_invocation_details cancel_workflow_invocation get_tool_panel get_tool_run_examples
    get_tool_citations search_tools_by_keywords list_history_ids get_job_details download_dataset
    get_server_info get_user list_user_tools create_user_tool recommend_biocontainer delete_user_tool
    run_user_tool list_file_source_templates list_user_file_sources search_iwc_workflows
    get_iwc_workflow_details import_workflow_from_iwc
    """.split()
)
assert len(STOCK_TOOLS) == 37


def patch_set_tools() -> set[str]:
    """Every tool the patch set adds (TOOL_SPECS) or wraps: stock tools whose operation it overrides
    or whose description a capability rewrites because it changes or redirects them."""
    from galaxy.agents.operations import AgentOperationsManager

    from galaxy_mcp_analysis import tools
    from galaxy_mcp_analysis.mcp.declaration import TOOL_SPECS
    from galaxy_mcp_analysis.operations import AnalysisOperationsManager

    overridden = {
        name
        for mixin in AnalysisOperationsManager.__mro__
        if mixin.__module__.startswith("galaxy_mcp_analysis.")
        for name in vars(mixin)
        if callable(getattr(AgentOperationsManager, name, None))
    }
    redescribed = {name for module in tools.CAPABILITIES for name in getattr(module, "STOCK_DESCRIPTIONS", {})}
    return {spec.name for spec in TOOL_SPECS} | (STOCK_TOOLS & (overridden | redescribed))


#: Tool wrappers written here of the kinds admins install (test/corpus/README.md), with their own tool_conf.xml.
CORPUS_CONF = Path(__file__).parent / "corpus" / "tool_conf.xml"
#: One corpus tool in three versions installed under ToolShed guids, as Galaxy's installer writes a shed_tool_conf.xml.
SHED_CONF = Path(__file__).parent / "corpus" / "shed" / "shed_tool_conf.xml"

_usernames = itertools.count()


#: Which database the launched Galaxys use: sqlite (the default) or postgresql (the CI's second pass).
TEST_DATABASE = os.environ.get("GALAXY_MCP_ANALYSIS_TEST_DATABASE", "sqlite")


def pytest_configure(config):
    if TEST_DATABASE not in ("sqlite", "postgresql"):
        raise pytest.UsageError(f"GALAXY_MCP_ANALYSIS_TEST_DATABASE={TEST_DATABASE!r}: use sqlite or postgresql")


def pytest_report_header(config):
    return f"galaxy-mcp-analysis test database: {TEST_DATABASE}"


@pytest.fixture(scope="session")
def postgres():
    """A throw-away PostgreSQL cluster on 127.0.0.1 in the PostgreSQL pass; None otherwise."""
    if TEST_DATABASE != "postgresql":
        yield None
        return
    from galaxy_mcp_analysis.testing.postgres import PostgresCluster

    with PostgresCluster() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def new_database_url(postgres):
    """Call for a fresh, empty database URL per Galaxy (None: the launcher's own sqlite file)."""
    names = itertools.count()

    def make():
        return postgres.create_database(f"galaxy{next(names)}") if postgres else None

    return make


@pytest.fixture(scope="session")
def galaxy(tmp_path_factory, new_database_url):
    """The session's Galaxy, started by the same launcher as `make serve`, serving test/corpus as an admin's
    own tool configuration beside the bundled toolbox (`make serve TOOL_CONF=test/corpus/tool_conf.xml`).
    ``policy_file``: a path that stays absent (no policy: today's behaviour) until test_policy.py writes it;
    ``audit_log``: its audit trail."""
    directory = tmp_path_factory.mktemp("galaxy")
    policy_file = tmp_path_factory.mktemp("policy") / "policy.yml"
    audit_log = directory / "audit.jsonl"
    server = LaunchedGalaxy(directory / "data", database_url=new_database_url(), tool_confs=[CORPUS_CONF, SHED_CONF],
                            env={"GALAXY_MCP_ANALYSIS_POLICY_FILE": str(policy_file),
                                 "GALAXY_MCP_ANALYSIS_AUDIT_LOG": str(audit_log)})
    server.policy_file, server.audit_log = policy_file, audit_log
    server.start()
    yield server
    server.stop()


@pytest.fixture
def policy(galaxy):
    """Writes the session Galaxy's policy file (re-read at its next call); removed after the test."""
    path = galaxy.policy_file

    def write(text: str) -> None:
        temporary = path.with_suffix(f".{uuid.uuid4().hex}")
        temporary.write_text(text)
        os.replace(temporary, path)  # a new inode: the server sees the change at its next call

    yield write
    path.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def mcp(galaxy):
    with McpClient(galaxy.mcp_url) as client:
        yield client


@pytest.fixture(scope="session")
def api_key(galaxy):
    return galaxy.api_key


@pytest.fixture(scope="session")
def other_user_key(galaxy):
    """A second regular user: must never reach the first user's private items."""
    return create_user(galaxy.galaxy_url, galaxy.admin_api_key, f"other{os.getpid()}{next(_usernames)}")


@pytest.fixture(scope="session")
def admin_key(galaxy):
    """The key of a real account listed in admin_users (the bootstrap key cannot call tools)."""
    from galaxy_mcp_analysis.serve.galaxy_config import ADMIN_EMAIL

    admin = galaxy.admin_api_key
    [user] = rest(galaxy.galaxy_url, f"/api/users?f_email={ADMIN_EMAIL}", admin) or [
        rest(galaxy.galaxy_url, "/api/users", admin, {"username": "admin", "email": ADMIN_EMAIL, "password": "password-admin"})
    ]
    return rest(galaxy.galaxy_url, f"/api/users/{user['id']}/api_key", admin)  # the current key, made if none


@pytest.fixture
def history_id(mcp, api_key, request):
    return mcp.call_ok("create_history", name=request.node.name[:200], api_key=api_key)["id"]


def pytest_collection_modifyitems(items):
    for item in items:
        if Path(str(item.fspath)).parent.name == "integration":
            item.add_marker(pytest.mark.integration)


# ---- Test data set-up through Galaxy's REST API (what an MCP test then reads back) ----

TERMINAL_DATASET_STATES = {"ok", "error", "failed_metadata", "deferred", "discarded", "paused"}


def wait_for_dataset(galaxy, api_key, dataset_id, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        details = rest(galaxy.galaxy_url, f"/api/datasets/{dataset_id}", api_key)
        if details["state"] in TERMINAL_DATASET_STATES:
            return details
        if time.monotonic() > deadline:
            raise AssertionError(f"dataset {dataset_id} still {details['state']} after {timeout}s")
        time.sleep(0.2)


def id_encoding(galaxy):
    """This Galaxy's own id encoding (its id_secret): an encoded id as the database id Galaxy records, and back."""
    from galaxy.security.idencoding import IdEncodingHelper

    id_secret = json.loads((Path(galaxy.data_dir) / "secrets.json").read_text())["id_secret"]
    return IdEncodingHelper(id_secret=id_secret)


def missing_id(galaxy) -> str:
    """A well-formed encoded id (this Galaxy's id_secret) that names no object of any kind."""
    return id_encoding(galaxy).encode_id(10**9)


def fetch(galaxy, api_key, history_id, element, wait=True):
    """Upload one element through /api/tools/fetch; returns the dataset's details."""
    response = rest(
        galaxy.galaxy_url,
        "/api/tools/fetch",
        api_key,
        {"history_id": history_id, "targets": [{"destination": {"type": "hdas"}, "elements": [element]}]},
    )
    dataset_id = response["outputs"][0]["id"]
    return wait_for_dataset(galaxy, api_key, dataset_id) if wait else {"id": dataset_id}


@pytest.fixture(scope="session")
def file_server(tmp_path_factory):
    """Serves test files on loopback so Galaxy can fetch them by URL (binary and gzip included)."""
    root = tmp_path_factory.mktemp("served")
    with serve_directory(root) as base_url:

        def publish(name: str, data: bytes) -> str:
            (root / name).write_bytes(data)
            return f"{base_url}/{name}"

        yield publish


def pytest_sessionfinish(session, exitstatus):
    """No tool error text of the whole run may show a traceback, a server path or SQL (issue 7)."""
    from galaxy_mcp_analysis.mcp.errors import leaks_internals
    from galaxy_mcp_analysis.testing import ERROR_TEXTS

    leaks = [(tool, text) for tool, text, arguments in ERROR_TEXTS if leaks_internals(text, arguments)]
    if leaks:
        report = "\n".join(f"  {tool}: {text!r}" for tool, text in leaks[:20])
        session.config.get_terminal_writer().line(f"\nMCP error texts leaking internals:\n{report}", red=True)
        session.exitstatus = 1



# ---- Jobs held back on purpose: an upload from a URL that answers only once released ----
# (galaxy_mcp_analysis.testing.HeldFiles serves the files)


@pytest.fixture(scope="module")
def held_files():
    files = HeldFiles()
    yield files
    files.close()


def held_upload(galaxy, mcp, api_key, history_id, held_files, name) -> tuple[str, str, threading.Event]:
    """(job id, dataset id, release) of an upload that runs until released."""
    url, released = held_files.hold(name, b"chr1\t1\tlate\n")
    dataset = fetch(galaxy, api_key, history_id, {"src": "url", "url": url, "ext": "tabular"}, wait=False)
    job_id = mcp.call_ok("get_job_details", dataset_id=dataset["id"], api_key=api_key)["job_id"]
    return job_id, dataset["id"], released


def wait_for_state(galaxy, api_key, dataset_id, wanted: str, timeout=120) -> str:
    """Bounded wait until the dataset is in state ``wanted`` or a terminal state; returns the state it is in."""
    deadline = time.monotonic() + timeout
    while True:
        state = rest(galaxy.galaxy_url, f"/api/datasets/{dataset_id}", api_key)["state"]
        if state == wanted or state in TERMINAL_DATASET_STATES or time.monotonic() > deadline:
            return state
        time.sleep(0.2)
