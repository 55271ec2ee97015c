"""The audit line (core.audit) and its file (core.audit_file): pure logic and real files, no Galaxy."""

import json
import multiprocessing
import os
import threading

import pytest

from galaxy_mcp_analysis.core import audit
from galaxy_mcp_analysis.core.audit import (
    audit_record,
    MAX_STRING_CHARACTERS,
    outcome_of,
)
from galaxy_mcp_analysis.core.audit_file import AuditFile
from galaxy_mcp_analysis.core.settings import Settings
from galaxy_mcp_analysis.tools import TOOL_FACTS

KEY = "f" * 32


def touched(tool, arguments, result):
    return audit.touched(TOOL_FACTS[tool], arguments, result)


def effects(tool, arguments, result):
    return audit.effects(TOOL_FACTS[tool], arguments, result)


def record(tool="get_server_info", arguments=None, error=None, result=None):
    return audit_record(tool=TOOL_FACTS[tool], arguments=arguments or {}, error=error, result=result, started=0.0,
                        duration_seconds=0.0123, request_id="7", user_id="u1", secrets=(KEY,))


def test_a_line_has_the_contracts_fields_and_never_the_key():
    line = record("peek_dataset_content", {"api_key": KEY, "dataset_id": "d1", "note": KEY})
    for field in ("time", "request_id", "user_id", "tool", "outcome", "duration_ms", "created", "changed",
                  "deleted", "jobs"):
        assert field in line
    assert line["time"] == "1970-01-01T00:00:00.000+00:00" and line["duration_ms"] == 12.3
    assert line["arguments"] == {"dataset_id": "d1"}
    assert KEY not in json.dumps(line)
    assert line["outcome"] == "ok" and line["created"] == line["jobs"] == []


def test_a_run_names_the_galaxy_tool_and_version_it_resolved_to():
    guid = "toolshed.example.org/repos/mcp_corpus/corpus_lines/corpus_lines/1.0.0"
    line = record("run_tool", {"tool_id": "corpus_lines", "tool_version": "1.0.0"},
                  result={"tool_id": guid, "tool_version": "1.0.0", "jobs": [{"id": "j1"}], "outputs": []})
    assert line["galaxy_tool"] == {"id": guid, "version": "1.0.0"} and line["jobs"] == ["j1"]
    assert "galaxy_tool" not in record("run_tool", {"tool_id": "corpus_lines"}, error=ValueError("[NOT_FOUND] x"))
    assert "galaxy_tool" not in record("peek_dataset_content", result={"content": "x"})


def test_long_values_are_cut_and_marked():
    line = record("create_dataset_from_text", {"content": "x" * 5000, "items": list(range(50))})
    content = line["arguments"]["content"]
    assert content.startswith("x" * MAX_STRING_CHARACTERS) and content.endswith("[cut: 5000 characters]")
    assert line["arguments"]["items"][-1] == "[cut: 30 more items]" and len(line["arguments"]["items"]) == 21


@pytest.mark.parametrize(("text", "outcome"), [
    ("[VALIDATION_ERROR] bad\nSuggestion: fix", "VALIDATION_ERROR"),
    ("[FORBIDDEN] rule no-purge: Purging is for admins.", "FORBIDDEN"),
    ("[RATE_LIMITED] retry_after_seconds=12", "RATE_LIMITED"),
    ("something unexpected", "SYSTEM_ERROR"),
])
def test_the_outcome_is_the_error_code(text, outcome):
    assert outcome_of(ValueError(text)) == outcome
    line = record("run_tool", {"history_id": "h"}, error=ValueError(text), result={"jobs": [{"id": "j"}]})
    assert line["outcome"] == outcome and line["jobs"] == []  # a failed call is not credited with effects
    assert "\n" not in line["error"]


