"""Ids mean one thing everywhere, through /api/mcp on a real Galaxy.

An analysis is driven over a history where Galaxy's item ids and the ids of the rows behind them
differ (collection elements are copies, a map-over makes an implicit collection, a workflow is
extracted and invoked, a page is written). Every result of every call is then walked: each field
named ``<kind>_id`` must resolve, through Galaxy's REST API, to an object of that kind, and where
an object carries its own ``id``, its ``dataset_id`` / ``collection_id`` must be that same item.
Before the fix, the copies' ``dataset_id`` and the collections' ``collection_id`` named other items."""

import urllib.error

import pytest

from galaxy_mcp_analysis.core.result_ids import kind_of
from galaxy_mcp_analysis.testing import rest

#: Field name -> the REST path that resolves an id of that kind (404/403 = not that kind).
RESOLVERS = {
    "dataset_id": "/api/datasets/{}",
    "collection_id": "/api/dataset_collections/{}?instance_type=history",
    "history_id": "/api/histories/{}",
    "job_id": "/api/jobs/{}",
    "invocation_id": "/api/invocations/{}",
    "workflow_id": "/api/workflows/{}",
    "page_id": "/api/pages/{}",
    "user_id": "/api/users/{}",
}
#: ``*_id`` fields that are not encoded ids of a kind a tool takes: names and strings Galaxy uses.
NOT_ENCODED = {"tool_id", "trs_id", "drs_id", "object_store_id", "type_id", "request_id", "root_folder_id",
               "copied_from_ldda_id", "job_source_id", "preferred_object_store_id", "metadata_job_id",
               "revision_id", "latest_revision_id", "dependency_id", "landing_uuid", "source_id", "copy_id",
               "step_id", "workflow_step_id", "order_index_id", "encoded_id", "schema_id", "element_id"}
#: The id of an object of each kind, where the object names its own kind.
OWN_ID = {"dataset": "dataset_id", "collection": "collection_id"}


class Recorder:
    """The session client, keeping every successful result for the walk."""

    def __init__(self, mcp, api_key):
        self.mcp, self.api_key, self.results = mcp, api_key, []

    def __call__(self, tool, **arguments):
        result = self.mcp.call_ok(tool, api_key=self.api_key, **arguments)
        self.results.append((tool, result))
        return result


