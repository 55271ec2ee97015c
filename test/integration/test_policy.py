"""The admin's policy file through /api/mcp: each rule kind for an admin, a user in a role (and a
group) and another user, allowed and denied, with `who` in every form the format has; nothing
created by a refused call (checked through REST); tools/list filtered for a header key; tool sets;
an invalid file on reload and at start-up.

The session Galaxy reads the policy file named by GALAXY_MCP_ANALYSIS_POLICY_FILE (conftest),
absent except while a test here has written it (it is re-read when it changes).
"""

import json
import os
import re
import subprocess
import sys
import uuid

import pytest

from galaxy_mcp_analysis.core.policy import built_in_toolset
from galaxy_mcp_analysis.testing import (
    McpClient,
    rest,
    tools_reference,
)
from galaxy_mcp_analysis.tools import TOOL_FACTS


def me(galaxy, key) -> dict:
    return rest(galaxy.galaxy_url, "/api/users/current", key)


def jobs_in(galaxy, key, history_id) -> int:
    return len(rest(galaxy.galaxy_url, f"/api/jobs?history_id={history_id}&limit=500", key))


def paste(mcp, key, history_id, text="a\tb\n") -> str:
    return mcp.call_ok("create_dataset_from_text", history_id=history_id, content=text, api_key=key)["dataset_id"]


def wait(mcp, key, history_id):
    assert mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=110, api_key=key)["all_terminal"]


def refused(mcp, tool, code, rule, **arguments) -> str:
    text = mcp.call_error(tool, **arguments)
    assert text.startswith(f"[{code}] rule {rule}: "), text
    return text


def test_no_policy_file_changes_nothing_and_rules_for_nobody_neither(galaxy, mcp, api_key, policy):
    assert not galaxy.policy_file.exists()
    with McpClient(galaxy.mcp_url, headers={"x-api-key": api_key}) as keyed:
        before = json.dumps(tools_reference.tool_dicts(keyed.list_tools()))
        policy("rules:\n  - {name: nobody, who: {users: [nobody@example.org]}, deny_mcp_tools: [read_only]}\n")
        assert json.dumps(tools_reference.tool_dicts(keyed.list_tools())) == before
    assert before == json.dumps(tools_reference.tool_dicts(mcp.list_tools()))