def test_effects_come_from_the_result_and_arguments():
    run = {"jobs": [{"id": "j1"}, {"id": "j2"}], "outputs": [{"id": "o1"}],
           "implicit_collections": [{"id": "c1"}]}
    assert effects("run_tool", {}, run) == {"created": ["o1", "c1"], "changed": [], "deleted": [], "purged": [],
                                            "jobs": ["j1", "j2"]}
    items = {"items": [{"src": "hda", "id": "a"}, {"src": "hdca", "id": "b"}]}
    assert effects("delete_history_items", {"purge": False}, items)["deleted"] == ["a", "b"]
    purged = effects("delete_history_items", {"purge": True}, items)
    assert purged["purged"] == ["a", "b"] and purged["deleted"] == []
    assert effects("update_dataset", {"dataset_id": "d"}, {"id": "d"})["changed"] == ["d"]
    assert record("update_dataset", {"dataset_id": "d"}, result={"history_id": "h2"})["history_id"] == "h2"
    assert record("run_tool", {"history_id": "h1"}, result={"history_id": "h2"})["history_id"] == "h1"
    assert record("create_history", {"name": "n"}, result={"id": "h3"})["history_id"] == "h3"
    assert effects("invoke_workflow", {}, [{"id": "i1"}, {"id": "i2"}])["created"] == ["i1", "i2"]
    assert effects("get_history_contents", {"history_id": "h"}, {"id": "h"}) == {
        kind: [] for kind in ("created", "changed", "deleted", "purged", "jobs")}



def test_touched_names_each_ids_kind():
    """Encoded ids are per table (a job and a dataset may share one): touched keeps them apart."""
    run = {"jobs": [{"id": "x"}], "outputs": [{"id": "x"}], "output_collections": [{"id": "c"}]}
    assert touched("run_tool", {}, run) == {"created": {"dataset": ["x"], "collection": ["c"]},
                                            "started": {"job": ["x"]}}
    items = {"items": [{"src": "hda", "id": "a"}, {"src": "hdca", "id": "a"}, {"src": "hda", "id": "b"}]}
    assert touched("delete_history_items", {"purge": True}, items) == {
        "purged": {"dataset": ["a", "b"], "collection": ["a"]}}
    assert touched("restore_history_items", {}, items) == {"changed": {"dataset": ["a", "b"], "collection": ["a"]}}
    assert touched("revert_page_revision", {}, {"page_id": "p", "new_revision_id": "r"}) == {
        "changed": {"page": ["p"]}, "created": {"page_revision": ["r"]}}
    assert touched("get_history_contents", {"history_id": "h"}, {"id": "h"}) == {}
    # A recursive delete names the collection's datasets too (deleted_items), each with its kind.
    recursive = {"items": [{"src": "hdca", "id": "c"}],
                 "deleted_items": [{"src": "hdca", "id": "c"}, {"src": "hda", "id": "d1"}, {"src": "hda", "id": "c"}]}
    assert touched("delete_history_items", {"recursive": True}, recursive) == {
        "deleted": {"collection": ["c"], "dataset": ["d1", "c"]}}
    assert touched("delete_page", {}, {"page_id": "p"}) == {"deleted": {"page": ["p"]}}
    assert touched("restore_workflow", {}, {"workflow_id": "w"}) == {"changed": {"workflow": ["w"]}}
    assert touched("update_history", {"history_id": "h"}, {"history_id": "h"}) == {"changed": {"history": ["h"]}}
    line = record("run_tool", {"history_id": "h"}, result=run)
    assert line["touched"] == touched("run_tool", {}, run) and line["jobs"] == ["x"] and line["created"] == ["x", "c"]
    assert record("run_tool", {}, error=ValueError("[NOT_FOUND] no"), result=run)["touched"] == {}


def test_every_effect_path_names_a_kind():
    kinds = {kind for facts in TOOL_FACTS.values() for entries in facts.effects.values() for _, kind in entries}
    assert kinds == {"dataset", "collection", "job", "history", "invocation", "workflow", "user_tool", "page",
                     "page_revision", "src"}
    assert {effect for facts in TOOL_FACTS.values() for effect in facts.effects} == {"created", "changed", "deleted",
                                                                                     "jobs"}


def test_every_writing_tool_has_effects():
    """Every tool whose facts say it writes (the patch set's and Galaxy's stock ones) names its effects; a tool
    that starts jobs records them; only a tool that can purge turns deleted into purged."""
    writing = {name for name, facts in TOOL_FACTS.items() if not facts.read_only}
    assert len(writing) >= 20
    # An upload URL's call makes nothing: the upload through it, later, writes its own audit line (dataset, job).
    later = {"create_upload_url"}
    assert {name for name in writing if not TOOL_FACTS[name].effects} == later
    assert {name for name, facts in TOOL_FACTS.items() if facts.read_only and facts.effects} == set()
    # An invocation's jobs are scheduled later: its line names the invocation.
    assert {name for name, facts in TOOL_FACTS.items() if facts.starts_jobs and "jobs" not in facts.effects} - later == {
        name for name, facts in TOOL_FACTS.items() if facts.invokes_workflows} == {"invoke_workflow"}
    assert {name for name, facts in TOOL_FACTS.items() if facts.purges_with} == {"delete_history_items"}


