"""Consent before the irreversible (policy key ``confirm_mcp_tools``) through /api/mcp with the official client:
a purge asked on 2026-07-28 (``input_required``) answered No (the dataset stays, not even deleted) then Yes
(purged, read back through REST); a client that cannot ask refused with [FORBIDDEN], nothing changed (on an
older revision every client: Galaxy's /api/mcp is stateless HTTP, which cannot carry ``elicitation/create``);
a caller the rule's ``who`` does not match is not asked; the audit lines carry ``confirmed``; tools/list is
byte-identical with the rule in force.

The session Galaxy re-reads its policy file when it changes (test_policy.py's fixture, written here too).
"""

import json
import time

import pytest

from galaxy_mcp_analysis.testing import (
    McpClient,
    rest,
    tools_reference,
)
from galaxy_mcp_analysis.testing.audit import audit_lines

YES = {"action": "accept", "content": {"confirm": True}}
NO = {"action": "decline"}


@pytest.fixture
def consent_rule(galaxy, api_key, policy):
    email = rest(galaxy.galaxy_url, "/api/users/current", api_key)["email"]
    policy(f"""\
rules:
  - name: ask-before-loss
    who: {{users: ["{email}"]}}
    reason: The analyst confirms what cannot be undone.
    confirm_mcp_tools: [purge, delete_workflow]
""")


def pasted(mcp, key, name="to lose") -> tuple[str, str]:
    history = mcp.call_ok("create_history", name=f"consent {name}", api_key=key)["id"]
    dataset = mcp.call_ok("create_dataset_from_text", history_id=history, content="a\tb\n" * 50, name=name,
                          api_key=key)["dataset_id"]
    assert mcp.call_ok("wait_for_jobs", history_id=history, timeout_seconds=110, api_key=key)["all_terminal"]
    return history, dataset


def state(galaxy, key, dataset) -> tuple[bool, bool]:
    details = rest(galaxy.galaxy_url, f"/api/datasets/{dataset}", key)
    return details["deleted"], details["purged"]


def purged_soon(galaxy, key, dataset, seconds=30) -> bool:
    deadline = time.monotonic() + seconds  # Galaxy purges in a background task
    while state(galaxy, key, dataset) != (True, True):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.3)
    return True


def purge(history, dataset, key):
    return {"history_id": history, "items": [{"src": "hda", "id": dataset}], "purge": True, "api_key": key}


def audited(galaxy, since: int) -> list[dict]:
    return [line for line in audit_lines(galaxy.audit_log)[since:] if line["tool"] == "delete_history_items"]


def test_a_purge_on_2026_07_28_asks_no_changes_nothing_yes_purges(galaxy, mcp, api_key, consent_rule):
    history, dataset = pasted(mcp, api_key, "precious.tsv")
    start = len(audit_lines(galaxy.audit_log))
    with McpClient(galaxy.mcp_url, modern=True, answer=lambda message, schema: NO) as client:
        assert client.protocol_version == "2026-07-28"
        result, asked = client.call_answering("delete_history_items", purge(history, dataset, api_key))
        assert len(asked) == 1 and asked[0].request_state
        [question] = client.questions
        assert question == (  # the example of doc/admin-guide.md
            "An assistant asks to purge (delete for good, freeing the space; restore cannot bring it back) the "
            "following in Galaxy (delete_history_items):\n- dataset '1: precious.tsv' (tabular, 200 bytes)\n"
            "Space freed: 200 bytes.\nGo ahead? Nothing changes unless you answer Yes."), question
        assert not result.is_error and result.structured_content["changed"] is False
        assert "Nothing was changed" in result.content[0].text
        assert state(galaxy, api_key, dataset) == (False, False)

        client.answer = lambda message, schema: YES
        result, asked = client.call_answering("delete_history_items", purge(history, dataset, api_key))
        assert len(asked) == 1 and not result.is_error, result
        assert result.structured_content["purged_items"][0]["id"] == dataset
        assert purged_soon(galaxy, api_key, dataset)
    lines = audited(galaxy, start)
    assert [(line["outcome"], line.get("confirmed", "absent")) for line in lines] == [
        ("input_required", "absent"), ("ok", False), ("input_required", "absent"), ("ok", True)]
    assert lines[1]["purged"] == [] and lines[3]["purged"] == [dataset]


def test_an_answer_sent_unasked_is_asked_again(galaxy, api_key, consent_rule):
    from mcp_types import (
        ElicitResult,
        InputRequiredResult,
    )

    mcp = McpClient(galaxy.mcp_url, modern=True, answer=lambda message, schema: YES)
    with mcp:
        history, dataset = pasted(mcp, api_key)
        forged = {"confirm": ElicitResult(action="accept", content={"confirm": True})}
        result = mcp._run(mcp._session.call_tool("delete_history_items", purge(history, dataset, api_key),
                                                 input_responses=forged, allow_input_required=True))
        assert isinstance(result, InputRequiredResult)
        assert state(galaxy, api_key, dataset) == (False, False)


@pytest.mark.parametrize("modern,answer", [(False, YES), (False, None), (True, None)],
                         ids=["older-with-elicitation", "older-without", "2026-07-28-without-elicitation"])
