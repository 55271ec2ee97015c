"""Test helpers: a launched Galaxy, a sync MCP client, users, and a Galaxy-driver mixin.

``LaunchedGalaxy`` runs the same launcher as ``make serve`` in its own process
group and stops it by that group. ``McpClient`` drives the official ``mcp`` SDK
client over streamable HTTP from synchronous tests. ``McpAnalysisIntegrationMixin``
is for test classes built on Galaxy's own ``IntegrationTestCase``.
"""

import asyncio
import concurrent.futures
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import (
    AsyncExitStack,
    contextmanager,
)
from pathlib import Path
from typing import Any

STARTUP_TIMEOUT_SECONDS = 300
STOP_TIMEOUT_SECONDS = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LaunchedGalaxy:
    """``python -m galaxy_mcp_analysis.serve`` in a process group of its own."""

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        patches: bool = True,
        env: dict | None = None,
        database_url: str | None = None,
    ):
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.patches = patches
        self.database_url = database_url  # None: the launcher's sqlite file in data_dir
        self.env = {**os.environ, **(env or {})}
        self.log_path = self.data_dir.parent / f"{self.data_dir.name}.log"
        self.process: subprocess.Popen | None = None
        self.info: dict[str, str] = {}
        self.leftover_processes = False

    def start(self) -> "LaunchedGalaxy":
        command = [sys.executable, "-m", "galaxy_mcp_analysis.serve", "--data-dir", str(self.data_dir)]
        command += ["--port", str(self.port)] + ([] if self.patches else ["--no-patches"])
        command += ["--database-url", self.database_url] if self.database_url else []
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        # A killed launcher leaves its server.json behind; it must not be read as this start's.
        (self.data_dir / "server.json").unlink(missing_ok=True)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
            )
        server_json = self.data_dir / "server.json"
        deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
        while not server_json.exists():
            if self.process.poll() is not None:
                raise RuntimeError(f"Galaxy exited with {self.process.returncode}:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"Galaxy did not start in {STARTUP_TIMEOUT_SECONDS}s:\n{self.log_tail()}")
            time.sleep(0.25)
        self.info = json.loads(server_json.read_text())
        return self

    def stop(self) -> int | None:
        """SIGTERM the launcher's process group, then SIGKILL whatever is left of it.

        ``leftover_processes`` records whether anything of the group outlived a
        launcher that exited by itself (job or Celery children, for instance).
        """
        if self.process is None:
            return None
        group = self.process.pid  # start_new_session: the group id is the launcher's pid
        if self.process.poll() is None:
            os.killpg(group, signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        self.leftover_processes = _group_alive(group)
        if self.leftover_processes:
            os.killpg(group, signal.SIGKILL)
        self.process.wait()
        return self.process.returncode

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    @property
    def galaxy_url(self) -> str:
        return self.info["galaxy_url"]

    @property
    def mcp_url(self) -> str:
        return self.info["mcp_url"]

    @property
    def api_key(self) -> str:
        return self.info["api_key"]

    @property
    def admin_api_key(self) -> str:
        return self.info["admin_api_key"]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


@contextmanager
def serve_directory(root: Path):
    """Serve ``root`` over HTTP on loopback, so Galaxy can fetch test files by URL; yields the base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, name="test-file-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def rest(
    galaxy_url: str, path: str, api_key: str, payload: Any = None, method: str | None = None, timeout: float = 60
) -> Any:
    """A Galaxy REST call, for test set-up and for comparing MCP against REST (benchmarks raise ``timeout``)."""
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(
        f"{galaxy_url}{path}",
        data=data,
        method=method,
        headers={"x-api-key": api_key, "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = response.read()
    return json.loads(body) if body else None


def create_user(galaxy_url: str, admin_api_key: str, username: str) -> str:
    """Create a regular user through Galaxy's REST API; returns its API key."""
    user = rest(
        galaxy_url,
        "/api/users",
        admin_api_key,
        {"username": username, "email": f"{username}@example.org", "password": "password-" + username},
    )
    return rest(galaxy_url, f"/api/users/{user['id']}/api_key", admin_api_key, {})


class McpToolError(AssertionError):
    """A tool call that was expected to succeed returned an MCP tool error."""


class McpClient:
    """Synchronous facade over the official mcp SDK client (streamable HTTP).

    The SDK is async; tests are not. One event loop runs in a daemon thread and
    keeps one initialized session for the client's lifetime.
    """

    def __init__(self, url: str, headers: dict[str, str] | None = None, request_log: list | None = None):
        """``request_log``, when given, receives every HTTP request this client sends, as (method, url)."""
        self.url = url
        self.headers = headers
        self.request_log = request_log
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-client", daemon=True)
        self._thread.start()
        self._closing = asyncio.Event()
        opened: concurrent.futures.Future = concurrent.futures.Future()
        # anyio requires the session's contexts to be exited by the task that entered
        # them, so one long-lived task owns the session; calls run as their own tasks.
        self._owner = asyncio.run_coroutine_threadsafe(self._own_session(opened), self._loop)
        self._session = opened.result(120)

    def _run(self, coroutine, timeout: float = 300):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    async def _own_session(self, opened: concurrent.futures.Future) -> None:
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        try:
            async with AsyncExitStack() as stack:
                hooks = {"request": [self._log_request]} if self.request_log is not None else None
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=self.headers, timeout=300, event_hooks=hooks)
                )
                streams = await stack.enter_async_context(streamable_http_client(self.url, http_client=http))
                session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
                await session.initialize()
                opened.set_result(session)
                await self._closing.wait()
        except BaseException as e:
            if not opened.done():
                opened.set_exception(e)
            raise

    async def _log_request(self, request) -> None:
        self.request_log.append((request.method, str(request.url)))

    def list_tools(self):
        return self._run(self._session.list_tools()).tools

    def call(self, tool: str, arguments: dict[str, Any] | None = None, timeout: float = 300):
        """One tools/call; past ``timeout`` seconds it raises TimeoutError (a hung call fails its test)."""
        result = self._run(self._session.call_tool(tool, arguments or {}), timeout)
        if result.is_error:
            ERROR_TEXTS.append((tool, error_text(result), dict(arguments or {})))
        return result

    def call_ok(self, tool: str, /, **arguments) -> dict[str, Any]:
        result = self.call(tool, arguments)
        if result.is_error:
            raise McpToolError(f"{tool} failed: {error_text(result)}")
        return result.structured_content

    def call_error(self, tool: str, /, **arguments) -> str:
        result = self.call(tool, arguments)
        if not result.is_error:
            raise AssertionError(f"{tool} succeeded but an error was expected: {result.structured_content}")
        return error_text(result)

    def close(self) -> None:
        if not self._owner.done():
            self._loop.call_soon_threadsafe(self._closing.set)
            try:
                self._owner.result(30)
            except Exception:
                pass  # the server may already be gone; the loop still stops below
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


