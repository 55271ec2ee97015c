"""The two pages a person sees: the consent page of a sign-in, and their connected clients.

Both are served by Galaxy on Galaxy's own session (the ``galaxysession`` cookie, decoded with
Galaxy's id_secret and looked up through ``GalaxySessionManager``): a signed-out person is sent
to Galaxy's login page and back. Every form carries an anti-forgery value bound to the Galaxy
session (core.oauth.anti_forgery); a form posted without it issues or revokes nothing.
"""

import html
from dataclasses import dataclass
from urllib.parse import (
    quote,
    urlencode,
)

import anyio
from mcp.server.auth.provider import construct_redirect_uri
from starlette.responses import (
    HTMLResponse,
    RedirectResponse,
)

from galaxy_mcp_analysis.core import oauth as rules

#: Pages that must never be framed (clickjacking on Allow) nor cached.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'; form-action 'self' http: https:",
}


@dataclass(frozen=True)
class SignedInUser:
    user_id: int
    label: str
    session_key: str


def signed_in_user(gx_app, cookie: str | None) -> SignedInUser | None:
    """The Galaxy user of a browser session cookie, as Galaxy's API resolves it; None when signed out."""
    from galaxy.managers.session import GalaxySessionManager

    if not cookie:
        return None
    session_key = gx_app.security.decode_guid(cookie)
    if not session_key:
        return None
    galaxy_session = GalaxySessionManager(gx_app.model).get_session_from_session_key(session_key)
    user = galaxy_session.user if galaxy_session else None
    if user is None or user.deleted:
        return None
    return SignedInUser(user.id, f"{user.username} ({user.email})", session_key)


def page(title: str, body: str, status: int = 200) -> HTMLResponse:
    document = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
                "<style>body{font-family:sans-serif;max-width:40em;margin:3em auto}dt{font-weight:bold}"
                "button{margin-right:1em;padding:.4em 1.2em}</style></head>"
                f"<body><h1>{html.escape(title)}</h1>{body}</body></html>")
    return HTMLResponse(document, status_code=status, headers=PAGE_HEADERS)


def error_page(description: str, status: int = 400) -> HTMLResponse:
    return page("Sign-in refused", f"<p>{html.escape(description)}</p>", status)


