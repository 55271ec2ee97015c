"""Issue 3: ranged peek_dataset_content through /api/mcp on a real Galaxy."""

import base64
import gzip
import random
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import (
    fetch,
    missing_id,
    wait_for_state,
)
from galaxy_mcp_analysis.testing import (
    LaunchedGalaxy,
    McpClient,
    rest,
)
from galaxy_mcp_analysis.testing.memory import PeakRss

MIB = 1024 * 1024


def gff3_text(lines: int) -> bytes:
    """A GFF3-like file with multi-byte characters on every line (2-, 3- and 4-byte UTF-8)."""
    rows = ["##gff-version 3\n"]
    for i in range(lines):
        rows.append(f"chr{i % 22 + 1}\tsynth\tgene\t{i * 100 + 1}\t{i * 100 + 90}\t.\t+\t.\tID=g{i};Name=Gène-αβ-🧬-{i}\n")
    return "".join(rows).encode()


@pytest.fixture(scope="module")
def reading_history(mcp, api_key):
    return mcp.call_ok("create_history", name="reading", api_key=api_key)["id"]


@pytest.fixture(scope="module")
def big_gff(galaxy, api_key, reading_history, file_server):
    data = gff3_text(40_000)  # about 3 MB
    url = file_server("genes.gff3", data)
    dataset = fetch(galaxy, api_key, reading_history, {"src": "url", "url": url, "ext": "gff3", "name": "genes.gff3"})
    assert dataset["state"] == "ok"
    assert len(data) > 2 * MIB
    return dataset["id"], data


def page_through(mcp, api_key, dataset_id, **arguments):
    chunks, offset = [], 0
    for _ in range(10_000):
        chunk = mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, offset=offset, api_key=api_key, **arguments)
        chunks.append(chunk)
        if chunk["eof"]:
            assert chunk["next_offset"] is None
            return chunks
        assert chunk["next_offset"] == chunk["offset"] + chunk["length"]
        offset = chunk["next_offset"]
    raise AssertionError("paging did not end")


def test_whole_line_pages_reassemble_the_file_byte_for_byte(mcp, api_key, big_gff):
    dataset_id, data = big_gff
    chunks = page_through(mcp, api_key, dataset_id, max_bytes=256 * 1024)
    assert "".join(chunk["content"] for chunk in chunks).encode() == data
    assert len(chunks) >= 9
    assert all(chunk["content"].endswith("\n") for chunk in chunks[:-1])
    assert all(chunk["length"] <= 256 * 1024 for chunk in chunks)
    first = chunks[0]
    assert (first["extension"], first["state"], first["file_size"], first["encoding"]) == ("gff3", "ok", len(data), "utf-8")
    assert first["truncated"] is True and chunks[-1]["truncated"] is False


def test_odd_sized_pages_without_whole_lines_never_split_utf8(mcp, api_key, big_gff):
    dataset_id, data = big_gff
    chunks = page_through(mcp, api_key, dataset_id, max_bytes=99_991, whole_lines=False)
    assert "".join(chunk["content"] for chunk in chunks).encode() == data
    assert any(not chunk["content"].endswith("\n") for chunk in chunks[:-1])  # really cut mid-line


def test_any_offset_starts_on_a_character_boundary(mcp, api_key, big_gff):
    dataset_id, data = big_gff
    for requested in random.Random(7).sample(range(len(data)), 40):
        chunk = mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, offset=requested, max_bytes=37,
                            whole_lines=False, api_key=api_key)
        start = chunk["offset"]
        assert requested <= start <= requested + 3
        assert chunk["offset_adjusted"] == (start != requested)
        assert data[start] & 0xC0 != 0x80  # not a UTF-8 continuation byte
        assert chunk["content"].encode() == data[start : start + chunk["length"]]


def test_reading_near_the_end_of_a_large_file(mcp, api_key, big_gff):
    dataset_id, data = big_gff
    chunk = mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, offset=len(data) - 500, max_bytes=65536,
                        api_key=api_key)
    assert chunk["eof"] is True
    assert data.endswith(chunk["content"].encode())


