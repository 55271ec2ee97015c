"""The patch set's middleware on Galaxy's MCP server, declared once, outermost first.

FastMCP runs ``mcp.middleware`` in list order, the first entry outermost. Every patch adds its
middleware with ``place``, which puts it where ``MIDDLEWARE_STACK`` says whatever order the patches
(and the OAuth sign-in, which comes after the server is built) run in. Middleware that is not the
patch set's (Galaxy's or FastMCP's own, such as FastMCP's schema dereferencing) sits at
``GALAXYS_OWN``: inside the audit trail, outside everything else of ours.
``test/unit/galaxy_library/test_middleware_stack.py`` builds the stack from the real patches in
more than one order and pins it to this list.
"""

from galaxy_mcp_analysis.mcp.api_key import HeaderApiKey
from galaxy_mcp_analysis.mcp.audit import AuditTrail
from galaxy_mcp_analysis.mcp.caller import CallerOfRequest
from galaxy_mcp_analysis.mcp.consent import ConsentBeforeLoss
from galaxy_mcp_analysis.mcp.errors import CodedToolErrors
from galaxy_mcp_analysis.mcp.policy import PolicyRules
from galaxy_mcp_analysis.mcp.result_text import ShapedText
from galaxy_mcp_analysis.mcp.session import RequestScopedSession
from galaxy_mcp_analysis.oauth.scopes import TokenScopes
from galaxy_mcp_analysis.tasks.answers import TaskAnswers

#: Where middleware the patch set did not add stays (whatever Galaxy's server was built with).
GALAXYS_OWN = "galaxy's own"

#: Outermost first; why each sits where it does.
MIDDLEWARE_STACK: tuple = (
    TaskAnswers,  # a 2026-07-28 client's long call answered as a task, from the result as every layer made it
    AuditTrail,  # sees each call as sent and how it ended, inner layers' refusals (no key, policy) too
    GALAXYS_OWN,
    ShapedText,  # a stock result's text block; errors pass through it unshaped
    RequestScopedSession,  # one database session for all that follows: the key's lookup, the policy, the tool
    CodedToolErrors,  # every refusal and failure inside becomes [CODE] text with a suggestion
    HeaderApiKey,  # the key from the headers filled into api_key, for the caller and the tool
    CallerOfRequest,  # the key's user, once per request, for the policy and the tool
    PolicyRules,  # the admin's rules for that caller; its refusals are coded by CodedToolErrors
    TokenScopes,  # with OAuth on: the access token's scopes
    ConsentBeforeLoss,  # the person asked (confirm_mcp_tools), innermost: only a call every rule lets through
)


def _position(middleware) -> int:
    kind = type(middleware)
    return MIDDLEWARE_STACK.index(kind if kind in MIDDLEWARE_STACK else GALAXYS_OWN)


def place(mcp, middleware) -> None:
    """Add ``middleware`` to ``mcp`` at its declared place: after every present middleware declared before it."""
    if type(middleware) not in MIDDLEWARE_STACK:
        raise ValueError(f"{type(middleware).__name__} has no place in mcp.stack.MIDDLEWARE_STACK")
    rank = _position(middleware)
    before = [index for index, present in enumerate(mcp.middleware) if _position(present) <= rank]
    mcp.middleware.insert(before[-1] + 1 if before else 0, middleware)


def declared_order(mcp) -> list:
    """The server's middleware as ``MIDDLEWARE_STACK`` names it: our classes, ``GALAXYS_OWN`` for the rest once."""
    named = [type(m) if type(m) in MIDDLEWARE_STACK else GALAXYS_OWN for m in mcp.middleware]
    return [entry for index, entry in enumerate(named) if index == 0 or entry != named[index - 1]]