def test_policy_matrix(galaxy, mcp, api_key, other_user_key, admin_key, policy):
    gx, admin = galaxy.galaxy_url, galaxy.admin_api_key
    analyst, other = me(galaxy, api_key), me(galaxy, other_user_key)
    marker = uuid.uuid4().hex[:8]
    rest(gx, "/api/roles", admin,
         {"name": f"analysts-{marker}", "description": "policy test", "user_ids": [analyst["id"]]})
    rest(gx, "/api/groups", admin, {"name": f"lab-{marker}", "user_ids": [analyst["id"]]})
    # Data first, with no policy in force: the analyst's three datasets and their list, the admin's one.
    history = mcp.call_ok("create_history", name="policy matrix", api_key=api_key)["id"]
    datasets = [paste(mcp, api_key, history, f"{n}\tx\n") for n in range(3)]
    collection = mcp.call_ok("create_collection", history_id=history, collection_type="list", name="three",
                             api_key=api_key,
                             element_identifiers=[{"name": f"e{n}", "src": "hda", "id": d}
                                                  for n, d in enumerate(datasets)])["collection_id"]
    admin_history = mcp.call_ok("create_history", name="policy matrix (admin)", api_key=admin_key)["id"]
    admin_dataset = paste(mcp, admin_key, admin_history)
    wait(mcp, api_key, history)
    wait(mcp, admin_key, admin_history)
    workflow, concatenation = (mcp.call_ok("create_workflow", api_key=api_key, definition={
        "class": "GalaxyWorkflow", "inputs": {"t": "data"}, "steps": {"s": {"tool_id": tool, "in": {name: "t"}}}})
        for tool, name in (("Grep1", "input"), ("cat1", "input1")))
    policy(f"""\
toolsets:
  reading: [get_user, get_history_contents]
rules:
  - name: no-purge-for-users
    who: non_admins
    reason: Purging is for admins.
    deny_mcp_tools: [purge]
  - name: analysts-tools
    who: {{roles: [analysts-{marker}]}}
    deny_galaxy_tools: ["Gre*"]
    allow_galaxy_tools: ["section:Text Manipulation"]
    max_jobs_per_call: 2
    invocations_per_hour: 1
  - name: lab-mask
    who: {{groups: [lab-{marker}]}}
    mask_fields: {{get_user: [email]}}
  - name: other-read-only
    who: {{users: ["{other['email']}"]}}
    reason: Reading only.
    allow_mcp_tools: [read_only]
    calls_per_minute: 6
""")
    one = {"input1": {"src": "hda", "id": datasets[0]}}
    jobs_before = jobs_in(galaxy, api_key, history)

    # MCP tool classes: purge denied to users (deny wins), allowed to the admin.
    items = [{"src": "hda", "id": datasets[2]}]
    text = refused(mcp, "delete_history_items", "FORBIDDEN", "no-purge-for-users",
                   history_id=history, items=items, purge=True, api_key=api_key)
    assert "Purging is for admins." in text and "Suggestion:" in text
    assert not rest(gx, f"/api/datasets/{datasets[2]}", api_key)["deleted"]
    refused(mcp, "delete_history_items", "FORBIDDEN", "no-purge-for-users",
            history_id=history, items=items, purge=True, api_key=other_user_key)
    purged = mcp.call_ok("delete_history_items", history_id=admin_history, purge=True, api_key=admin_key,
                         items=[{"src": "hda", "id": admin_dataset}])
    assert purged["items"][0]["deleted"]  # the purge itself is Galaxy's task, finished later

    # Galaxy tools (pattern, panel section), jobs per call and invocations, for the analyst's role.
    text = refused(mcp, "run_tool", "FORBIDDEN", "analysts-tools", history_id=history, tool_id="Grep1",
                   api_key=api_key, inputs={"input": {"src": "hda", "id": datasets[0]}, "pattern": "x"})
    assert "Galaxy tool Grep1 is denied (Gre*)" in text
    text = refused(mcp, "run_tool", "FORBIDDEN", "analysts-tools", history_id=history, api_key=api_key,
                   tool_id="__FILTER_EMPTY_DATASETS__", inputs={"input": {"src": "hdca", "id": collection}})
    assert "not among the allowed" in text
    text = refused(mcp, "run_tool", "FORBIDDEN", "analysts-tools", history_id=history, tool_id="cat1", api_key=api_key,
                   inputs={"input1": {"src": "hdca", "id": collection}})
    assert "3 jobs; at most 2" in text
    invocations = len(rest(gx, f"/api/invocations?history_id={history}", api_key))
    refused(mcp, "invoke_workflow", "FORBIDDEN", "analysts-tools", workflow_id=workflow["workflow_id"],
            history_id=history, inputs={"t": {"src": "hda", "id": datasets[0]}}, api_key=api_key)
    assert len(rest(gx, f"/api/invocations?history_id={history}", api_key)) == invocations
    assert jobs_in(galaxy, api_key, history) == jobs_before  # no refused call made a job
    ran = mcp.call_ok("run_tool", history_id=history, tool_id="cat1", inputs=one, api_key=api_key)
    assert len(ran["jobs"]) == 1 and jobs_in(galaxy, api_key, history) == jobs_before + 1
    text = refused(mcp, "rerun_job", "FORBIDDEN", "analysts-tools", job_id=ran["jobs"][0]["id"], api_key=api_key,
                   changes={"input1": {"src": "hdca", "id": collection}})
    assert "3 jobs; at most 2" in text and jobs_in(galaxy, api_key, history) == jobs_before + 1
    mcp.call_ok("invoke_workflow", workflow_id=concatenation["workflow_id"], history_id=history, api_key=api_key,
                inputs={"t": {"src": "hda", "id": datasets[0]}})
    text = refused(mcp, "invoke_workflow", "RATE_LIMITED", "analysts-tools", workflow_id=concatenation["workflow_id"],
                   history_id=history, inputs={"t": {"src": "hda", "id": datasets[0]}}, api_key=api_key)
    assert "invocations per hour" in text and int(re.search(r"retry_after_seconds=(\d+)", text)[1]) > 3000
    assert len(rest(gx, f"/api/invocations?history_id={history}", api_key)) == invocations + 1

    # Masks by group: the analyst's get_user has no email, the others' do.
    result = mcp.call("get_user", {"api_key": api_key})
    assert "email" not in result.structured_content and analyst["email"] not in result.content[0].text
    assert mcp.call_ok("get_user", api_key=admin_key)["email"]

    # Allow lists by email: the other user reads only; tools/list with its header key shows only those.
    histories = len(rest(gx, "/api/histories", other_user_key))
    text = refused(mcp, "create_history", "FORBIDDEN", "other-read-only", name="x", api_key=other_user_key)
    assert "Reading only." in text
    assert len(rest(gx, "/api/histories", other_user_key)) == histories
    with McpClient(galaxy.mcp_url, headers={"x-api-key": other_user_key}) as keyed:
        names = {tool.name for tool in keyed.list_tools()}
    assert "get_user" in names and "peek_dataset_content" in names
    assert not names & {"create_history", "run_tool", "delete_history_items", "invoke_workflow"}
    # ...and is rate limited (calls per minute; the refused calls above were not counted).
    outcomes = [mcp.call("get_user", {"api_key": other_user_key}) for _ in range(7)]
    limited = [result for result in outcomes if result.is_error]
    assert limited and all(not result.is_error for result in outcomes[: len(outcomes) - len(limited)])
    assert re.match(r"\[RATE_LIMITED\] rule other-read-only: .*retry_after_seconds=\d+", limited[0].content[0].text)
    # The admin is bound by none of the rules.
    assert mcp.call_ok("get_user", api_key=admin_key)["email"]


