"""Issue 9: 16 concurrent MCP clients x 50 mixed calls, no server error and no lost update.

Each client is its own SDK session (its own streamable-HTTP connection and event
loop) driven from its own thread. The mix: pastes, reads of pasted bytes and of a
shared dataset, a collection, updates of the client's own page, and
read-modify-write updates of one page that every client edits at once.

Galaxy pages have no compare-and-set: two agents that read the same revision and
both save get two revisions, and the later one wins (as in Galaxy's UI). "No lost
update" is therefore checked as what Galaxy promises: every update that returned
success recorded exactly one revision whose content is byte for byte what was
sent, no revision appears that no caller sent, and the latest revision is one of
the successful updates. The same module runs in the PostgreSQL pass.
"""

import json
import random
import re
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import (
    fetch,
    TEST_DATABASE,
)
from galaxy_mcp_analysis.testing import (
    error_text,
    McpClient,
)
from galaxy_mcp_analysis.testing.audit import (
    audit_lines,
    complete,
)

CLIENTS = 16
CALLS_PER_CLIENT = 50
PASTES_PER_CLIENT = 2
OWN_PAGE_UPDATES = 10
SHARED_PAGE_UPDATES = 10
#: Fixed calls besides those: create_collection, wait_for_jobs, a peek per paste,
#: get_collection_details, list_page_revisions of the own page; the rest are reads.
FIXED_CALLS = PASTES_PER_CLIENT + OWN_PAGE_UPDATES + SHARED_PAGE_UPDATES + 4 + PASTES_PER_CLIENT
READS = CALLS_PER_CLIENT - FIXED_CALLS
SEED_CONTENT = "gene\tcount\nmecA\t3\nblaZ\t1\n"
# An HTTP 500 in an access line ('"POST /api/mcp HTTP/1.1" 500'), not any "500" (log timestamps have ",500").
SERVER_ERROR = re.compile(r'\[SYSTEM_ERROR\]|HTTP/1\.[01]" 500\b|Internal Server Error|Traceback|database is locked', re.I)


class Recorder:
    """Every call's outcome, from all threads; each call carries the user's key."""

    def __init__(self, api_key: str):
        self.api_key = api_key
        self.lock = threading.Lock()
        self.calls = 0
        self.tools: Counter = Counter()  # calls per tool, to compare with the audit trail's lines
        self.failures: list[str] = []
        self.shared_updates: list[str] = []  # content of every successful update of the shared page

    def call(self, client: McpClient, who: int, tool: str, **arguments):
        with self.lock:
            self.calls += 1
            self.tools[tool] += 1
        try:
            result = client.call(tool, {**arguments, "api_key": self.api_key})
        except Exception as e:  # transport errors, timeouts: failures like any other
            self._fail(f"client {who} {tool}: {type(e).__name__}: {e}")
            return None
        if result.is_error:
            self._fail(f"client {who} {tool}: {error_text(result)[:500]}")
            return None
        return result.structured_content

    def _fail(self, message: str):
        with self.lock:
            self.failures.append(message)


def page_text(owner: str, lines: list[str]) -> str:
    return f"# {owner}\n\n" + "".join(f"- {line}\n" for line in lines)


