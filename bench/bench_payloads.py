"""What the text block of a large result costs: the shaped text block (mcp/result_text.py) against
FastMCP's default, the whole structured result serialized again as JSON text.

For each tool: the bytes of structuredContent, of the text block sent, of the default text
block (rebuilt from structuredContent as FastMCP serializes it), and the JSON-RPC result on
the wire both ways (JSON strings are escaped once more inside the envelope).
"""

import json

import aio
from galaxy_mcp_analysis.testing import rest

ITEMS = 100
JOBS = 20  # sort1 jobs for list_jobs, and the steps of the workflow saved from them


def envelope_bytes(text: str, structured: dict) -> int:
    """The JSON-RPC result as the server sends it: one text block and structuredContent."""
    return len(json.dumps({"content": [{"type": "text", "text": text}], "structuredContent": structured,
                           "isError": False}, ensure_ascii=False, separators=(",", ":")).encode())


def default_text(structured: dict) -> str:
    """FastMCP's text block for a dict result without a shape: the whole result as compact JSON."""
    return json.dumps(structured, ensure_ascii=False, separators=(",", ":"))


def types_only_schema(value):
    """The smallest useful outputSchema for a result like ``value``: property names and JSON types,
    no descriptions (what declaring one would add to tools/list at the least)."""
    if isinstance(value, dict):
        return {"type": "object", "properties": {key: types_only_schema(item) for key, item in value.items()}}
    if isinstance(value, list):
        return {"type": "array", "items": types_only_schema(value[0])} if value else {"type": "array"}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if value is None:
        return {}
    return {"type": "string"}


def run(galaxy, mcp) -> dict:
    key = galaxy.api_key
    history_id = mcp.call_ok("create_history", name="bench-payloads", api_key=key)["id"]
    elements = [{"src": "pasted", "paste_content": f"chr1\t{i}\t{i + 10}\tpeak_{i}\n" * 40, "ext": "bed",
                 "name": f"sample_{i:03d}.bed"} for i in range(ITEMS)]
    fetched = rest(galaxy.galaxy_url, "/api/tools/fetch", key, {"history_id": history_id, "targets": [
        {"destination": {"type": "hdas"}, "elements": elements},
        {"destination": {"type": "hdca"}, "collection_type": "list", "name": "samples", "elements": elements}]})
    job_id = fetched["jobs"][0]["id"]
    mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=120, api_key=key)
    collection_id = fetched["output_collections"][0]["id"]
    dataset_id = fetched["outputs"][0]["id"]
    jobs_history = mcp.call_ok("create_history", name="bench-payloads-jobs", api_key=key)["id"]
    table = mcp.call_ok("create_dataset_from_text", history_id=jobs_history, content="a\t2\nb\t1\n",
                        file_type="tabular", api_key=key)["dataset_id"]
    for i in range(JOBS):
        mcp.call_ok("run_tool", history_id=jobs_history, tool_id="sort1", api_key=key, inputs={
            "input": {"src": "hda", "id": table}, "column": 2, "order": "ASC" if i % 2 else "DESC"})
    mcp.call_ok("wait_for_jobs", history_id=jobs_history, timeout_seconds=600, api_key=key)
    return aio.run(measure, galaxy, history_id, collection_id, dataset_id, job_id, jobs_history)


async def measure(galaxy, history_id, collection_id, dataset_id, job_id, jobs_history) -> dict:
    calls = {
        f"list_jobs ({JOBS + 1} jobs)": ("list_jobs", {"history_id": jobs_history}),
        f"create_workflow_from_history ({JOBS} jobs, not shaped)": (
            "create_workflow_from_history", {"history_id": jobs_history, "name": "bench payloads"}),
        f"get_workflow_input_schema ({JOBS} sort1 steps)": ("get_workflow_input_schema", None),
        "get_tool_input_schema (sort1, not shaped)": ("get_tool_input_schema", {"tool_id": "sort1"}),
        f"get_history_contents ({ITEMS} items)": ("get_history_contents", {"history_id": history_id, "limit": ITEMS}),
        f"get_collection_details ({ITEMS} elements)": ("get_collection_details", {"collection_id": collection_id}),
        "get_job_errors (an upload job)": ("get_job_errors", {"job_id": job_id, "max_bytes": 65536}),
        "peek_dataset_content (64 KiB cap, a 2 KB dataset)": ("peek_dataset_content", {"dataset_id": dataset_id}),
        "get_dataset_details (not shaped)": ("get_dataset_details", {"dataset_id": dataset_id}),
    }
    results = {}
    async with aio.clients(galaxy.galaxy_url, galaxy.mcp_url, galaxy.api_key) as c:
        workflow_id = None
        for label, (tool, arguments) in calls.items():
            if tool == "get_workflow_input_schema":
                if workflow_id is None:
                    continue
                arguments = {"workflow_id": workflow_id}
            result = await c.mcp.call_tool(tool, arguments)
            if result.is_error:
                print(f"  {label}: FAILED {result.content[0].text[:200]}")
                continue
            structured = result.structured_content
            workflow_id = structured.get("workflow_id", workflow_id)
            text = "".join(block.text for block in result.content if block.type == "text")
            default = default_text(structured)
            figures = {
                "structured_bytes": len(json.dumps(structured, ensure_ascii=False, separators=(",", ":")).encode()),
                "text_bytes": len(text.encode()),
                "default_text_bytes": len(default.encode()),
                "wire_bytes": envelope_bytes(text, structured),
                "default_wire_bytes": envelope_bytes(default, structured),
            }
            figures["wire_ratio"] = figures["wire_bytes"] / figures["default_wire_bytes"]
            figures["output_schema_bytes"] = len(json.dumps({"outputSchema": types_only_schema(structured)},
                                                            separators=(",", ":")))
            results[label] = figures
            print(f"  {label}: structuredContent {figures['structured_bytes']:,} B; text block "
                  f"{figures['text_bytes']:,} B (FastMCP's default {figures['default_text_bytes']:,} B); "
                  f"JSON-RPC result {figures['wire_bytes']:,} B vs {figures['default_wire_bytes']:,} B "
                  f"= {figures['wire_ratio']:.2f}; a types-only outputSchema would add "
                  f"{figures['output_schema_bytes']:,} B to tools/list")
    return results
