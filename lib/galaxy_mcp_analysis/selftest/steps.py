"""The self-test's steps (``core.selftest_plan.PLAN``): the calls each makes and what it checks.

Each step is ``async step(call, made) -> detail``: ``call(tool, **arguments)`` returns the tool's
structured result or raises the tool's error; ``made`` holds what earlier steps made (see PLAN).
A wrong result raises ``CheckFailed`` with what was expected and what came back.
"""

import time
from datetime import (
    datetime,
    timezone,
)

from galaxy_mcp_analysis.core.selftest_plan import MAPPED_TOOL

#: Two pasted tables: the mapped tool drops the first line, so "second" ends ok but empty.
TABLES = {"first": "alpha\tbeta\ngamma\tdelta\nepsilon\tzeta\n", "second": "omega\tlast\n"}
COLLECTION_NAME = "selftest list"
#: The file create_upload_url's step sends through its URL.
UPLOADED = b"uploaded through a one-time URL\n"
WAIT_SECONDS = 110
#: A wait is repeated while it times out, up to this many calls (a loaded Galaxy's first upload is slow).
WAIT_CALLS = 4
STEPS: dict = {}


class ToolError(Exception):
    """An MCP tool error (``isError``): its text, which starts with a code such as [FORBIDDEN]."""


class CheckFailed(Exception):
    """A tool answered, but not what it should have."""


