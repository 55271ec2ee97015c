"""mcp.consent's two ways of asking, on an in-memory FastMCP server whose transport can carry a server
request (Galaxy's stateless /api/mcp cannot, test_consent.py): elicitation/create on a handshake-era
session, and input_required on 2026-07-28 driven by FastMCP's own client; No runs nothing, Yes runs it."""

import types

import anyio
import pytest
from fastmcp import (
    Client,
    FastMCP,
)
from mcp_types import ElicitResult

from galaxy_mcp_analysis.core.consent import Loss
from galaxy_mcp_analysis.core.policy import (
    Caller,
    parse_policy,
)
from galaxy_mcp_analysis.mcp import consent as consent_middleware
from galaxy_mcp_analysis.tools import TOOL_FACTS

RULE = "rules:\n  - {name: ask, who: everyone, confirm_mcp_tools: [purge]}\n"


@pytest.fixture
def server(monkeypatch):
    ran: list[dict] = []
    mcp = FastMCP("t")

    @mcp.tool
    def delete_history_items(history_id: str, items: list[dict], purge: bool = False) -> dict:
        ran.append({"history_id": history_id, "purge": purge})
        return {"history_id": history_id, "purged": purge}

    source = types.SimpleNamespace(current=lambda: parse_policy(RULE, TOOL_FACTS))
    monkeypatch.setattr(consent_middleware, "api_key_from_request", lambda: "key")
    monkeypatch.setattr(consent_middleware, "request_caller",
                        lambda gx_app, key: types.SimpleNamespace(policy_caller=lambda: Caller("a@example.org")))
    monkeypatch.setattr(consent_middleware.ConsentBeforeLoss, "losses",
                        lambda self, key, arguments: [Loss("dataset", "1: a.txt", "txt", 10)])
    mcp.add_middleware(consent_middleware.ConsentBeforeLoss(None, source, TOOL_FACTS))
    return mcp, ran


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_no_runs_nothing_and_yes_runs_the_call(server, mode):
    anyio.run(_no_then_yes, *server, mode)


async def _no_then_yes(mcp, ran, mode):
    answers, asked = [ElicitResult(action="decline"), ElicitResult(action="accept", content={"confirm": True})], []

    async def answer(message, response_type, params, context):
        asked.append(message)
        return answers.pop(0)

    arguments = {"history_id": "h", "items": [{"src": "hda", "id": "d"}], "purge": True}
    async with Client(mcp, mode=mode, elicitation_handler=answer) as client:
        declined = await client.call_tool("delete_history_items", arguments)
        assert declined.structured_content["changed"] is False and ran == []
        done = await client.call_tool("delete_history_items", arguments)
        assert done.structured_content == {"history_id": "h", "purged": True} and ran == [{"history_id": "h",
                                                                                           "purge": True}]
        not_named = await client.call_tool("delete_history_items", {**arguments, "purge": False})
        assert not not_named.is_error and len(asked) == 2
    assert "- dataset '1: a.txt' (txt, 10 bytes)" in asked[0]
