"""Records what the walks over a tool's inputs feed, for a before/after diff (not part of the suite):
the information tools' answers for every served tool, run_tool's jobs for the corpus cases, and each
MCP tool's whole tools/list entry (byte-compared where its description did not change).

WALKER_RECORD=<file> pytest test/integration/record_tool_walks.py
"""

import json
import os
import re

from galaxy_mcp_analysis.testing import rest
from test_tool_corpus_cases import CaseData, corpus_cases

_ID = re.compile(r"\b[0-9a-f]{16}\b")


def _normalised(value):
    text = json.dumps(value, sort_keys=True, indent=1)
    names: dict[str, str] = {}
    return _ID.sub(lambda m: names.setdefault(m.group(0), f"<id{len(names)}>"), text)


def test_record(galaxy, mcp, api_key, admin_key):
    record = {}
    for tool in mcp.list_tools():
        record[f"tools/list {tool.name}"] = json.dumps(tool.model_dump(mode="json", exclude_none=True), sort_keys=True)
    tools = sorted({t["id"] for t in rest(galaxy.galaxy_url, "/api/tools?in_panel=false", admin_key)})
    assert len(tools) > 100, len(tools)
    for tool_id in tools:
        entry = {}
        for name, args in (("details", {"io_details": True}), ("plain_details", {}), ("schema", {}), ("help", {})):
            tool = {"details": "get_tool_details", "plain_details": "get_tool_details",
                    "schema": "get_tool_input_schema", "help": "get_tool_help"}[name]
            result = mcp.call(tool, {"tool_id": tool_id, "api_key": api_key, **args})
            entry[name] = {"error": str(result.content)} if result.is_error else result.structured_content
        record[f"tool {tool_id}"] = _normalised(entry)
    for tool_id in ("", " ", "no_such_tool"):
        for io_details in (False, True):
            result = mcp.call("get_tool_details", {"tool_id": tool_id, "io_details": io_details, "api_key": api_key})
            record[f"refused {tool_id!r} {io_details}"] = str(result.content)
    history = mcp.call_ok("create_history", name="walk record", api_key=api_key)["id"]
    data = CaseData(galaxy, mcp, api_key, history)
    cases = [(tool_id, number, data.request(state)) for tool_id, number, _, state in corpus_cases()]
    data.wait()
    for tool_id, number, request in cases:
        result = mcp.call("run_tool", {"history_id": history, "tool_id": tool_id, "inputs": request, "api_key": api_key})
        if result.is_error:
            record[f"job {tool_id} {number}"] = str(result.content)
            continue
        for index, job in enumerate(result.structured_content["jobs"]):
            parameters = mcp.call("get_job_parameters", {"job_id": job["id"], "api_key": api_key})
            content = parameters.structured_content if not parameters.is_error else str(parameters.content)
            if isinstance(content, dict):  # the outputs and the job's state depend on when it is read
                content.pop("outputs", None)
                content.pop("state", None)
            record[f"job {tool_id} {number} {index}"] = _normalised(content)
    with open(os.environ["WALKER_RECORD"], "w") as out:
        json.dump(record, out, indent=1, sort_keys=True)
    print(len(tools), "tools,", len(cases), "cases")
