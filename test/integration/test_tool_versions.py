"""One tool in three versions, installed under ToolShed guids (test/corpus/shed/shed_tool_conf.xml, served by
the session's Galaxy beside the corpus): every version listed, described and run through /api/mcp in one
history, by short id with ``tool_version`` and by guid, each job read back (its version and the parameters it
recorded, from get_job_parameters and from Galaxy's own job record); an unknown version is [NOT_FOUND] naming
the served ones with nothing created; a rerun keeps the job's version; workflows record and check versions.

The versions differ as published tools do: 1.1.0 adds an option (``how: from``), 2.0.0 renames ``lines`` to
``count``, reshapes the conditional (keyed by the boolean ``from_end``) and adds ``numbered``."""

import pytest

from conftest import (
    fetch,
    wait_for_dataset,
)
from galaxy_mcp_analysis.testing import rest

SHORT_ID = "corpus_lines"
GUID = "toolshed.example.org/repos/mcp_corpus/corpus_lines/corpus_lines/{}"
VERSIONS = ["1.0.0", "1.1.0", "2.0.0"]
TEXT = "one\ntwo\nthree\nfour\nfive\n"
#: Per version: the request (nested form) and the output it makes from TEXT.
RUNS = {
    "1.0.0": ({"mode": {"how": "tail", "lines": 2}}, "four\nfive\n"),
    "1.1.0": ({"mode": {"how": "from", "lines": 4}}, "four\nfive\n"),
    "2.0.0": ({"mode": {"from_end": False, "count": 2, "numbered": True}}, "     1\tone\n     2\ttwo\n"),
}


@pytest.fixture(scope="module")
def lines(galaxy, mcp, api_key):
    history = mcp.call_ok("create_history", name="tool versions", api_key=api_key)["id"]
    text = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": TEXT, "ext": "txt", "name": "lines"},
                 wait=False)["id"]
    # The session's first upload when this module runs first: Galaxy's Celery pool starts with it (slow under load).
    wait_for_dataset(galaxy, api_key, text, timeout=600)
    return {"history": history, "text": text}


def finished_ok(mcp, api_key, job_ids) -> bool:
    waited = mcp.call_ok("wait_for_jobs", job_ids=job_ids, timeout_seconds=120, api_key=api_key)
    return [job["state"] for job in waited["jobs"]] == ["ok"] * len(job_ids)


def jobs_in(galaxy, api_key, history_id) -> int:
    return len(rest(galaxy.galaxy_url, f"/api/jobs?history_id={history_id}&limit=500", api_key))


def with_input(request: dict, dataset_id: str) -> dict:
    return {"input1": {"src": "hda", "id": dataset_id}, **request}


@pytest.mark.parametrize("tool_id", [SHORT_ID, GUID.format("1.0.0"), GUID.format("2.0.0")])
def test_every_installed_version_is_listed_oldest_first_with_its_guid(mcp, api_key, tool_id):
    listed = mcp.call_ok("get_tool_versions", tool_id=tool_id, api_key=api_key)
    assert [entry["version"] for entry in listed["versions"]] == VERSIONS
    assert [entry["id"] for entry in listed["versions"]] == [GUID.format(version) for version in VERSIONS]
    # the default is what Galaxy runs for this tool_id with no version: the newest for the short id, the
    # guid's own version for a guid
    default = "2.0.0" if tool_id == SHORT_ID else tool_id.rsplit("/", 1)[1]
    assert listed["default_version"] == default
    assert [entry["default"] for entry in listed["versions"]] == [version == default for version in VERSIONS]
    assert listed["versions"][0]["tool_shed_repository"] == {
        "tool_shed": "toolshed.example.org", "name": "corpus_lines", "owner": "mcp_corpus",
        "changeset_revision": "1a2b3c4d5e6f"}


def test_a_tool_outside_any_toolshed_has_one_version_under_its_short_id(mcp, api_key):
    listed = mcp.call_ok("get_tool_versions", tool_id="sort1", api_key=api_key)
    assert [(entry["id"], entry["default"]) for entry in listed["versions"]] == [("sort1", True)]
    assert "tool_shed_repository" not in listed["versions"][0]
    assert mcp.call_error("get_tool_versions", tool_id="no_such_tool", api_key=api_key).startswith("[NOT_FOUND]")


def test_versions_under_one_id_outside_any_toolshed_are_listed_and_described_each(mcp, api_key):
    """Galaxy's served toolbox has Grep1 in 1.0.1 and 1.0.4, both under the id Grep1."""
    listed = mcp.call_ok("get_tool_versions", tool_id="Grep1", api_key=api_key)
    assert [(entry["version"], entry["id"], entry["default"]) for entry in listed["versions"]] == [
        ("1.0.1", "Grep1", False), ("1.0.4", "Grep1", True)]
    for version in ("1.0.1", "1.0.4"):
        details = mcp.call_ok("get_tool_details", tool_id="Grep1", tool_version=version, api_key=api_key)
        assert (details["version"], details["tool_version"]) == (version, version)