def test_offset_past_the_end_is_empty_and_eof(mcp, api_key, big_gff):
    dataset_id, data = big_gff
    chunk = mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, offset=len(data) + 10, api_key=api_key)
    assert (chunk["content"], chunk["length"], chunk["eof"], chunk["next_offset"]) == ("", 0, True, None)


def test_max_bytes_above_the_cap_is_clamped_and_says_so(mcp, api_key, big_gff):
    dataset_id, data = big_gff
    chunk = mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, max_bytes=5 * MIB, api_key=api_key)
    assert chunk["capped"] is True and chunk["max_bytes_applied"] == MIB
    assert 0 < chunk["length"] <= MIB
    uncapped = mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, max_bytes=1000, api_key=api_key)
    assert uncapped["capped"] is False and uncapped["max_bytes_applied"] == 1000


@pytest.mark.parametrize(("arguments", "named"), [({"offset": -1}, "offset"), ({"max_bytes": 0}, "max_bytes")])
def test_negative_offset_and_empty_max_bytes_are_validation_errors(mcp, api_key, big_gff, arguments, named):
    error = mcp.call_error("peek_dataset_content", dataset_id=big_gff[0], api_key=api_key, **arguments)
    assert error.startswith(f"[VALIDATION_ERROR] {named} must be an integer >= ")
    assert "\nSuggestion: " in error


def test_gzip_text_is_read_decompressed(galaxy, mcp, api_key, reading_history, file_server):
    fastq = "".join(f"@read{i}\nACGTÄCGT\n+\nIIIIIIII\n".replace("Ä", "A") for i in range(2000)).encode()
    url = file_server("reads.fastq.gz", gzip.compress(fastq))
    dataset = fetch(galaxy, api_key, reading_history, {"src": "url", "url": url, "ext": "fastqsanger.gz"})
    assert dataset["state"] == "ok", dataset
    chunks = page_through(mcp, api_key, dataset["id"], max_bytes=10_000)
    assert "".join(chunk["content"] for chunk in chunks).encode() == fastq
    assert chunks[0]["compressed"] == "gzip"
    assert chunks[0]["file_size"] < len(fastq)  # the stored (compressed) size; offsets count decompressed bytes


@pytest.fixture(scope="module")
def sqlite_dataset(galaxy, api_key, reading_history, file_server, tmp_path_factory):
    path = tmp_path_factory.mktemp("sqlite") / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table t (x)")
        db.executemany("insert into t values (?)", [(i,) for i in range(100)])
    data = path.read_bytes()
    dataset = fetch(galaxy, api_key, reading_history, {"src": "url", "url": file_server("db.sqlite", data), "ext": "sqlite"})
    assert dataset["state"] == "ok", dataset
    return dataset["id"], data


def test_binary_datatypes_are_refused_naming_the_datatype(mcp, api_key, sqlite_dataset):
    error = mcp.call_error("peek_dataset_content", dataset_id=sqlite_dataset[0], api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] ")
    assert "binary datatype 'sqlite'" in error
    assert "allow_binary=true" in error.split("Suggestion:")[1]


def test_binary_is_base64_when_allowed(mcp, api_key, sqlite_dataset):
    dataset_id, data = sqlite_dataset
    chunks = page_through(mcp, api_key, dataset_id, max_bytes=3000, allow_binary=True)
    assert {chunk["encoding"] for chunk in chunks} == {"base64"}
    assert b"".join(base64.b64decode(chunk["content"]) for chunk in chunks) == data


def test_a_deferred_dataset_is_not_ready_and_names_its_state(galaxy, mcp, api_key, reading_history, file_server):
    url = file_server("later.txt", b"later\n")
    dataset = fetch(galaxy, api_key, reading_history, {"src": "url", "url": url, "ext": "txt", "deferred": True})
    assert dataset["state"] == "deferred"
    error = mcp.call_error("peek_dataset_content", dataset_id=dataset["id"], api_key=api_key)
    assert error.startswith(f"[NOT_READY] Dataset {dataset['id']} is not ready: its state is 'deferred'")