class SignInPages:
    """The consent page (GET shows, POST decides) and the connected-clients page of Galaxy's user."""

    def __init__(self, gx_app, provider, key: bytes, base_url: str, consent_path: str, connections_path: str,
                 issuer: str | None = None):
        self.gx_app = gx_app
        self.issuer = issuer  # RFC 9207's iss on the answer sent back to the client
        self.provider = provider
        self.key = key
        self.base_url = base_url.rstrip("/")
        self.consent_path = consent_path
        self.connections_path = connections_path

    def consent_url(self, payload: dict) -> str:
        return f"{self.base_url}{self.consent_path}?{urlencode({'request': rules.sign(payload, self.key)})}"

    async def _user(self, request) -> SignedInUser | None:
        return await anyio.to_thread.run_sync(signed_in_user, self.gx_app, request.cookies.get("galaxysession"))

    def _login_redirect(self, request) -> RedirectResponse:
        """To Galaxy's login page, which sends the person back here (a same-site path: Galaxy's login
        page follows only those, or the hosts of ``allowed_login_redirect_hosts``; a path inside Galaxy's
        ``galaxy_url_prefix``, to which Galaxy's login page adds the prefix)."""
        path = rules.app_relative(request.url.path, request.scope.get("root_path", ""))
        back = path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"{self.base_url}/login/start?redirect={quote(back, safe='')}", status_code=302,
                                headers={"Cache-Control": "no-store"})

    async def consent(self, request):
        form = await request.form() if request.method == "POST" else request.query_params
        value = form.get("request") or ""
        try:
            pending = rules.unsign(value, self.key)
        except (rules.OAuthRuleError, ValueError) as error:
            return error_page(getattr(error, "description", "The authorization request is malformed."))
        client = await self.provider.get_client(pending["client_id"])
        if client is None:
            return error_page("The client of this request is no longer registered.")
        user = await self._user(request)
        if user is None:
            if request.method == "POST":
                return error_page("Sign in to Galaxy first; nothing was granted.", 403)
            return self._login_redirect(request)
        if request.method == "GET":
            return self._consent_form(value, pending, client, user)
        if not rules.anti_forgery_matches(form.get("csrf"), user.session_key, value, self.key):
            return error_page("The form did not come from this Galaxy's consent page; nothing was granted.", 403)
        redirect_uri, state = pending["redirect_uri"], pending.get("state")
        if form.get("decision") != "allow":
            return RedirectResponse(construct_redirect_uri(redirect_uri, error="access_denied", state=state,
                                                           iss=self.issuer),
                                    status_code=302, headers={"Cache-Control": "no-store"})
        code = await anyio.to_thread.run_sync(self.provider.issue_code, pending, user.user_id)
        return RedirectResponse(construct_redirect_uri(redirect_uri, code=code, state=state, iss=self.issuer),
                                status_code=302, headers={"Cache-Control": "no-store"})

    def _consent_form(self, value, pending, client, user) -> HTMLResponse:
        scopes = "".join(f"<li><code>{html.escape(s)}</code>: {html.escape(_SCOPE_WORDS[s])}</li>" for s in pending["scopes"])
        body = (
            f"<p><b>{html.escape(client.client_name or client.client_id)}</b> asks to use Galaxy as you.</p><dl>"
            f"<dt>Galaxy user</dt><dd>{html.escape(user.label)}</dd>"
            f"<dt>Client id</dt><dd><code>{html.escape(client.client_id)}</code></dd>"
            f"<dt>It will send you back to</dt><dd><code>{html.escape(pending['redirect_uri'])}</code></dd>"
            f"<dt>It asks for</dt><dd><ul>{scopes}</ul></dd></dl>"
            f"<form method='post' action='{html.escape(self.base_url + self.consent_path)}'>"
            f"<input type='hidden' name='request' value='{html.escape(value)}'>"
            f"<input type='hidden' name='csrf' value='{rules.anti_forgery(user.session_key, value, self.key)}'>"
            "<button type='submit' name='decision' value='allow' id='allow'>Allow</button>"
            "<button type='submit' name='decision' value='deny' id='deny'>Deny</button></form>"
            f"<p>You can disconnect it later at <a href='{html.escape(self.base_url + self.connections_path)}'>"
            "connected MCP clients</a>.</p>"
        )
        return page("Connect an MCP client to Galaxy", body)

    async def connections(self, request):
        user = await self._user(request)
        if user is None:
            return self._login_redirect(request) if request.method == "GET" else error_page("Sign in first.", 403)
        if request.method == "POST":
            form = await request.form()
            grant_id = form.get("grant_id") or ""
            if not rules.anti_forgery_matches(form.get("csrf"), user.session_key, grant_id, self.key):
                return error_page("The form did not come from this page; nothing was revoked.", 403)
            await anyio.to_thread.run_sync(lambda: self.provider.store.revoke(grant_id=grant_id, user_id=user.user_id))
        grants = await anyio.to_thread.run_sync(lambda: self.provider.store.grants(user_id=user.user_id))
        return page("Connected MCP clients", self._grant_rows(grants, user))

    def _grant_rows(self, grants: list[dict], user: SignedInUser) -> str:
        if not grants:
            return f"<p>No MCP client is connected to {html.escape(user.label)}.</p>"
        rows = "".join(
            f"<tr><td>{html.escape(g['client_name'] or g['client_id'])}</td><td>{html.escape(g['scopes'])}</td>"
            f"<td><form method='post'><input type='hidden' name='grant_id' value='{html.escape(g['grant_id'])}'>"
            f"<input type='hidden' name='csrf' value='{rules.anti_forgery(user.session_key, g['grant_id'], self.key)}'>"
            f"<button type='submit'>Revoke</button></form></td></tr>"
            for g in grants
        )
        return f"<table><tr><th>Client</th><th>Scopes</th><th></th></tr>{rows}</table>"


_SCOPE_WORDS = {
    rules.READ_SCOPE: "read your histories, datasets, jobs, workflows and pages (tools annotated read-only)",
    rules.WRITE_SCOPE: "also run tools and workflows, create, change and delete your items",
}
