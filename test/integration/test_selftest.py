"""``galaxy-mcp-analysis selftest --url URL``, the real command, against the session Galaxy (as `make serve`'s).

A fresh user's key in GALAXY_API_KEY; the command must pass every step, print its summary last,
exit 0, and leave nothing of its own in that user's histories (purged), workflows and pages
(deleted), checked through Galaxy's REST API.
"""

import os
import re
import subprocess
import sys
import time

from galaxy_mcp_analysis.core import selftest_plan
from galaxy_mcp_analysis.testing import (
    create_user,
    rest,
)

SUMMARY = re.compile(r"selftest: (\d+) passed, (\d+) failed, (\d+) denied, (\d+) skipped in (\d+) s")
MADE = re.compile(r"\b(history|page|workflow) ([0-9a-f]{16})\b")


def run_selftest(galaxy_url: str, api_key: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "galaxy_mcp_analysis.cli", "selftest", "--url", galaxy_url],
        env={**os.environ, "GALAXY_API_KEY": api_key}, capture_output=True, text=True, timeout=1200,
    )


def check_selftest_passes_and_cleans_up(galaxy_url: str, admin_api_key: str, username: str) -> dict:
    """Run the command as a new user; assert its outcome and that nothing it made remains. Returns figures."""
    key = create_user(galaxy_url, admin_api_key, username)
    began = time.monotonic()
    done = run_selftest(galaxy_url, key)
    seconds = round(time.monotonic() - began, 1)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = SUMMARY.fullmatch(lines[-1])
    assert summary, lines[-1]
    passed, failed, denied, skipped, _ = map(int, summary.groups())
    assert (passed, failed, denied, skipped) == (len(selftest_plan.PLAN) + 1, 0, 0, 0), lines  # + the cleanup
    labels = [line.split(None, 1)[1].split(":")[0] for line in lines[:-1]]
    assert labels == [step.label for step in selftest_plan.PLAN] + ["cleanup"]

    made = {kind: object_id for kind, object_id in MADE.findall(done.stdout)}
    assert set(made) == {"history", "page", "workflow"}, done.stdout
    history = rest(galaxy_url, f"/api/histories/{made['history']}?keys=id,deleted,purged", key)
    assert (history["deleted"], history["purged"]) == (True, True)
    assert rest(galaxy_url, f"/api/workflows/{made['workflow']}", key)["deleted"] is True
    assert rest(galaxy_url, f"/api/pages/{made['page']}", key)["deleted"] is True
    assert rest(galaxy_url, "/api/histories?keys=id,name", key) == []  # a fresh user: the test's only history
    # Galaxy's lists also show other users' published workflows and pages (other tests publish some): judge the user's.
    assert [w for w in rest(galaxy_url, "/api/workflows", key) if w["owner"] == username] == []
    assert [p for p in rest(galaxy_url, "/api/pages", key) if p["username"] == username] == []
    return {"seconds": seconds, "reported_seconds": int(summary.group(5)), "steps": len(lines) - 1}


def test_selftest_passes_on_make_serves_galaxy_and_leaves_nothing(galaxy):
    figures = check_selftest_passes_and_cleans_up(galaxy.galaxy_url, galaxy.admin_api_key, f"selftest{os.getpid()}")
    print(f"\nselftest figures: {figures}")


def test_a_key_galaxy_refuses_fails_at_connect_and_skips_the_rest(galaxy):
    done = run_selftest(galaxy.galaxy_url, "0" * 32)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 1, done.stdout + done.stderr
    assert lines[0].startswith("FAIL    connect: [AUTHENTICATION_ERROR]"), lines[0]
    assert lines[-1].startswith(f"selftest: 0 passed, 1 failed, 0 denied, {len(selftest_plan.PLAN) - 1} skipped in ")