def check(condition, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def step(label: str):
    def register(function):
        STEPS[label] = function
        return function

    return register


def history_name() -> str:
    return f"galaxy-mcp-analysis selftest {datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S} UTC"


async def wait(call, **target) -> dict:
    """wait_for_jobs, called again while it times out; every job must end ok."""
    began = time.monotonic()
    for _ in range(WAIT_CALLS):
        waited = await call("wait_for_jobs", timeout_seconds=WAIT_SECONDS, **target)
        if waited["all_terminal"] and not waited.get("timed_out"):
            break
    check(waited["all_terminal"], f"jobs still running after {time.monotonic() - began:.0f} s")
    states = {job["job_id"]: job["state"] for job in waited["jobs"]}
    check(set(states.values()) <= {"ok"}, f"jobs not ok: {states}")
    waited["seconds"] = time.monotonic() - began
    return waited


@step("connect")
async def connect(call, made):
    answer = await call("connect")
    check(answer.get("connected"), f"not connected: {answer}")
    made["user"] = (answer.get("user") or {}).get("username") or "?"
    return f"as {made['user']}"


@step("get_server_info")
async def server_info(call, made):
    info = await call("get_server_info")
    patch_set = info.get("patch_set")
    check(patch_set, "no patch_set: galaxy-mcp-analysis is not active on this Galaxy")
    server = info.get("server") or {}
    version = ".".join(str(part) for part in (server.get("version"), server.get("version_minor")) if part)
    return f"Galaxy {version or '?'}, {patch_set['name']} {patch_set['version']}, {len(patch_set['patches'])} patches"


@step("create_history")
async def create_history(call, made):
    history = await call("create_history", name=history_name())
    made["history"] = history["id"]
    return f"history {history['id']} ({history['name']})"


@step("update_history")
async def update_history(call, made):
    updated = await call("update_history", history_id=made["history"], annotation="galaxy-mcp-analysis self-test",
                         tags=["selftest"])
    check(updated.get("annotation") == "galaxy-mcp-analysis self-test" and updated.get("tags") == ["selftest"],
          f"annotation {updated.get('annotation')!r}, tags {updated.get('tags')!r}")


@step("create_dataset_from_text")
async def paste(call, made):
    pasted, jobs = {}, []
    for name, text in TABLES.items():
        answer = await call("create_dataset_from_text", history_id=made["history"], content=text, name=name,
                            file_type="tabular")
        check(answer.get("bytes") == len(text), f"{name}: {answer.get('bytes')} bytes stored, {len(text)} sent")
        pasted[name], jobs = answer["dataset_id"], jobs + [answer["job_id"]]
    made["pasted"], made["upload_jobs"] = pasted, jobs
    return f"{len(pasted)} datasets"


@step("create_upload_url (one PUT of a small file)")
async def upload_url(call, made):
    import httpx

    answer = await call("create_upload_url", history_id=made["history"], name="selftest upload.txt", file_type="txt")
    async with httpx.AsyncClient(timeout=60) as client:
        response = await client.request(answer["method"], answer["upload_url"], headers=answer["headers"],
                                         content=UPLOADED)
    check(response.status_code == 201, f"the upload URL answered {response.status_code}: {response.text[:300]}")
    uploaded = response.json()
    check(uploaded.get("bytes") == len(UPLOADED) and uploaded.get("job_id"), f"the upload answered {uploaded}")
    made["upload_jobs"] = made["upload_jobs"] + [uploaded["job_id"]]  # waited for with the pasted ones
    return f"{uploaded['bytes']} bytes, dataset {uploaded['dataset_id']}"


@step("wait_for_jobs (uploads)")
async def wait_uploads(call, made):
    waited = await wait(call, job_ids=made["upload_jobs"])
    made["uploaded"] = True
    return f"{len(waited['jobs'])} upload jobs ok in {waited['seconds']:.0f} s"


@step("get_dataset_details")
async def dataset_details(call, made):
    details = await call("get_dataset_details", dataset_id=made["pasted"]["first"])
    dataset = details.get("dataset", details)
    check(dataset.get("state") == "ok", f"state {dataset.get('state')!r}, expected 'ok'")


@step("create_collection")
async def create_collection(call, made):
    elements = [{"name": name, "src": "hda", "id": dataset_id} for name, dataset_id in made["pasted"].items()]
    collection = await call("create_collection", history_id=made["history"], collection_type="list",
                            element_identifiers=elements, name=COLLECTION_NAME)
    check(collection["element_count"] == len(elements), f"{collection['element_count']} elements")
    made["collection"] = collection["collection_id"]
    return f"list of {collection['element_count']}"


@step("peek_collection_content")
async def peek_collection(call, made):
    read = await call("peek_collection_content", collection_id=made["collection"])
    texts = {element["element_identifier"]: element.get("content") for element in read["elements"]}
    check(texts == TABLES, f"elements read {sorted(texts)}, errors {[e.get('error') for e in read['elements']]}")


@step("get_tool_details")
async def tool_details(call, made):
    details = await call("get_tool_details", tool_id=MAPPED_TOOL, io_details=True)
    mappable = [entry["name"] for entry in details.get("inputs", []) if entry.get("map_over")]
    check(mappable, f"{MAPPED_TOOL}: no input says how to map a collection over it")


def mapped_inputs(made) -> dict:
    return {"input": {"batch": True, "values": [{"src": "hdca", "id": made["collection"]}]}, "num_lines": 1}


@step("check_tool_inputs")
async def check_inputs(call, made):
    checked = await call("check_tool_inputs", history_id=made["history"], tool_id=MAPPED_TOOL,
                         inputs=mapped_inputs(made))
    check(checked["valid"] and checked["jobs_expected"] == len(TABLES),
          f"valid={checked['valid']}, jobs_expected={checked['jobs_expected']}, errors={checked['errors']}")


@step("run_tool (map-over)")
async def run_tool(call, made):
    run = await call("run_tool", history_id=made["history"], tool_id=MAPPED_TOOL, inputs=mapped_inputs(made))
    check(len(run["jobs"]) == len(TABLES), f"{len(run['jobs'])} jobs, expected {len(TABLES)}")
    check(len(run["implicit_collections"]) == 1, f"implicit collections: {run['implicit_collections']}")
    made["mapped"] = {"jobs": [job["id"] for job in run["jobs"]], "collection": run["implicit_collections"][0]["id"]}
    return f"{len(run['jobs'])} jobs"


@step("wait_for_jobs (map-over)")
async def wait_mapped(call, made):
    waited = await wait(call, job_ids=made["mapped"]["jobs"])
    # The one-line table loses its only line: an ok job, an empty output, no complaint: reported, not suspected.
    emptied = [job for job in waited["jobs"] if job.get("empty_outputs")]
    check(len(emptied) == 1, f"{len(emptied)} jobs with an empty output, expected 1 (the one-line table)")
    check(not emptied[0]["suspected_silent_failure"] and "repair" not in emptied[0],
          f"the clean empty result was flagged: {emptied[0]}")
    made["finished"], made["silent_job"] = True, emptied[0]["job_id"]
    return f"{len(waited['jobs'])} jobs ok in {waited['seconds']:.0f} s"


@step("get_collection_details")
async def collection_details(call, made):
    collection = (await call("get_collection_details", collection_id=made["mapped"]["collection"]))["collection"]
    outputs = {element["element_identifier"]: element["object"]["id"] for element in collection["elements"]}
    check(sorted(outputs) == sorted(TABLES), f"elements {sorted(outputs)}")
    made["outputs"] = outputs


@step("peek_dataset_content (ranged read)")
async def ranged_read(call, made):
    expected = TABLES["first"].split("\n", 1)[1]
    content, offset, calls = "", 0, 0
    while offset is not None and calls < 10:
        chunk = await call("peek_dataset_content", dataset_id=made["outputs"]["first"], offset=offset, max_bytes=14)
        check(chunk["offset"] == offset, f"read from {chunk['offset']}, asked {offset}")
        content, offset, calls = content + chunk["content"], chunk["next_offset"], calls + 1
    check(content == expected and calls == 2, f"read {content!r} in {calls} calls, expected {expected!r} in 2")
    return f"{len(content)} bytes in {calls} ranges"


@step("get_job_errors")
async def job_errors(call, made):
    report = await call("get_job_errors", dataset_id=made["outputs"]["second"])
    check(report["job_id"] == made["silent_job"], f"job {report['job_id']}, expected {made['silent_job']}")
    empty = report["empty_outputs"]
    check(not report["suspected_silent_failure"] and len(empty) == 1 and empty[0]["may_be_empty"] and empty[0]["why"],
          f"suspected_silent_failure={report['suspected_silent_failure']}, empty_outputs={empty}")
    return "the empty output found, judged a clean result"


@step("get_job_status")
async def job_status(call, made):
    status = await call("get_job_status", job_id=made["silent_job"])
    check(status["suspected_silent_failure"] is False and len(status["empty_outputs"]) == 1,
          f"suspected_silent_failure={status['suspected_silent_failure']}, empty_outputs={status['empty_outputs']}")


@step("list_jobs")
async def list_jobs(call, made):
    listed = await call("list_jobs", history_id=made["history"], tool_id=MAPPED_TOOL)
    found = {job["job_id"] for job in listed["jobs"]}
    check(set(made["mapped"]["jobs"]) <= found, f"listed {sorted(found)}, expected {made['mapped']['jobs']}")


@step("get_job_parameters")
async def job_parameters(call, made):
    recorded = await call("get_job_parameters", job_id=made["silent_job"])
    check(recorded["tool_id"] == MAPPED_TOOL and recorded["inputs"].get("num_lines") == 1,
          f"tool {recorded['tool_id']}, inputs {recorded['inputs']}")


@step("rerun_job")
async def rerun(call, made):
    again = await call("rerun_job", job_id=made["silent_job"], changes={"num_lines": 0})
    check(again["rerun_of"] == made["silent_job"] and len(again["jobs"]) == 1, f"rerun {again.get('rerun_of')}")
    made["rerun"] = again["jobs"][0]["id"]


@step("cancel_job")
async def cancel(call, made):
    try:
        cancelled = await call("cancel_job", job_id=made["rerun"])
    except ToolError as error:  # the small job may finish first: then refusing to cancel is right
        if str(error).startswith("[CONFLICT]"):
            return "the job had already finished (CONFLICT, as it should)"
        raise
    return f"{cancelled['previous_state']} -> {cancelled['state']}"


def page_text(made, heading: str) -> str:
    return (f"# {heading}\n\nThe first pasted table:\n\n```galaxy\n"
            f"history_dataset_display(history_dataset_id={made['pasted']['first']})\n```\n")


@step("validate_page_content")
async def validate_page(call, made):
    checked = await call("validate_page_content", content=page_text(made, "Self-test"))
    check(checked["valid"], f"refused: {checked['errors']}")
    broken = await call("validate_page_content", content="```galaxy\nhistory_dataset_display(nonsense=1)\n```\n")
    check(not broken["valid"] and broken["errors"], "an unknown argument was accepted")


@step("create_page (embedded dataset)")
async def create_page(call, made):
    page = await call("create_page", history_id=made["history"], title=history_name(),
                      content=page_text(made, "Self-test"))
    made["page"] = page["page_id"]
    return f"page {page['page_id']}"


@step("update_page")
async def update_page(call, made):
    updated = await call("update_page", page_id=made["page"], content=page_text(made, "Self-test, revised"))
    check(updated.get("edit_source") == "agent", f"edit_source {updated.get('edit_source')!r}")


@step("get_page (rendered)")
async def get_page(call, made):
    page = await call("get_page", page_id=made["page"], include_rendered=True)
    check(page["content_editor"] == page_text(made, "Self-test, revised"), "not the updated content")
    check("gamma" in (page.get("rendered_content") or ""), f"the embedded dataset is not rendered: "
          f"{page.get('rendered_error') or (page.get('rendered_content') or '')[:80]!r}")


@step("list_page_revisions")
async def page_revisions(call, made):
    revisions = await call("list_page_revisions", page_id=made["page"])
    check(revisions["count"] == 2, f"{revisions['count']} revisions, expected 2")


def deletion_steps(kind: str) -> None:
    """The steps delete_<kind> and restore_<kind> of the item made["<kind>"]: its deleted flag after each."""

    async def set_deleted(call, made, deleted: bool) -> None:
        tool = f"{'delete' if deleted else 'restore'}_{kind}"
        answer = await call(tool, **{f"{kind}_id": made[kind]})
        check(answer.get("deleted") is deleted, f"deleted {answer.get('deleted')!r}")
        if deleted:
            made[f"{kind}_deleted"] = True

    step(f"delete_{kind}")(lambda call, made: set_deleted(call, made, True))
    step(f"restore_{kind}")(lambda call, made: set_deleted(call, made, False))


deletion_steps("page")


@step("create_workflow_from_history")
async def extract_workflow(call, made):
    saved = await call("create_workflow_from_history", history_id=made["history"], name=history_name(),
                       job_ids=made["mapped"]["jobs"])
    made["workflow"] = saved["workflow_id"]
    check([entry["label"] for entry in saved["inputs"]] == [COLLECTION_NAME], f"inputs {saved['inputs']}")
    check([entry["tool_id"] for entry in saved["steps"]][1:] == [MAPPED_TOOL], f"steps {saved['steps']}")
    return f"workflow {saved['workflow_id']}"


def workflow_inputs(made) -> dict:
    return {COLLECTION_NAME: {"src": "hdca", "id": made["collection"]}}


@step("get_workflow_input_schema")
async def workflow_schema(call, made):
    schema = await call("get_workflow_input_schema", workflow_id=made["workflow"])
    check([entry["label"] for entry in schema["inputs"]] == [COLLECTION_NAME], f"inputs {schema['inputs']}")


@step("check_workflow_inputs")
async def check_workflow(call, made):
    checked = await call("check_workflow_inputs", workflow_id=made["workflow"], history_id=made["history"],
                         inputs=workflow_inputs(made))
    check(checked["valid"], f"refused: {checked['errors']}")


@step("invoke_workflow")
async def invoke(call, made):
    invoked = await call("invoke_workflow", workflow_id=made["workflow"], history_id=made["history"],
                         inputs=workflow_inputs(made))
    made["invocation"] = invoked["id"]
    check(invoked.get("inputs_by") == "label", f"inputs_by {invoked.get('inputs_by')!r}")
    return f"invocation {invoked['id']}"


@step("wait_for_jobs (invocation)")
async def wait_invocation(call, made):
    waited = await wait(call, invocation_id=made["invocation"])
    check(waited.get("invocation_scheduled"), "the invocation was not scheduled")
    made["invoked"] = True
    return f"{len(waited['jobs'])} jobs ok in {waited['seconds']:.0f} s"


@step("get_invocation_details")
async def invocation_details(call, made):
    progress = (await call("get_invocation_details", invocation_id=made["invocation"]))["progress"]
    check(progress["terminal"] and not progress["failed_steps"],
          f"state {progress['state']}, failed steps {progress['failed_steps']}")


deletion_steps("workflow")


def item(made, name: str) -> list[dict]:
    return [{"src": "hda", "id": made["pasted"][name]}]


@step("update_dataset")
async def update_dataset(call, made):
    updated = await call("update_dataset", dataset_id=made["pasted"]["first"], name="first (renamed)")
    dataset = updated.get("dataset", updated)
    check(dataset.get("name") == "first (renamed)", f"name {dataset.get('name')!r}")


@step("delete_history_items (delete)")
async def delete_items(call, made):
    deleted = await call("delete_history_items", history_id=made["history"], items=item(made, "first"))
    check([entry["deleted"] for entry in deleted["items"]] == [True], f"{deleted['items']}")
    made["deleted"] = True


@step("restore_history_items")
async def restore_items(call, made):
    restored = await call("restore_history_items", history_id=made["history"], items=item(made, "first"))
    check([entry["deleted"] for entry in restored["items"]] == [False], f"{restored['items']}")


@step("delete_history_items (purge)")
async def purge_items(call, made):
    purged = await call("delete_history_items", history_id=made["history"], items=item(made, "second"), purge=True)
    # Galaxy frees the space in a background task: purge_pending until it has run.
    check([entry["purged"] or entry.get("purge_pending") for entry in purged["items"]] == [True], f"{purged['items']}")
