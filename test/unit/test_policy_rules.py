"""core.policy: the policy file's validation (line and field named), who a rule applies to,
deny over allow, the smallest limit, tool classes, Galaxy tool matching, rate limits."""

import json

import pytest

from galaxy_mcp_analysis.core.policy import (
    Caller,
    GalaxyTool,
    load_policy,
    parse_policy,
    Policy,
    PolicyError,
    RateLimiter,
)
from galaxy_mcp_analysis.tools import TOOL_FACTS

ADMIN = Caller("admin@example.org", is_admin=True)
ANALYST = Caller("ana@example.org", roles=frozenset({"analysts"}), groups=frozenset({"lab"}))
OTHER = Caller("other@example.org")

EXAMPLE = """\
toolsets:
  curation: [get_history_contents, peek_dataset_content, get_job_errors]
rules:
  - name: no-purge-for-users
    who: non_admins
    reason: Purging is for admins.
    deny_mcp_tools: [purge]
  - name: analysts-read-only
    who: {roles: [analysts]}
    allow_mcp_tools: [read_only, run_tool]
    allow_galaxy_tools: [Cut1, "toolshed.example.org/repos/iuc/*", "section:Text Manipulation"]
    deny_galaxy_tools: [Grep1]
    max_jobs_per_call: 100
    calls_per_minute: 60
  - name: lab-small
    who: {groups: [lab]}
    max_jobs_per_call: 10
    invocations_per_hour: 2
    mask_fields: {get_job_errors: [command_line], "*": [secret]}
"""

DELETE = TOOL_FACTS["delete_history_items"]
PURGING = {"purge": True}  # delete_history_items' arguments that make it purge (its facts: purges_with)
READ = TOOL_FACTS["get_history_contents"]
RUN = TOOL_FACTS["run_tool"]


def test_the_contract_example_parses():
    policy = parse_policy(EXAMPLE, TOOL_FACTS)
    assert [rule.name for rule in policy.rules] == ["no-purge-for-users", "analysts-read-only", "lab-small"]
    assert policy.toolset("curation", TOOL_FACTS) == ("get_history_contents", "peek_dataset_content", "get_job_errors")
    # The built-in set: the tools whose facts (toolsets=("core",)) name it, the field report's analysis.
    assert sorted(policy.toolset("core", TOOL_FACTS)) == sorted(CORE_TOOLSET)
    assert policy.toolset("nope", TOOL_FACTS) is None


#: The field report's analysis (doc/agent-guide.md): paste, gather, map over, wait, read, diagnose, notebook.
CORE_TOOLSET = ("create_history", "create_dataset_from_text", "create_collection", "get_collection_details",
                "get_tool_details", "run_tool", "wait_for_jobs", "peek_dataset_content", "get_job_errors",
                "create_page")


def test_an_empty_file_is_no_rules():
    assert parse_policy("", TOOL_FACTS) == Policy()


@pytest.mark.parametrize(("text", "expected"), [
    ("rules:\n  - name: a\n    who: everyone\n    deny_mcp_tool: [purge]\n",
     "line 4: rules[0].deny_mcp_tool: unknown key"),
    ("rules:\n  - name: a\n    who: somebody\n", "line 3: rules[0].who: must be one of everyone"),
    ("rules:\n  - name: a\n    who: everyone\n    calls_per_minute: 0\n",
     "line 4: rules[0].calls_per_minute: must be a whole"),
    ("rules:\n  - name: a\n    who: everyone\n    max_jobs_per_call: lots\n", "line 4: rules[0].max_jobs_per_call"),
    ("rules:\n  - who: everyone\n", "line 2: rules[0].name: is required"),
    ("rules:\n  - name: a\n    who: {emails: [x]}\n", "line 3: rules[0].who.emails: unknown key"),
    ("rules:\n  - name: a\n    who: everyone\n    deny_galaxy_tools: Grep1\n",
     "line 4: rules[0].deny_galaxy_tools: must be a list"),
    ("toolset:\n  x: [a]\n", "line 1: toolset: unknown key"),
    ("toolsets:\n  core: [a]\n", "line 2: toolsets.core: core is built in"),
    ("rules: [\n", "not valid YAML"),
    ("rules:\n  - {name: a, who: everyone}\n  - {name: a, who: admins}\n", "the name 'a' is used twice"),
])
def test_a_mistake_is_named_by_line_and_field(text, expected):
    with pytest.raises(PolicyError, match=None) as raised:
        parse_policy(text, TOOL_FACTS, source="policy.yml")
    assert str(raised.value).startswith("policy.yml")
    assert expected in str(raised.value)


