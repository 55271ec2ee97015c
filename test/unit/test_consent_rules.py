"""core.consent and the policy's confirm_mcp_tools: which calls ask which callers, the question's text from
what would be lost, how an answer reads (only an explicit Yes), the No result and the refusal's words."""

import pytest

from galaxy_mcp_analysis.core import consent
from galaxy_mcp_analysis.core.consent import Loss
from galaxy_mcp_analysis.core.policy import (
    Caller,
    parse_policy,
    PolicyError,
)
from galaxy_mcp_analysis.tools import TOOL_FACTS

ANALYST = Caller("ana@example.org", roles=frozenset({"analysts"}))
OTHER = Caller("other@example.org")
RULES = """\
rules:
  - name: ask-analysts
    who: {roles: [analysts]}
    confirm_mcp_tools: [purge, delete_workflow, cancel_job]
  - name: deny-nothing
    who: everyone
    deny_mcp_tools: [delete_user_tool]
"""
DELETE = TOOL_FACTS["delete_history_items"]


def test_confirm_names_calls_by_tool_and_class_for_the_callers_who_matches():
    policy = parse_policy(RULES, TOOL_FACTS)
    assert policy.asks_consent()
    rule, entry = policy.confirmation(ANALYST, DELETE, {"purge": True})
    assert (rule.name, entry) == ("ask-analysts", "purge")
    assert policy.confirmation(ANALYST, DELETE, {"purge": False}) is None  # a delete is not a purge
    assert policy.confirmation(ANALYST, TOOL_FACTS["delete_workflow"], {})[1] == "delete_workflow"
    assert policy.confirmation(OTHER, DELETE, {"purge": True}) is None
    assert policy.confirmation(ANALYST, TOOL_FACTS["get_user"], {}) is None


def test_a_policy_without_the_key_asks_nobody():
    assert not parse_policy("rules:\n  - {name: r, who: everyone, deny_mcp_tools: [purge]}\n", TOOL_FACTS).asks_consent()


@pytest.mark.parametrize("value,line", [("[purge, purgeit]", 4), ("[delete_everything]", 4)])
def test_an_unknown_name_stops_start_up_naming_the_line(value, line):
    text = f"rules:\n  - name: r\n    who: everyone\n    confirm_mcp_tools: {value}\n"
    with pytest.raises(PolicyError) as raised:
        parse_policy(text, TOOL_FACTS, source="policy.yml")
    assert f"policy.yml line {line}: rules[0].confirm_mcp_tools: unknown MCP tool" in str(raised.value)


def test_the_question_names_what_will_be_lost_and_the_space():
    losses = [Loss("dataset", "3: reads.fastq", "fastqsanger", 3 * 1024 * 1024), Loss("dataset", "4: x", "", 10)]
    text = consent.question("delete_history_items", {}, losses, purging=True, rule="r")
    assert "purge" in text and "- dataset '3: reads.fastq' (fastqsanger, 3.0 MB)" in text
    assert "- dataset '4: x' (10 bytes)" in text and "Space freed: 3.0 MB." in text
    assert text.endswith("Nothing changes unless you answer Yes.")
    many = consent.question("cancel_job", {}, [Loss("job", str(n)) for n in range(13)], purging=False, rule="r")
    assert "cancel" in many and "- and 3 more" in many and "Space freed" not in many
    nothing_read = consent.question("delete_page", {}, [], purging=False, rule="r")
    assert "delete_page" in nothing_read and "rule 'r'" in nothing_read


@pytest.mark.parametrize("action,content,yes", [
    ("accept", {"confirm": True}, True), ("accept", {"confirm": False}, False), ("accept", {}, False),
    ("accept", None, False), ("decline", {"confirm": True}, False), ("cancel", None, False), (None, None, False),
    ("accept", {"confirm": "true"}, False),
])
def test_only_an_explicit_yes_is_a_yes(action, content, yes):
    assert consent.answered_yes(action, content) is yes


def test_the_no_result_and_the_refusal_say_nothing_changed_and_how_to_proceed():
    result = consent.declined_result("delete_workflow", "ask", "decline")
    assert result["changed"] is False and result["message"].startswith("Nothing was changed")
    message, suggestion = consent.cannot_ask("delete_workflow", "ask", "destructive", "no elicitation")
    assert message.startswith("rule ask: ") and "confirm_mcp_tools: destructive" in message
    assert "Nothing was done" in suggestion and "ask the Galaxy admin" in suggestion
    assert set(consent.requested_schema()["properties"]) == {consent.ANSWER_FIELD}
