"""Serve a local Galaxy 26.1 with the patch set on: ``make serve`` and the test harness.

    python -m galaxy_mcp_analysis.serve --data-dir .galaxy --port 8080

Writes ``galaxy.yml`` and a toolbox into the data dir, builds Galaxy through the
patch set's app factory, runs Celery in-process (in-memory broker, one thread) so
jobs finish in seconds, creates a demo user and key on first run, writes
``server.json`` and stays in the foreground until SIGINT/SIGTERM.
Everything runs under ``if __name__ == "__main__"``: Galaxy's Celery forkserver
re-imports ``__main__``.
"""

import argparse
import errno
import json
import logging
import os
import secrets
import signal
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from galaxy_mcp_analysis.serve import (
    engines,
    galaxy_config,
)

log = logging.getLogger("galaxy_mcp_analysis.serve")

DEMO_EMAIL = "demo@example.org"
DEMO_USERNAME = "demo"
#: The web UI's logins ``make serve`` prints: role -> (username, email); passwords are in secrets.json.
LOGINS = {"demo": (DEMO_USERNAME, DEMO_EMAIL), "admin": ("admin", galaxy_config.ADMIN_EMAIL)}
READY_TIMEOUT_SECONDS = 300


class LaunchError(Exception):
    """A problem the person running ``make serve`` can fix; printed as one line."""


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="galaxy_mcp_analysis.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get("DATA_DIR", ".galaxy"), type=Path)
    parser.add_argument("--port", default=int(os.environ.get("PORT", "8080")), type=int)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or None)
    parser.add_argument(
        "--no-patches", action="store_true", help="serve stock Galaxy (the patch set switched off), for comparison"
    )
    parser.add_argument(
        "--tool-conf",
        default=os.environ.get("TOOL_CONF", ""),
        help="an admin's own tool configuration files (comma-separated) served beside the bundled toolbox",
    )
    add_job_runner_argument(parser)
    args = parser.parse_args(argv)
    args.tool_confs = [Path(path.strip()).resolve() for path in args.tool_conf.split(",") if path.strip()]
    if missing := [str(path) for path in args.tool_confs if not path.is_file()]:
        parser.error(f"TOOL_CONF names no file at {', '.join(missing)}; give tool_conf.xml paths, comma-separated.")
    return args


def add_job_runner_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--job-runner",
        default=os.environ.get("JOB_RUNNER") or engines.DEFAULT_ENGINE,
        type=_job_runner_switch,
        help=f"where Galaxy's jobs run ({', '.join(engines.ENGINES)}; several comma-separated: the first is "
        "the default, a user with a role named after another engine runs there): started before Galaxy, "
        "stopped after it (serve/engines)",
    )


def _job_runner_switch(value: str) -> str:
    try:
        return ",".join(engines.engine_names(value))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def start_job_engine(switch: str, data_dir: Path) -> "engines.RunningEngine":
    """Start the job engines ``switch`` names in ``<data_dir>/job-engines/<name>`` and put what Galaxy needs
    to reach them (``SLURM_CONF``, ...) into this process's environment; a LaunchError when one is not installed."""
    try:
        running = engines.start_engines(switch, data_dir / "job-engines")
    except engines.EngineNotAvailable as e:
        raise LaunchError(f"JOB_RUNNER={switch}: {e}") from None
    os.environ.update(running.environ)
    return running


def engine_info(running: "engines.RunningEngine | None") -> dict:
    return running.describe() if running is not None else {"job_runner": engines.DEFAULT_ENGINE, "job_runner_log": None}


HOST = "127.0.0.1"


def prepare_data_dir(data_dir: Path) -> Path:
    data_dir = data_dir.resolve()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        probe = data_dir / ".write-probe"
        probe.write_text("ok")
        probe.unlink()
    except OSError as e:
        raise LaunchError(f"DATA_DIR {data_dir} is not writable ({e.strerror}); choose another DATA_DIR.") from None
    return data_dir


def check_port_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As uvicorn binds: connections of a just-stopped server linger in TIME_WAIT for a
        # minute and must not make a restart on the same port fail.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise LaunchError(f"port {port} on {HOST} is already in use; run with PORT=<another port>.") from None
            raise LaunchError(f"cannot listen on {HOST}:{port} ({e.strerror}).") from None