def test_policy_matrix_for_admins_everyone_and_one_user(galaxy, mcp, api_key, other_user_key, admin_key, policy):
    """The rows test_policy_matrix leaves: rules whose `who` is admins or everyone (MCP tools, Galaxy tools,
    jobs per call and masks, the admin bound by them too), and Galaxy-tool rules by email that bind one
    user and not the other (each allowed call made a job, each refused one none)."""
    analyst, other = me(galaxy, api_key), me(galaxy, other_user_key)
    keys = {"analyst": api_key, "other": other_user_key, "admin": admin_key}
    histories = {who: mcp.call_ok("create_history", name=f"policy rows ({who})", api_key=key)["id"]
                 for who, key in keys.items()}
    datasets = {who: paste(mcp, key, histories[who]) for who, key in keys.items()}
    lists = {}
    for who in ("other", "admin"):
        three = [paste(mcp, keys[who], histories[who], f"{n}\tx\n") for n in range(3)]
        lists[who] = mcp.call_ok("create_collection", history_id=histories[who], collection_type="list",
                                 name="three", api_key=keys[who],
                                 element_identifiers=[{"name": f"e{n}", "src": "hda", "id": d}
                                                      for n, d in enumerate(three)])["collection_id"]
    for who, key in keys.items():
        wait(mcp, key, histories[who])
        assert mcp.call_ok("get_user", api_key=key)["username"], who  # unmasked before the policy
    policy(f"""\
rules:
  - name: admins-run-nothing-here
    who: admins
    reason: Admins test elsewhere.
    deny_mcp_tools: [create_history]
    deny_galaxy_tools: [cat1]
  - name: everyone-masked-and-small
    who: everyone
    mask_fields: {{get_user: [username]}}
    max_jobs_per_call: 2
  - name: analyst-no-grep
    who: {{users: ["{analyst['email']}"]}}
    deny_galaxy_tools: [Grep1]
  - name: other-no-cut
    who: {{users: ["{other['email']}"]}}
    deny_galaxy_tools: [Cut1]
""")

    def run(who, tool_id, data=None):
        name = "input1" if tool_id == "cat1" else "input"
        inputs = {name: data or {"src": "hda", "id": datasets[who]},
                  **{"Grep1": {"pattern": "x"}, "Cut1": {"columnList": "c1"}}.get(tool_id, {})}
        return mcp.call("run_tool", {"history_id": histories[who], "tool_id": tool_id, "inputs": inputs,
                                     "api_key": keys[who]})

    jobs = {who: jobs_in(galaxy, key, histories[who]) for who, key in keys.items()}
    # admins: the admin is refused, the users are not.
    refused(mcp, "create_history", "FORBIDDEN", "admins-run-nothing-here", name="x", api_key=admin_key)
    text = run("admin", "cat1").content[0].text
    assert text.startswith("[FORBIDDEN] rule admins-run-nothing-here: ") and "Admins test elsewhere." in text, text
    assert not run("admin", "Grep1").is_error
    for who in ("analyst", "other"):
        assert not run(who, "cat1").is_error
    # one user's Galaxy-tool rule: the analyst is refused Grep1, the other user is not (and the reverse for Cut1).
    assert run("analyst", "Grep1").content[0].text.startswith("[FORBIDDEN] rule analyst-no-grep: ")
    assert not run("other", "Grep1").is_error
    assert run("other", "Cut1").content[0].text.startswith("[FORBIDDEN] rule other-no-cut: ")
    assert {who: jobs_in(galaxy, key, histories[who]) - jobs[who] for who, key in keys.items()} == \
        {"analyst": 1, "other": 2, "admin": 1}
    # everyone: a 3-job map-over is refused for a user and for the admin (nothing made); every caller is masked.
    for who, tool_id in (("other", "cat1"), ("admin", "Grep1")):
        text = run(who, tool_id, {"src": "hdca", "id": lists[who]}).content[0].text
        assert text.startswith("[FORBIDDEN] rule everyone-masked-and-small: ") and "3 jobs; at most 2" in text, text
    assert {who: jobs_in(galaxy, key, histories[who]) - jobs[who] for who, key in keys.items()} == \
        {"analyst": 1, "other": 2, "admin": 1}
    for who, key in keys.items():
        user = mcp.call_ok("get_user", api_key=key)
        assert "username" not in user and user["email"], who
    for who, key in keys.items():
        wait(mcp, key, histories[who])


