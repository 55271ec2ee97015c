"""The caller of one MCP request: its credential turned into the Galaxy user, once per request.

``user_for_credential`` is the one place a credential (the ``x-api-key`` header, ``Authorization:
Bearer`` or the ``api_key`` argument; ``mcp.api_key`` picks which) becomes a Galaxy user, and
where the bootstrap admin is refused. A sign-in token (OAuth, ``oauth/``) is checked there too,
first: the only function that knows a second kind of credential (Galaxy's own tools, which look
their key up themselves, get the same answer from ``activation.oauth_signin``'s ``by_api_key``).

``RequestCaller`` is one request's caller, resolved at most once and kept in a context variable
for the rest of the request: the policy (``mcp.policy``), the audit trail (``mcp.audit``) and our
tools' operations manager (``mcp.declaration.operations_for``) all read it, so one call looks its
user up once, in the call's own database session (``mcp.session``). ``CallerOfRequest`` is the
middleware that puts it there, after ``HeaderApiKey`` has filled in the key; the audit trail,
outside every other middleware, makes it first when it is on; a call that no inner layer looked
up (a refusal before any did) is looked up by the audit trail afterwards, in a session of its own.
"""

import contextvars
from dataclasses import dataclass

from fastmcp.server.middleware import Middleware

from galaxy_mcp_analysis.core.policy import Caller
from galaxy_mcp_analysis.mcp.api_key import API_KEY_ARGUMENT
from galaxy_mcp_analysis.oauth.caller import user_of_bearer

_CURRENT: contextvars.ContextVar["RequestCaller | None"] = contextvars.ContextVar("mcp_request_caller", default=None)


def user_for_credential(gx_app, credential: str | None):
    """The Galaxy user a credential names, or None (none given, the bootstrap admin); Galaxy's
    AuthenticationFailed for an unknown or deleted key."""
    from galaxy.managers.users import UserManager

    if not credential:
        return None
    # A sign-in token (OAuth, when switched on) first: the gate verified it for this request (oauth.caller).
    user = user_of_bearer(gx_app.model.session, gx_app.model.User, credential)
    if user is None:
        user = gx_app[UserManager].by_api_key(api_key=credential)
    if user is None or getattr(user, "bootstrap_admin_user", False) or getattr(user, "id", None) is None:
        return None
    return user


@dataclass
class _Resolved:
    user: object
    user_id: str | None
    #: Why there is no user (Galaxy's error for an unknown key), raised again by ``operations_for``.
    failure: Exception | None = None


class RequestCaller:
    """One request's caller; ``user()`` looks it up the first time (in a worker thread, in the call's session)."""

    def __init__(self, gx_app, credential: str | None):
        self.gx_app = gx_app
        self.credential = credential or None
        self._resolved: _Resolved | None = None
        self._policy_caller: Caller | None = None

    @property
    def resolved(self) -> bool:
        return self._resolved is not None

    def user(self):
        if self._resolved is None:
            try:
                user = user_for_credential(self.gx_app, self.credential)
            except Exception as failure:  # an unknown or deleted key: the tool itself answers
                self._resolved = _Resolved(None, None, failure)
            else:
                self._resolved = _Resolved(user, self.gx_app.security.encode_id(user.id) if user is not None else None)
        return self._resolved.user

    @property
    def failure(self) -> Exception | None:
        return self._resolved.failure if self._resolved else None

    @property
    def user_id(self) -> str | None:
        """The encoded id of the user, if it was looked up (the audit trail reads it after the call)."""
        return self._resolved.user_id if self._resolved else None

    def policy_caller(self) -> Caller | None:
        """What the policy's rules match of the caller: email, admin, role and group names."""
        user = self.user()
        if user is None:
            return None
        if self._policy_caller is None:
            self._policy_caller = caller_of(self.gx_app, user)
        return self._policy_caller


def caller_of(gx_app, user) -> Caller:
    """What the policy's rules match of a Galaxy user: email, admin, role and group names."""
    return Caller(
        email=user.email,
        is_admin=gx_app.config.is_admin_user(user),
        roles=frozenset(role.name for role in user.all_roles() if role.name),
        groups=frozenset(membership.group.name for membership in user.groups if not membership.group.deleted),
    )


def begin(gx_app, credential: str | None) -> tuple[RequestCaller, contextvars.Token]:
    """This request's caller for ``credential``: the one an outer layer made, or a new one, made current."""
    current = _CURRENT.get()
    if current is not None and current.credential == (credential or None):
        return current, _CURRENT.set(current)
    caller = RequestCaller(gx_app, credential)
    return caller, _CURRENT.set(caller)


def end(token: contextvars.Token) -> None:
    _CURRENT.reset(token)


def request_caller(gx_app, credential: str | None) -> RequestCaller:
    """The current request's caller if it has this credential, else one of its own (a call from outside MCP)."""
    current = _CURRENT.get()
    if current is not None and current.credential == (credential or None):
        return current
    return RequestCaller(gx_app, credential)


class CallerOfRequest(Middleware):
    """Make the call's caller current for the layers inside (policy, tools), unresolved until one needs it."""

    def __init__(self, gx_app):
        self.gx_app = gx_app

    async def on_call_tool(self, context, call_next):
        credential = (context.message.arguments or {}).get(API_KEY_ARGUMENT)
        # Not resolved here: the first layer that needs the user (the policy, the tool) looks it up, so the
        # call's database connection is taken only where it is used. Resolving it here held one connection per
        # call through every layer inside, and 16 concurrent calls on PostgreSQL then emptied Galaxy's pool
        # (5 + 10) under load: test_concurrency's pastes failed with the pool's timeout.
        caller, token = begin(self.gx_app, credential if isinstance(credential, str) else None)
        try:
            return await call_next(context)
        finally:
            end(token)
