"""The standalone ``galaxy-mcp`` server (PyPI), for comparison: installed into a throw-away
virtualenv of its own and run as a stdio subprocess against the bench's Galaxy.

Nothing of it is imported into this process or copied into the repository: the bench talks
to it with the official ``mcp`` client (``stdio_client``), exactly as an agent would.
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

PACKAGE = "galaxy-mcp"
VERSION = "1.12.0"
INSTALL_TIMEOUT_SECONDS = 900
CALL_TIMEOUT_SECONDS = 1800


class Unavailable(Exception):
    """galaxy-mcp could not be installed or started; the bench reports why and goes on."""


def install(cache_dir: Path) -> Path:
    """A virtualenv with galaxy-mcp, cached under ``cache_dir``; returns its console script."""
    venv = cache_dir.resolve() / f"{PACKAGE}-{VERSION}"  # the server runs in another working directory
    script = venv / "bin" / "galaxy-mcp"
    marker = venv / ".installed"
    if marker.exists() and script.exists():
        return script
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True,
                       timeout=INSTALL_TIMEOUT_SECONDS)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        f"{PACKAGE}=={VERSION}"], check=True, capture_output=True, text=True,
                       timeout=INSTALL_TIMEOUT_SECONDS)
    except subprocess.CalledProcessError as e:
        lines = ((e.stderr or "") + (e.stdout or "")).strip().splitlines()
        tail = " ".join([line for line in lines if not line.startswith("WARNING")][-2:])
        raise Unavailable(f"pip install {PACKAGE}=={VERSION} failed: {tail}") from None
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unavailable(f"pip install {PACKAGE}=={VERSION} failed: {e}") from None
    if not script.exists():
        raise Unavailable(f"{PACKAGE}=={VERSION} installed no galaxy-mcp console script")
    marker.touch()
    return script


def tool_result_bytes(result) -> int:
    """Bytes of a tool result as JSON-RPC carries it to the client (content + structured content)."""
    return len(json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True)).encode())


def session(script: Path, galaxy_url: str, api_key: str, workdir: Path, actions):
    """Start galaxy-mcp over stdio, run ``await actions(client_session)`` and return its result.

    The server runs with ``workdir`` as its working directory (it loads a ``.env`` from
    there if one exists, so an empty directory keeps it to the variables given here) and
    its stderr goes to ``workdir/galaxy-mcp.log``.
    """
    from mcp import (
        ClientSession,
        StdioServerParameters,
    )
    from mcp.client.stdio import stdio_client

    workdir.mkdir(parents=True, exist_ok=True)
    parameters = StdioServerParameters(
        command=str(script),
        args=["--transport", "stdio"],
        env={"GALAXY_URL": galaxy_url, "GALAXY_API_KEY": api_key, "PATH": os.environ.get("PATH", "")},
        cwd=str(workdir),
    )

    async def run():
        with open(workdir / "galaxy-mcp.log", "a") as errlog:
            async with stdio_client(parameters, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    return await asyncio.wait_for(actions(client), CALL_TIMEOUT_SECONDS)

    try:
        return asyncio.run(run())
    except Unavailable:
        raise
    except Exception as e:  # a server that will not start or answer: say so, keep benchmarking
        log = (workdir / "galaxy-mcp.log").read_text(errors="replace").strip().splitlines()[-5:]
        raise Unavailable(f"galaxy-mcp over stdio failed: {type(e).__name__}: {e}\n    " + "\n    ".join(log)) from e