def test_galaxy_tool_rules_match_a_toolshed_tool_by_short_id_and_by_guid(galaxy, mcp, api_key, policy):
    """A rule naming the short id binds every installed version, whichever id the call gives; a rule naming one
    version's guid binds that version only, also when the call gives the short id and that tool_version."""
    guid = "toolshed.example.org/repos/mcp_corpus/corpus_lines/corpus_lines/{}"
    history = mcp.call_ok("create_history", name="policy versions", api_key=api_key)["id"]
    text = paste(mcp, api_key, history, "one\ntwo\n")
    wait(mcp, api_key, history)
    requests = {"1.0.0": {"mode": {"how": "head", "lines": 1}}, "2.0.0": {"mode": {"from_end": False, "count": 1}}}

    def run(tool_id, version, tool_version=None):
        inputs = {"input1": {"src": "hda", "id": text}, **requests[version]}
        return mcp.call("run_tool", {"history_id": history, "tool_id": tool_id, "inputs": inputs, "api_key": api_key,
                                     **({"tool_version": tool_version} if tool_version else {})})

    before = jobs_in(galaxy, api_key, history)
    policy("rules:\n  - {name: no-lines, who: everyone, deny_galaxy_tools: [corpus_lines]}\n")
    for call in ((guid.format("1.0.0"), "1.0.0"), (guid.format("2.0.0"), "2.0.0"), ("corpus_lines", "2.0.0")):
        assert run(*call).content[0].text.startswith("[FORBIDDEN] rule no-lines: "), call
    policy(f"rules:\n  - {{name: no-v1, who: everyone, deny_galaxy_tools: ['{guid.format('1.0.0')}']}}\n")
    assert run("corpus_lines", "1.0.0", "1.0.0").content[0].text.startswith("[FORBIDDEN] rule no-v1: ")
    assert jobs_in(galaxy, api_key, history) == before
    assert not run("corpus_lines", "2.0.0").is_error and not run(guid.format("1.0.0"), "2.0.0", "2.0.0").is_error
    assert jobs_in(galaxy, api_key, history) == before + 2
    wait(mcp, api_key, history)