def test_new_queued_running_and_paused_datasets_are_not_ready(galaxy, mcp, api_key, reading_history, held_files):
    """Jobs held back on purpose. Upload A's URL answers only when released, so A stays running and holds the
    test server's one Celery worker; upload B waits queued behind it; a tool run on A waits, its output new.
    Failing both uploads then pauses the tool's job: its output waits on a failed input."""
    url_a, _ = held_files.hold("held-a.txt", b"late\n")
    url_b, _ = held_files.hold("held-b.txt", b"later\n")
    upload = fetch(galaxy, api_key, reading_history, {"src": "url", "url": url_a, "ext": "txt"}, wait=False)["id"]
    assert wait_for_state(galaxy, api_key, upload, "running") == "running"  # A's fetch waits on its URL
    behind = fetch(galaxy, api_key, reading_history, {"src": "url", "url": url_b, "ext": "txt"}, wait=False)["id"]
    run = mcp.call_ok("run_tool", history_id=reading_history, tool_id="cat1",
                      inputs={"input1": {"src": "hda", "id": upload}}, api_key=api_key)
    downstream = run["outputs"][0]["id"]
    try:
        expected = {upload: "running", behind: "queued", downstream: "new"}
        assert {dataset_id: rest(galaxy.galaxy_url, f"/api/datasets/{dataset_id}", api_key)["state"]
                for dataset_id in expected} == expected
        for dataset_id, state in expected.items():
            error = mcp.call_error("peek_dataset_content", dataset_id=dataset_id, api_key=api_key)
            assert error.startswith(f"[NOT_READY] Dataset {dataset_id} is not ready: its state is '{state}'"), error
            assert "get_job_status" in error and "paused" not in error
    finally:
        held_files.fail("held-a.txt")
        held_files.fail("held-b.txt")
    assert wait_for_state(galaxy, api_key, upload, "error") == "error"
    assert wait_for_state(galaxy, api_key, downstream, "paused") == "paused"
    error = mcp.call_error("peek_dataset_content", dataset_id=downstream, api_key=api_key)
    assert error.startswith(f"[NOT_READY] Dataset {downstream} is not ready: its state is 'paused'"), error
    assert "A paused dataset waits on a failed input: fix that first." in error


def test_an_errored_dataset_is_readable(galaxy, mcp, api_key, reading_history):
    # Galaxy's upload of a missing URL ends in state error; its (empty) file is still there.
    dataset = fetch(galaxy, api_key, reading_history, {"src": "url", "url": "http://127.0.0.1:9/missing", "ext": "txt"})
    assert dataset["state"] == "error"
    chunk = mcp.call_ok("peek_dataset_content", dataset_id=dataset["id"], api_key=api_key)
    assert chunk["state"] == "error" and chunk["eof"] is True


def test_a_purged_dataset_is_an_error(galaxy, mcp, api_key, reading_history):
    dataset = fetch(galaxy, api_key, reading_history, {"src": "pasted", "paste_content": "gone\n", "ext": "txt"})
    rest(galaxy.galaxy_url, f"/api/histories/{reading_history}/contents/{dataset['id']}?purge=true", api_key,
         method="DELETE")
    deadline = time.monotonic() + 60  # Galaxy purges the file in a Celery task
    while not rest(galaxy.galaxy_url, f"/api/datasets/{dataset['id']}", api_key)["purged"]:
        assert time.monotonic() < deadline, "Galaxy did not purge the dataset"
        time.sleep(0.2)
    error = mcp.call_error("peek_dataset_content", dataset_id=dataset["id"], api_key=api_key)
    assert error.startswith(f"[NOT_FOUND] Dataset {dataset['id']} ")
    assert "purged" in error


