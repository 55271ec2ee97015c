"""Issue 4: pasted datasets, create_collection and map-over in run_tool, through /api/mcp on a real Galaxy."""

import json
import time

import pytest

from conftest import (
    missing_id,
    wait_for_dataset,
)
from galaxy_mcp_analysis.testing import rest

MIB = 1024 * 1024
TERMINAL_JOB_STATES = {"ok", "error", "failed", "deleted", "skipped"}


def paste(galaxy, mcp, api_key, history_id, content, wait=True, **arguments):
    created = mcp.call_ok("create_dataset_from_text", history_id=history_id, content=content, api_key=api_key,
                          **arguments)
    if wait:
        assert wait_for_dataset(galaxy, api_key, created["dataset_id"])["state"] == "ok"
    return created


def history_snapshot(galaxy, api_key, history_id):
    """Everything in the history, hidden and deleted included, with what a failed write could change."""
    keys = ("id", "hid", "name", "history_content_type", "visible", "deleted", "purged", "state", "update_time")
    contents = rest(galaxy.galaxy_url, f"/api/histories/{history_id}/contents", api_key)
    history = rest(galaxy.galaxy_url, f"/api/histories/{history_id}", api_key)
    return [tuple(item.get(key) for key in keys) for item in contents], history["size"], history["update_time"]


def elements_of(galaxy, api_key, collection_id):
    """The collection as Galaxy's REST API shows it: {identifier: object id or nested dict}."""
    details = rest(galaxy.galaxy_url, f"/api/dataset_collections/{collection_id}?instance_type=history", api_key)

    def level(elements):
        return {
            e["element_identifier"]: level(e["object"]["elements"]) if e["element_type"] == "dataset_collection"
            else e["object"]["id"]
            for e in elements
        }

    return details["collection_type"], level(details["elements"])


def wait_for_jobs_through_mcp(mcp, api_key, job_ids, timeout=120):
    deadline = time.monotonic() + timeout
    pending = set(job_ids)
    while pending:
        for job_id in list(pending):
            if mcp.call_ok("get_job_status", job_id=job_id, api_key=api_key)["job"]["state"] in TERMINAL_JOB_STATES:
                pending.discard(job_id)
        assert time.monotonic() < deadline, f"jobs still running: {pending}"
        time.sleep(0.3)
    return {job_id: mcp.call_ok("get_job_status", job_id=job_id, api_key=api_key)["job"]["state"] for job_id in job_ids}


@pytest.fixture(scope="module")
def sources(galaxy, mcp, api_key):
    """A history with six small datasets, all ok (so snapshots of it do not move on their own)."""
    history_id = mcp.call_ok("create_history", name="collection sources", api_key=api_key)["id"]
    ids = [paste(galaxy, mcp, api_key, history_id, f">seq{i}\nACGT{'A' * i}\n", file_type="fasta",
                 name=f"seq{i}")["dataset_id"] for i in range(6)]
    return history_id, ids


@pytest.fixture(scope="module")
def private_dataset_of_other_user(galaxy, mcp, other_user_key):
    history_id = mcp.call_ok("create_history", name="other's", api_key=other_user_key)["id"]
    dataset_id = paste(galaxy, mcp, other_user_key, history_id, "SECRET\n", name="secret")["dataset_id"]
    rest(galaxy.galaxy_url, f"/api/datasets/{dataset_id}/permissions", other_user_key, {"action": "make_private"},
         method="PUT")
    return history_id, dataset_id


# ---- create_dataset_from_text ----