def test_tool_sets(galaxy, api_key, policy):
    """?toolset=NAME lists and serves only that set (core is built in; test_field_report_replay runs the
    field report's analysis through it); any other tool is refused like an unknown tool; an unknown set too."""
    policy("toolsets:\n  reading: [get_user, get_history_contents]\n")
    with McpClient(galaxy.mcp_url + "?toolset=core", headers={"x-api-key": api_key}) as core:
        listed = tools_reference.tool_dicts(core.list_tools())
        core_tools = built_in_toolset("core", TOOL_FACTS)
        assert sorted(tool["name"] for tool in listed) == sorted(core_tools) and len(listed) <= 16
        assert tools_reference.tools_list_bytes(listed) <= 20 * 1024
        unknown = core.call_error("invented_tool")
        assert unknown.startswith("[NOT_FOUND] There is no tool named 'invented_tool'")
        assert core.call_error("get_user") == unknown.replace("invented_tool", "get_user")
        assert core.call_ok("create_history", name="core set")["id"]
    with McpClient(galaxy.mcp_url + "?toolset=reading", headers={"x-api-key": api_key}) as reading:
        assert sorted(tool.name for tool in reading.list_tools()) == ["get_history_contents", "get_user"]
        assert reading.call_ok("get_user")["id"]
        assert reading.call_error("create_history", name="x").startswith("[NOT_FOUND] There is no tool named")
    with McpClient(galaxy.mcp_url + "?toolset=nope", headers={"x-api-key": api_key}) as unknown:
        assert unknown.call_error("get_user").startswith("[VALIDATION_ERROR] Unknown tool set 'nope'")
        with pytest.raises(Exception, match="Unknown tool set 'nope'"):
            unknown.list_tools()


@pytest.mark.parametrize(("text", "named"), [
    ("rules:\n  - name: typo\n    who: everybody\n", "line 3: rules[0].who"),
    # A misspelt tool or class (purg for purge) would deny nothing: refused like an unknown key.
    ("rules:\n  - name: typo\n    who: everyone\n    deny_mcp_tools: [purg]\n",
     "line 4: rules[0].deny_mcp_tools: unknown MCP tool 'purg'"),
])
def test_an_invalid_file_on_reload_refuses_every_call(mcp, api_key, policy, text, named):
    policy(text)
    refusal = mcp.call_error("get_user", api_key=api_key)
    assert refusal.startswith("[FORBIDDEN] rule policy-file:") and named in refusal, refusal
    assert mcp.list_tools() == []
    policy("rules: []\n")
    assert mcp.call_ok("get_user", api_key=api_key)["id"]


@pytest.mark.parametrize(("text", "named"), [
    ("rules:\n  - name: a\n    who: everyone\n    max_jobs: 3\n", "line 4: rules[0].max_jobs: unknown key"),
    ("rules:\n  - name: no-purge\n    who: non_admins\n    deny_mcp_tools: [purg]\n",
     "line 4: rules[0].deny_mcp_tools: unknown MCP tool 'purg'"),
])
def test_an_invalid_file_stops_start_up(tmp_path, text, named):
    """Galaxy's app factory (what gunicorn and `make serve` call) refuses to build, naming line and field (a
    misspelt tool or class too)."""
    invalid = tmp_path / "policy.yml"
    invalid.write_text(text)
    script = "from galaxy_mcp_analysis.fast_factory import factory\nfactory()\n"
    # A hang guard, not a time limit (the Galaxy import alone can take minutes on a loaded machine).
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                            env={**os.environ, "GALAXY_MCP_ANALYSIS_POLICY_FILE": str(invalid)})
    assert result.returncode == 1
    assert "refuses to start Galaxy" in result.stderr and "Traceback" not in result.stderr
    assert f"{invalid} {named}" in result.stderr, result.stderr