def test_a_collection_id_is_never_silently_read_as_a_dataset(galaxy, mcp, api_key, reading_history):
    element = fetch(galaxy, api_key, reading_history, {"src": "pasted", "paste_content": "e1\n", "ext": "txt"})
    collection = rest(
        galaxy.galaxy_url,
        "/api/dataset_collections",
        api_key,
        {
            "history_id": reading_history,
            "collection_type": "list",
            "name": "my samples",
            "element_identifiers": [{"name": "e1", "src": "hda", "id": element["id"]}],
        },
    )
    result = mcp.call(("peek_dataset_content"), {"dataset_id": collection["id"], "api_key": api_key})
    if result.is_error:
        text = result.content[0].text
        assert text.startswith(f"[VALIDATION_ERROR] {collection['id']} is a dataset collection ('my samples')")
        assert "get_collection_details" in text
    else:  # Galaxy ids carry no kind: the number may also be a dataset this user can read
        assert "dataset collection 'my samples'" in result.structured_content["warning"]


def test_unknown_and_malformed_ids(galaxy, mcp, api_key):
    error = mcp.call_error("peek_dataset_content", dataset_id="not-an-id", api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] ")
    unknown = missing_id(galaxy)  # well-formed: it decodes, but names no dataset
    error = mcp.call_error("peek_dataset_content", dataset_id=unknown, api_key=api_key)
    assert error.startswith(f"[NOT_FOUND] No history dataset with id {unknown} exists.")


def test_another_users_private_dataset_is_refused_and_leaks_nothing(galaxy, mcp, api_key, other_user_key):
    other_history = mcp.call_ok("create_history", name="other", api_key=other_user_key)["id"]
    secret = "TOP-SECRET-SEQUENCE-ACGT\n"
    dataset = fetch(galaxy, other_user_key, other_history,
                    {"src": "pasted", "paste_content": secret, "ext": "txt", "name": "confidential-name"})
    rest(galaxy.galaxy_url, f"/api/datasets/{dataset['id']}/permissions", other_user_key,
         {"action": "make_private"}, method="PUT")
    error = mcp.call_error("peek_dataset_content", dataset_id=dataset["id"], api_key=api_key)
    assert error.startswith("[AUTHORIZATION_ERROR] ")
    assert "TOP-SECRET" not in error and "confidential-name" not in error
    # The owner still reads it.
    assert mcp.call_ok("peek_dataset_content", dataset_id=dataset["id"], api_key=other_user_key)["content"] == secret


def test_another_users_public_dataset_follows_galaxys_sharing_rules(galaxy, mcp, api_key, other_user_key):
    # Galaxy makes new datasets readable by id unless their permissions are private; REST agrees.
    other_history = mcp.call_ok("create_history", name="other-public", api_key=other_user_key)["id"]
    dataset = fetch(galaxy, other_user_key, other_history, {"src": "pasted", "paste_content": "shared\n", "ext": "txt"})
    rest_view = rest(galaxy.galaxy_url, f"/api/datasets/{dataset['id']}", api_key)
    assert rest_view["state"] == "ok"
    assert mcp.call_ok("peek_dataset_content", dataset_id=dataset["id"], api_key=api_key)["content"] == "shared\n"


def test_descriptions_steer_agents_from_download_dataset_to_peek(mcp):
    tools = {tool.name: tool for tool in mcp.list_tools()}
    download = tools["download_dataset"].description
    assert "Returns a URL, not the content" in download and "peek_dataset_content" in download
    peek = tools["peek_dataset_content"]
    for section in ("Example:", "Errors:", "Next:", "next_offset", "[NOT_READY]"):
        assert section in peek.description
    assert peek.annotations.read_only_hint is True and peek.annotations.destructive_hint is False
    assert peek.annotations.idempotent_hint is True and peek.annotations.open_world_hint is False
    assert set(peek.input_schema["required"]) == {"dataset_id"}  # api_key may come as the x-api-key header



