"""The bench's Galaxy with timers: ``make serve``'s launcher, instrumented, for the server-side profile.

    python bench/profiled_server.py --data-dir DIR --port N [--no-patches]

Nothing here is in the product: this script patches timers into the launched process
only, then runs the launcher ``make serve`` runs. Every HTTP request is split into
exclusive (non-overlapping) parts:

- ``routing``: Galaxy's router, from its entry to the matched route's handler;
- ``auth``: the API key resolved to a user (``UserManager.by_api_key``, its SQL included);
- ``sql``: every other SQL statement (SQLAlchemy cursor execute), plus closing the request's session;
- ``body``: the tool function or REST endpoint, less the above and the serialization below;
- ``serialize``: result to JSON (FastMCP's result conversion and text block, the shaped text,
  the JSON-RPC response; FastAPI's response model and JSON rendering);
- ``transport``: everything else between the request's first byte and its last one (HTTP
  parsing, ASGI middleware, the MCP session manager, JSON-RPC parsing and dispatch, FastMCP's
  middleware chain, threads).

Profiled calls must be made one at a time (one global record). ``GET /bench-profile/last``
returns the record of the previous request; ``/bench-profile/on`` and ``/off`` switch the
timers (off at start: a switched-off timer costs a context-variable read, well under 1 µs).

With ``BENCH_PROFILE_DETAIL=1`` in its environment (for finding what to fix, not for timing: cProfile
slows every call), each record also lists its SQL statements with the Galaxy or patch-set line that
ran each one, and cProfile runs in every thread working on a profiled request;
``GET /bench-profile/cprofile`` returns the stats accumulated since the last such GET, as text
(``BENCH_PROFILE_ONLY=<regex>``: its cumulative list only for the functions whose path matches).
"""

import contextvars
import functools
import io
import json
import os
import sys
import threading
import time

#: True in the request's task and everything it starts (worker threads copy it); Galaxy's own
#: background threads (job handlers, Celery) never count.
IN_REQUEST = contextvars.ContextVar("bench_in_request", default=False)

PARTS = ("routing", "auth", "sql", "body", "serialize", "transport")


