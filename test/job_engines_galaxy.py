"""The one Galaxy of the job-engine modules (test/integration/test_job_engines*.py; its fixtures are the
root conftest's).

Job engines add daemons, not Galaxies: one Galaxy is started with every engine installed here behind it
(``JOB_RUNNER=local,slurm,pulsar``, serve/engines/routes.py), and each engine gets a user of its own
whose role routes that user's jobs there (local is the default: its user has no role). The modules ask
for ``engine_galaxy(name)``: that Galaxy as the engine's user sees it. Started at the first test that
needs it, stopped at the end of the session with every engine (nothing of theirs may be left running).
"""

import os
import signal
import time
from pathlib import Path

import pytest

from galaxy_mcp_analysis.serve.engines import ENGINES
from galaxy_mcp_analysis.testing import (
    LaunchedGalaxy,
    rest,
)

ENGINE_NAMES = ("local", "slurm", "pulsar")  # the first is the default route
#: A tool that sleeps on the engine (a job that stays running for a while), served beside the toolbox.
ENGINE_TOOLS = Path(__file__).parent / "integration" / "engine_tools" / "tool_conf.xml"


def engine_unavailable(name: str) -> str | None:
    """Why the engine cannot run here (its .ci/install-* script not run), or None."""
    return ENGINES[name].available()


def require_engine(name: str) -> None:
    """Skip a test whose engine is not installed; fail instead where CI requires every engine."""
    if reason := engine_unavailable(name):
        if os.environ.get("GALAXY_MCP_ANALYSIS_REQUIRE_ENGINES"):
            pytest.fail(f"{name}: {reason}")
        pytest.skip(f"{name}: {reason}")


@pytest.fixture(scope="session")
def engines_galaxy(tmp_path_factory, new_database_url):
    names = [name for name in ENGINE_NAMES if not engine_unavailable(name)]
    directory = tmp_path_factory.mktemp("galaxy-engines")
    policy_file, audit_log = directory / "policy.yml", directory / "audit.jsonl"
    server = LaunchedGalaxy(directory / "data", database_url=new_database_url(), job_runner=",".join(names),
                            tool_confs=[ENGINE_TOOLS], env={"GALAXY_MCP_ANALYSIS_POLICY_FILE": str(policy_file),
                                                            "GALAXY_MCP_ANALYSIS_AUDIT_LOG": str(audit_log)})
    server.policy_file, server.audit_log, server.engines = policy_file, audit_log, names
    server.replacements = []  # daemons a fault test restarted itself (stopped after Galaxy and its engines)
    server.users = {}
    began = time.monotonic()
    server.start()
    server.start_seconds = time.monotonic() - began
    print(f"\nGalaxy with the job engines {', '.join(names)} started in {server.start_seconds:.1f} s")
    yield server
    server.stop()
    for process in server.replacements:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)
    assert not engine_processes(server), engine_processes(server)


class EngineGalaxy:
    """The engines' Galaxy as one engine's user sees it: ``api_key`` is that user's, whose jobs run on
    ``engine``; ``route`` is what server.json says of the engine (its log, its role). Anything else is the
    Galaxy's own (``galaxy_url``, ``admin_api_key``, ``data_dir``, ``policy_file``, ``audit_log``, ...)."""

    def __init__(self, galaxy: LaunchedGalaxy, engine: str, api_key: str):
        self.galaxy, self.engine, self.api_key = galaxy, engine, api_key
        self.engine_root = galaxy.data_dir / "job-engines" / engine
        # One engine installed (local alone, on a machine without Slurm or Pulsar): no routes, the engine is
        # Galaxy's only one and server.json describes it at the top level.
        routes = galaxy.info.get("job_routes") or {engine: {**galaxy.info, "role": None, "default": True}}
        self.route = routes[engine]

    def __getattr__(self, name):
        return getattr(self.galaxy, name)


@pytest.fixture(scope="session")
def engine_galaxy(engines_galaxy):
    """``engine_galaxy(name)``: the Galaxy for that engine's user (created once; a role named after the
    engine routes their jobs there, but for the default engine, whose user has no role)."""

    def for_engine(name: str) -> EngineGalaxy:
        require_engine(name)
        if name not in engines_galaxy.users:
            engines_galaxy.users[name] = engine_user(engines_galaxy, name)
        return EngineGalaxy(engines_galaxy, name, engines_galaxy.users[name])

    return for_engine


def engine_user(galaxy: LaunchedGalaxy, engine: str) -> str:
    username = f"jobs-on-{engine}"
    url, admin = galaxy.galaxy_url, galaxy.admin_api_key
    user = rest(url, "/api/users", admin, {"username": username, "email": f"{username}@example.org",
                                            "password": f"password-{username}"})
    if "job_routes" in galaxy.info and not galaxy.info["job_routes"][engine]["default"]:
        rest(url, "/api/roles", admin, {"name": engine, "description": f"jobs run on {engine}",
                                        "user_ids": [user["id"]], "role_type": "admin"})
    return rest(url, f"/api/users/{user['id']}/api_key", admin, {})


def engine_processes(galaxy) -> list[str]:
    """Processes still running from the engines' directories: their daemons name their files there, and the
    jobs Pulsar runs have their working directory in its staging directory."""
    root = str(galaxy.data_dir / "job-engines")
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if root in command or cwd.startswith(root):
            found.append(f"{proc.name}: {command}")
    return found