def test_history_contents_filters_keep_only_the_items_their_descriptions_name(galaxy, mcp, api_key):
    history_id = mcp.call_ok("create_history", name="contents filters", api_key=api_key)["id"]
    shown, hidden, deleted = (
        fetch(galaxy, api_key, history_id, {"src": "pasted", "paste_content": f"{name}\n", "ext": "txt"})["id"]
        for name in ("shown", "hidden", "deleted")
    )
    mcp.call_ok("update_dataset", dataset_id=hidden, visible=False, api_key=api_key)
    mcp.call_ok("delete_history_items", history_id=history_id, items=[{"src": "hda", "id": deleted}], api_key=api_key)

    def ids(**filters):
        contents = mcp.call_ok("get_history_contents", history_id=history_id, api_key=api_key, **filters)["contents"]
        return {item["id"] for item in contents}

    assert ids() == {shown, hidden, deleted}
    assert (ids(visible=False), ids(deleted=True)) == ({hidden}, {deleted})
    assert (ids(visible=True), ids(deleted=False)) == ({shown, deleted}, {shown, hidden})
    schema = {tool.name: tool for tool in mcp.list_tools()}["get_history_contents"].input_schema["properties"]
    assert schema["visible"]["description"].startswith("false: only hidden items")
    assert schema["deleted"]["description"].startswith("true: only deleted items")


def test_peek_returns_the_content_and_galaxys_preview_as_described(mcp, api_key, big_gff):
    chunk = mcp.call_ok("peek_dataset_content", dataset_id=big_gff[0], max_bytes=300, api_key=api_key)
    assert chunk["content"].startswith("##gff-version 3\n") and len(chunk["content"].encode()) <= 300
    assert isinstance(chunk["peek"], str)
    description = {tool.name: tool for tool in mcp.list_tools()}["peek_dataset_content"].description
    assert "Returns content plus" in description and "peek (Galaxy's stored preview)" in description


# ---- every dataset of a collection in one call (issue 43) ----

ELEMENTS = {"a": "alpha\tbeta\ngamma\tdelta\nepsilon\tzeta\n", "b": "omega\tlast\n", "c": "second to last\n"}


def make_list(galaxy, api_key, history_id, elements: list[tuple[str, str]], collection_type="list") -> str:
    return rest(galaxy.galaxy_url, "/api/dataset_collections", api_key, {
        "history_id": history_id, "collection_type": collection_type, "name": "isolates",
        "element_identifiers": [{"name": name, "src": "hda", "id": dataset_id} for name, dataset_id in elements],
    })["id"]


@pytest.fixture(scope="module")
def isolates(galaxy, mcp, api_key, reading_history, sqlite_dataset):
    """A list of three text datasets, a binary one and a purged one, by element identifier -> dataset id."""
    pasted = {"src": "pasted", "ext": "tabular"}
    ids = {name: fetch(galaxy, api_key, reading_history, {**pasted, "paste_content": text})["id"]
           for name, text in ELEMENTS.items()}
    ids["binary"] = sqlite_dataset[0]
    ids["gone"] = fetch(galaxy, api_key, reading_history, {**pasted, "paste_content": "gone\n"})["id"]
    collection = make_list(galaxy, api_key, reading_history, list(ids.items()))
    mcp.call_ok("delete_history_items", history_id=reading_history, items=[{"src": "hda", "id": ids["gone"]}],
                purge=True, api_key=api_key)
    deadline = time.monotonic() + 60  # Galaxy purges the file in a Celery task
    while not rest(galaxy.galaxy_url, f"/api/datasets/{ids['gone']}", api_key)["purged"]:
        assert time.monotonic() < deadline, "Galaxy did not purge the dataset"
        time.sleep(0.2)
    return collection, ids


def test_every_element_of_a_collection_is_read_in_one_call(mcp, api_key, isolates):
    collection, ids = isolates
    result = mcp.call("peek_collection_content", {"collection_id": collection, "api_key": api_key})
    assert not result.is_error, result.content
    read = result.structured_content
    assert (read["element_count"], read["element_offset"], read["next_element_offset"]) == (5, 0, None)
    assert (read["collection_type"], read["name"], read["capped"]) == ("list", "isolates", False)
    elements = {element["element_identifier"]: element for element in read["elements"]}
    assert list(elements) == ["a", "b", "c", "binary", "gone"]
    for name, text in ELEMENTS.items():
        element = elements[name]
        assert (element["content"], element["eof"], element["dataset_id"]) == (text, True, ids[name]), element
        assert (element["extension"], element["state"], element["next_offset"]) == ("tabular", "ok", None), element
    # An element that cannot be read says why, with the code peek_dataset_content would give; the rest are read.
    assert elements["binary"]["error"].startswith("[VALIDATION_ERROR] Dataset") and "'sqlite'" in elements["binary"][
        "error"] and "content" not in elements["binary"]
    assert elements["gone"]["error"].startswith(f"[NOT_FOUND] Dataset {ids['gone']} ") and "purged" in elements[
        "gone"]["error"]
    # The text block carries each content once, raw, under its element's line.
    text = result.content[0].text
    assert text.count("--- ") == 5 and all(f"\n{content}" in text for content in ELEMENTS.values()), text


