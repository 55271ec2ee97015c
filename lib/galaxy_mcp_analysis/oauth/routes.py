"""The sign-in's HTTP surface on Galaxy's app, built from the MCP SDK's OAuth handlers.

Metadata (RFC 8414 at ``/.well-known/oauth-authorization-server``, RFC 9728 at
``/.well-known/oauth-protected-resource/api/mcp``; the issuer is Galaxy's public URL,
``galaxy_infrastructure_url``, so it is right behind a proxy; under ``galaxy_url_prefix``
``/galaxy`` both are served at the paths RFC 8414 §3 and RFC 9728 §3.1 give for an issuer and
resource with a path, ``/.well-known/oauth-authorization-server/galaxy`` and
``/.well-known/oauth-protected-resource/galaxy/api/mcp``, inside Galaxy's prefix, where the proxy
forwards the host's root ``/.well-known/...``: doc/admin-guide.md), and the endpoints under
``/mcp-oauth/``: authorize, token, register, revoke (the SDK's handlers on our provider), consent
and connections (oauth.pages). Checks come before the SDK's handlers, which lack them: the
authorization request must name ``code_challenge_method=S256`` (the SDK takes a missing one as
S256; RFC 7636 says missing means plain), a ``client_id`` that is a metadata document's URL is
fetched first (oauth.client_documents), so a refused one is told why, and a registration is held
to core.oauth's rules (size, shape, redirects by ``application_type``, public clients) before the
SDK parses it. Every authorization response sent back to a client, Allow, Deny or the SDK's error
redirects, carries ``iss`` (RFC 9207), the issuer exactly as the metadata gives it.
"""

import hashlib
import json
from urllib.parse import (
    urlencode,
    urlsplit,
)

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.revoke import RevocationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import ClientAuthenticator
from mcp.server.auth.routes import (
    build_metadata,
    create_protected_resource_routes,
    cors_middleware,
)
from mcp.server.auth.settings import (
    ClientRegistrationOptions,
    RevocationOptions,
)
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import JSONResponse
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    RequestBodyLimitMiddleware,
)
from starlette.routing import (
    request_response,
    Route,
)

from mcp.server.auth.provider import construct_redirect_uri

from galaxy_mcp_analysis.core import oauth as rules
from galaxy_mcp_analysis.core.client_documents import is_document_client_id
from galaxy_mcp_analysis.core.settings import Settings
from galaxy_mcp_analysis.oauth.pages import SignInPages
from galaxy_mcp_analysis.oauth.provider import GalaxyAuthorizationProvider
from galaxy_mcp_analysis.oauth.storage import SignInStore

PREFIX = "/mcp-oauth"
PATHS = {name: f"{PREFIX}/{name}" for name in ("authorize", "token", "register", "revoke", "consent", "connections")}


def _no_store_error(error: str, description: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": description}, status_code=status,
                        headers={"Cache-Control": "no-store"})


def pkce_first(handler):
    """Refuse an authorization request whose code_challenge_method is missing or not S256 (invalid_request)."""

    async def authorize(request: Request):
        params = await request.form() if request.method == "POST" else request.query_params
        try:
            rules.check_challenge(params.get("code_challenge_method"), params.get("code_challenge"))
        except rules.OAuthRuleError as error:
            return _no_store_error(error.error, error.description)
        return await handler(request)

    return authorize


def document_clients_first(handler, provider: GalaxyAuthorizationProvider):
    """An authorization request whose client_id is a metadata document's URL: the document is fetched (or
    taken from the cache) before the SDK's handler looks the client up; a refused one is answered here,
    with why, and never redirected (its redirect URIs are not known to be the client's)."""

    async def authorize(request: Request):
        params = await request.form() if request.method == "POST" else request.query_params
        client_id = params.get("client_id")
        if is_document_client_id(client_id):
            try:
                await provider.documents.client(client_id)
            except rules.OAuthRuleError as error:
                return _no_store_error("invalid_request", error.description)
        return await handler(request)

    return authorize


def issuer_on_redirects(handler, issuer: str, consent_url: str):
    """RFC 9207: the SDK's error redirects to the client carry ``iss`` too (the consent page adds it to its own)."""

    async def authorize(request: Request):
        response = await handler(request)
        location = response.headers.get("location")
        if location and not location.startswith(consent_url):
            response.headers["location"] = construct_redirect_uri(location, iss=issuer)
        return response

    return authorize


def registration_rules_first(handler):
    """Hold a registration to core.oauth.check_registration, then let the SDK's handler register it."""

    async def register(request: Request):
        body = await request.body()
        try:
            metadata = rules.check_registration(body)
        except rules.OAuthRuleError as error:
            return _no_store_error(error.error, error.description)
        return await handler(with_body(request, json.dumps(metadata).encode()))

    return register


