"""create_collection with pasted elements: a collection of small texts in one call (issue 43), on a real Galaxy.

Every agent trial made its list of four tables with four create_dataset_from_text calls and one
create_collection; pasted elements make it one call, usable at once as a mapped run's input.
"""

import pytest

from conftest import wait_for_dataset
from galaxy_mcp_analysis.testing import rest
from galaxy_mcp_analysis.testing.audit import last_audit_line
from test_making_inputs import (
    history_snapshot,
    MIB,
    outputs_by_identifier,
    wait_for_jobs_through_mcp,
)

#: Four isolates' gene tables, as the agents pasted them; one with CRLF and no final newline (kept as given).
TABLES = {
    "isolate1": "gene\tcount\nmecA\t3\nblaZ\t1\n",
    "isolate2": "gene\tcount\r\nmecA\t0\r\nvanA\t2",
    "isolate3": "gene\tcount\n",
    "isolate4": "gene\tcount\ntetM\t5\n  two spaces\tü🧬\n",
}


def pasted(name, content, **more):
    return {"name": name, "src": "pasted", "content": content, **more}


def test_a_pasted_list_is_made_in_one_call_and_mapped_over_at_once(galaxy, mcp, api_key, history_id):
    created = mcp.call_ok("create_collection", history_id=history_id, collection_type="list", name="isolates",
                          element_identifiers=[pasted(name, text, file_type="tabular") for name, text in TABLES.items()],
                          api_key=api_key)
    assert (created["name"], created["collection_type"], created["element_count"]) == ("isolates", "list", 4)
    assert {"collection_id", "hid", "populated_state", "elements", "job_ids", "pasted_dataset_ids"} <= created.keys()
    assert [element["identifier"] for element in created["elements"]] == list(TABLES)
    assert [element["id"] for element in created["elements"]] == created["pasted_dataset_ids"]
    assert all(element["state"] in ("new", "queued", "running", "ok") for element in created["elements"])
    assert len(created["job_ids"]) == 1  # one upload for the four texts
    assert "copied_elements" not in created  # the pasted datasets are the collection's own: no copies
    audited = last_audit_line(galaxy.audit_log)  # the audit trail lists what the call made
    assert (audited["tool"], audited["outcome"], audited["jobs"]) == ("create_collection", "ok", created["job_ids"])
    # By kind: Galaxy's ids are per kind, so a collection and a dataset may share an encoded id.
    assert audited["touched"]["created"] == {"collection": [created["collection_id"]],
                                             "dataset": created["pasted_dataset_ids"]}
    # At once, before the upload ends: Galaxy queues the mapped jobs behind it.
    run = mcp.call_ok("run_tool", history_id=history_id, tool_id="cat1", api_key=api_key,
                      inputs={"input1": {"batch": True, "values": [{"src": "hdca", "id": created["collection_id"]}]}})
    (implicit,) = run["implicit_collections"]
    assert implicit["element_count"] == 4 and len(run["jobs"]) == 4
    states = wait_for_jobs_through_mcp(mcp, api_key, created["job_ids"] + [job["id"] for job in run["jobs"]])
    assert set(states.values()) == {"ok"}
    assert outputs_by_identifier(mcp, api_key, implicit) == TABLES
    for dataset_id, (name, text) in zip(created["pasted_dataset_ids"], TABLES.items()):
        read = mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, api_key=api_key)
        assert read["content"] == text and read["eof"] is True, name  # byte for byte: CRLF, no final newline
        assert read["file_size"] == len(text.encode()) and read["extension"] == "tabular", name
        stored = rest(galaxy.galaxy_url, f"/api/datasets/{dataset_id}", api_key)
        assert stored["visible"] is False and stored["name"] == name  # hidden, like an upload's elements
    job = mcp.call_ok("get_job_status", job_id=created["job_ids"][0], api_key=api_key)["job"]
    assert job["tool_id"] == "__DATA_FETCH__"  # Galaxy's data fetch, as create_dataset_from_text