def test_a_collection_is_read_by_element_pages_and_byte_ranges(mcp, api_key, isolates):
    collection, ids = isolates
    seen, element_offset = [], 0
    while element_offset is not None:
        page = mcp.call_ok("peek_collection_content", collection_id=collection, element_offset=element_offset,
                           max_elements=2, api_key=api_key)
        assert len(page["elements"]) <= 2 and page["element_offset"] == element_offset, page
        seen += [element["element_identifier"] for element in page["elements"]]
        element_offset = page["next_element_offset"]
    assert seen == ["a", "b", "c", "binary", "gone"]
    # The same byte range of each dataset; next_offset continues each one with peek_dataset_content.
    # Whole lines: a line longer than max_bytes is cut (line_truncated), one that fits ends the chunk.
    ranged = mcp.call_ok("peek_collection_content", collection_id=collection, offset=6, max_bytes=6, max_elements=3,
                         api_key=api_key)
    assert [element["content"] for element in ranged["elements"]] == ["beta\n", "last\n", " to la"]
    assert [element["line_truncated"] for element in ranged["elements"]] == [False, False, True]
    first = ranged["elements"][0]
    rest_of_a = mcp.call_ok("peek_dataset_content", dataset_id=ids["a"], offset=first["next_offset"], api_key=api_key)
    assert ELEMENTS["a"][:6] + first["content"] + rest_of_a["content"] == ELEMENTS["a"]
    assert ranged["next_element_offset"] == 3


def test_a_collection_read_stays_within_the_server_cap(mcp, api_key, isolates):
    """Every element of a call shares the server's read cap: a large max_bytes reads fewer elements per call."""
    collection, _ = isolates
    read = mcp.call_ok("peek_collection_content", collection_id=collection, max_bytes=600_000, api_key=api_key)
    assert (read["max_bytes_applied"], len(read["elements"]), read["next_element_offset"], read["capped"]) == (
        600_000, 1, 1, True), read
    huge = mcp.call_ok("peek_collection_content", collection_id=collection, max_bytes=5 * MIB, api_key=api_key)
    assert (huge["max_bytes_applied"], len(huge["elements"]), huge["capped"]) == (MIB, 1, True), huge


def test_a_nested_collection_is_read_in_order_with_each_elements_path(galaxy, mcp, api_key, reading_history):
    texts = {"s1": "one\n", "s2": "two\n"}
    ids = {name: fetch(galaxy, api_key, reading_history, {"src": "pasted", "paste_content": text, "ext": "txt"})["id"]
           for name, text in texts.items()}
    nested = rest(galaxy.galaxy_url, "/api/dataset_collections", api_key, {
        "history_id": reading_history, "collection_type": "list:list", "name": "pairs",
        "element_identifiers": [{"name": "outer", "src": "new_collection", "collection_type": "list",
                                 "element_identifiers": [{"name": n, "src": "hda", "id": i} for n, i in ids.items()]}],
    })["id"]
    read = mcp.call_ok("peek_collection_content", collection_id=nested, api_key=api_key)
    assert read["collection_type"] == "list:list" and read["element_count"] == 2
    assert [(e["element_identifier"], e["path"], e["content"]) for e in read["elements"]] == [
        ("s1", ["outer", "s1"], "one\n"), ("s2", ["outer", "s2"], "two\n")]