def test_an_absent_file_is_an_error(tmp_path):
    with pytest.raises(PolicyError, match="cannot be read"):
        load_policy(str(tmp_path / "absent.yml"), TOOL_FACTS)


def test_who_matches_admins_roles_groups_and_emails():
    policy = parse_policy("rules:\n  - {name: u, who: {users: [OTHER@example.org]}}\n" + EXAMPLE.split("rules:\n")[1],
                          TOOL_FACTS)
    names = lambda caller: [rule.name for rule in policy.applying(caller)]  # noqa: E731
    assert names(ADMIN) == []
    assert names(ANALYST) == ["no-purge-for-users", "analysts-read-only", "lab-small"]
    assert names(OTHER) == ["u", "no-purge-for-users"]  # emails compare case-insensitively


def test_classes_come_from_the_facts_table():
    assert DELETE.classes(PURGING) == {"destructive", "purge"} and DELETE.classes({"purge": False}) == {"destructive"}
    assert DELETE.classes() == {"destructive"}  # as tools/list shows it: no call, no purge
    assert READ.classes() == {"read_only"}
    assert RUN.classes() == {"creates_jobs"}
    assert TOOL_FACTS["run_user_tool"].classes() == {"creates_jobs"}  # a user-defined tool starts jobs too
    assert TOOL_FACTS["rerun_job"].classes() == {"creates_jobs", "destructive"}


def test_create_collection_starts_jobs_only_with_pasted_elements():
    """Its pasted elements are uploaded by a job, at any depth and however malformed the rest; existing items
    make none, and tools/list (no call) keeps it out of creates_jobs so a rule against jobs leaves it listed."""
    collection = TOOL_FACTS["create_collection"]
    existing = {"element_identifiers": [{"name": "a", "src": "hda", "id": "1"}]}
    nested = {"element_identifiers": [{"name": "o", "src": "new_collection", "element_identifiers": [
        {"name": "a", "src": "hda", "id": "1"}, {"name": "b", "src": "pasted", "content": "x"}]}]}
    malformed = {"element_identifiers": [{"name": "a", "src": "pasted"}, "junk", 3]}
    assert collection.classes() == collection.classes(existing) == collection.classes({}) == set()
    assert collection.classes(nested) == collection.classes(malformed) == {"creates_jobs"}
    assert collection.classes({"element_identifiers": "pasted"}) == set()
    policy = parse_policy("rules:\n  - {name: n, who: everyone, deny_mcp_tools: [creates_jobs]}\n", TOOL_FACTS)
    assert policy.check_tool(OTHER, collection) is None and policy.check_tool(OTHER, collection, existing) is None
    assert "create_collection is denied (creates_jobs)" in policy.check_tool(OTHER, collection, nested).reason


@pytest.mark.parametrize(("text", "line", "name"), [
    ("rules:\n  - name: a\n    who: everyone\n    deny_mcp_tools: [purg]\n", 4, "purg"),
    ("rules:\n  - name: a\n    who: everyone\n    allow_mcp_tools:\n      - read_only\n      - run_tools\n", 6,
     "run_tools"),
    ("toolsets:\n  mine: [get_user, get_usr]\n", 2, "get_usr"),
    ("rules:\n  - name: a\n    who: everyone\n    mask_fields:\n      get_job_error: [command_line]\n", 5,
     "get_job_error"),
])
def test_an_unknown_tool_or_class_is_named_with_its_line(text, line, name):
    """A misspelt name would deny (or allow, or mask) nothing: it is refused like an unknown key."""
    with pytest.raises(PolicyError) as raised:
        parse_policy(text, TOOL_FACTS, source="policy.yml")
    assert f"policy.yml line {line}: " in str(raised.value) and f"unknown MCP tool {name!r}" in str(raised.value)