class Profile:
    """Exclusive time per part of the request in flight (one request at a time)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.stack: list[list] = []  # [part, start, child seconds]
        self.current: dict[str, float] = {}
        self.last: dict = {}
        self.enabled = False

    def begin_request(self):
        with self.lock:
            self.stack = [["transport", time.perf_counter(), 0.0]]
            self.current = {part: 0.0 for part in PARTS} | {"statements": 0}

    def end_request(self, path: str):
        with self.lock:
            if not self.stack:
                return
            part, start, children = self.stack[0]
            total = time.perf_counter() - start
            self.current["transport"] += total - children
            self.current["total"] = total
            self.current["path"] = path
            self.last = self.current
            self.stack = []

    def enter(self, part: str):
        if not IN_REQUEST.get():
            return
        with self.lock:
            if self.stack:
                self.stack.append([part, time.perf_counter(), 0.0])

    def leave(self):
        if not IN_REQUEST.get():
            return
        with self.lock:
            if len(self.stack) < 2:
                return
            part, start, children = self.stack.pop()
            elapsed = time.perf_counter() - start
            self.current[part] += elapsed - children
            self.stack[-1][2] += elapsed

    def count_statement(self, statement: str = ""):
        if not IN_REQUEST.get():
            return
        with self.lock:
            if self.stack:
                self.current["statements"] += 1
                if DETAIL:
                    self.current.setdefault("statement_log", []).append(f"{_caller()}: {statement[:160]}")


PROFILE = Profile()

#: BENCH_PROFILE_DETAIL=1 (see the module's docstring).
DETAIL = os.environ.get("BENCH_PROFILE_DETAIL") == "1"
CPROFILES: list = []


def _caller() -> str:
    """The innermost frame of Galaxy's or the patch set's own code (not SQLAlchemy's)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if ("/galaxy/" in name or "galaxy_mcp_analysis" in name) and "/galaxy/model/base.py" not in name:
            return f"{name.rsplit('/', 3)[-2]}/{name.rsplit('/', 1)[-1]}:{frame.f_lineno} {frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


def cprofiled(function):
    """Run ``function`` under a cProfile of its own thread while a request is profiled (DETAIL only)."""
    import cProfile

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if not (DETAIL and IN_REQUEST.get()):
            return function(*args, **kwargs)
        profile = cProfile.Profile()
        profile.enable()
        try:
            return function(*args, **kwargs)
        finally:
            profile.disable()
            CPROFILES.append(profile)

    return wrapper


def timed_sync(part: str, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        PROFILE.enter(part)
        try:
            return function(*args, **kwargs)
        finally:
            PROFILE.leave()

    return wrapper


def timed_auth(function):
    """``timed_sync("auth", ...)`` that also records the call's wall time and its thread's CPU time,
    SQL included (``auth_wall``, ``auth_cpu``): what the key's lookup waits for vs what it does; and how
    many lookups the request made (``auth_calls``)."""
    timed = timed_sync("auth", function)

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        cpu, wall = time.thread_time(), time.perf_counter()
        try:
            return timed(*args, **kwargs)
        finally:
            if IN_REQUEST.get():
                with PROFILE.lock:
                    if PROFILE.stack:
                        PROFILE.current["auth_wall"] = PROFILE.current.get("auth_wall", 0.0) + time.perf_counter() - wall
                        PROFILE.current["auth_cpu"] = PROFILE.current.get("auth_cpu", 0.0) + time.thread_time() - cpu
                        PROFILE.current["auth_calls"] = PROFILE.current.get("auth_calls", 0) + 1

    return wrapper


def timed_async(part: str, function):
    @functools.wraps(function)
    async def wrapper(*args, **kwargs):
        PROFILE.enter(part)
        try:
            return await function(*args, **kwargs)
        finally:
            PROFILE.leave()

    return wrapper


def instrument_libraries():
    """Timers around the library functions each part runs through (Galaxy 26.1.2, fastmcp 4.1.2, mcp 2.3.0)."""
    import fastapi.routing
    import fastmcp.tools.base
    import fastmcp.tools.function_tool
    import starlette.responses
    import starlette.routing
    from galaxy.managers.users import UserManager
    from galaxy.model import base as model_base
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    # Routing: from the outer router's entry (FastAPI's APIRouter for Galaxy, Starlette's Router
    # inside the MCP app) to the first route handler it calls, whatever the route's class.
    def make_router_app(original):
        async def router_app(self, scope, receive, send):
            if scope.get("bench_routed") or scope["type"] != "http":
                return await original(self, scope, receive, send)
            scope["bench_routed"] = True
            PROFILE.enter("routing")
            scope["bench_routing_open"] = True
            try:
                return await original(self, scope, receive, send)
            finally:
                if scope.pop("bench_routing_open", False):
                    PROFILE.leave()

        return router_app

    def make_handle(original):
        async def handle(self, scope, receive, send):
            if scope.pop("bench_routing_open", False):
                PROFILE.leave()
            return await original(self, scope, receive, send)

        return handle

    for router_class in (starlette.routing.Router, fastapi.routing.APIRouter):
        router_class.app = make_router_app(router_class.__dict__["app"])
    route_classes, pending = set(), [starlette.routing.BaseRoute]
    while pending:
        cls = pending.pop()
        route_classes.add(cls)
        pending += [sub for sub in cls.__subclasses__() if sub not in route_classes]
    for cls in route_classes:
        if "handle" in cls.__dict__:
            cls.handle = make_handle(cls.__dict__["handle"])

    UserManager.by_api_key = timed_auth(UserManager.by_api_key)

    if DETAIL:  # cProfile each function a request hands to a worker thread
        import anyio.to_thread

        original_run_sync = anyio.to_thread.run_sync

        async def run_sync(function, *args, **kwargs):
            return await original_run_sync(cprofiled(function), *args, **kwargs)

        anyio.to_thread.run_sync = run_sync
        import fastmcp.utilities.async_utils

        fastmcp.utilities.async_utils.run_sync_in_threadpool = run_sync  # imported by name there

    @event.listens_for(Engine, "before_cursor_execute")
    def before(conn, cursor, statement, parameters, context, executemany):
        PROFILE.enter("sql")
        PROFILE.count_statement(statement)

    @event.listens_for(Engine, "after_cursor_execute")
    def after(conn, cursor, statement, parameters, context, executemany):
        PROFILE.leave()

    @event.listens_for(Engine, "handle_error")
    def failed(context):
        PROFILE.leave()

    model_base.SharedModelMapping.unset_request_id = timed_sync(
        "sql", model_base.SharedModelMapping.unset_request_id)

    # The tool body / the REST endpoint.
    fastmcp.tools.function_tool.FunctionTool.run = timed_async("body", fastmcp.tools.function_tool.FunctionTool.run)
    fastapi.routing.run_endpoint_function = timed_async("body", fastapi.routing.run_endpoint_function)

    # Serialization.
    for name in ("_serialize_to_jsonable", "default_serializer"):
        setattr(fastmcp.tools.base, name, timed_sync("serialize", getattr(fastmcp.tools.base, name)))
    StreamableHTTPServerTransport._create_json_response = timed_sync(
        "serialize", StreamableHTTPServerTransport._create_json_response)
    fastapi.routing.serialize_response = timed_async("serialize", fastapi.routing.serialize_response)
    starlette.responses.JSONResponse.render = timed_sync("serialize", starlette.responses.JSONResponse.render)
    try:
        from galaxy_mcp_analysis.mcp import result_text
    except ImportError:  # a branch without the shaped text block
        return
    for shape in ("RawText", "Table"):
        cls = getattr(result_text, shape, None)
        if cls is not None:
            cls.__call__ = timed_sync("serialize", cls.__call__)


def profiled(app):
    """The ASGI app with a request record around every HTTP request, and the /bench-profile endpoints."""

    async def asgi(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        path = scope.get("path", "")
        if path == "/bench-profile/cprofile":
            import pstats

            out = io.StringIO()
            if CPROFILES:
                stats = pstats.Stats(CPROFILES[0], stream=out)
                for profile in CPROFILES[1:]:
                    stats.add(profile)
                # BENCH_PROFILE_ONLY=<regex>: the cumulative list restricted to functions whose path matches
                # (e.g. galaxy_mcp_analysis: the patch set's own share of a call).
                only = os.environ.get("BENCH_PROFILE_ONLY")
                stats.sort_stats("cumulative").print_stats(*([only, 80] if only else [70]))
                stats.sort_stats("tottime").print_stats(40)
            CPROFILES.clear()
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": out.getvalue().encode()})
            return
        if path.startswith("/bench-profile/"):
            if path.endswith("/on") or path.endswith("/off"):
                PROFILE.enabled = path.endswith("/on")
                PROFILE.last = {}
            body = json.dumps(PROFILE.last).encode()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return
        if not PROFILE.enabled:
            return await app(scope, receive, send)
        IN_REQUEST.set(True)
        PROFILE.begin_request()
        finished = False
        loop_profile = None
        if DETAIL:
            import cProfile

            loop_profile = cProfile.Profile()
            loop_profile.enable()

        async def send_and_watch(message):
            nonlocal finished
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False) and not finished:
                finished = True
                PROFILE.end_request(path)

        try:
            await app(scope, receive, send_and_watch)
        finally:
            if not finished:
                PROFILE.end_request(path)
            if loop_profile is not None:
                loop_profile.disable()
                CPROFILES.append(loop_profile)

    return asgi


def main():
    import os

    from galaxy_mcp_analysis.serve import (
        galaxy_config,
        launcher,
    )

    write_config = galaxy_config.write

    def write_then_instrument(*args, **kwargs):
        # Galaxy reads its configuration when its modules are imported: instrument only after
        # the launcher wrote it (the launcher imports the factory it serves right after).
        config_file = write_config(*args, **kwargs)
        os.environ["GALAXY_CONFIG_FILE"] = str(config_file)
        instrument_libraries()
        if "--no-patches" in sys.argv:
            from galaxy.webapps.galaxy import fast_factory as module
        else:
            from galaxy_mcp_analysis import fast_factory as module
        original = module.factory
        module.factory = functools.wraps(original)(lambda: profiled(original()))
        return config_file

    galaxy_config.write = write_then_instrument
    return launcher.main(sys.argv[1:])


if __name__ == "__main__":  # Galaxy's Celery forkserver re-imports __main__
    sys.exit(main())