@pytest.mark.parametrize(
    ("file_type", "content"),
    [
        ("tabular", "gene\tcount\r\nmecA\t3\r\nblaZ\t1"),  # CRLF, no final newline: kept as given
        ("fasta", ">isolate_1 Staphylococcus\nACGTTGCA\n>isolate_2\nTTGA\n"),
        ("txt", "ünïcödé 🧬 text\n  two spaces\tand a tab\n"),
    ],
)
def test_pasted_text_becomes_a_dataset_with_exactly_those_bytes(galaxy, mcp, api_key, history_id, file_type, content):
    created = paste(galaxy, mcp, api_key, history_id, content, file_type=file_type, name=f"pasted.{file_type}")
    assert {"dataset_id", "hid", "name", "job_id", "state"} <= created.keys()
    assert created["name"] == f"pasted.{file_type}" and created["bytes"] == len(content.encode())
    assert created["outputs"][0]["id"] == created["dataset_id"]
    read = mcp.call_ok("peek_dataset_content", dataset_id=created["dataset_id"], api_key=api_key)
    assert read["content"] == content and read["eof"] is True
    assert read["extension"] == file_type and read["file_size"] == len(content.encode())
    job = mcp.call_ok("get_job_status", job_id=created["job_id"], api_key=api_key)["job"]
    assert job["tool_id"] == "__DATA_FETCH__"  # the same fetch path as upload_file_from_url


def test_dbkey_is_stored_and_an_unnamed_paste_gets_galaxys_default_name(galaxy, mcp, api_key, history_id):
    created = paste(galaxy, mcp, api_key, history_id, "chr1\t100\t200\n", file_type="bed", dbkey="hg38")
    assert created["name"] == "Unnamed dataset"  # what Galaxy calls it until its upload job names it
    stored = rest(galaxy.galaxy_url, f"/api/datasets/{created['dataset_id']}", api_key)  # paste() waited for ok
    assert (stored["name"], stored["genome_build"], stored["extension"]) == ("Pasted Entry", "hg38", "bed")
    unset = paste(galaxy, mcp, api_key, history_id, "chr1\t1\t2\n", file_type="bed")
    assert rest(galaxy.galaxy_url, f"/api/datasets/{unset['dataset_id']}", api_key)["genome_build"] == "?"