def test_a_pasted_pair_detects_its_datatype_and_keeps_dbkey(galaxy, mcp, api_key, history_id):
    created = mcp.call_ok("create_collection", history_id=history_id, collection_type="paired", api_key=api_key,
                          element_identifiers=[pasted("reverse", ">r\nTTGA\n", dbkey="hg38"),
                                               pasted("forward", ">f\nACGT\n", dbkey="hg38")])
    assert (created["collection_type"], created["element_count"]) == ("paired", 2)
    by_name = dict(zip(("reverse", "forward"), created["pasted_dataset_ids"]))
    assert {element["identifier"]: element["id"] for element in created["elements"]} == by_name
    for name, dataset_id in by_name.items():
        stored = wait_for_dataset(galaxy, api_key, dataset_id)
        assert (stored["state"], stored["extension"], stored["genome_build"]) == ("ok", "fasta", "hg38"), name


@pytest.fixture(scope="module")
def settled_history(galaxy, mcp, api_key):
    """A history with one finished dataset (so snapshots of it do not move on their own)."""
    history_id = mcp.call_ok("create_history", name="pasted refusals", api_key=api_key)["id"]
    dataset = mcp.call_ok("create_dataset_from_text", history_id=history_id, content="a\tb\n", api_key=api_key)
    assert wait_for_dataset(galaxy, api_key, dataset["dataset_id"])["state"] == "ok"
    return history_id, dataset["dataset_id"]


REFUSALS = {
    "empty": ("list", lambda ids: [pasted("A", "a\n"), pasted("B", "")], "element_identifiers[1]: content is empty"),
    "over-cap-together": ("list", lambda ids: [pasted("A", "x" * (MIB // 2 + 1)), pasted("B", "y" * (MIB // 2 + 1))],
                          f"the pasted contents are {MIB + 2} bytes together; the server accepts at most {MIB}"),
    "unknown-file-type": ("list", lambda ids: [pasted("A", "a\n", file_type="tabularr")],
                          "file_type 'tabularr' is not a datatype this Galaxy knows"),
    "duplicate-names": ("list", lambda ids: [pasted("A", "a\n"), pasted("A", "b\n")],
                        "element_identifiers[1]: the name 'A' is already used by element 0"),
    "mixed-with-a-dataset": ("list", lambda ids: [pasted("A", "a\n"), {"name": "B", "src": "hda", "id": ids}],
                             "existing items cannot be mixed with src 'pasted' elements"),
    "pair-names": ("paired", lambda ids: [pasted("R1", "a\n"), pasted("R2", "b\n")],
                   "a paired level has exactly ['forward', 'reverse'] as element names"),
    "no-content": ("list", lambda ids: [{"name": "A", "src": "pasted", "text": "a\n"}],
                   "unknown key(s) ['text']"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_each_refusal_names_the_fix_and_creates_nothing(galaxy, mcp, api_key, settled_history, case):
    history_id, dataset_id = settled_history
    collection_type, elements, message = REFUSALS[case]
    before = history_snapshot(galaxy, api_key, history_id)
    error = mcp.call_error("create_collection", history_id=history_id, collection_type=collection_type,
                           element_identifiers=elements(dataset_id), api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] ") and "\nSuggestion: " in error, error
    assert message in error, error
    assert history_snapshot(galaxy, api_key, history_id) == before


def test_another_users_history_is_refused_and_left_as_it_was(galaxy, mcp, api_key, other_user_key):
    history_id = mcp.call_ok("create_history", name="not yours", api_key=other_user_key)["id"]
    before = history_snapshot(galaxy, other_user_key, history_id)
    error = mcp.call_error("create_collection", history_id=history_id, collection_type="list",
                           element_identifiers=[pasted("A", "a\n")], api_key=api_key)
    assert error.startswith("[AUTHORIZATION_ERROR] ") or error.startswith("[NOT_FOUND] "), error
    assert history_snapshot(galaxy, other_user_key, history_id) == before