def test_a_collection_read_refuses_bad_pages_and_other_users_collections(galaxy, mcp, api_key, other_user_key,
                                                                         isolates):
    collection, _ = isolates
    for arguments, named in (({"element_offset": 5}, "element_offset 5 is past the last element"),
                             ({"element_offset": -1}, "element_offset"), ({"max_elements": 0}, "max_elements"),
                             ({"max_elements": 101}, "max_elements must be at most 100"), ({"offset": -1}, "offset"),
                             ({"max_bytes": 0}, "max_bytes")):
        error = mcp.call_error("peek_collection_content", collection_id=collection, api_key=api_key, **arguments)
        assert error.startswith("[VALIDATION_ERROR] ") and named in error, (arguments, error)
    unknown = missing_id(galaxy)
    error = mcp.call_error("peek_collection_content", collection_id=unknown, api_key=api_key)
    assert error.startswith(f"[NOT_FOUND] No history collection with id {unknown}"), error
    other_history = mcp.call_ok("create_history", name="other-collection", api_key=other_user_key)["id"]
    secret = fetch(galaxy, other_user_key, other_history, {"src": "pasted", "paste_content": "SECRET-ELEMENT\n",
                                                           "ext": "txt"})["id"]
    theirs = make_list(galaxy, other_user_key, other_history, [("x", secret)])
    error = mcp.call_error("peek_collection_content", collection_id=theirs, api_key=api_key)
    assert error.startswith("[AUTHORIZATION_ERROR] ") and "SECRET" not in error, error


