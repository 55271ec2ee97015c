"""What the server says about itself to every client: its ``instructions`` (sent once, in the initialize
result): what every tool description would otherwise repeat (Galaxy's FastMCP("Galaxy") has none; agents in
the trials read one id as two objects); and how long a client may reuse its ``tools/list``."""

#: tools/list's caching hint on protocol 2026-07-28 (``ttlMs``, ``cacheScope``; older revisions have neither
#: field and get the same answer as before). Private: the list depends on the caller (the policy's rules, an
#: OAuth token's scopes). Five minutes: an admin's policy file is re-read when it changes, and a client sees
#: what that changed in the list within this time (a refused call says so at once).
TOOLS_LIST_TTL_SECONDS = 300


def hint_tools_list_caching(mcp) -> None:
    """Give FastMCP server ``mcp`` tools/list's hint. The SDK's runner fills it on 2026-07-28 results only; an
    older revision's schema has no such fields (test/unit/test_tools_list_hint.py: the same bytes as without)."""
    from mcp.server.caching import CacheHint

    mcp._mcp_server.cache_hints.setdefault("tools/list", CacheHint(ttl_ms=TOOLS_LIST_TTL_SECONDS * 1000, scope="private"))

SERVER_INSTRUCTIONS = (
    "Galaxy through tools, acting as your Galaxy user. Ids are per kind: one encoded string can name a "
    "history, a dataset, a collection, a job and a page at once, so pass each id only in an argument of its "
    "kind (history_id, dataset_id, collection_id, job_id, ...). Usual path: create_history; "
    "create_dataset_from_text or upload_file_from_url; create_collection; search_tools, then "
    "get_tool_input_schema; run_tool (check_tool_inputs checks without running; a collection given to a "
    "dataset input maps over it); wait_for_jobs; peek_dataset_content, peek_datasets_content (several) or "
    "peek_collection_content to read results; list_jobs(history_id, include_parameters=true) shows what each "
    "job ran with; get_job_errors for a failed or flagged job (a repair field names the call that fixes it); "
    "create_page for a report; create_workflow_from_history, then invoke_workflow. Every error starts with a "
    "[CODE] and says what to call next."
)
