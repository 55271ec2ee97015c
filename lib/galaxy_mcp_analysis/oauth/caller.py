"""Who an OAuth token speaks for, during one /api/mcp request.

``BearerGate`` (ASGI, around the MCP app) checks the request's credential before any MCP code
runs: none at all is ``401`` with ``WWW-Authenticate: Bearer resource_metadata="..."``; a token
of this server (``gxmcp_at_...``) must be live and issued for this MCP URL, else ``401
invalid_token``; an API key passes as before. A live token becomes the request's ``OAuthCaller``
(a context variable), which ``caller_for_bearer`` reads: the one function the request's caller
code asks (user id, client, grant, scopes; None for an API key). Galaxy's ``by_api_key`` then
accepts that token, in that request only (activation.oauth_signin), so Galaxy's 37 tools, ours,
the policy and the audit trail all see the token's user.
"""

import contextvars
from dataclasses import dataclass

import anyio
from sqlalchemy.exc import OperationalError
from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from galaxy_mcp_analysis.core import oauth as rules


@dataclass(frozen=True)
class OAuthCaller:
    token: str
    user_id: int
    client_id: str
    client_name: str | None
    grant_id: str
    scopes: tuple[str, ...]


_CALLER: contextvars.ContextVar[OAuthCaller | None] = contextvars.ContextVar("galaxy_mcp_analysis_oauth", default=None)


def caller_for_bearer(token: str | None) -> OAuthCaller | None:
    """The OAuth caller of this request if ``token`` is the access token the gate verified, else None
    (an API key, or no OAuth sign-in). The one place a bearer token becomes a Galaxy user id."""
    caller = _CALLER.get()
    if caller is None or not token or token != caller.token:
        return None
    return caller


def user_of_bearer(session, user_model, token: str | None):
    """The Galaxy user of the access token this request's gate verified; None when ``token`` is not that
    token (an API key, or sign-in off). Galaxy's AuthenticationFailed when the account was deactivated since."""
    caller = caller_for_bearer(token)
    if caller is None:
        return None
    user = session.get(user_model, caller.user_id)
    if user is None or user.deleted:
        from galaxy import exceptions

        raise exceptions.AuthenticationFailed("The account this sign-in belongs to is deactivated.")
    return user


def current_caller() -> OAuthCaller | None:
    return _CALLER.get()


def audit_fields() -> dict:
    """What an audit line adds: the OAuth client and grant of the call (null for API keys)."""
    caller = _CALLER.get()
    return {
        "oauth_client_id": caller.client_id if caller else None,
        "oauth_client_name": caller.client_name if caller else None,
        "oauth_grant_id": caller.grant_id if caller else None,
    }


def bearer_of(headers) -> str | None:
    scheme, _, value = (headers.get("authorization") or "").strip().partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


class BearerGate:
    """ASGI middleware of the MCP app: 401 without a credential, OAuth tokens verified once per request."""

    def __init__(self, app, provider, resource_metadata_url: str):
        self.app = app
        self.provider = provider
        self.challenge = f'Bearer resource_metadata="{resource_metadata_url}"'

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") == "OPTIONS":
            return await self.app(scope, receive, send)
        headers = Headers(scope=scope)
        bearer = bearer_of(headers)
        if not bearer and not headers.get("x-api-key", "").strip():
            return await self._refuse(scope, receive, send, None, "Sign in (OAuth) or send an API key.")
        if not rules.is_oauth_token(bearer):
            return await self.app(scope, receive, send)
        token = await self._verified(bearer)
        if token is None:
            return await self._refuse(scope, receive, send, "invalid_token",
                                      "The access token is unknown, expired, revoked or not for this resource.")
        reset = _CALLER.set(OAuthCaller(bearer, token.user_id, token.client_id, token.client_name,
                                        token.grant_id, tuple(token.scopes)))
        try:
            await self.app(scope, receive, send)
        finally:
            _CALLER.reset(reset)

    async def _verified(self, bearer: str):
        """The token's row, read on this thread when the store has a quick engine (a sqlite file: a read of
        well under a millisecond costs less than the hop to a worker thread, and no file is opened), else (or
        while a writer holds the file longer than a quick read waits) in a worker thread on Galaxy's engine."""
        quick = self.provider.store.quick_engine
        if quick is not None:
            try:
                return self.provider.verified(bearer, quick)
            except OperationalError:  # "database is locked": a writer's commit; wait for it off the event loop
                pass
        return await anyio.to_thread.run_sync(self.provider.verified, bearer)

    async def _refuse(self, scope, receive, send, error: str | None, description: str):
        challenge = self.challenge if error is None else f'{self.challenge}, error="{error}", error_description="{description}"'
        body = {"error": error or "invalid_request", "error_description": description}
        await JSONResponse(body, status_code=401, headers={"WWW-Authenticate": challenge})(scope, receive, send)