def test_each_version_is_described_as_itself(mcp, api_key):
    schemas = {version: mcp.call_ok("get_tool_input_schema", tool_id=SHORT_ID, tool_version=version,
                                    api_key=api_key) for version in VERSIONS}
    assert {version: schema["tool_version"] for version, schema in schemas.items()} == dict(zip(VERSIONS, VERSIONS))
    assert {version: schema["tool_id"] for version, schema in schemas.items()} == {
        version: GUID.format(version) for version in VERSIONS}
    assert "lines" in str(schemas["1.0.0"]["template"]) and "count" in str(schemas["2.0.0"]["template"])
    assert "from" not in str(schemas["1.0.0"]["schema"]) and "from" in str(schemas["1.1.0"]["schema"])
    for version in VERSIONS:
        details = mcp.call_ok("get_tool_details", tool_id=SHORT_ID, tool_version=version, io_details=True,
                              api_key=api_key)
        assert (details["id"], details["version"], details["tool_version"]) == (GUID.format(version), version, version)
        helped = mcp.call_ok("get_tool_help", tool_id=GUID.format(version), api_key=api_key)
        assert helped["tool_version"] == version and f"version {version} of three" in helped["help_text"]
        examples = mcp.call_ok("get_tool_run_examples", tool_id=SHORT_ID, tool_version=version, api_key=api_key)
        assert examples["tool_version"] == version and examples["count"] == 1
    # by guid without a version: that guid's own version
    assert mcp.call_ok("get_tool_details", tool_id=GUID.format("1.1.0"), api_key=api_key)["tool_version"] == "1.1.0"


def test_each_version_runs_in_one_history_and_its_job_records_version_and_parameters(galaxy, mcp, api_key, lines):
    history = lines["history"]
    calls = [
        ("1.0.0", {"tool_id": SHORT_ID, "tool_version": "1.0.0"}),
        ("1.1.0", {"tool_id": GUID.format("1.1.0")}),
        ("2.0.0", {"tool_id": SHORT_ID}),  # the default version
        ("1.0.0", {"tool_id": GUID.format("2.0.0"), "tool_version": "1.0.0"}),  # a guid's lineage
    ]
    runs = []
    for version, call in calls:
        request = with_input(RUNS[version][0], lines["text"])
        checked = mcp.call_ok("check_tool_inputs", history_id=history, inputs=request, api_key=api_key, **call)
        assert (checked["valid"], checked["tool_version"]) == (True, version), checked
        result = mcp.call_ok("run_tool", history_id=history, inputs=request, api_key=api_key, **call)
        assert (result["tool_id"], result["tool_version"]) == (GUID.format(version), version)
        runs.append((version, result))
    assert finished_ok(mcp, api_key, [result["jobs"][0]["id"] for _, result in runs])
    for version, result in runs:
        job_id = result["jobs"][0]["id"]
        recorded = mcp.call_ok("get_job_parameters", job_id=job_id, api_key=api_key)
        assert (recorded["tool_id"], recorded["tool_version"]) == (GUID.format(version), version)
        assert recorded["inputs"] == with_input(RUNS[version][0], lines["text"])
        # Galaxy's own job record (its REST view has no tool_version): the guid, which names the version
        assert rest(galaxy.galaxy_url, f"/api/jobs/{job_id}?full=true", api_key)["tool_id"] == GUID.format(version)
        text = mcp.call_ok("peek_dataset_content", dataset_id=result["outputs"][0]["id"], api_key=api_key)
        assert text["content"] == RUNS[version][1], (version, text)


@pytest.mark.parametrize("tool", ["run_tool", "check_tool_inputs", "get_tool_details", "get_tool_help",
                                  "get_tool_input_schema", "get_tool_run_examples"])
def test_an_unknown_version_is_not_found_naming_the_served_ones_and_creates_nothing(galaxy, mcp, api_key, lines,
                                                                                     tool):
    before = jobs_in(galaxy, api_key, lines["history"])
    arguments = {"tool_id": SHORT_ID, "tool_version": "1.5.0", "api_key": api_key}
    if tool in ("run_tool", "check_tool_inputs"):
        arguments |= {"history_id": lines["history"], "inputs": with_input(RUNS["2.0.0"][0], lines["text"])}
    text = mcp.call_error(tool, **arguments)
    assert text.startswith("[NOT_FOUND] No tool 'corpus_lines' in version '1.5.0' is served."), text
    assert "Versions served: 1.0.0, 1.1.0, 2.0.0." in text and "get_tool_versions" in text
    assert jobs_in(galaxy, api_key, lines["history"]) == before