def run_client(url: str, api_key: str, who: int, setup: dict, recorder: Recorder, start: threading.Barrier):
    rng = random.Random(who)
    own_lines: list[str] = []
    checks: dict = {"who": who}
    with McpClient(url) as client:
        start.wait()
        history_id = setup["histories"][who]
        pasted = {}
        for k in range(PASTES_PER_CLIENT):
            content = f"client\t{who}\tpaste\t{k}\tµ🧬\n" * (k + 1)
            created = recorder.call(client, who, "create_dataset_from_text", history_id=history_id, content=content,
                                    name=f"c{who}-p{k}", file_type="tabular")
            if created:
                pasted[created["dataset_id"]] = content

        def update_own(i):
            own_lines.append(f"client {who} own edit {i}")
            saved = recorder.call(client, who, "update_page", page_id=setup["own_pages"][who],
                                  content=page_text(f"client {who}", own_lines))
            if saved is None:
                own_lines.pop()

        def update_shared(i):
            read = recorder.call(client, who, "get_page", page_id=setup["shared_page"])
            if read is None:
                return
            content = read["content_editor"] + f"- client {who} shared edit {i}\n"
            if recorder.call(client, who, "update_page", page_id=setup["shared_page"], content=content) is not None:
                with recorder.lock:
                    recorder.shared_updates.append(content)

        def read_seed(_):
            read = recorder.call(client, who, "peek_dataset_content", dataset_id=setup["seed_dataset"])
            if read is not None and read["content"] != SEED_CONTENT:
                recorder._fail(f"client {who}: seed dataset read back {read['content']!r}")

        def make_collection(_):
            made = recorder.call(client, who, "create_collection", history_id=history_id, collection_type="list",
                                 element_identifiers=[{"name": f"e{k}", "src": "hda", "id": dataset_id}
                                                      for k, dataset_id in enumerate(pasted)])
            checks["collection"] = made

        # get_page reads in update_shared count as the reads of this mix.
        mixed = ([(update_own, i) for i in range(OWN_PAGE_UPDATES)]
                 + [(update_shared, i) for i in range(SHARED_PAGE_UPDATES)]
                 + [(read_seed, i) for i in range(READS - SHARED_PAGE_UPDATES)]
                 + [(make_collection, 0)])
        rng.shuffle(mixed)
        for action, argument in mixed:
            action(argument)

        # Then the pasted bytes must read back, once the uploads are done.
        waited = None
        for _ in range(10):  # a wait is capped by the server; repeated waits are extra calls
            waited = recorder.call(client, who, "wait_for_jobs", dataset_ids=list(pasted), timeout_seconds=120)
            if waited is None or waited["all_terminal"]:
                break
            time.sleep(1)
        checks["wait"] = waited
        checks["pasted_back"] = {}
        for dataset_id, content in pasted.items():
            read = recorder.call(client, who, "peek_dataset_content", dataset_id=dataset_id)
            checks["pasted_back"][dataset_id] = (read or {}).get("content") == content
        if checks.get("collection"):
            checks["collection_read"] = recorder.call(client, who, "get_collection_details",
                                                      collection_id=checks["collection"]["collection_id"])
        checks["own_revisions"] = recorder.call(client, who, "list_page_revisions", page_id=setup["own_pages"][who])
        checks["own_page"] = recorder.call(client, who, "get_page", page_id=setup["own_pages"][who])
        checks["own_expected"] = page_text(f"client {who}", own_lines)
        checks["own_successes"] = len(own_lines)
        checks["pasted_count"] = len(pasted)
    return checks


@pytest.fixture(scope="module")
def concurrent_run(galaxy, mcp, api_key):
    histories = [mcp.call_ok("create_history", name=f"concurrency client {who}", api_key=api_key)["id"]
                 for who in range(CLIENTS)]
    seed = fetch(galaxy, api_key, histories[0], {"src": "pasted", "paste_content": SEED_CONTENT, "ext": "tabular"})
    assert seed["state"] == "ok"
    own_pages = [mcp.call_ok("create_page", title=f"client {who}", slug=f"concurrency-own-{who}-{histories[who]}",
                             content=page_text(f"client {who}", []), api_key=api_key)["page_id"]
                 for who in range(CLIENTS)]
    shared_initial = page_text("shared", [])
    shared = mcp.call_ok("create_page", title="shared", slug=f"concurrency-shared-{histories[0]}",
                         content=shared_initial, api_key=api_key)["page_id"]
    setup = {"histories": histories, "seed_dataset": seed["id"], "own_pages": own_pages, "shared_page": shared}
    recorder = Recorder(api_key)
    log_start = len(galaxy.log_text())
    audit_start = len(audit_lines(galaxy.audit_log))
    start = threading.Barrier(CLIENTS)
    began = time.monotonic()
    with ThreadPoolExecutor(CLIENTS) as pool:
        futures = [pool.submit(run_client, galaxy.mcp_url, api_key, who, setup, recorder, start)
                   for who in range(CLIENTS)]
        checks = [future.result(timeout=1500) for future in futures]
    wall = time.monotonic() - began
    audited = audit_lines(galaxy.audit_log)[audit_start:]  # the clients' calls only: nothing else ran meanwhile
    revisions = mcp.call_ok("list_page_revisions", page_id=shared, api_key=api_key)["revisions"]
    revision_contents = [
        mcp.call_ok("get_page_revision", page_id=shared, revision_id=revision["id"], api_key=api_key)
        for revision in revisions
    ]
    latest = mcp.call_ok("get_page", page_id=shared, api_key=api_key)
    log = galaxy.log_text()[log_start:]
    figures = {
        "database": TEST_DATABASE,
        "clients": CLIENTS,
        "calls": recorder.calls,
        "failures": len(recorder.failures),
        "wall_seconds": round(wall, 1),
        "calls_per_second": round(recorder.calls / wall, 1),
        "shared_page_updates": len(recorder.shared_updates),
        "shared_page_revisions": len(revisions),
    }
    print(f"\nconcurrency figures: {figures}")
    return {
        "recorder": recorder,
        "checks": checks,
        "figures": figures,
        "shared_initial": shared_initial,
        "revisions": revisions,
        "revision_contents": revision_contents,
        "latest": latest,
        "server_log": log,
        "audited": audited,
    }