def test_a_user_defined_tool_is_governed_like_a_galaxy_tool(galaxy, mcp, api_key, policy):
    """run_user_tool starts jobs (class creates_jobs) and its tool is checked against the Galaxy tool rules as
    user_tool:<uuid>: a user restricted to Cut1/sort1 who holds Galaxy's user-tool roles is refused, no job made.
    (The session Galaxy runs without enable_beta_tool_formats, so no user tool can exist there: the rules are
    judged before Galaxy is asked, and the allowed call below reaches Galaxy's own refusal.)"""
    gx, admin = galaxy.galaxy_url, galaxy.admin_api_key
    analyst, marker = me(galaxy, api_key), uuid.uuid4().hex[:8]
    for role_type in ("user_tool_create", "user_tool_execute"):
        rest(gx, "/api/roles", admin, {"name": f"{role_type}-{marker}", "description": "policy test",
                                       "user_ids": [analyst["id"]], "role_type": role_type})
    history = mcp.call_ok("create_history", name="user tool policy", api_key=api_key)["id"]
    dataset = paste(mcp, api_key, history)
    wait(mcp, api_key, history)
    tool_uuid = str(uuid.uuid4())
    policy(f"""\
rules:
  - name: cut-and-sort-only
    who: {{users: ["{analyst['email']}"]}}
    reason: Only Cut1 and sort1 here.
    allow_galaxy_tools: [Cut1, sort1]
    max_jobs_per_call: 5
""")
    jobs_before = jobs_in(galaxy, api_key, history)
    text = refused(mcp, "run_user_tool", "FORBIDDEN", "cut-and-sort-only", history_id=history, tool_uuid=tool_uuid,
                   inputs={"input": {"src": "hda", "id": dataset}}, api_key=api_key)
    assert f"Galaxy tool user_tool:{tool_uuid} is not among the allowed tools" in text, text
    assert "Only Cut1 and sort1 here." in text
    assert jobs_in(galaxy, api_key, history) == jobs_before
    # Denied by its uuid or by user_tool:*, and in the class creates_jobs.
    for rule in (f"deny_galaxy_tools: ['user_tool:{tool_uuid}']", "deny_galaxy_tools: ['user_tool:*']",
                 "deny_mcp_tools: [creates_jobs]"):
        policy(f"rules:\n  - name: no-user-tools\n    who: everyone\n    {rule}\n")
        refused(mcp, "run_user_tool", "FORBIDDEN", "no-user-tools", history_id=history, tool_uuid=tool_uuid,
                inputs={"input": {"src": "hda", "id": dataset}}, api_key=api_key)
    # Allowed by user_tool:*: the call goes on to Galaxy, which has no such tool (and makes no job either).
    policy("rules:\n  - name: user-tools\n    who: everyone\n    allow_galaxy_tools: ['user_tool:*']\n")
    text = mcp.call_error("run_user_tool", history_id=history, tool_uuid=tool_uuid, api_key=api_key,
                          inputs={"input": {"src": "hda", "id": dataset}})
    assert not text.startswith("[FORBIDDEN]"), text
    assert jobs_in(galaxy, api_key, history) == jobs_before


def test_a_rule_against_jobs_refuses_only_the_pasted_form_of_create_collection(galaxy, mcp, api_key, policy):
    """create_collection starts a job only for pasted elements (their upload): under a rule denying
    creates_jobs it stays listed, a list of existing datasets is made, and the pasted form is refused
    before anything exists (no job, no dataset, no collection)."""
    history = mcp.call_ok("create_history", name="no jobs policy", api_key=api_key)["id"]
    dataset = paste(mcp, api_key, history)
    wait(mcp, api_key, history)
    policy("rules:\n  - name: no-jobs\n    who: everyone\n    reason: Jobs are run by staff.\n"
           "    deny_mcp_tools: [creates_jobs]\n")
    with McpClient(galaxy.mcp_url, headers={"x-api-key": api_key}) as keyed:
        listed = {tool.name for tool in keyed.list_tools()}
    assert "create_collection" in listed and "run_tool" not in listed and "create_dataset_from_text" not in listed
    made = mcp.call_ok("create_collection", history_id=history, collection_type="list", api_key=api_key,
                       element_identifiers=[{"name": "a", "src": "hda", "id": dataset}])
    assert (made["element_count"], made.get("job_ids")) == (1, None), made
    contents_before = rest(galaxy.galaxy_url, f"/api/histories/{history}/contents?v=dev&deleted=false", api_key)
    jobs_before = jobs_in(galaxy, api_key, history)
    text = refused(mcp, "create_collection", "FORBIDDEN", "no-jobs", history_id=history, collection_type="list:list",
                   api_key=api_key, element_identifiers=[{"name": "outer", "src": "new_collection",
                   "collection_type": "list", "element_identifiers": [{"name": "b", "src": "pasted", "content": "x"}]}])
    assert "create_collection is denied (creates_jobs)" in text and "Jobs are run by staff." in text, text
    assert jobs_in(galaxy, api_key, history) == jobs_before
    after = rest(galaxy.galaxy_url, f"/api/histories/{history}/contents?v=dev&deleted=false", api_key)
    assert len(after) == len(contents_before)


