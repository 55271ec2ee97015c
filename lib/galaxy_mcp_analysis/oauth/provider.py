"""Galaxy as the authorization server: the MCP SDK's provider protocol on the patch set's tables.

The SDK's handlers (mcp.server.auth.handlers) parse the requests, check a code's client, expiry,
redirect URI and PKCE verifier, and answer with RFC 6749 errors; this provider adds what the
issue asks beyond them: the resource indicator (a token is good for this MCP URL only), a code
used twice revokes what it issued, refresh tokens rotate and a reused one revokes its grant,
revoking any token revokes its grant, and everything is stored hashed (oauth.storage).
"""

import logging
import time

import anyio
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    TokenError,
)
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthToken,
)

from galaxy_mcp_analysis.core import oauth as rules
from galaxy_mcp_analysis.core.client_documents import is_document_client_id
from galaxy_mcp_analysis.core.settings import Settings
from galaxy_mcp_analysis.oauth.client_documents import ClientDocuments
from galaxy_mcp_analysis.oauth.storage import (
    CODES,
    GrantedToken,
    SignInStore,
    TOKENS,
)

log = logging.getLogger(__name__)


class GrantCode(AuthorizationCode):
    grant_id: str


class GrantRefreshToken(RefreshToken):
    grant_id: str


class GrantAccessToken(AccessToken):
    grant_id: str
    client_name: str | None = None
    user_id: int


def same_resource(given: str | None, resource: str) -> bool:
    return given is None or given.rstrip("/") == resource.rstrip("/")