def test_every_call_of_every_client_succeeds(concurrent_run, record_testsuite_property):
    for key, value in concurrent_run["figures"].items():
        record_testsuite_property(f"concurrency_{key}", value)  # junit xml (xunit2 has no per-test properties)
    recorder = concurrent_run["recorder"]
    assert recorder.calls >= CLIENTS * CALLS_PER_CLIENT
    assert recorder.failures == []


def test_the_audit_trail_has_one_complete_line_per_call(concurrent_run):
    recorder, audited = concurrent_run["recorder"], concurrent_run["audited"]
    assert all(complete(line) for line in audited)
    assert Counter(line["tool"] for line in audited) == recorder.tools
    assert {line["outcome"] for line in audited} == {"ok"}
    assert len({line["user_id"] for line in audited}) == 1 and audited[0]["user_id"]
    assert recorder.api_key not in json.dumps(audited)


def test_no_server_error_in_galaxys_log(concurrent_run):
    errors = [line for line in concurrent_run["server_log"].splitlines() if SERVER_ERROR.search(line)]
    assert errors == []


def test_every_paste_reads_back_byte_for_byte(concurrent_run):
    for checks in concurrent_run["checks"]:
        assert checks["pasted_count"] == PASTES_PER_CLIENT
        assert checks["wait"]["all_terminal"] is True, checks["wait"]
        assert set(checks["wait"]["state_counts"]) == {"ok"}, checks["wait"]
        assert list(checks["pasted_back"].values()) == [True] * PASTES_PER_CLIENT, checks["who"]


def test_every_collection_holds_its_clients_pastes(concurrent_run):
    for checks in concurrent_run["checks"]:
        made, read = checks["collection"], checks["collection_read"]
        assert made["element_count"] == PASTES_PER_CLIENT
        assert read is not None and read["collection"]["element_count"] == PASTES_PER_CLIENT


def test_own_pages_keep_every_update_in_order(concurrent_run):
    for checks in concurrent_run["checks"]:
        assert checks["own_successes"] == OWN_PAGE_UPDATES
        assert len(checks["own_revisions"]["revisions"]) == 1 + OWN_PAGE_UPDATES
        assert checks["own_page"]["content_editor"] == checks["own_expected"]


def test_shared_page_records_one_revision_per_successful_update(concurrent_run):
    updates = concurrent_run["recorder"].shared_updates
    assert len(updates) == CLIENTS * SHARED_PAGE_UPDATES
    # The creation revision plus exactly one per successful update: none lost, none duplicated.
    assert len(concurrent_run["revisions"]) == 1 + len(updates)
    recorded = sorted(revision["content_editor"] for revision in concurrent_run["revision_contents"][1:])
    assert recorded == sorted(updates)
    assert concurrent_run["revision_contents"][0]["content_editor"] == concurrent_run["shared_initial"]
    assert concurrent_run["latest"]["content_editor"] in updates
    # Exactly one revision is the latest: the one get_page names and shows. Galaxy lists revisions by
    # creation time, and two saves racing can commit in the other order, so it need not be the last listed.
    [newest] = [revision for revision in concurrent_run["revision_contents"] if revision["is_latest"]]
    assert newest["id"] == concurrent_run["latest"]["latest_revision_id"]
    assert newest["content_editor"] == concurrent_run["latest"]["content_editor"]