def test_a_rerun_with_a_flat_change_counts_against_max_jobs_per_call(galaxy, mcp, api_key, policy):
    """The policy counts a rerun's jobs on rerun_job's own merge of changes: a flat repeat_N|param change (which
    rerun_job takes) over a 3-element list is 3 jobs, refused under a limit of 2 with nothing made."""
    history = mcp.call_ok("create_history", name="policy rerun", api_key=api_key)["id"]
    datasets = [mcp.call_ok("create_dataset_from_text", history_id=history, content=f"{n}\tb\n{n + 5}\ta\n",
                            file_type="tabular", api_key=api_key)["dataset_id"] for n in range(3)]
    collection = mcp.call_ok("create_collection", history_id=history, collection_type="list", name="three",
                             api_key=api_key, element_identifiers=[{"name": f"e{n}", "src": "hda", "id": d}
                                                                   for n, d in enumerate(datasets)])["collection_id"]
    ran = mcp.call_ok("run_tool", history_id=history, tool_id="sort1", api_key=api_key, inputs={
        "input": {"src": "hda", "id": datasets[0]}, "column": 1, "style": "num", "order": "ASC",
        "column_set_0|other_column": 2, "column_set_0|other_style": "alpha", "column_set_0|other_order": "ASC"})
    wait(mcp, api_key, history)
    job_id = ran["jobs"][0]["id"]
    policy("rules:\n  - name: two-at-most\n    who: everyone\n    max_jobs_per_call: 2\n")
    jobs_before = jobs_in(galaxy, api_key, history)
    text = refused(mcp, "rerun_job", "FORBIDDEN", "two-at-most", job_id=job_id, api_key=api_key,
                   changes={"input": {"src": "hdca", "id": collection}, "column_set_0|other_order": "DESC"})
    assert "the call would create 3 jobs; at most 2" in text, text
    assert jobs_in(galaxy, api_key, history) == jobs_before
    # The same flat change on one dataset is one job: allowed, and it ran with the change.
    again = mcp.call_ok("rerun_job", job_id=job_id, changes={"column_set_0|other_order": "DESC"}, api_key=api_key)
    assert len(again["jobs"]) == 1 and jobs_in(galaxy, api_key, history) == jobs_before + 1
    recorded = mcp.call_ok("get_job_parameters", job_id=again["jobs"][0]["id"], api_key=api_key)["inputs"]
    assert recorded["column_set"] == [{"other_column": 2, "other_style": "alpha", "other_order": "DESC"}]
    wait(mcp, api_key, history)


def test_upload_urls_obey_the_policy_when_made_and_when_used(galaxy, mcp, api_key, policy):
    """create_upload_url (class creates_jobs: its upload runs one) is refused under a rule denying it, and a URL
    made before such a rule is refused when used (403, the rule named): no item, job or staged file is made."""
    from test_upload_url import (
        put,
        State,
    )

    history = mcp.call_ok("create_history", name="upload policy", api_key=api_key)["id"]
    made_before = mcp.call_ok("create_upload_url", history_id=history, name="early.txt", api_key=api_key)
    before = State(galaxy, api_key, history)
    for denied in ("[create_upload_url]", "[creates_jobs]"):
        policy(f"rules:\n  - name: no-uploads\n    who: non_admins\n    reason: Uploads go through staff.\n"
               f"    deny_mcp_tools: {denied}\n")
        text = refused(mcp, "create_upload_url", "FORBIDDEN", "no-uploads", history_id=history, name="x.txt",
                       api_key=api_key)
        assert "Uploads go through staff." in text
        response = put(made_before["upload_url"], b"a\tb\n", made_before["headers"])
        assert response.status_code == 403, response.text
        assert "rule no-uploads" in response.json()["error"] and "Uploads go through staff." in response.json()["error"]
        assert State(galaxy, api_key, history) == before
    # The rule gone, the same URL (its refusals did not use it up) uploads.
    policy("rules: []\n")
    response = put(made_before["upload_url"], b"a\tb\n", made_before["headers"])
    assert response.status_code == 201, response.text