def id_fields(value, path=""):
    """(path, field, value, the dict holding it) for every *_id string at any depth."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from id_fields(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            if key.endswith("_id") and isinstance(item, str):
                yield f"{path}.{key}", key, item, value
            yield from id_fields(item, f"{path}.{key}")


def objects_with_kinds(value, path=""):
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from objects_with_kinds(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        if kind_of(value):
            yield path, kind_of(value), value
        for key, item in value.items():
            yield from objects_with_kinds(item, f"{path}.{key}")


@pytest.fixture(scope="module")
def analysis(galaxy, mcp, api_key):
    call = Recorder(mcp, api_key)
    history = call("create_history", name="ids mean one thing")["id"]
    tables = [call("create_dataset_from_text", history_id=history, content=text, file_type="tabular", name=name)
              for name, text in (("a", "a\t1\nb\t2\n"), ("b", "c\t3\nd\t4\n"))]
    call("wait_for_jobs", history_id=history, timeout_seconds=120)
    # copy_elements (the default): the elements are new items sharing the originals' files.
    listed = call("create_collection", history_id=history, collection_type="list", name="pair of tables",
                  element_identifiers=[{"name": name, "src": "hda", "id": made["dataset_id"]}
                                       for name, made in zip("ab", tables)])
    call("update_collection", collection_id=listed["collection_id"], tags=["ids"])
    mapped = call("run_tool", history_id=history, tool_id="Cut1",
                  inputs={"input": {"src": "hdca", "id": listed["collection_id"]}, "columnList": "c1",
                          "delimiter": "T"})
    single = call("run_tool", history_id=history, tool_id="sort1",
                  inputs={"input": {"src": "hda", "id": tables[0]["dataset_id"]}, "column": 1, "style": "alpha",
                          "order": "ASC"})
    call("wait_for_jobs", history_id=history, timeout_seconds=120)
    workflow = call("create_workflow_from_history", history_id=history, name="ids workflow",
                    job_ids=[single["jobs"][0]["id"]])
    # A second version (Galaxy's own update), so the version an invocation runs has another id than the workflow.
    stored = workflow["workflow_id"]
    definition = rest(galaxy.galaxy_url, f"/api/workflows/{stored}/download?format=json-download", api_key)
    rest(galaxy.galaxy_url, f"/api/workflows/{stored}", api_key, {"workflow": definition}, method="PUT")
    invoked = call("invoke_workflow", workflow_id=workflow["workflow_id"], history_id=history,
                   inputs={"0": {"src": "hda", "id": tables[1]["dataset_id"]}})
    call("wait_for_jobs", invocation_id=invoked["id"], timeout_seconds=120)
    page = call("create_page", history_id=history, title="ids page",
                content=f"```galaxy\nhistory_dataset_display(history_dataset_id={tables[0]['dataset_id']})\n```\n")

    contents = call("get_history_contents", history_id=history, limit=100)["contents"]
    call("get_history_details", history_id=history)
    for item in contents:
        if item["history_content_type"] == "dataset":
            call("get_dataset_details", dataset_id=item["id"])
            call("get_job_details", dataset_id=item["id"])
            call("peek_dataset_content", dataset_id=item["id"])
        else:
            call("get_collection_details", collection_id=item["id"])
    job = mapped["jobs"][0]["id"]
    for tool in ("get_job_status", "get_job_errors", "get_job_parameters"):
        call(tool, job_id=job)
    call("list_jobs", history_id=history)
    call("get_invocations", history_id=history)
    call("get_invocation_details", invocation_id=invoked["id"])
    call("get_page", page_id=page["id"])
    call("wait_for_jobs", history_id=history, timeout_seconds=0)
    return {"call": call, "contents": contents, "workflow": workflow, "invoked": invoked}


def resolves(galaxy, api_key, field, value) -> bool:
    try:
        rest(galaxy.galaxy_url, RESOLVERS[field].format(value), api_key)
    except urllib.error.HTTPError:
        return False
    return True


def test_the_history_has_copies_whose_files_are_shared(galaxy, api_key, analysis):
    """The walk only means something if Galaxy's file ids differ from the items' own ids here: REST
    still shows each dataset's file id as dataset_id."""
    files = {item["id"]: rest(galaxy.galaxy_url, f"/api/datasets/{item['id']}", api_key)["dataset_id"]
             for item in analysis["contents"] if item["history_content_type"] == "dataset"}
    assert len(set(files.values())) < len(files), files  # copies share a file
    assert sum(item != file for item, file in files.items()) >= 2, files


def test_every_id_field_resolves_to_the_kind_its_name_says(galaxy, api_key, analysis):
    problems, unknown, checked = [], set(), 0
    for tool, result in analysis["call"].results:
        for path, field, value, _ in id_fields(result):
            if field in NOT_ENCODED:
                continue
            if field not in RESOLVERS:
                unknown.add(f"{tool}: {path}")
                continue
            checked += 1
            if not resolves(galaxy, api_key, field, value):
                problems.append(f"{tool}{path} = {value} is no {field[:-3]} of this user")
    assert not problems, problems
    assert not unknown, f"*_id fields this test does not know how to resolve: {sorted(unknown)}"
    assert checked > 100, checked


def test_an_item_names_only_itself_by_its_kinds_id(analysis):
    """A dataset's dataset_id and a collection's collection_id, where present, are its own id; an
    element or a nested collection carries no id a tool could mistake for an item's."""
    problems, items = [], 0
    for tool, result in analysis["call"].results:
        for path, kind, value in objects_with_kinds(result):
            field = OWN_ID.get(kind)
            if field:
                items += 1
                if field in value and value[field] != value.get("id"):
                    problems.append(f"{tool}{path}: {field} {value[field]} is not the item's id {value.get('id')}")
            elif "id" in value:
                problems.append(f"{tool}{path}: a {kind} carries id {value['id']}")
    assert not problems, problems
    assert items > 20, items


def test_the_invocation_names_the_invoked_workflow(analysis):
    details = [result for tool, result in analysis["call"].results if tool == "get_invocation_details"][0]
    assert details["invocation"]["workflow_id"] == analysis["workflow"]["workflow_id"], details["invocation"]