def load_secrets(data_dir: Path) -> dict:
    """Secrets that must survive restarts (ids, keys) live next to the data they protect."""
    path = data_dir / "secrets.json"
    stored = json.loads(path.read_text()) if path.exists() else {}
    stored.setdefault("id_secret", secrets.token_hex(16))
    stored.setdefault("admin_api_key", secrets.token_hex(16))
    for role in LOGINS:  # generated once per data dir, kept across restarts
        stored.setdefault(f"{role}_password", secrets.token_urlsafe(12))
    save_secrets(data_dir, stored)
    return stored


def save_secrets(data_dir: Path, stored: dict) -> None:
    path = data_dir / "secrets.json"
    path.write_text(json.dumps(stored, indent=2))
    path.chmod(0o600)


def _request(url: str, api_key: str, payload: dict | None = None) -> dict:
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data, headers={"x-api-key": api_key, "content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def wait_until_ready(galaxy_url: str, stop: threading.Event) -> bool:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline and not stop.is_set():
        try:
            with urllib.request.urlopen(f"{galaxy_url}/api/version", timeout=5):
                return True
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    return False


def ensure_logins(galaxy_url: str, data_dir: Path, stored: dict) -> str:
    """The demo user's API key. The demo user and the admin (``admin_users``) are created through Galaxy's
    REST API on the first run, each with its password from secrets.json, so both can log in to the web UI."""
    admin_key = stored["admin_api_key"]
    user_ids = {role: ensure_user(galaxy_url, admin_key, stored, role) for role in LOGINS}
    save_secrets(data_dir, stored)
    if key := stored.get("demo_api_key"):
        return key
    key = _request(f"{galaxy_url}/api/users/{user_ids['demo']}/api_key", admin_key, {})
    stored["demo_api_key"] = key
    save_secrets(data_dir, stored)
    return key


def ensure_user(galaxy_url: str, admin_key: str, stored: dict, role: str) -> str:
    """The id of the login ``role`` (LOGINS), created with its stored password if missing. An account that a
    data dir made before logins were printed holds an unknown password: it is given the stored one."""
    username, email = LOGINS[role]
    password = stored[f"{role}_password"]
    if users := _request(f"{galaxy_url}/api/users?f_email={email}", admin_key):
        if not stored.get(f"{role}_password_set") and not set_password(email, password):
            log.warning("%s exists with a password this data dir does not know; the printed one will not log in "
                        "(an empty DATA_DIR, or `make clean-data`, starts afresh)", email)
            return users[0]["id"]
    else:
        users = [_request(f"{galaxy_url}/api/users", admin_key, {"username": username, "email": email, "password": password})]
    stored[f"{role}_password_set"] = True
    return users[0]["id"]


def set_password(email: str, password: str) -> bool:
    """Give an existing account ``password`` through Galaxy's user model (Galaxy's REST API changes a
    password only with the current one). Only where Galaxy runs in this process (``make serve``, not
    gravity's ``make serve-production``); returns whether it was set."""
    import galaxy.app

    if galaxy.app.app is None:
        return False
    session = galaxy.app.app.model.session
    user = galaxy.app.app.user_manager.by_email(email)
    user.set_password_cleartext(password)
    session.add(user)
    session.commit()
    return True


def mcp_endpoint_path(mcp_path: str) -> str:
    """The path Galaxy's MCP endpoint answers at. Galaxy 26.1.0 and 26.1.1 mount the MCP app at
    ``mcp_path`` with its route at "/", so only ``<mcp_path>/`` answers (``<mcp_path>`` is a 404);
    26.1.2 serves ``<mcp_path>`` itself (and the trailing-slash form too)."""
    from galaxy.version import VERSION

    return f"{mcp_path}/" if VERSION in ("26.1.0", "26.1.1") else mcp_path


def announce(
    data_dir: Path, galaxy_url: str, api_key: str, stored: dict, mcp_path: str, engine: dict | None = None,
    galaxy_files: Path | None = None,
) -> None:
    """Write server.json and print the banner; ``engine``: the job engine's ``describe()``; ``galaxy_files``:
    where galaxy_config wrote Galaxy's files (its tool_conf.xml), when not ``data_dir`` itself (gravity's)."""
    engine = engine or engine_info(None)
    info = {
        "galaxy_url": galaxy_url,
        "mcp_url": f"{galaxy_url}{mcp_endpoint_path(mcp_path)}",
        "api_key": api_key,
        "admin_api_key": stored["admin_api_key"],
        **{f"{role}_{field}": value for role, (_, email) in LOGINS.items()
           for field, value in (("email", email), ("password", stored[f"{role}_password"]))},
    }
    info.update(engine)
    info.update(sign_in_urls(galaxy_url))
    target = data_dir / "server.json"
    partial = target.with_suffix(".json.tmp")
    partial.write_text(json.dumps(info, indent=2))
    partial.chmod(0o600)
    partial.replace(target)  # readers never see a half-written file
    print(
        f"\nGalaxy {galaxy_url}  (web UI: log in with a login below)\nMCP    {info['mcp_url']}\nAPI key {api_key}\n"
        f"Login  {info['demo_email']} / {info['demo_password']}  (the demo user, whose API key is above)\n"
        f"Admin  {info['admin_email']} / {info['admin_password']}\n(also in {target}; Ctrl-C stops)\n"
        f"{toolbox_line(galaxy_files or data_dir)}\n{job_runner_line(info)}\n{sign_in_line(info)}",
        flush=True,
    )


def job_runner_line(info: dict) -> str:
    if routes := info.get("job_routes"):  # several engines behind this Galaxy (serve/engines/routes.py)
        lines = [f"Jobs   run by {info['job_runner']}, by the user's role:"]
        for name, route in routes.items():
            log_file = route.get("job_runner_log")
            who = "everyone else (the default)" if route["default"] else f"users with the role {route['role']!r}"
            lines.append(f"       {name}: {who}" + (f"; its log: {log_file}" if log_file else ""))
        return "\n".join(lines)
    log_file = info.get("job_runner_log")
    return f"Jobs   run by {info['job_runner']}" + (f"; its log of the jobs it ran: {log_file}" if log_file else "")


def sign_in_urls(galaxy_url: str) -> dict:
    """With sign-in switched on (``GALAXY_MCP_ANALYSIS_OAUTH=true make serve``), the page where a person sees
    and revokes their connected MCP clients; asked of the running server (it answers its OAuth metadata)."""
    from galaxy_mcp_analysis.oauth.routes import PATHS

    try:
        with urllib.request.urlopen(f"{galaxy_url}/.well-known/oauth-authorization-server", timeout=30) as response:
            json.loads(response.read())
    except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
        return {}
    return {"oauth_connections_url": f"{galaxy_url}{PATHS['connections']}"}


def sign_in_line(info: dict) -> str:
    if "oauth_connections_url" not in info:
        return ""
    return (f"Sign-in on: add {info['mcp_url']} to an MCP client by URL "
            f"(no key: it opens Galaxy's login in a browser)\nConnected clients: {info['oauth_connections_url']}\n")


def toolbox_line(data_dir: Path) -> str:
    served = (data_dir / "tool_conf.xml").read_text().count("<tool ")
    left_out = data_dir / galaxy_config.LEFT_OUT_FILE
    count = len(left_out.read_text().splitlines())
    return f"Tools  Galaxy's default toolbox: {served} served, {count} left out as they cannot run here ({left_out})"


def start_celery_worker():
    """Celery worker thread in this process: uploads and metadata without a broker service."""
    from celery.contrib.testing.worker import start_worker
    from galaxy.celery import celery_app

    controller = start_worker(
        celery_app,
        pool="solo",
        concurrency=1,
        queues=("galaxy.internal", "galaxy.external"),
        perform_ping_check=False,
        shutdown_timeout=10,
        loglevel="WARNING",
    )
    controller.__enter__()
    return controller


def run(args: argparse.Namespace) -> int:
    data_dir = prepare_data_dir(args.data_dir)
    check_port_free(args.port)
    stored = load_secrets(data_dir)
    # uvicorn drains on SIGINT/SIGTERM, then re-raises the signal with the handler it
    # found installed. SIGTERM's default would kill the process before the clean-up
    # below and Galaxy's atexit shutdown, so it is made a SystemExit first: from before
    # the engine starts, so a stop while it starts (Pulsar takes seconds) or while
    # Galaxy builds still stops the engine, whose daemons run in sessions of their own.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    engine = start_job_engine(args.job_runner, data_dir)
    try:
        return serve(args, data_dir, stored, engine)
    finally:
        engine.stop()  # after Galaxy has stopped (also on Ctrl-C, SIGTERM or a failed start)


def serve(args: argparse.Namespace, data_dir: Path, stored: dict, engine: "engines.RunningEngine") -> int:
    galaxy_url = f"http://{HOST}:{args.port}"
    config_file = galaxy_config.write(
        data_dir,
        galaxy_url=galaxy_url,
        id_secret=stored["id_secret"],
        admin_api_key=stored["admin_api_key"],
        database_url=args.database_url,
        tool_confs=[str(path) for path in args.tool_confs],
        job_config=engine.job_config,
    )
    os.environ["GALAXY_CONFIG_FILE"] = str(config_file)

    import uvicorn

    if args.no_patches:
        from galaxy.webapps.galaxy.fast_factory import factory
    else:
        from galaxy_mcp_analysis.fast_factory import factory
    app = factory()
    celery_worker = start_celery_worker()

    server = draining_server(
        uvicorn.Config(
            app,
            host=HOST,
            port=args.port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=DRAIN_TIMEOUT_SECONDS,
        )
    )
    stop = threading.Event()

    def provision():
        if not wait_until_ready(galaxy_url, stop):
            return
        try:
            api_key = ensure_logins(galaxy_url, data_dir, stored)
        except (urllib.error.URLError, KeyError, ValueError) as e:
            log.error("could not create the demo user and the admin: %s", e)
            server.should_exit = True
            return
        announce(data_dir, galaxy_url, api_key, stored, galaxy_config.MCP_PATH, engine.describe())

    threading.Thread(target=provision, name="provision-demo-user", daemon=True).start()
    try:
        server.run()
    finally:
        stop.set()
        (data_dir / "server.json").unlink(missing_ok=True)
        celery_worker.__exit__(None, None, None)
        stop_task_process_pool()
    return 0


def stop_task_process_pool() -> None:
    """Run Galaxy's own tear-down of its Celery tasks' process pool (``galaxy.celery.tear_down_pool``,
    connected to ``worker_shutting_down``). A real Celery worker sends that signal when it stops; the
    in-process worker above never does. The pool's worker process ignores SIGINT, so after a Ctrl-C
    (which reaches the whole process group) Python's exit waited on that idle worker for ever."""
    from celery.signals import worker_shutting_down

    worker_shutting_down.send(sender="galaxy-mcp-analysis serve", sig="SIGINT", how="Warm", exitcode=0)


#: How long a stop waits for in-flight requests before cancelling them (uvicorn's default: forever).
DRAIN_TIMEOUT_SECONDS = 20


def draining_server(config):
    """uvicorn's Server that, like Galaxy's gunicorn worker, runs Galaxy's drain-start callbacks
    (``galaxy.web_stack.on_drain_start``) when a stop begins, so long calls such as a sleeping
    wait_for_jobs end with an error at once instead of holding the stop open."""
    import galaxy.web_stack
    import uvicorn

    # Galaxy 26.1.0 and 26.1.1 have no drain callbacks: a stop then just drains.
    run_drain_start_callbacks = getattr(galaxy.web_stack, "run_drain_start_callbacks", lambda: None)

    class _Server(uvicorn.Server):
        async def shutdown(self, sockets=None):
            run_drain_start_callbacks()
            await super().shutdown(sockets=sockets)

    return _Server(config)


def _exit_on_signal(signum, frame):
    raise SystemExit(0)


def main(argv=None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    try:
        return run(args)
    except LaunchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: uvicorn has already drained
        return 0


if __name__ == "__main__":
    sys.exit(main())