class GalaxyAuthorizationProvider:
    """``OAuthAuthorizationServerProvider`` for the SDK's handlers; ``consent_url(payload)`` is where
    /authorize sends the browser (the consent page, which signs the person in through Galaxy first)."""

    def __init__(self, store: SignInStore, resource: str, consent_url, settings: Settings):
        self.store = store
        self.resource = resource
        self.consent_url = consent_url
        self.settings = settings  # the lifetimes: oauth_access_token_seconds ... oauth_consent_seconds
        self.documents = ClientDocuments(store, settings.oauth_development)  # clients known by a document's URL
        self._purged_at = time.monotonic()  # install_sign_in purges at start-up

    async def _run(self, function, *args, **kwargs):
        return await anyio.to_thread.run_sync(lambda: function(*args, **kwargs))

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        """A registered client, or one whose ``client_id`` is its metadata document's URL (fetched; None when
        refused: ``document_clients_first`` in oauth.routes has told the authorization request why)."""
        if is_document_client_id(client_id):
            try:
                return await self.documents.client(client_id)
            except rules.OAuthRuleError as refusal:
                log.info("galaxy-mcp-analysis: %s", refusal.description)
                return None
        info = await self._run(self.store.client_info, client_id)
        return None if info is None else OAuthClientInformationFull.model_validate_json(info)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        await self._run(self.store.add_client, client_info.client_id, client_info.client_name,
                        client_info.model_dump_json(exclude_none=True))

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if not same_resource(params.resource, self.resource):
            raise AuthorizeError("invalid_target", f"This server issues tokens only for the resource {self.resource}.")
        try:
            rules.check_challenge("S256", params.code_challenge)
            scopes = rules.check_scopes(" ".join(params.scopes or []) or client.scope or " ".join(rules.SCOPES))
        except rules.OAuthRuleError as error:
            raise AuthorizeError(error.error, error.description) from None
        return self.consent_url({
            "client_id": client.client_id,
            "redirect_uri": str(params.redirect_uri),
            "redirect_explicit": params.redirect_uri_provided_explicitly,
            "scopes": scopes,
            "code_challenge": params.code_challenge,
            "state": params.state,
            "exp": time.time() + self.settings.oauth_consent_seconds,
        })

    def issue_code(self, request: dict, user_id: int) -> str:
        """After Allow: a grant and its code (stored hashed); the code goes back to the client once."""
        code = rules.new_token(rules.CODE_PREFIX)
        self.store.add_grant_with_code(
            client_id=request["client_id"], user_id=user_id, scopes=request["scopes"], resource=self.resource,
            code_hash=rules.token_hash(code), code_challenge=request["code_challenge"],
            redirect_uri=request["redirect_uri"], redirect_explicit=request["redirect_explicit"],
            expires_at=time.time() + self.settings.oauth_code_seconds)
        return code

    async def load_authorization_code(self, client, authorization_code: str) -> GrantCode | None:
        row = await self._run(self.store.code, rules.token_hash(authorization_code))
        if row is None or row.client_id != client.client_id:
            return None  # unknown, or another client's code: invalid_grant
        return GrantCode(code=authorization_code, scopes=row.scopes, expires_at=row.expires_at,
                         client_id=row.client_id, code_challenge=row.code_challenge, redirect_uri=row.redirect_uri,
                         redirect_uri_provided_explicitly=row.redirect_explicit, resource=row.resource,
                         subject=str(row.user_id), grant_id=row.grant_id)

    async def exchange_authorization_code(self, client, authorization_code: GrantCode) -> OAuthToken:
        first_use = await self._run(self.store.use_once, CODES, rules.token_hash(authorization_code.code))
        if not first_use:
            await self._run(self.store.revoke, grant_id=authorization_code.grant_id)
            raise TokenError("invalid_grant", "The authorization code was already used; what it issued is revoked.")
        return await self._issue(authorization_code.grant_id, authorization_code.scopes)

    async def load_refresh_token(self, client, refresh_token: str) -> GrantRefreshToken | None:
        if not refresh_token.startswith(rules.REFRESH_PREFIX):
            return None
        row = await self._run(self.store.token, rules.token_hash(refresh_token), "refresh")
        if row is None or row.client_id != client.client_id:
            return None
        verdict = rules.refresh_verdict(used=row.used, revoked=False, grant_revoked=row.grant_revoked,
                                        expires_at=row.expires_at)
        if verdict.revoke_grant:
            await self._run(self.store.revoke, grant_id=row.grant_id)
        if not verdict.rotate:
            return None
        return GrantRefreshToken(token=refresh_token, client_id=row.client_id, scopes=row.scopes,
                                 expires_at=int(row.expires_at), resource=row.resource, subject=str(row.user_id),
                                 grant_id=row.grant_id)

    async def exchange_refresh_token(self, client, refresh_token: GrantRefreshToken, scopes: list[str]) -> OAuthToken:
        if not await self._run(self.store.use_once, TOKENS, rules.token_hash(refresh_token.token)):
            await self._run(self.store.revoke, grant_id=refresh_token.grant_id)
            raise TokenError("invalid_grant", "The refresh token was already used; the grant is revoked.")
        return await self._issue(refresh_token.grant_id, scopes)

    async def _issue(self, grant_id: str, scopes: list[str]) -> OAuthToken:
        access, refresh = rules.new_token(rules.ACCESS_PREFIX), rules.new_token(rules.REFRESH_PREFIX)
        now, lifetime = time.time(), self.settings.oauth_access_token_seconds
        await self._run(self.store.add_tokens, grant_id, scopes, [
            (rules.token_hash(access), "access", now + lifetime),
            (rules.token_hash(refresh), "refresh", now + self.settings.oauth_refresh_token_seconds),
        ])
        await self._purge_now_and_then()
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=lifetime,
                          scope=" ".join(scopes), refresh_token=refresh)

    async def _purge_now_and_then(self) -> None:
        """Expired rows go at most once per PURGE_EVERY_SECONDS per process, on the token endpoint: the one
        place rows are added at every use (two per exchange or refresh), so they cannot pile up between
        purges, and a tool call (the bearer gate) never pays for one. A purge is four DELETEs in one transaction."""
        if time.monotonic() - self._purged_at < rules.PURGE_EVERY_SECONDS:
            return
        self._purged_at = time.monotonic()
        try:
            await self._run(self.store.purge_expired)
        except Exception:  # the tokens are issued; a failed purge (a locked database) waits for the next turn
            log.warning("galaxy-mcp-analysis: purging expired OAuth rows failed", exc_info=True)

    def verified(self, token: str, engine=None) -> GrantedToken | None:
        """The row of the live access token ``token`` names, for this resource (one joined SELECT, on ``engine``
        if given); None if unknown, expired or revoked. The bearer gate's check, once per request: no model built."""
        if not token.startswith(rules.ACCESS_PREFIX):
            return None
        row = self.store.token(rules.token_hash(token), "access", engine)
        if row is None or row.grant_revoked or rules.expired(row.expires_at):
            return None
        return row if same_resource(row.resource, self.resource) else None

    def access_token(self, token: str) -> GrantAccessToken | None:
        """``verified`` as the SDK's model (its revocation handler asks)."""
        row = self.verified(token)
        if row is None:
            return None
        return GrantAccessToken(token=token, client_id=row.client_id, scopes=row.scopes,
                                expires_at=int(row.expires_at), resource=row.resource, subject=str(row.user_id),
                                grant_id=row.grant_id, client_name=row.client_name, user_id=row.user_id)

    async def load_access_token(self, token: str) -> GrantAccessToken | None:
        return await self._run(self.access_token, token)

    async def revoke_token(self, token) -> None:
        await self._run(self.store.revoke, grant_id=token.grant_id)
