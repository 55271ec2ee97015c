"""The patch that switches on OAuth 2.1 sign-in for /api/mcp (off unless the admin asks).

When ``GALAXY_MCP_ANALYSIS_OAUTH=true`` (or galaxy.yml ``mcp_analysis_oauth: true``): the sign-in's
tables are created in Galaxy's database, its routes go in front of Galaxy's (oauth.routes), the MCP
app gets the bearer gate (oauth.caller) and Galaxy's FastMCP server the scope check (oauth.scopes),
and ``UserManager.by_api_key`` accepts the access token the gate verified, during that request only.
Off, ``include_mcp`` runs as before and nothing else is touched.
"""

import functools
import inspect

from galaxy_mcp_analysis.core.scalars import boolean_word
from galaxy_mcp_analysis.core.settings import Settings

OAUTH_OPTION = "mcp_analysis_oauth"
_MARK = "__galaxy_mcp_analysis_oauth__"


def oauth_enabled(settings: Settings, gx_app) -> bool:
    if settings.oauth:
        return True
    value = (getattr(gx_app.config, "config_dict", None) or {}).get(OAUTH_OPTION)
    return boolean_word(value) is True


def check_oauth() -> str | None:
    from galaxy.managers.session import GalaxySessionManager
    from galaxy.managers.users import UserManager
    from galaxy.webapps.galaxy import fast_app
    from mcp.server.auth import provider

    from galaxy_mcp_analysis.activation.transport import check_mcp_routes_first

    if not callable(getattr(GalaxySessionManager, "get_session_from_session_key", None)):
        return "galaxy.managers.session.GalaxySessionManager.get_session_from_session_key is gone"
    if "sa_session" not in inspect.signature(inspect.unwrap(UserManager.by_api_key)).parameters:
        return "UserManager.by_api_key(api_key, sa_session) changed its signature"
    if not hasattr(provider, "OAuthAuthorizationServerProvider"):
        return "mcp.server.auth.provider.OAuthAuthorizationServerProvider is gone"
    if not callable(getattr(fast_app, "include_mcp", None)):
        return "galaxy.webapps.galaxy.fast_app.include_mcp is gone"
    return check_mcp_routes_first()


def apply_oauth(settings: Settings) -> None:
    from galaxy_mcp_analysis.activation.transport import after_include_mcp

    def sign_in_when_switched_on(app, gx_app, mcp_app):
        if mcp_app is not None and oauth_enabled(settings, gx_app):
            install_sign_in(app, gx_app, mcp_app, sign_in_settings(settings, gx_app))

    after_include_mcp(sign_in_when_switched_on, mark=_MARK)


def sign_in_settings(settings: Settings, gx_app) -> Settings:
    """The settings with galaxy.yml's ``mcp_analysis_oauth_*_seconds``; a bad value stops start-up, naming it."""
    from galaxy_mcp_analysis.activation.registry import PatchSetRefused
    from galaxy_mcp_analysis.core.settings import SettingsError

    try:
        return settings.with_galaxy_yml(getattr(gx_app.config, "config_dict", None) or {})
    except SettingsError as error:
        raise PatchSetRefused(f"galaxy-mcp-analysis refuses to start Galaxy: {error}") from None


def install_sign_in(app, gx_app, mcp_app, settings: Settings) -> None:
    from galaxy_mcp_analysis import tools
    from galaxy_mcp_analysis.activation.registry import announce
    from galaxy_mcp_analysis.core.oauth import public_base
    from galaxy_mcp_analysis.mcp.stack import place
    from galaxy_mcp_analysis.oauth.caller import BearerGate
    from galaxy_mcp_analysis.oauth.routes import SignIn
    from galaxy_mcp_analysis.oauth.scopes import TokenScopes

    base_url = public_base(gx_app.config.galaxy_infrastructure_url, gx_app.config.galaxy_url_prefix)
    sign_in = SignIn(gx_app, gx_app.model.engine, base_url, gx_app.config.mcp_server_path.rstrip("/") or "/", settings)
    sign_in.store.create_tables()
    # Start-up purge: a server that issues few tokens (so rarely reaches the token endpoint's purge) starts clean.
    sign_in.store.purge_expired()
    app.router.routes[:0] = sign_in.routes()
    mcp_app.add_middleware(BearerGate, provider=sign_in.provider, resource_metadata_url=sign_in.resource_metadata_url)
    place(mcp_app.state.mcp_server, TokenScopes(tools.TOOL_FACTS))
    _accept_verified_tokens()
    announce(f"galaxy-mcp-analysis: OAuth sign-in for {sign_in.resource} (issuer {sign_in.base_url}; access tokens "
             f"{settings.oauth_access_token_seconds} s, refresh tokens {settings.oauth_refresh_token_seconds} s)")


def _accept_verified_tokens() -> None:
    """``by_api_key`` returns the user of the access token this request's gate verified; other keys as before.
    Our tools, the policy and the audit trail learn the token's user in the one caller (``mcp.caller``); this
    is for Galaxy's 37 stock tools, which look their ``api_key`` up themselves."""
    from galaxy.managers.users import UserManager

    from galaxy_mcp_analysis.oauth.caller import user_of_bearer

    original = UserManager.by_api_key
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def by_api_key(self, api_key: str, sa_session=None):
        user = user_of_bearer(sa_session or self.app.model.session, self.app.model.User, api_key)
        return original(self, api_key, sa_session) if user is None else user

    setattr(by_api_key, _MARK, True)
    UserManager.by_api_key = by_api_key