def test_content_of_exactly_the_cap_is_accepted(galaxy, mcp, api_key, history_id):
    content = "x" * (MIB - 1) + "\n"
    created = paste(galaxy, mcp, api_key, history_id, content, file_type="txt")
    assert int(rest(galaxy.galaxy_url, f"/api/datasets/{created['dataset_id']}", api_key)["file_size"]) == MIB


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"content": ""}, "content is empty"),
        # 2-byte characters: the cap counts UTF-8 bytes, not characters.
        ({"content": "é" * (MIB // 2 + 1)}, f"content is {MIB + 2} bytes; the server accepts at most {MIB} bytes"),
        ({"content": "a\tb\n", "file_type": "tabularr"}, "file_type 'tabularr' is not a datatype this Galaxy knows"),
    ],
    ids=["empty", "over-cap", "unknown-file-type"],
)
def test_refused_pastes_create_nothing(galaxy, mcp, api_key, history_id, arguments, message):
    paste(galaxy, mcp, api_key, history_id, "already here\n")
    before = history_snapshot(galaxy, api_key, history_id)
    error = mcp.call_error("create_dataset_from_text", history_id=history_id, api_key=api_key, **arguments)
    assert error.startswith(f"[VALIDATION_ERROR] {message}")
    assert "\nSuggestion: " in error
    assert history_snapshot(galaxy, api_key, history_id) == before


def test_unknown_file_type_names_the_closest_and_where_to_find_all(mcp, api_key, history_id):
    error = mcp.call_error("create_dataset_from_text", history_id=history_id, content="x\n", file_type="fastaa",
                           api_key=api_key)
    assert "Closest: fasta" in error
    assert "file_type='auto'" in error and "/api/datatypes" in error


def test_pasting_into_another_users_history_is_refused_and_creates_nothing(galaxy, mcp, api_key, other_user_key,
                                                                          history_id):
    before = history_snapshot(galaxy, api_key, history_id)
    error = mcp.call_error("create_dataset_from_text", history_id=history_id, content="intruder\n",
                           api_key=other_user_key)
    assert error.startswith(f"[AUTHORIZATION_ERROR] History {history_id} belongs to another user")
    assert history_snapshot(galaxy, api_key, history_id) == before


def test_malformed_history_id_is_a_validation_error(mcp, api_key):
    error = mcp.call_error("create_dataset_from_text", history_id="nope", content="x\n", api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] history_id 'nope' is not a valid encoded id")


def test_upload_file_from_url_shares_the_fetch_path_and_its_checks(galaxy, mcp, api_key, other_user_key, history_id,
                                                                  file_server):
    url = file_server("regions.bed", b"chr1\t10\t20\n")
    uploaded = mcp.call_ok("upload_file_from_url", history_id=history_id, url=url, file_type="bed", api_key=api_key)
    dataset = wait_for_dataset(galaxy, api_key, uploaded["outputs"][0]["id"])
    assert (dataset["state"], dataset["extension"]) == ("ok", "bed")
    before = history_snapshot(galaxy, api_key, history_id)
    error = mcp.call_error("upload_file_from_url", history_id=history_id, url=url, api_key=other_user_key)
    assert "belongs to another user" in error
    assert history_snapshot(galaxy, api_key, history_id) == before


# ---- create_collection ----


def hda(name, dataset_id):
    return {"name": name, "src": "hda", "id": dataset_id}


def new(name, collection_type, elements):
    return {"name": name, "src": "new_collection", "collection_type": collection_type, "element_identifiers": elements}


def shapes(ids):
    """(collection_type, element_identifiers, the structure Galaxy should then show) per supported type."""
    a, b, c, d, e, f = ids
    return {
        "list": ([hda("x", a), hda("y", b), hda("z", c)], {"x": 0, "y": 0, "z": 0}),
        "paired": ([hda("forward", a), hda("reverse", b)], {"forward": 0, "reverse": 0}),
        "paired_or_unpaired": ([hda("unpaired", a)], {"unpaired": 0}),
        "list:paired": (
            [new("s1", "paired", [hda("forward", a), hda("reverse", b)]),
             new("s2", "paired", [hda("forward", c), hda("reverse", d)])],
            {"s1": {"forward": 0, "reverse": 0}, "s2": {"forward": 0, "reverse": 0}},
        ),
        "list:list": (
            [new("g1", "list", [hda("m", a), hda("n", b), hda("o", c)]), new("g2", "list", [hda("m", d)])],
            {"g1": {"m": 0, "n": 0, "o": 0}, "g2": {"m": 0}},
        ),
        "list:paired_or_unpaired": (
            [new("s1", "paired_or_unpaired", [hda("forward", e), hda("reverse", f)]),
             new("s2", "paired_or_unpaired", [hda("unpaired", a)])],
            {"s1": {"forward": 0, "reverse": 0}, "s2": {"unpaired": 0}},
        ),
    }


def leaf_ids(structure):
    return {i for value in structure.values() for i in (leaf_ids(value) if isinstance(value, dict) else {value})}


def summary_dataset_ids(elements):
    return {
        i
        for element in elements
        for i in (summary_dataset_ids(element["elements"]) if element["element_type"] == "dataset_collection"
                  else {element["id"]})
    }


def shape_of(structure):
    return {key: shape_of(value) if isinstance(value, dict) else 0 for key, value in structure.items()}


@pytest.mark.parametrize(
    "collection_type", ["list", "paired", "paired_or_unpaired", "list:paired", "list:list", "list:paired_or_unpaired"]
)
def test_create_each_collection_type(galaxy, mcp, api_key, sources, history_id, collection_type):
    _, ids = sources
    elements, expected_shape = shapes(ids)[collection_type]
    created = mcp.call_ok("create_collection", history_id=history_id, collection_type=collection_type,
                          element_identifiers=elements, name=f"my {collection_type}", api_key=api_key)
    assert created["collection_type"] == collection_type and created["name"] == f"my {collection_type}"
    assert created["element_count"] == len(elements) and created["populated_state"] == "ok"
    assert isinstance(created["hid"], int) and created["history_id"] == history_id
    assert [element["identifier"] for element in created["elements"]] == [e["name"] for e in elements]
    galaxy_type, structure = elements_of(galaxy, api_key, created["collection_id"])
    assert galaxy_type == collection_type and shape_of(structure) == expected_shape
    # The summary's dataset ids are the elements' real (encoded) ids, at every level.
    assert summary_dataset_ids(created["elements"]) == leaf_ids(structure)


def test_copy_elements_puts_hidden_copies_in_the_target_history(galaxy, mcp, api_key, sources, history_id):
    source_history, ids = sources
    before = {item[0] for item in history_snapshot(galaxy, api_key, history_id)[0]}
    created = mcp.call_ok("create_collection", history_id=history_id, collection_type="list",
                          element_identifiers=[hda("a", ids[0]), hda("b", ids[1])], api_key=api_key)
    _, structure = elements_of(galaxy, api_key, created["collection_id"])
    assert set(structure.values()).isdisjoint(ids)  # copies, not the sources
    contents = history_snapshot(galaxy, api_key, history_id)[0]
    copies = [item for item in contents if item[0] in set(structure.values())]
    # The snapshot used by the "nothing changed" tests sees hidden items too.
    assert len(copies) == 2 and all(item[4] is False for item in copies)
    assert {item[0] for item in contents} - before == set(structure.values()) | {created["collection_id"]}
    assert created["name"] == "list of 2"
    # The result says which copies it made, of what, at which hid.
    hids = {item[0]: rest(galaxy.galaxy_url, f"/api/datasets/{item[0]}", api_key)["hid"] for item in copies}
    assert sorted(created["copied_elements"], key=lambda copy: copy["source_id"]) == sorted(
        [{"source_id": ids[0], "copy_id": structure["a"], "hid": hids[structure["a"]]},
         {"source_id": ids[1], "copy_id": structure["b"], "hid": hids[structure["b"]]}],
        key=lambda copy: copy["source_id"])


def test_copy_elements_false_references_the_sources(galaxy, mcp, api_key, sources):
    source_history, ids = sources
    created = mcp.call_ok("create_collection", history_id=source_history, collection_type="list",
                          element_identifiers=[hda("a", ids[0]), hda("b", ids[1])], copy_elements=False,
                          api_key=api_key)
    assert elements_of(galaxy, api_key, created["collection_id"])[1] == {"a": ids[0], "b": ids[1]}
    assert "copied_elements" not in created, created


def test_hide_source_items_hides_the_sources(galaxy, mcp, api_key, history_id):
    ids = [paste(galaxy, mcp, api_key, history_id, f"{i}\n")["dataset_id"] for i in range(2)]
    mcp.call_ok("create_collection", history_id=history_id, collection_type="paired", hide_source_items=True,
                element_identifiers=[hda("forward", ids[0]), hda("reverse", ids[1])], api_key=api_key)
    assert [rest(galaxy.galaxy_url, f"/api/datasets/{i}", api_key)["visible"] for i in ids] == [False, False]


def test_an_existing_collection_can_be_a_nested_element(galaxy, mcp, api_key, sources, history_id):
    _, ids = sources
    pair = mcp.call_ok("create_collection", history_id=history_id, collection_type="paired",
                       element_identifiers=[hda("forward", ids[0]), hda("reverse", ids[1])], api_key=api_key)
    created = mcp.call_ok("create_collection", history_id=history_id, collection_type="list:paired",
                          element_identifiers=[{"name": "s1", "src": "hdca", "id": pair["collection_id"]}],
                          api_key=api_key)
    assert shape_of(elements_of(galaxy, api_key, created["collection_id"])[1]) == {"s1": {"forward": 0, "reverse": 0}}


def invalid_requests(ids, other_pair_id=None):
    a, b, c, *_ = ids
    return {
        "paired-with-wrong-names": ("paired", [hda("forward", a), hda("rev", b)],
                                    "element_identifiers: a paired level has exactly ['forward', 'reverse']"),
        "paired-with-a-third-element": ("paired", [hda("forward", a), hda("reverse", b), hda("extra", c)],
                                        "got ['forward', 'reverse', 'extra']"),
        "duplicate-names": ("list", [hda("x", a), hda("y", b), hda("x", c)],
                            "element_identifiers[2]: the name 'x' is already used by element 0"),
        "datasets-where-pairs-belong": ("list:paired", [new("s1", "paired", [hda("forward", a), hda("reverse", b)]),
                                                       hda("s2", c)],
                                        "element_identifiers[1]: src must be 'new_collection'"),
        "too-deep": ("list", [new("s1", "paired", [hda("forward", a), hda("reverse", b)])],
                     "element_identifiers[0]: src must be 'hda'"),
        "wrong-inner-type": ("list:paired", [new("s1", "list", [hda("forward", a), hda("reverse", b)])],
                             "element_identifiers[0]: its collection_type must be 'paired'"),
        "bad-pair-in-a-list": ("list:paired", [new("s1", "paired", [hda("forward", a), hda("reverse", b)]),
                                              new("s2", "paired", [hda("forward", c)])],
                               "element_identifiers[1].element_identifiers: a paired level"),
        "unknown-type": ("lists", [hda("x", a)], "collection_type 'lists': 'lists' is not a collection rank"),
    }


@pytest.mark.parametrize("case", list(invalid_requests(["i"] * 6)))
def test_invalid_shapes_are_refused_and_create_nothing(galaxy, mcp, api_key, sources, case):
    history_id, ids = sources
    collection_type, elements, message = invalid_requests(ids)[case]
    before = history_snapshot(galaxy, api_key, history_id)
    error = mcp.call_error("create_collection", history_id=history_id, collection_type=collection_type,
                           element_identifiers=elements, hide_source_items=True, api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] ")
    assert message in error
    assert history_snapshot(galaxy, api_key, history_id) == before


def test_an_existing_collection_of_the_wrong_type_is_refused(galaxy, mcp, api_key, sources):
    history_id, ids = sources
    flat = mcp.call_ok("create_collection", history_id=history_id, collection_type="list",
                       element_identifiers=[hda("x", ids[0])], copy_elements=False, api_key=api_key)
    before = history_snapshot(galaxy, api_key, history_id)
    error = mcp.call_error("create_collection", history_id=history_id, collection_type="list:paired",
                           element_identifiers=[{"name": "s1", "src": "hdca", "id": flat["collection_id"]}],
                           api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] ")
    expected = f"element_identifiers[0]: collection {flat['collection_id']} is a 'list'; this level needs a 'paired'"
    assert expected in error
    assert history_snapshot(galaxy, api_key, history_id) == before


def test_another_users_private_dataset_cannot_be_an_element(galaxy, mcp, api_key, sources,
                                                            private_dataset_of_other_user):
    history_id, ids = sources
    _, private_id = private_dataset_of_other_user
    before = history_snapshot(galaxy, api_key, history_id)
    # The private dataset comes second: a check made while creating would already have copied the first.
    error = mcp.call_error("create_collection", history_id=history_id, collection_type="list",
                           element_identifiers=[hda("mine", ids[0]), hda("theirs", private_id)], api_key=api_key)
    assert error.startswith("[AUTHORIZATION_ERROR] ")
    assert f"element_identifiers[1]: dataset {private_id} is not accessible" in error
    assert "SECRET" not in error and "secret" not in error
    assert history_snapshot(galaxy, api_key, history_id) == before


def test_another_users_public_dataset_follows_galaxys_sharing_rules(galaxy, mcp, api_key, other_user_key, sources,
                                                                    history_id):
    _, ids = sources
    other_history = mcp.call_ok("create_history", name="other public", api_key=other_user_key)["id"]
    public_id = paste(galaxy, mcp, other_user_key, other_history, "shared\n")["dataset_id"]
    elements = [hda("mine", ids[0]), hda("theirs", public_id)]
    created = mcp.call_ok("create_collection", history_id=history_id, collection_type="list",
                          element_identifiers=elements, api_key=api_key)
    assert created["element_count"] == 2
    # ...but it cannot be hidden: it is not this user's dataset.
    before = history_snapshot(galaxy, api_key, history_id)
    error = mcp.call_error("create_collection", history_id=history_id, collection_type="list",
                           element_identifiers=elements, hide_source_items=True, api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] ") and "hide_source_items cannot hide it" in error
    assert history_snapshot(galaxy, api_key, history_id) == before
    assert rest(galaxy.galaxy_url, f"/api/datasets/{public_id}", other_user_key)["visible"] is True


def test_a_collection_in_another_users_history_is_refused(galaxy, mcp, api_key, other_user_key, sources):
    history_id, ids = sources
    before = history_snapshot(galaxy, api_key, history_id)
    error = mcp.call_error("create_collection", history_id=history_id, collection_type="list",
                           element_identifiers=[hda("x", ids[0])], api_key=other_user_key)
    assert error.startswith(f"[AUTHORIZATION_ERROR] History {history_id} belongs to another user")
    assert history_snapshot(galaxy, api_key, history_id) == before


def test_purged_and_malformed_ids_are_refused_by_path(galaxy, mcp, api_key, history_id):
    kept = paste(galaxy, mcp, api_key, history_id, "kept\n")["dataset_id"]
    purged = paste(galaxy, mcp, api_key, history_id, "gone\n")["dataset_id"]
    rest(galaxy.galaxy_url, f"/api/histories/{history_id}/contents/{purged}?purge=true", api_key, method="DELETE")
    deadline = time.monotonic() + 60
    while not rest(galaxy.galaxy_url, f"/api/datasets/{purged}", api_key)["purged"]:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    before = history_snapshot(galaxy, api_key, history_id)
    error = mcp.call_error("create_collection", history_id=history_id, collection_type="list", api_key=api_key,
                           element_identifiers=[hda("a", kept), hda("b", purged), hda("c", "not-an-id")])
    assert error.startswith("[VALIDATION_ERROR] ")  # the first problem found decides the code
    assert "element_identifiers[2]: 'not-an-id' is not a valid encoded id" in error
    assert f"element_identifiers[1]: history dataset {purged} has been purged" in error
    assert history_snapshot(galaxy, api_key, history_id) == before


@pytest.fixture(scope="module")
def library_dataset(galaxy, mcp, admin_key):
    """A library dataset (its ldda id) an admin made through Galaxy's REST API from a dataset of their own,
    in a library with no access restriction (readable by every user)."""
    gx = galaxy.galaxy_url
    history_id = mcp.call_ok("create_history", name="library source", api_key=admin_key)["id"]
    source = paste(galaxy, mcp, admin_key, history_id, ">lib\nACGTACGT\n", file_type="fasta", name="reference")
    library = rest(gx, "/api/libraries", admin_key, {"name": "references"})
    added = rest(gx, f"/api/libraries/{library['id']}/contents", admin_key, {
        "folder_id": library["root_folder_id"], "create_type": "file", "from_hda_id": source["dataset_id"]})
    assert added["model_class"] == "LibraryDatasetDatasetAssociation"
    return added["id"], ">lib\nACGTACGT\n"


def test_a_library_dataset_is_an_element(galaxy, mcp, api_key, sources, history_id, library_dataset):
    ldda_id, content = library_dataset
    elements = [{"name": "reference", "src": "ldda", "id": ldda_id}, hda("sample", sources[1][0])]
    made = mcp.call_ok("create_collection", history_id=history_id, collection_type="list",
                       element_identifiers=elements, api_key=api_key)
    assert made["element_count"] == 2
    collection_type, structure = elements_of(galaxy, api_key, made["collection_id"])
    assert collection_type == "list" and list(structure) == ["reference", "sample"]
    read = mcp.call_ok("peek_dataset_content", dataset_id=structure["reference"], api_key=api_key)
    assert read["content"] == content  # the library's bytes, now an element of the caller's collection


def test_an_unknown_element_id_is_not_found_and_creates_nothing(galaxy, mcp, api_key, sources, history_id):
    unknown = missing_id(galaxy)  # well-formed: decodes, but names nothing
    before = history_snapshot(galaxy, api_key, history_id)
    for src, kind in (("hda", "history dataset"), ("ldda", "library dataset")):
        elements = [hda("a", sources[1][0]), {"name": "b", "src": src, "id": unknown}]
        error = mcp.call_error("create_collection", history_id=history_id, collection_type="list",
                               element_identifiers=elements, api_key=api_key)
        assert error.startswith("[NOT_FOUND] "), (src, error)
        said = (f"{kind} {unknown} does not exist", f"no {kind} with id {unknown} exists")
        assert any(f"[1]: {words}" in error for words in said) and "Nothing was created." in error, (src, error)
    assert history_snapshot(galaxy, api_key, history_id) == before


def test_a_large_list_result_stays_small(galaxy, mcp, api_key, history_id):
    # One dataset named 2,000 times: Galaxy copies each element, the same work as 2,000 datasets. 40 times
    # the 50 elements shown; the 10,000-element list (about 30 s alone) is make bench's (bench_collections).
    count = 2_000
    dataset_id = paste(galaxy, mcp, api_key, history_id, ">s\nACGT\n", file_type="fasta")["dataset_id"]
    elements = [hda(f"sample{i:05d}", dataset_id) for i in range(count)]
    started = time.monotonic()
    created = mcp.call_ok("create_collection", history_id=history_id, collection_type="list",
                          element_identifiers=elements, api_key=api_key)
    elapsed = time.monotonic() - started
    assert created["element_count"] == count
    assert created["elements_truncated"] is True and created["elements_shown"] == len(created["elements"]) == 50
    assert (created["copied_count"], len(created["copied_elements"]), created["copied_elements_truncated"]) == (
        count, 20, True)
    assert len(json.dumps(created)) < 8_000
    print(f"\n{count:,}-element list through MCP: {elapsed:.1f} s, result {len(json.dumps(created))} bytes")


# ---- map-over in run_tool ----


@pytest.fixture(scope="module")
def fasta_list(galaxy, mcp, api_key):
    """The field report's pattern: 4 pasted FASTA datasets in a list."""
    history_id = mcp.call_ok("create_history", name="map-over", api_key=api_key)["id"]
    contents = {f"isolate{i}": f">isolate{i}\n{'ACGT' * (i + 1)}\n" for i in range(4)}
    ids = {name: paste(galaxy, mcp, api_key, history_id, text, file_type="fasta", name=name)["dataset_id"]
           for name, text in contents.items()}
    created = mcp.call_ok("create_collection", history_id=history_id, collection_type="list", name="isolates",
                          element_identifiers=[hda(name, ids[name]) for name in contents], api_key=api_key)
    return history_id, created["collection_id"], contents


def outputs_by_identifier(mcp, api_key, implicit_collection):
    details = mcp.call_ok("get_collection_details", collection_id=implicit_collection["id"], api_key=api_key)
    return {
        element["element_identifier"]: mcp.call_ok("peek_dataset_content", dataset_id=element["object"]["id"],
                                                   api_key=api_key)["content"]
        for element in details["collection"]["elements"]
    }


def test_a_bare_collection_is_mapped_over_and_each_output_read_back(mcp, api_key, fasta_list):
    history_id, collection_id, contents = fasta_list
    result = mcp.call_ok("run_tool", history_id=history_id, tool_id="cat1",
                         inputs={"input1": {"src": "hdca", "id": collection_id}}, api_key=api_key)
    assert result["mapped_over"] == [{"input": "input1", "collection_id": collection_id, "wrapped": True}]
    (implicit,) = result["implicit_collections"]
    assert {"id", "name", "collection_type", "element_count", "output_name"} <= implicit.keys()
    assert (implicit["collection_type"], implicit["element_count"], implicit["output_name"]) == ("list", 4, "out_file1")
    assert "elements" not in implicit  # summarised: get_collection_details lists them
    # Galaxy's populated_state is of the structure: ok at once, while its datasets still wait for their jobs.
    assert implicit["populated_state"] == "ok" and {job["state"] for job in result["jobs"]} != {"ok"}, result
    assert len(result["jobs"]) == 4
    # What comes next first: an agent printing the start of the result sees the collection, not 4 jobs' fields.
    assert list(result)[:4] == ["implicit_collections", "mapped_over", "inputs_checked", "unchecked"], list(result)
    states = wait_for_jobs_through_mcp(mcp, api_key, [job["id"] for job in result["jobs"]])
    assert set(states.values()) == {"ok"}
    assert outputs_by_identifier(mcp, api_key, implicit) == contents


def test_the_explicit_batch_form_works_and_is_listed_as_mapped_not_wrapped(mcp, api_key, fasta_list):
    history_id, collection_id, contents = fasta_list
    result = mcp.call_ok("run_tool", history_id=history_id, tool_id="cat1", api_key=api_key,
                         inputs={"input1": {"batch": True, "values": [{"src": "hdca", "id": collection_id}]}})
    assert result["mapped_over"] == [{"input": "input1", "collection_id": collection_id, "wrapped": False}]
    assert result["implicit_collections"][0]["element_count"] == 4


def test_an_input_inside_a_repeat_is_mapped_over_by_its_flat_name(galaxy, mcp, api_key, fasta_list):
    history_id, collection_id, contents = fasta_list
    header = paste(galaxy, mcp, api_key, history_id, ">header\n", file_type="fasta")["dataset_id"]
    result = mcp.call_ok("run_tool", history_id=history_id, tool_id="cat1", api_key=api_key, inputs={
        "input1": {"src": "hda", "id": header},
        "queries_0|input2": {"src": "hdca", "id": collection_id},
    })
    assert result["mapped_over"] == [{"input": "queries_0|input2", "collection_id": collection_id, "wrapped": True}]
    wait_for_jobs_through_mcp(mcp, api_key, [job["id"] for job in result["jobs"]])
    outputs = outputs_by_identifier(mcp, api_key, result["implicit_collections"][0])
    assert outputs == {name: ">header\n" + text for name, text in contents.items()}


def test_a_collection_input_is_never_wrapped(mcp, api_key, fasta_list):
    history_id, collection_id, _ = fasta_list
    result = mcp.call_ok("run_tool", history_id=history_id, tool_id="__FILTER_FAILED_DATASETS__",
                         inputs={"input": {"src": "hdca", "id": collection_id}}, api_key=api_key)
    assert result["mapped_over"] == [] and result["implicit_collections"] == []
    assert len(result["jobs"]) == 1 and len(result["output_collections"]) == 1


def test_tool_details_mark_how_to_map_over_each_dataset_input(mcp, api_key):
    cat = mcp.call_ok("get_tool_details", tool_id="cat1", io_details=True, api_key=api_key)
    input1 = next(entry for entry in cat["inputs"] if entry["name"] == "input1")
    assert input1["takes_collection"] is False
    assert input1["map_over"] == {"input1": {"batch": True, "values": [{"src": "hdca", "id": "<collection_id>"}]}}
    (repeated,) = cat["nested_data_inputs"]
    assert repeated["name"] == "queries_<index>|input2" and "queries_0|input2" in repeated["map_over"]

    operation = mcp.call_ok("get_tool_details", tool_id="__FILTER_FAILED_DATASETS__", io_details=True,
                            api_key=api_key)
    by_name = {entry["name"]: entry for entry in operation["inputs"]}
    assert by_name["input"]["takes_collection"] is True and "map_over" not in by_name["input"]
    assert by_name["replacement"]["takes_collection"] is False  # an optional single dataset

    plain = mcp.call_ok("get_tool_details", tool_id="cat1", api_key=api_key)
    assert "inputs" not in plain and "nested_data_inputs" not in plain


def test_descriptions_document_the_batch_form_and_the_new_tools(mcp):
    tools = {tool.name: tool for tool in mcp.list_tools()}
    run_tool = tools["run_tool"].description
    # The batch form, shown once, in the worked example.
    assert '{"input1": {"batch": true, "values": [{"src": "hdca", "id": "<id>"}]}}' in run_tool
    for phrase in ("mapped_over", "implicit_collections", "Never wrapped", "data_collection", 'multiple="true"'):
        assert phrase in run_tool
    assert "map_over" in tools["get_tool_details"].description
    for name in ("create_dataset_from_text", "create_collection"):
        tool = tools[name]
        for section in ("Example", "Errors", "Next:"):
            assert section in tool.description
        annotations = tool.annotations
        assert annotations.read_only_hint is False and annotations.destructive_hint is False
        assert annotations.idempotent_hint is False and annotations.open_world_hint is False
    # api_key is optional in the schema: the x-api-key header can carry it (mcp-header-auth).
    assert set(tools["create_dataset_from_text"].input_schema["required"]) == {"history_id", "content"}
    assert set(tools["create_collection"].input_schema["required"]) == {
        "history_id", "collection_type", "element_identifiers"
    }