def test_the_setting_parses_and_defaults_to_off():
    assert Settings().audit_log == ""
    settings = Settings.from_environ({"GALAXY_MCP_ANALYSIS_AUDIT_LOG": " /var/log/a.jsonl ",
                                      "GALAXY_MCP_ANALYSIS_AUDIT_LOG_MAX_BYTES": "1000"})
    assert (settings.audit_log, settings.audit_log_max_bytes) == ("/var/log/a.jsonl", 1000)


def _write_lines(path, worker, count, max_bytes):
    audit = AuditFile(path, max_bytes=max_bytes, backups=1000)
    for number in range(count):
        audit.write_line(json.dumps({"worker": worker, "n": number, "pad": "p" * 100}))


def _all_lines(path):
    directory, name = os.path.split(path)
    lines = []
    for file in os.listdir(directory):
        if file == name or (file.startswith(name + ".") and file[len(name) + 1:].isdigit()):
            with open(os.path.join(directory, file)) as handle:
                lines += handle.read().splitlines()
    return [json.loads(line) for line in lines]


def test_processes_and_threads_lose_no_line_across_rotations(tmp_path):
    path = str(tmp_path / "audit.jsonl")
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_write_lines, args=(path, f"p{n}", 150, 8000)) for n in range(4)]
    threads = [threading.Thread(target=_write_lines, args=(path, f"t{n}", 150, 8000)) for n in range(3)]
    for worker in processes + threads:
        worker.start()
    for worker in processes + threads:
        worker.join()
    assert all(process.exitcode == 0 for process in processes)
    lines = _all_lines(path)  # json.loads: no line interleaved with another
    assert sorted((line["worker"], line["n"]) for line in lines) == sorted(
        (worker, n) for worker in [f"p{i}" for i in range(4)] + [f"t{i}" for i in range(3)] for n in range(150))
    rotated = [file for file in os.listdir(tmp_path) if file.startswith("audit.jsonl.") and file[12:].isdigit()]
    assert len(rotated) > 10
    assert all(os.path.getsize(tmp_path / file) <= 8000 for file in rotated + ["audit.jsonl"])


def test_rotation_keeps_the_newest_backups(tmp_path):
    path = str(tmp_path / "audit.jsonl")
    audit = AuditFile(path, max_bytes=100, backups=2)
    for number in range(10):
        audit.write_line(json.dumps({"n": number, "pad": "x" * 60}))
    audit.close()
    assert sorted(os.listdir(tmp_path)) == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.lock"]
    assert [json.loads(line)["n"] for line in open(path)] == [9]
    assert [json.loads(line)["n"] for line in open(path + ".2")] == [7]


def test_an_unwritable_path_fails_at_check(tmp_path):
    with pytest.raises(OSError):
        AuditFile(str(tmp_path / "missing-dir" / "audit.jsonl")).check()


def test_the_sink_is_off_a_file_or_a_logger(tmp_path, caplog):
    from galaxy_mcp_analysis.mcp.audit import audit_sink

    assert audit_sink(Settings()) is None
    assert isinstance(audit_sink(Settings(audit_log=str(tmp_path / "a.jsonl"))), AuditFile)
    sink = audit_sink(Settings(audit_log="logger:galaxy.mcp_audit_test"))
    with caplog.at_level("INFO", logger="galaxy.mcp_audit_test"):
        sink.write_line('{"tool":"x"}')
    assert [record.getMessage() for record in caplog.records] == ['{"tool":"x"}']



def test_the_target_comes_from_the_variable_else_galaxy_yml(tmp_path):
    from types import SimpleNamespace

    from galaxy_mcp_analysis.mcp.audit import (
        audit_sink,
        audit_target,
    )

    in_galaxy_yml = str(tmp_path / "from-galaxy-yml.jsonl")
    gx_app = SimpleNamespace(config=SimpleNamespace(config_dict={"mcp_analysis_audit_log": in_galaxy_yml}))
    assert audit_target(Settings()) == "" and audit_target(Settings(), gx_app) == in_galaxy_yml
    assert audit_target(Settings(audit_log="logger:x"), gx_app) == "logger:x"
    assert audit_sink(Settings(), gx_app).path == in_galaxy_yml
    nothing = SimpleNamespace(config=SimpleNamespace(config_dict={}))
    assert audit_sink(Settings(), nothing) is None