def test_deny_wins_over_allow_and_allow_lists_are_a_union():
    policy = parse_policy(EXAMPLE, TOOL_FACTS)
    refusal = policy.check_tool(ANALYST, DELETE, PURGING)
    assert refusal.rule == "no-purge-for-users" and "Purging is for admins." in refusal.reason
    assert not refusal.rate_limited
    assert policy.check_tool(ANALYST, READ) is None and policy.check_tool(ANALYST, RUN) is None
    refusal = policy.check_tool(ANALYST, DELETE)
    assert refusal.rule == "analysts-read-only" and "not among the allowed" in refusal.reason
    assert policy.check_tool(OTHER, DELETE) is None and policy.check_tool(OTHER, DELETE, PURGING) is not None
    assert policy.check_tool(ADMIN, DELETE, PURGING) is None
    both = parse_policy(
        "rules:\n  - {name: a, who: everyone, allow_mcp_tools: [run_tool], deny_mcp_tools: [creates_jobs]}\n",
        TOOL_FACTS)
    assert both.check_tool(OTHER, RUN).rule == "a"


def test_galaxy_tools_by_id_pattern_and_section():
    policy = parse_policy(EXAMPLE, TOOL_FACTS)
    allowed = [GalaxyTool("Cut1"), GalaxyTool("toolshed.example.org/repos/iuc/bakta/bakta/1.9"),
               GalaxyTool("Remove beginning1", section="Text Manipulation")]
    assert policy.check_galaxy_tools(ANALYST, allowed) is None
    grep = GalaxyTool("Grep1", "Text Manipulation")
    assert "Grep1 is denied (Grep1)" in policy.check_galaxy_tools(ANALYST, [grep]).reason
    refusal = policy.check_galaxy_tools(ANALYST, allowed + [GalaxyTool("wc_gnu", section="Statistics")])
    assert refusal.rule == "analysts-read-only" and "wc_gnu" in refusal.reason
    assert policy.check_galaxy_tools(OTHER, [GalaxyTool("Grep1")]) is None
    assert policy.needs_galaxy_tools(ANALYST) and not policy.needs_galaxy_tools(OTHER)


def test_the_smallest_limit_applies():
    policy = parse_policy(EXAMPLE, TOOL_FACTS)
    assert policy.limit(ANALYST, "max_jobs_per_call") == (10, "lab-small")
    assert policy.check_jobs(ANALYST, 10) is None
    refusal = policy.check_jobs(ANALYST, 10_000)
    assert refusal.rule == "lab-small" and "10000 jobs; at most 10" in refusal.reason
    assert policy.check_jobs(OTHER, 10_000) is None and not policy.needs_jobs_count(OTHER)


def test_masks_by_tool_and_star():
    policy = parse_policy(EXAMPLE, TOOL_FACTS)
    assert policy.masked_fields(ANALYST, "get_job_errors") == {"command_line", "secret"}
    assert policy.masked_fields(ANALYST, "run_tool") == {"secret"}
    assert policy.masked_fields(OTHER, "get_job_errors") == set()


def test_rate_limits_per_user_with_retry_after():
    now = [1000.0]
    limiter = RateLimiter(clock=lambda: now[0])
    policy = parse_policy("rules:\n  - {name: slow, who: everyone, calls_per_minute: 2, invocations_per_hour: 1}\n",
                          TOOL_FACTS)
    assert limiter.check(policy, OTHER, "u1", TOOL_FACTS["get_user"]) is None
    assert limiter.check(policy, OTHER, "u1", TOOL_FACTS["invoke_workflow"]) is None
    refusal = limiter.check(policy, OTHER, "u1", TOOL_FACTS["get_user"])
    assert refusal.rule == "slow" and refusal.retry_after_seconds == 60
    assert limiter.check(policy, OTHER, "u2", TOOL_FACTS["get_user"]) is None  # per user
    now[0] += 60
    refusal = limiter.check(policy, OTHER, "u1", TOOL_FACTS["invoke_workflow"])
    assert refusal.rate_limited and refusal.retry_after_seconds == 3540 and "invocations per hour" in refusal.reason
    assert limiter.check(policy, OTHER, "u1", TOOL_FACTS["get_user"]) is None  # the refused invocation was not counted