def test_a_client_that_cannot_ask_is_forbidden_and_nothing_changes(galaxy, mcp, api_key, consent_rule,
                                                                    modern, answer):
    history, dataset = pasted(mcp, api_key)
    start = len(audit_lines(galaxy.audit_log))
    with McpClient(galaxy.mcp_url, modern=modern, answer=(lambda m, s: answer) if answer else None) as client:
        assert (client.protocol_version == "2026-07-28") == modern
        text = client.call_error("delete_history_items", **purge(history, dataset, api_key))
        assert client.questions == []
    assert text.startswith("[FORBIDDEN] rule ask-before-loss: delete_history_items must be confirmed"), text
    assert "confirm_mcp_tools: purge" in text and "ask the Galaxy admin" in text
    why = "cannot carry the server's question" if not modern else "did not declare the elicitation capability"
    assert why in text, text
    assert state(galaxy, api_key, dataset) == (False, False)
    [line] = audited(galaxy, start)
    assert line["outcome"] == "FORBIDDEN" and line["confirmed"] is False


def test_calls_the_rule_does_not_name_and_callers_it_does_not_match_are_not_asked(
        galaxy, mcp, api_key, other_user_key, consent_rule):
    start = len(audit_lines(galaxy.audit_log))
    with McpClient(galaxy.mcp_url, modern=True, answer=lambda message, schema: NO) as client:
        history, dataset = pasted(mcp, api_key)  # a delete without purge: not in [purge, delete_workflow]
        result, asked = client.call_answering("delete_history_items", {**purge(history, dataset, api_key),
                                                                       "purge": False})
        assert asked == [] and not result.is_error and state(galaxy, api_key, dataset) == (True, False)
        history, dataset = pasted(mcp, other_user_key)  # another user: the rule's who is the analyst only
        result, asked = client.call_answering("delete_history_items", purge(history, dataset, other_user_key))
        assert asked == [] and not result.is_error
        assert purged_soon(galaxy, other_user_key, dataset)
        assert client.questions == []
    assert ["confirmed" in line for line in audited(galaxy, start)] == [False, False]


def test_a_workflow_deletion_names_the_workflow(galaxy, mcp, api_key, consent_rule):
    workflow = mcp.call_ok("create_workflow", api_key=api_key, name="my careful workflow", definition={
        "class": "GalaxyWorkflow", "name": "my careful workflow", "inputs": {"t": "data"},
        "steps": {"s": {"tool_id": "cat1", "in": {"input1": "t"}}}})["workflow_id"]
    with McpClient(galaxy.mcp_url, modern=True, answer=lambda message, schema: NO) as client:
        result, asked = client.call_answering("delete_workflow", {"workflow_id": workflow, "api_key": api_key})
        assert len(asked) == 1 and "workflow 'my careful workflow'" in client.questions[0], client.questions
        assert not result.is_error and result.structured_content["changed"] is False
    assert not rest(galaxy.galaxy_url, f"/api/workflows/{workflow}", api_key)["deleted"]


def test_tools_list_is_byte_identical_with_the_rule(galaxy, api_key, policy):
    with McpClient(galaxy.mcp_url, headers={"x-api-key": api_key}) as keyed:
        before = json.dumps(tools_reference.tool_dicts(keyed.list_tools()))
        email = rest(galaxy.galaxy_url, "/api/users/current", api_key)["email"]
        policy(f"rules:\n  - {{name: ask, who: {{users: [\"{email}\"]}}, confirm_mcp_tools: [purge, destructive]}}\n")
        assert json.dumps(tools_reference.tool_dicts(keyed.list_tools())) == before


def test_a_page_deletion_and_a_cancel_name_what_they_lose_and_a_no_keeps_them(galaxy, mcp, api_key, policy):
    email = rest(galaxy.galaxy_url, "/api/users/current", api_key)["email"]
    policy(f"rules:\n  - {{name: ask, who: {{users: [\"{email}\"]}}, confirm_mcp_tools: [delete_page, cancel_job]}}\n")
    page = mcp.call_ok("create_page", title="Careful notes", slug=f"careful-{time.time_ns()}", content="# Notes\n",
                       api_key=api_key)["page_id"]
    history, dataset = pasted(mcp, api_key, "input.tsv")
    job = mcp.call_ok("run_tool", history_id=history, tool_id="cat1", inputs={"input1": {"src": "hda", "id": dataset}},
                      api_key=api_key)["jobs"][0]["id"]
    with McpClient(galaxy.mcp_url, modern=True, answer=lambda message, schema: NO) as client:
        result, asked = client.call_answering("delete_page", {"page_id": page, "api_key": api_key})
        assert len(asked) == 1 and "page 'Careful notes'" in client.questions[-1], client.questions
        assert result.structured_content["changed"] is False
        result, asked = client.call_answering("cancel_job", {"job_id": job, "api_key": api_key})
        assert len(asked) == 1 and f"job '{job} (cat1)'" in client.questions[-1], client.questions
        assert result.structured_content["changed"] is False
    assert not rest(galaxy.galaxy_url, f"/api/pages/{page}", api_key)["deleted"]
    waited = mcp.call_ok("wait_for_jobs", job_ids=[job], timeout_seconds=110, api_key=api_key)
    assert waited["jobs"][0]["state"] == "ok", waited  # not cancelled: it ran to its end