def public_revocation(handler):
    """RFC 7009 lets a public client send only client_id and token; the SDK's model also wants client_secret."""

    async def revoke(request: Request):
        form = await request.form()
        if "client_secret" in form:
            return await handler(request)
        return await handler(with_body(request, urlencode([*form.multi_items(), ("client_secret", "")]).encode()))

    return revoke


def with_body(request: Request, body: bytes) -> Request:
    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    return Request(request.scope, receive)


def _body_limited(app):
    return RequestBodyLimitMiddleware(app, DEFAULT_MAX_REQUEST_BODY_SIZE)


def signing_key(id_secret: str) -> bytes:
    """The consent step's HMAC key, derived from Galaxy's id_secret (same in every worker, kept across restarts)."""
    return hashlib.sha256(f"galaxy-mcp-analysis oauth consent|{id_secret}".encode()).digest()


class SignIn:
    """Everything sign-in adds to one Galaxy: its store, provider, pages and routes."""

    def __init__(self, gx_app, engine, base_url: str, mcp_path: str, settings: Settings | None = None):
        """``base_url``: Galaxy's public URL with its prefix (core.oauth.public_base); ``settings``: the lifetimes."""
        self.base_url = base_url.rstrip("/")
        #: The issuer as the metadata serializes it (a root URL gains its "/"): RFC 9207's ``iss`` is compared to it.
        self.issuer = str(AnyHttpUrl(self.base_url))
        self.resource = self.base_url + mcp_path
        self.store = SignInStore(engine)
        key = signing_key(gx_app.config.id_secret)
        self.pages = SignInPages(gx_app, None, key, self.base_url, PATHS["consent"], PATHS["connections"],
                                 self.issuer)
        self.provider = GalaxyAuthorizationProvider(self.store, self.resource, self.pages.consent_url,
                                                    settings or Settings())
        self.pages.provider = self.provider

    @property
    def resource_metadata_url(self) -> str:
        return rules.well_known_url(self.resource, "oauth-protected-resource")

    def server_metadata_paths(self) -> list[str]:
        """RFC 8414 §3's path for this issuer, and (under a prefix) the issuer-relative one some clients try."""
        paths = [urlsplit(rules.well_known_url(self.base_url, "oauth-authorization-server")).path]
        return paths + [path for path in ("/.well-known/oauth-authorization-server",) if path not in paths]

    def metadata(self):
        metadata = build_metadata(
            AnyHttpUrl(self.base_url), None,
            ClientRegistrationOptions(enabled=True, valid_scopes=list(rules.SCOPES), default_scopes=list(rules.SCOPES)),
            RevocationOptions(enabled=True))
        url = self.base_url
        return metadata.model_copy(update={
            "authorization_endpoint": AnyHttpUrl(url + PATHS["authorize"]),
            "token_endpoint": AnyHttpUrl(url + PATHS["token"]),
            "registration_endpoint": AnyHttpUrl(url + PATHS["register"]),
            "revocation_endpoint": AnyHttpUrl(url + PATHS["revoke"]),
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": True,
        })

    def routes(self) -> list[Route]:
        provider = self.provider
        authenticator = ClientAuthenticator(provider)
        registration = RegistrationHandler(provider, options=ClientRegistrationOptions(
            enabled=True, valid_scopes=list(rules.SCOPES), default_scopes=list(rules.SCOPES)))

        def client_endpoint(handle):
            return _body_limited(cors_middleware(handle, ["POST", "OPTIONS"]))

        server_metadata = cors_middleware(MetadataHandler(self.metadata()).handle, ["GET", "OPTIONS"])
        return [
            *(Route(path, endpoint=server_metadata, methods=["GET", "OPTIONS"])
              for path in self.server_metadata_paths()),
            *create_protected_resource_routes(AnyHttpUrl(self.resource), [AnyHttpUrl(self.base_url)],
                                              scopes_supported=list(rules.SCOPES), resource_name="Galaxy MCP"),
            Route(PATHS["authorize"], endpoint=_body_limited(request_response(pkce_first(document_clients_first(
                issuer_on_redirects(AuthorizationHandler(provider).handle, self.issuer,
                                    self.base_url + PATHS["consent"]), provider)))), methods=["GET", "POST"]),
            Route(PATHS["token"], endpoint=client_endpoint(TokenHandler(provider, authenticator).handle),
                  methods=["POST", "OPTIONS"]),
            Route(PATHS["register"], endpoint=client_endpoint(registration_rules_first(registration.handle)),
                  methods=["POST", "OPTIONS"]),
            Route(PATHS["revoke"], endpoint=client_endpoint(public_revocation(RevocationHandler(provider, authenticator).handle)),
                  methods=["POST", "OPTIONS"]),
            Route(PATHS["consent"], endpoint=self.pages.consent, methods=["GET", "POST"]),
            Route(PATHS["connections"], endpoint=self.pages.connections, methods=["GET", "POST"]),
        ]
