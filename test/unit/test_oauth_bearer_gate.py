"""The bearer gate's read of a token on a sqlite file (oauth.storage.quick_reads): on the event loop's thread,
on a connection kept open, yet a revocation made on another connection holds at the next read; and while a
writer holds the file past the quick read's wait, the gate reads in a worker thread instead and still answers."""

import sqlite3
import threading
import time

import pytest
from sqlalchemy.exc import OperationalError
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from galaxy_mcp_analysis.oauth.caller import (
    BearerGate,
    current_caller,
)
from test_oauth_server import (
    allowed_code,
    exchange,
    register,
    server,  # noqa: F401 (the fixture)
)


def issued_access_token(server) -> str:
    client_id = register(server)
    return exchange(server, client_id, allowed_code(server, client_id)).json()["access_token"]


def gated(server) -> TestClient:
    async def whoami(request):
        return PlainTextResponse(str(current_caller().user_id))

    app = BearerGate(Starlette(routes=[Route("/api/mcp", whoami, methods=["POST"])]),
                     provider=server.sign_in.provider, resource_metadata_url="http://127.0.0.1:8080/rm")
    return TestClient(app, base_url="http://127.0.0.1:8080")


def test_a_revocation_holds_at_the_next_quick_read(server):
    token = issued_access_token(server)
    provider, quick = server.sign_in.provider, server.sign_in.store.quick_engine
    assert quick is not None and quick is not server.sign_in.store.engine
    assert provider.verified(token, quick).user_id == 7
    gate = gated(server)
    assert gate.post("/api/mcp", headers={"authorization": f"Bearer {token}"}).text == "7"
    client_id = provider.verified(token, quick).client_id
    assert server.post("/mcp-oauth/revoke", data={"client_id": client_id, "token": token}).status_code == 200
    assert provider.verified(token, quick) is None
    refused = gate.post("/api/mcp", headers={"authorization": f"Bearer {token}"})
    assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]


def test_a_writer_holding_the_file_sends_the_read_to_a_worker_thread(server):
    token = issued_access_token(server)
    gate = gated(server)
    writer = sqlite3.connect(server.sign_in.store.engine.url.database, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(OperationalError, match="locked"):
            server.sign_in.provider.verified(token, server.sign_in.store.quick_engine)
        threading.Timer(0.3, writer.rollback).start()  # the writer finishes while the gate waits off the loop
        started = time.monotonic()
        answer = gate.post("/api/mcp", headers={"authorization": f"Bearer {token}"})
        assert answer.status_code == 200 and answer.text == "7"
        assert time.monotonic() - started >= 0.25  # it did wait for the writer, in the worker thread
    finally:
        writer.close()