def test_several_datasets_are_read_in_one_call_and_each_unreadable_one_says_why(galaxy, mcp, api_key, isolates):
    _, ids = isolates
    chosen = [ids["a"], ids["b"], ids["binary"], ids["gone"], ids["a"]]  # a repeated id is read once
    result = mcp.call("peek_datasets_content", {"dataset_ids": chosen, "api_key": api_key})
    assert not result.is_error, result.content
    read = {entry["dataset_id"]: entry for entry in result.structured_content["datasets"]}
    assert list(read) == [ids["a"], ids["b"], ids["binary"], ids["gone"]]
    for name in ("a", "b"):
        assert (read[ids[name]]["content"], read[ids[name]]["eof"]) == (ELEMENTS[name], True), read[ids[name]]
    assert read[ids["binary"]]["error"].startswith("[VALIDATION_ERROR] ") and "content" not in read[ids["binary"]]
    assert read[ids["gone"]]["error"].startswith("[NOT_FOUND] ") and "purged" in read[ids["gone"]]["error"]
    text = result.content[0].text  # each content once, raw, under its dataset's line
    assert all(f"\n{ELEMENTS[name]}" in text for name in ("a", "b")), text
    shared = mcp.call_ok("peek_datasets_content", dataset_ids=[ids["a"], ids["b"], ids["c"]], max_bytes=600_000,
                         api_key=api_key)
    assert (shared["max_bytes_applied"], shared["capped"]) == (MIB // 3, True), shared  # one cap for all


def test_a_read_of_several_datasets_refuses_before_reading_anything(galaxy, mcp, api_key, other_user_key,
                                                                    isolates):
    _, ids = isolates
    for chosen, named in (([], "pass 1 to 50"), ([f"{i:016x}" for i in range(51)], "pass 1 to 50"),
                          (["not-an-id"], "not a valid encoded id")):
        error = mcp.call_error("peek_datasets_content", dataset_ids=chosen, api_key=api_key)
        assert error.startswith("[VALIDATION_ERROR] ") and named in error, (chosen[:2], error)
    unknown = missing_id(galaxy)
    error = mcp.call_error("peek_datasets_content", dataset_ids=[ids["a"], unknown], api_key=api_key)
    assert error.startswith("[NOT_FOUND] ") and unknown in error, error
    other_history = mcp.call_ok("create_history", name="other-datasets", api_key=other_user_key)["id"]
    secret = fetch(galaxy, other_user_key, other_history, {"src": "pasted", "paste_content": "SECRET-DATASET\n",
                                                           "ext": "txt"})["id"]
    rest(galaxy.galaxy_url, f"/api/datasets/{secret}/permissions", other_user_key, {"action": "make_private"},
         method="PUT")  # Galaxy's new datasets are readable by id until made private
    error = mcp.call_error("peek_datasets_content", dataset_ids=[ids["a"], secret], api_key=api_key)
    assert error.startswith("[AUTHORIZATION_ERROR] ") and "SECRET" not in error and "alpha" not in error, error


# ---- a non-default object store: Galaxy's `distributed` store over two disk backends ----

#: Weight 0 keeps "first" readable but never picked for new datasets, so every new file lands in "second",
#: outside Galaxy's file_path: only the distributed store's lookup finds it.
DISTRIBUTED_STORE = """\
type: distributed
backends:
  - id: first
    type: disk
    weight: 0
    files_dir: {root}/first/files
    extra_dirs:
      - type: job_work
        path: {root}/first/jobs
      - type: temp
        path: {root}/first/tmp
  - id: second
    type: disk
    weight: 1
    files_dir: {root}/second/files
    extra_dirs:
      - type: job_work
        path: {root}/second/jobs
      - type: temp
        path: {root}/second/tmp
"""
#: The server's peak memory growth a series of 1 MiB reads may cause (the bench's budget: the read and its JSON).
READ_MEMORY_BUDGET = 12 * MIB


@pytest.fixture(scope="module")
def distributed_galaxy(tmp_path_factory, new_database_url):
    """A second Galaxy (the same launcher) whose object_store_config_file is a distributed store."""
    root = tmp_path_factory.mktemp("distributed")
    config = root / "object_store_conf.yml"
    config.write_text(DISTRIBUTED_STORE.format(root=root))
    server = LaunchedGalaxy(root / "data", database_url=new_database_url(),
                            env={"GALAXY_CONFIG_OVERRIDE_OBJECT_STORE_CONFIG_FILE": str(config)})
    server.start()
    yield server, root
    server.stop()


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="measures peak memory through /proc")
def test_a_ranged_read_through_a_distributed_object_store_stays_small(distributed_galaxy, file_server):
    server, root = distributed_galaxy
    line = b"".join(b"%07d\tACGT\n" % i for i in range(4096))
    data = line * (48 * MIB // len(line))
    url = file_server("distributed.txt", data)
    with McpClient(server.mcp_url) as client:
        key = server.api_key
        history = client.call_ok("create_history", name="distributed store", api_key=key)["id"]
        dataset = fetch(server, key, history, {"src": "url", "url": url, "ext": "txt"})
        assert dataset["state"] == "ok"
        # Stored by the distributed store, in its second backend, not in Galaxy's file_path.
        stored = rest(server.galaxy_url, f"/api/datasets/{dataset['id']}?keys=object_store_id", key)
        assert stored["object_store_id"] == "second"
        [stored_file] = (root / "second" / "files").rglob("dataset_*.dat")
        assert stored_file.stat().st_size == len(data)
        assert not list((server.data_dir / "objects").rglob("dataset_*.dat"))

        def read(offset):
            return client.call_ok("peek_dataset_content", dataset_id=dataset["id"], offset=offset, max_bytes=MIB,
                                  whole_lines=False, api_key=key)

        read(0)  # warm the code paths, as the bench does
        read(len(data) - MIB)
        offsets = [len(data) - MIB, len(data) // 2] + [random.randrange(0, len(data) - MIB) for _ in range(8)]
        with PeakRss(server.process.pid) as rss:
            chunks = [read(offset) for offset in offsets]
    for offset, chunk in zip(offsets, chunks):
        assert chunk["content"].encode() == data[offset:offset + MIB]
    print(f"\ndistributed store: peak RSS growth over {len(offsets)} reads of 1 MiB of a {len(data) / MIB:.0f} MiB "
          f"file: {rss.growth / MIB:.2f} MiB")
    assert rss.growth < READ_MEMORY_BUDGET, f"{rss.growth / MIB:.1f} MiB for reads of 1 MiB"