def test_the_start_up_line_says_which_admin_rules_are_in_force(tmp_path):
    from galaxy_mcp_analysis.mcp.policy_file import admin_rules_line

    policy = tmp_path / "policy.yml"
    assert admin_rules_line(None, "", TOOL_FACTS) == (
        "galaxy-mcp-analysis admin rules: no policy file (every tool for every user); audit trail: off")
    assert f"policy file {policy} (absent: no rules until it exists" in admin_rules_line(str(policy), "", TOOL_FACTS)
    policy.write_text("rules:\n  - {name: a, who: everyone, deny_mcp_tools: [purge]}\n  - {name: b, who: admins}\n")
    assert admin_rules_line(str(policy), "/var/log/a.jsonl", TOOL_FACTS).endswith(
        f"policy file {policy} (2 rules; read again when it changes); audit trail: /var/log/a.jsonl")

def test_the_middleware_records_a_refusal_by_an_inner_layer_and_passes_it_on(tmp_path, monkeypatch):
    import contextvars
    from types import SimpleNamespace

    import anyio
    from fastmcp.exceptions import ToolError
    from fastmcp.server.middleware import MiddlewareContext
    from mcp.types import CallToolRequestParams

    from galaxy_mcp_analysis.mcp import caller as callers
    from galaxy_mcp_analysis.mcp.audit import AuditTrail

    # The caller's one lookup (mcp.caller), not reached by the refused call, is made for its line: a stand-in
    # for Galaxy's user lookup and session (this test runs without Galaxy).
    request_ids = contextvars.ContextVar("request_id")
    gx_app = SimpleNamespace(model=SimpleNamespace(set_request_id=request_ids.set, unset_request_id=lambda _: None),
                             security=SimpleNamespace(encode_id=lambda user_id: f"u{user_id}"))
    monkeypatch.setattr(callers, "user_for_credential", lambda app, key: SimpleNamespace(id=7) if key == KEY else None)
    trail = AuditTrail(gx_app=gx_app, sink=AuditFile(str(tmp_path / "a.jsonl")), facts=TOOL_FACTS)

    async def refuse(context):
        raise ToolError("[FORBIDDEN] rule no-purge-for-users: Purging is for admins.\nSuggestion: ask an admin")

    async def call():
        message = CallToolRequestParams(name="delete_history_items", arguments={
            "history_id": "h1", "items": [{"src": "hda", "id": "a"}], "purge": True, "api_key": KEY})
        with pytest.raises(ToolError):
            await trail.on_call_tool(MiddlewareContext(message=message), refuse)

    anyio.run(call)
    [line] = [json.loads(text) for text in open(tmp_path / "a.jsonl")]
    assert (line["outcome"], line["user_id"], line["history_id"], line["purged"]) == ("FORBIDDEN", "u7", "h1", [])
    assert KEY not in json.dumps(line) and line["pid"] == os.getpid()


def test_a_tasks_cancel_line_names_what_it_stopped_and_never_the_handle():
    done = {"user_id": "u1", "tool": "invoke_workflow", "job_ids": ["j1", "j2"], "invocation_ids": ["i1"]}
    line = audit.task_cancel_record(started=0.0, duration_seconds=0.012, request_id="7", done=done, error=None)
    assert (line["tool"], line["outcome"], line["user_id"], line["arguments"]) == (
        "tasks/cancel", "ok", "u1", {"task_of": "invoke_workflow"})
    assert line["touched"] == {"changed": {"job": ["j1", "j2"], "invocation": ["i1"]}}
    assert line["changed"] == ["j1", "j2", "i1"] and line["created"] == line["deleted"] == [] and "error" not in line
    refused = audit.task_cancel_record(started=0.0, duration_seconds=0.0, request_id=None, done=None,
                                       error=Exception("[NOT_FOUND] Failed to retrieve task\nSuggestion: x"))
    assert (refused["outcome"], refused["user_id"], refused["touched"], refused["changed"]) == (
        "NOT_FOUND", None, {}, [])
    assert refused["error"] == "[NOT_FOUND] Failed to retrieve task"