#: Every tool error text any McpClient of this process received, as (tool, text, arguments): the
#: suite checks that none shows a traceback, a server path or SQL beyond what the call itself
#: sent (a path-like argument echoed back is the caller's own text; test/conftest.py).
ERROR_TEXTS: list[tuple[str, str, dict]] = []


def error_text(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


class McpAnalysisIntegrationMixin:
    """Mix into a ``galaxy_test.driver.integration_util.IntegrationTestCase`` subclass.

    The class's in-process Galaxy then serves /api/mcp with the patch set on, and
    ``self.mcp_client()`` talks to it as the test's default user. Place the mixin
    *before* IntegrationTestCase in the bases. Paths the driver would take from a
    Galaxy source checkout are pointed at files written here, so the driver works
    with Galaxy installed from PyPI.
    """

    _mcp_config_dir: str

    @classmethod
    def setUpClass(cls):
        from galaxy_mcp_analysis import galaxy_config
        from galaxy_mcp_analysis.registry import activate

        cls._mcp_config_dir = tempfile.mkdtemp(prefix="mcp-analysis-it-")
        tool_conf = Path(cls._mcp_config_dir, "tool_conf.xml")
        tool_conf.write_text(galaxy_config.toolbox_xml())
        Path(cls._mcp_config_dir, "tool_data_table_conf.xml").write_text("<tables></tables>\n")
        cls.default_tool_conf = str(tool_conf)
        activate()  # before the driver builds Galaxy in this process
        super().setUpClass()

    @classmethod
    def handle_galaxy_config_kwds(cls, config):
        super().handle_galaxy_config_kwds(config)
        config["enable_mcp_server"] = True
        config["mcp_server_path"] = "/api/mcp"
        config["tool_data_table_config_path"] = str(Path(cls._mcp_config_dir, "tool_data_table_conf.xml"))
        config["data_manager_config_file"] = None
        config["involucro_auto_init"] = False  # it would download a binary: no network here

    def setUp(self):
        from galaxy_test.base.populators import DatasetPopulator

        super().setUp()
        self.dataset_populator = DatasetPopulator(self.galaxy_interactor)

    def mcp_client(self, **headers) -> McpClient:
        return McpClient(self.url.rstrip("/") + "/api/mcp", headers=headers or None)

    @property
    def mcp_api_key(self) -> str:
        return self.galaxy_interactor.api_key
