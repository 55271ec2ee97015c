"""Tool search after the web process is elected config watcher late (patch `tool-search-index`).

Galaxy builds its tool search index once after start-up, and only in a process already elected config
watcher. Here the election is held back the way a second web process's heartbeat holds it: a row of
another web process in Galaxy's ``worker_process`` table, newer than a heartbeat, whose server name sorts
after this one's. Galaxy starts with an empty index directory, so its one build is skipped and search finds
nothing. The other process's row then goes stale; at its next heartbeat (at most 60 s) this process is
elected, and the patch has the index built: search finds the tools. Stock Galaxy 26.1 stays empty for the
life of the process (doc/testing.md, the rehearsal of 2026-11-28).
"""

import datetime
import shutil
import socket
import time

import pytest
from sqlalchemy import (
    create_engine,
    update,
)
from sqlalchemy.orm import Session

from galaxy_mcp_analysis.testing import (
    LaunchedGalaxy,
    McpClient,
)

#: Galaxy's heartbeat runs every 60 s; the election and the index build after it fit well inside this.
ELECTION_BOUND_SECONDS = 180
OTHER_PROCESS = "zz-another-web-process"  # sorts after the launcher's server name, "main"


def database_url(data_dir, url: str | None) -> str:
    return url or f"sqlite:///{data_dir / 'universe.sqlite'}"


def other_web_process(url: str, seen: datetime.datetime) -> None:
    """Record (or move) the other web process's last heartbeat."""
    from galaxy.model import WorkerProcess
    from galaxy.model.database_heartbeat import WEBAPP

    engine = create_engine(url)
    try:
        with Session(engine) as session, session.begin():
            changed = session.execute(update(WorkerProcess).where(WorkerProcess.server_name == OTHER_PROCESS)
                                      .values(update_time=seen)).rowcount
            if not changed:
                session.add(WorkerProcess(server_name=OTHER_PROCESS, hostname=socket.gethostname(), pid=1,
                                          app_type=WEBAPP, update_time=seen))
    finally:
        engine.dispose()


def found(client: McpClient, key: str) -> list[str]:
    return [tool["id"] for tool in client.call_ok("search_tools", query="sort", api_key=key)["tools"]]


@pytest.fixture(scope="module")
def late_election(tmp_path_factory, new_database_url):
    data_dir = tmp_path_factory.mktemp("search-index") / "data"
    url = new_database_url()
    with LaunchedGalaxy(data_dir, database_url=url):
        pass  # Galaxy's database, its users and a built index
    shutil.rmtree(data_dir / "tool_search_index")
    utcnow = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)  # Galaxy stores naive UTC
    other_web_process(database_url(data_dir, url), utcnow + datetime.timedelta(hours=1))
    with LaunchedGalaxy(data_dir, database_url=url) as galaxy:
        yield galaxy, database_url(data_dir, url)


def test_search_finds_tools_once_the_process_is_elected_late(late_election):
    galaxy, url = late_election
    with McpClient(galaxy.mcp_url) as client:
        before = found(client, galaxy.api_key)
        assert before == [], f"the election was not held back; the test proves nothing: {before}"
        other_web_process(url, datetime.datetime(2000, 1, 1))  # the other process stopped beating long ago
        deadline = time.monotonic() + ELECTION_BOUND_SECONDS
        after = found(client, galaxy.api_key)
        while not after and time.monotonic() < deadline:
            time.sleep(2)
            after = found(client, galaxy.api_key)
    assert "sort1" in after, f"no tool found {ELECTION_BOUND_SECONDS} s after the other web process went stale"
