"""The production switch: gunicorn started the way gravity starts it, plus the one extra_args line."""

import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from galaxy_mcp_analysis import galaxy_config
from galaxy_mcp_analysis.registry import PATCHES
from galaxy_mcp_analysis.testing import (
    free_port,
    McpClient,
)


def gravity_command(port: int, preload: bool) -> list[str]:
    """gravity's gunicorn command line for Galaxy 26.1, then the admin's extra_args."""
    gunicorn = [sys.executable, "-m", "gunicorn", "galaxy.webapps.galaxy.fast_factory:factory()"]
    gravity = ["--timeout", "600", "-k", "galaxy.webapps.galaxy.workers.Worker", "-b", f"127.0.0.1:{port}",
               "--workers=1", "--config", "python:galaxy.web_stack.gunicorn_config"] + (["--preload"] if preload else [])
    extra_args = ["--worker-class", "galaxy_mcp_analysis.worker.Worker"]  # the documented galaxy.yml line
    return gunicorn + gravity + extra_args


@pytest.mark.parametrize("preload", [True, False], ids=["preload", "no-preload"])
def test_gunicorn_worker_class_switches_the_patch_set_on(tmp_path, preload):
    port = free_port()
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    config = galaxy_config.write(data_dir, galaxy_url=f"http://127.0.0.1:{port}", id_secret="s" * 32,
                                 admin_api_key="k" * 32, database_url=None)
    log_path = tmp_path / "gunicorn.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(gravity_command(port, preload), stdout=log, stderr=subprocess.STDOUT,
                                   env={**os.environ, "GALAXY_CONFIG_FILE": str(config)}, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            assert process.poll() is None, log_path.read_text()
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/version", timeout=5)
                break
            except OSError:
                assert time.monotonic() < deadline, log_path.read_text()[-3000:]
                time.sleep(0.5)
        with McpClient(f"http://127.0.0.1:{port}/api/mcp") as client:
            names = {tool.name for tool in client.list_tools()}
        assert {"peek_dataset_content", "validate_page_content", "connect"} <= names
        startup = [line for line in log_path.read_text().splitlines() if "galaxy-mcp-analysis" in line]
        assert startup and startup[0].endswith(
            "patches applied: " + ", ".join(patch.id for patch in PATCHES)
        ), startup
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
