"""Consent before the irreversible: a call the admin's ``confirm_mcp_tools`` names asks the person first.

``ConsentBeforeLoss`` (innermost in mcp.stack: every refusal comes before a question) finds the rule
(``core.policy``: ``Policy.confirmation`` for the request's caller), reads what the call would lose
(``operations.losses``, in the call's database session) and asks, with the text of ``core.consent``:

- on 2026-07-28, a client declaring elicitation gets an ``input_required`` result (one ``elicitation/create``
  input request, ``requestState`` sealed by the SDK and bound to the call's name and arguments); its retry
  carries the answer, which is read only beside our own state (an answer sent unasked is asked again);
- before 2026-07-28, ``elicitation/create`` on the request's stream, when the client declared elicitation
  and the transport can carry a server request (Galaxy's /api/mcp is stateless HTTP: it cannot);
- any other client is refused with ``[FORBIDDEN]`` naming the rule.

A Yes runs the call as without the rule; anything else returns ``core.consent.declined_result`` and
changes nothing. The audit trail (outermost) reads the verdict through ``consent_verdicts``.
"""

import contextlib
import contextvars
import logging

import anyio
from fastmcp.server.middleware import Middleware
from fastmcp.tools.base import (
    InputRequiredToolResult,
    ToolResult,
)

from galaxy_mcp_analysis.core import consent
from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.tool_facts import ToolFacts
from galaxy_mcp_analysis.mcp.api_key import (
    API_KEY_ARGUMENT,
    api_key_from_request,
)
from galaxy_mcp_analysis.mcp.caller import request_caller
from galaxy_mcp_analysis.mcp.policy_file import PolicySource

log = logging.getLogger(__name__)
MODERN = ("2026-07-28",)
_STATELESS = ("this connection cannot carry the server's question (stateless HTTP before MCP 2026-07-28: "
              "elicitation/create needs a session that keeps the client's capabilities and takes its answer)")

#: The verdicts of the current call (True: Yes; False: not confirmed), kept by the audit trail for its line.
_VERDICTS: contextvars.ContextVar[list | None] = contextvars.ContextVar("mcp_consent_verdicts", default=None)


@contextlib.contextmanager
def consent_verdicts():
    """Around one call: the list its consent verdict is appended to (empty when no rule asked)."""
    verdicts: list[bool] = []
    token = _VERDICTS.set(verdicts)
    try:
        yield verdicts
    finally:
        _VERDICTS.reset(token)


def _record(confirmed: bool) -> None:
    verdicts = _VERDICTS.get()
    if verdicts is not None:
        verdicts.append(confirmed)


def _can_elicit(request) -> bool:
    from mcp_types import (
        ClientCapabilities,
        ElicitationCapability,
    )

    try:
        return bool(request.session.check_client_capability(ClientCapabilities(elicitation=ElicitationCapability())))
    except Exception:  # no session (a call from outside a client request)
        return False


class ConsentBeforeLoss(Middleware):
    def __init__(self, gx_app, source: PolicySource, facts: dict[str, ToolFacts]):
        self.gx_app = gx_app
        self.source = source
        self.facts = facts

    async def on_call_tool(self, context, call_next):
        policy = self.source.current()
        facts = self.facts.get(context.message.name)
        if not (policy and policy.asks_consent()) or facts is None:
            return await call_next(context)
        arguments = dict(context.message.arguments or {})
        key = arguments.get(API_KEY_ARGUMENT) or api_key_from_request()
        caller = await anyio.to_thread.run_sync(request_caller(self.gx_app, key).policy_caller) if key else None
        found = policy.confirmation(caller, facts, arguments) if caller is not None else None
        if found is None:  # not this caller's rule (or no key: the tool reports it)
            return await call_next(context)
        rule, entry = found
        request = context.fastmcp_context.request_context
        asked = _Question(self, facts, arguments, key, rule.name, entry, caller.email)
        if request is not None and request.protocol_version in MODERN:
            return await asked.by_input_required(context, request, call_next)
        return await asked.by_elicitation(context, request, call_next)

    def losses(self, key: str, arguments: dict) -> list[consent.Loss]:
        """What the call would lose, in the call's own session; nothing if it cannot be read (the call refuses)."""
        from galaxy_mcp_analysis.mcp.declaration import operations_for

        try:
            return operations_for(self.gx_app, key).losses_of(arguments)
        except Exception:
            log.exception("galaxy-mcp-analysis: could not read what a call would lose")
            return []


class _Question:
    """One call's question: its text, and the two ways of asking it."""

    def __init__(self, middleware: ConsentBeforeLoss, facts: ToolFacts, arguments: dict, key: str, rule: str,
                 entry: str, user: str | None):
        self.middleware, self.facts, self.arguments, self.key = middleware, facts, arguments, key
        self.rule, self.entry, self.user = rule, entry, user

    async def text(self) -> str:
        losses = await anyio.to_thread.run_sync(self.middleware.losses, self.key, self.arguments)
        return consent.question(self.facts.name, self.arguments, losses, self.facts.purges(self.arguments), self.rule)

    def refuse(self, reason: str) -> AnalysisError:
        _record(False)
        message, suggestion = consent.cannot_ask(self.facts.name, self.rule, self.entry, reason)
        return AnalysisError(ErrorCode.FORBIDDEN, message, suggestion)

    async def answered(self, yes: bool, how: str, context, call_next):
        _record(yes)
        if yes:
            return await call_next(context)
        result = consent.declined_result(self.facts.name, self.rule, how)
        return ToolResult(content=result["message"], structured_content=result)

    async def by_input_required(self, context, request, call_next):
        from mcp_types import (
            ElicitRequest,
            ElicitRequestFormParams,
            InputRequiredResult,
        )

        state = consent.state_token(self.facts.name, self.user)
        fastmcp_context = context.fastmcp_context
        responses = fastmcp_context.input_responses or {}
        if fastmcp_context.request_state == state and consent.INPUT_KEY in responses:
            answer = responses[consent.INPUT_KEY]
            action, content = getattr(answer, "action", None), getattr(answer, "content", None)
            return await self.answered(consent.answered_yes(action, content), action or "no answer", context,
                                       call_next)
        if not _can_elicit(request):
            raise self.refuse("this client did not declare the elicitation capability")
        ask = ElicitRequest(params=ElicitRequestFormParams(message=await self.text(),
                                                           requested_schema=consent.requested_schema()))
        return InputRequiredToolResult(InputRequiredResult(input_requests={consent.INPUT_KEY: ask},
                                                           request_state=state))

    async def by_elicitation(self, context, request, call_next):
        from mcp.shared.exceptions import NoBackChannelError

        if request is not None and getattr(request.session, "client_capabilities", None) is None:
            raise self.refuse(_STATELESS)  # Galaxy's /api/mcp: nothing of the handshake is kept between requests
        if request is None or not _can_elicit(request):
            raise self.refuse("this client did not declare the elicitation capability")
        try:
            answer = await request.session.elicit(message=await self.text(),
                                                  requested_schema=consent.requested_schema(),
                                                  related_request_id=request.request_id)
        except NoBackChannelError:
            raise self.refuse(_STATELESS) from None
        return await self.answered(consent.answered_yes(answer.action, answer.content), answer.action, context,
                                   call_next)
