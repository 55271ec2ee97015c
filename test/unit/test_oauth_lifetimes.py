"""The sign-in's lifetimes (settings) and the purge of what can never be used again, on the sign-in's
routes and tables (sqlite file, Starlette's test client; no Galaxy). Real expiry on a running Galaxy:
test/integration/test_oauth.py."""

import time

from sqlalchemy import update

from galaxy_mcp_analysis.core import oauth as rules
from galaxy_mcp_analysis.core.settings import Settings
from galaxy_mcp_analysis.oauth import storage
from test_oauth_server import (
    allowed_code,
    exchange,
    make_server,
    register,
    tables,
    token,
)


def signed_in(server):
    client_id = register(server)
    return client_id, exchange(server, client_id, allowed_code(server, client_id)).json()


def expire(server, table, seconds_ago: float, **where) -> None:
    """Move rows' expiry into the past (what the clock does to them)."""
    conditions = [table.c[name] == value for name, value in where.items()]
    with server.sign_in.store.engine.begin() as connection:
        connection.execute(update(table).where(*conditions).values(expires_at=time.time() - seconds_ago))


def test_the_token_endpoint_and_the_stored_expiry_follow_the_settings(tmp_path):
    settings = Settings(oauth_access_token_seconds=10, oauth_refresh_token_seconds=120, oauth_code_seconds=20,
                        oauth_consent_seconds=90)
    server = make_server(tmp_path, settings)
    client_id = register(server)
    before = time.time()
    code = allowed_code(server, client_id)
    issued = exchange(server, client_id, code).json()
    assert issued["expires_in"] == 10
    with server.sign_in.store.engine.connect() as connection:
        rows = dict(connection.execute(storage.TOKENS.select().with_only_columns(
            storage.TOKENS.c.kind, storage.TOKENS.c.expires_at)).all())
        code_expiry = connection.execute(storage.CODES.select().with_only_columns(storage.CODES.c.expires_at)).scalar()
    assert before + 10 <= rows["access"] <= time.time() + 10
    assert before + 120 <= rows["refresh"] <= time.time() + 120
    assert before + 20 <= code_expiry <= time.time() + 20
    refreshed = token(server, client_id, grant_type="refresh_token", refresh_token=issued["refresh_token"]).json()
    assert refreshed["expires_in"] == 10


def test_an_expired_access_token_is_refused_and_its_refresh_token_still_renews_it(tmp_path):
    server = make_server(tmp_path, Settings(oauth_access_token_seconds=10))
    client_id, issued = signed_in(server)
    expire(server, storage.TOKENS, 1, kind="access")
    assert server.sign_in.provider.access_token(issued["access_token"]) is None
    renewed = token(server, client_id, grant_type="refresh_token", refresh_token=issued["refresh_token"]).json()
    assert server.sign_in.provider.access_token(renewed["access_token"]) is not None


def test_purge_removes_what_can_never_be_used_and_keeps_what_still_can(tmp_path):
    server = make_server(tmp_path)
    store, provider = server.sign_in.store, server.sign_in.provider
    live_client, live = signed_in(server)  # stays usable
    rotated = token(server, live_client, grant_type="refresh_token", refresh_token=live["refresh_token"]).json()
    revoked_client, revoked = signed_in(server)
    revocation = server.post("/mcp-oauth/revoke", data={"client_id": revoked_client, "token": revoked["access_token"]})
    assert revocation.status_code == 200
    _, stale = signed_in(server)  # every token of it expired: a grant nobody can use again
    abandoned_client = register(server)
    allowed_code(server, abandoned_client)  # Allow pressed, the code never exchanged
    expire(server, storage.TOKENS, rules.PURGE_GRACE_SECONDS + 5, kind="access")  # every access token
    expire(server, storage.TOKENS, rules.PURGE_GRACE_SECONDS + 5,
           token_hash=rules.token_hash(stale["refresh_token"]))
    expire(server, storage.CODES, rules.PURGE_GRACE_SECONDS + 5)
    with store.engine.begin() as connection:  # the grants were made more than the grace ago
        connection.execute(update(storage.GRANTS).values(created_at=time.time() - 3600))
    before = tables(server)

    counts = store.purge_expired()

    assert counts == {"codes": 4, "access tokens": 4, "refresh tokens": 2, "expired grants": 2,
                      "revoked grants kept": 1}
    after = tables(server)
    assert after["mcp_oauth_token"] == before["mcp_oauth_token"] - 6 == 2  # the live grant's two refresh tokens
    assert after["mcp_oauth_client"] == before["mcp_oauth_client"]  # registrations are kept
    assert sorted(g["revoked_at"] is not None for g in store.grants(include_revoked=True)) == [False, True]
    # the rotated-away refresh token is kept until it expires: its reuse still revokes the grant
    reuse = token(server, live_client, grant_type="refresh_token", refresh_token=live["refresh_token"])
    assert reuse.json()["error"] == "invalid_grant"
    after_reuse = token(server, live_client, grant_type="refresh_token", refresh_token=rotated["refresh_token"])
    assert after_reuse.json()["error"] == "invalid_grant"
    assert store.purge_expired()["refresh tokens"] == 2  # the grant revoked by the reuse: its tokens go


def test_rows_inside_the_grace_are_kept(tmp_path):
    server = make_server(tmp_path)
    client_id, issued = signed_in(server)
    expire(server, storage.TOKENS, 1, kind="access")  # expired a second ago: a request may still hold it
    assert server.sign_in.store.purge_expired()["access tokens"] == 0
    assert tables(server)["mcp_oauth_token"] == 2