def test_rate_limits_are_counted_together_by_every_process_sharing_the_directory(tmp_path):
    """mcp.rate_limits' SharedRateLimiter: two limiters (two gunicorn workers) on one directory share the count;
    a torn count file starts the count again instead of failing the call."""
    from galaxy_mcp_analysis.mcp.rate_limits import SharedRateLimiter

    policy = parse_policy("rules:\n  - {name: slow, who: everyone, calls_per_minute: 3}\n", TOOL_FACTS)
    first, second = SharedRateLimiter(str(tmp_path / "counts")), SharedRateLimiter(str(tmp_path / "counts"))
    assert first.check(policy, OTHER, "u1", TOOL_FACTS["get_user"]) is None
    assert second.check(policy, OTHER, "u1", TOOL_FACTS["get_user"]) is None
    assert first.check(policy, OTHER, "u1", TOOL_FACTS["get_user"]) is None
    refusal = second.check(policy, OTHER, "u1", TOOL_FACTS["get_user"])
    assert refusal.rule == "slow" and 55 <= refusal.retry_after_seconds <= 60
    assert first.check(policy, OTHER, "u2", TOOL_FACTS["get_user"]) is None  # per user
    [count_file] = [path for path in (tmp_path / "counts").iterdir() if "calls_per_minute" in path.read_text()
                    and len(json.loads(path.read_text())["calls_per_minute"]) == 3]
    count_file.write_text('{"calls_per_minute": [1')
    assert second.check(policy, OTHER, "u1", TOOL_FACTS["get_user"]) is None
    unlimited = parse_policy("rules: []\n", TOOL_FACTS)
    assert first.check(unlimited, OTHER, "u3", TOOL_FACTS["get_user"]) is None  # no limit: no file
    assert len(list((tmp_path / "counts").iterdir())) == 2


def test_the_policy_file_comes_from_the_variable_else_galaxy_yml():
    from types import SimpleNamespace

    from galaxy_mcp_analysis.core.settings import Settings
    from galaxy_mcp_analysis.mcp.policy_file import policy_path

    gx_app = SimpleNamespace(config=SimpleNamespace(config_dict={"mcp_analysis_policy_file": "/etc/galaxy/p.yml"}))
    unset = Settings.from_environ({})
    assert policy_path(unset) is None and policy_path(unset, gx_app) == "/etc/galaxy/p.yml"
    variable = Settings.from_environ({"GALAXY_MCP_ANALYSIS_POLICY_FILE": " /srv/policy.yml "})
    assert policy_path(variable, gx_app) == "/srv/policy.yml"


def test_a_rule_naming_a_short_id_matches_every_guid_of_it_and_a_guid_rule_one_version():
    guid = "toolshed.example.org/repos/mcp_corpus/corpus_lines/corpus_lines/"
    by_short_id = parse_policy("rules:\n  - {name: no-lines, who: everyone, deny_galaxy_tools: [corpus_lines]}\n", TOOL_FACTS)
    by_guid = parse_policy(f"rules:\n  - {{name: no-v1, who: everyone, deny_galaxy_tools: ['{guid}1.0.0']}}\n", TOOL_FACTS)
    allowed = parse_policy("rules:\n  - {name: lines-only, who: everyone, allow_galaxy_tools: [corpus_lines]}\n", TOOL_FACTS)
    for version in ("1.0.0", "2.0.0"):
        installed = GalaxyTool(guid + version, "Corpus (ToolShed)", "corpus_lines")
        assert by_short_id.check_galaxy_tools(OTHER, [installed]).rule == "no-lines"
        assert allowed.check_galaxy_tools(OTHER, [installed]) is None
    assert by_guid.check_galaxy_tools(OTHER, [GalaxyTool(guid + "1.0.0", None, "corpus_lines")]).rule == "no-v1"
    assert by_guid.check_galaxy_tools(OTHER, [GalaxyTool(guid + "2.0.0", None, "corpus_lines")]) is None
    # a tool outside any ToolShed has one id: its short id
    assert by_short_id.check_galaxy_tools(OTHER, [GalaxyTool("corpus_lines", None, "corpus_lines")]).rule == "no-lines"
    assert allowed.check_galaxy_tools(OTHER, [GalaxyTool("Cut1", None, "Cut1")]).rule == "lines-only"