def test_one_versions_parameters_are_refused_by_another_naming_them(galaxy, mcp, api_key, lines):
    before = jobs_in(galaxy, api_key, lines["history"])
    old = with_input(RUNS["1.0.0"][0], lines["text"])
    text = mcp.call_error("run_tool", history_id=lines["history"], tool_id=SHORT_ID, tool_version="2.0.0",
                          inputs=old, api_key=api_key)
    assert text.startswith("[VALIDATION_ERROR]") and "inputs.mode.how" in text, text
    newer = with_input(RUNS["1.1.0"][0], lines["text"])  # the option 1.1.0 added
    text = mcp.call_error("run_tool", history_id=lines["history"], tool_id=GUID.format("1.0.0"), inputs=newer,
                          api_key=api_key)
    assert "inputs.mode.how" in text and "'from'" in text, text
    assert jobs_in(galaxy, api_key, lines["history"]) == before


def test_a_rerun_runs_the_jobs_own_version(mcp, api_key, lines):
    request = with_input(RUNS["1.0.0"][0], lines["text"])
    first = mcp.call_ok("run_tool", history_id=lines["history"], tool_id=SHORT_ID, tool_version="1.0.0",
                        inputs=request, api_key=api_key)["jobs"][0]["id"]
    again = mcp.call_ok("rerun_job", job_id=first, changes={"mode": {"how": "head", "lines": 1}}, api_key=api_key)
    assert (again["tool_id"], again["tool_version"]) == (GUID.format("1.0.0"), "1.0.0")
    job_id = again["jobs"][0]["id"]
    assert finished_ok(mcp, api_key, [job_id])
    recorded = mcp.call_ok("get_job_parameters", job_id=job_id, api_key=api_key)
    assert recorded["tool_version"] == "1.0.0" and recorded["inputs"]["mode"] == {"how": "head", "lines": 1}


def pinned(version: str) -> dict:
    """A one-step Format 2 workflow pinning corpus_lines to ``version``."""
    return {"class": "GalaxyWorkflow", "inputs": {"text": {"type": "data"}}, "steps": {"pick": {
        "tool_id": GUID.format("1.0.0"), "tool_version": version, "in": {"input1": "text"},
        "state": {"mode": {"how": "tail", "lines": 2}}}}}


def test_a_workflow_step_pinned_to_a_version_not_served_is_named_with_what_galaxy_runs(galaxy, mcp, api_key, lines):
    workflow = rest(galaxy.galaxy_url, "/api/workflows", api_key, {"workflow": pinned("1.5.0")})["id"]
    [step] = [step for step in mcp.call_ok("get_workflow_input_schema", workflow_id=workflow,
                                           api_key=api_key)["steps"] if step.get("tool_id")]
    stored = step["tool_version"]
    checked = mcp.call_ok("check_workflow_inputs", workflow_id=workflow, history_id=lines["history"],
                          inputs={"text": {"src": "hda", "id": lines["text"]}}, api_key=api_key)
    if stored == "1.5.0":  # Galaxy kept the pin: the preflight names it and what Galaxy will run
        [change] = checked["version_changes"]
        assert (change["pinned_version"], change["served_versions"]) == ("1.5.0", VERSIONS), change
        assert change["runs_version"] in VERSIONS and change["galaxy_will"].startswith("run version "), change
    else:  # Galaxy stored the version it runs
        assert stored in VERSIONS and checked["version_changes"] == [], (stored, checked)
    print("Galaxy stored", stored, "for a step pinned to 1.5.0; preflight:", checked["version_changes"])
    text = mcp.call_error("create_workflow", definition=pinned("1.5.0"), api_key=api_key)
    assert "steps.pick.tool_version" in text and "1.0.0, 1.1.0, 2.0.0" in text, text


def test_workflows_record_each_steps_version_and_refuse_one_not_served(galaxy, mcp, api_key):
    history = mcp.call_ok("create_history", name="versions workflow", api_key=api_key)["id"]
    text = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": TEXT, "ext": "txt"})["id"]
    for version in ("1.0.0", "2.0.0"):
        result = mcp.call_ok("run_tool", history_id=history, tool_id=SHORT_ID, tool_version=version,
                             inputs=with_input(RUNS[version][0], text), api_key=api_key)
        assert finished_ok(mcp, api_key, [result["jobs"][0]["id"]])
    made = mcp.call_ok("create_workflow_from_history", history_id=history, name="two versions",
                       api_key=api_key)
    tool_steps = [step for step in made["steps"] if step.get("tool_id")]
    assert sorted((step["tool_id"], step["tool_version"]) for step in tool_steps) == [
        (GUID.format("1.0.0"), "1.0.0"), (GUID.format("2.0.0"), "2.0.0")]
    checked = mcp.call_ok("check_workflow_inputs", workflow_id=made["workflow_id"], history_id=history,
                          inputs={made["inputs"][0]["label"]: {"src": "hda", "id": text}}, api_key=api_key)
    assert checked["valid"] and checked["version_changes"] == [], checked
    assert sorted(step["tool_version"] for step in checked["steps"]) == ["1.0.0", "2.0.0"]
