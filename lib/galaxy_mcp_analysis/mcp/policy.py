"""The admin's policy applied to every MCP call (Galaxy's 37 tools and ours): one middleware.

``PolicyRules`` reads the policy file (``core.policy``) again when its modification time
changes (one ``stat`` per call), identifies the caller from the API key (argument or header)
as Galaxy's user, and refuses a call a rule denies with ``[FORBIDDEN]`` or ``[RATE_LIMITED]``
before the tool runs, so nothing is created. Galaxy tools of ``run_tool``, ``rerun_job`` and
every step of ``invoke_workflow``, and the jobs a call would create, are read through the
operations manager's public dry runs (check_tool_inputs, check_workflow_inputs,
get_job_parameters, get_workflow_input_schema). ``?toolset=NAME`` on the MCP URL narrows what
is listed and served; without a policy file and without ``?toolset`` nothing changes.
"""

import fcntl
import hashlib
import json
import logging
import os
import threading
import time
from collections import deque
from typing import Any

import anyio
from fastmcp.exceptions import NotFoundError
from fastmcp.server.middleware import Middleware

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.policy import (
    Caller,
    GALAXY_TOOL_RUNNERS,
    GalaxyTool,
    load_policy,
    Policy,
    PolicyError,
    RateLimiter,
    Refusal,
    ToolFacts,
)
from galaxy_mcp_analysis.mcp.api_key import (
    API_KEY_ARGUMENT,
    api_key_from_request,
)

log = logging.getLogger(__name__)

POLICY_FILE_VARIABLE = "GALAXY_MCP_ANALYSIS_POLICY_FILE"
#: The galaxy.yml option (under ``galaxy:``) used when the variable is not set.
POLICY_FILE_OPTION = "mcp_analysis_policy_file"
#: MCP tools whose ``purge`` argument makes a call of the class ``purge``.
PURGING_TOOLS = frozenset({"delete_history_items"})


class PolicySource:
    """The policy file, re-read when its modification time or size changes; absent means no policy."""

    def __init__(self, path: str | None):
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple | None = ("unread",)
        self._policy: Policy | None = None
        self._error: str | None = None

    def current(self) -> Policy | None:
        if not self.path:
            return None
        try:
            status = os.stat(self.path)
            stamp: tuple | None = (status.st_mtime_ns, status.st_size, status.st_ino)
        except FileNotFoundError:
            stamp = None
        with self._lock:
            if stamp != self._stamp:
                self._reload(stamp)
            if self._error:
                raise AnalysisError(
                    ErrorCode.FORBIDDEN,
                    f"rule policy-file: the server's policy file is invalid ({self._error}); "
                    "every call is refused until the Galaxy admin fixes it.",
                    "Tell the Galaxy admin; nothing was done.",
                )
            return self._policy

    def _reload(self, stamp) -> None:
        self._stamp = stamp
        if stamp is None:
            self._policy, self._error = None, None
            return
        try:
            self._policy, self._error = load_policy(self.path), None
            log.info("galaxy-mcp-analysis: policy file %s loaded (%d rules)", self.path, len(self._policy.rules))
        except PolicyError as error:
            self._policy = None
            self._error = str(error).removeprefix(self.path).lstrip(": ") or "unreadable"
            log.error("galaxy-mcp-analysis: %s; every MCP call is refused until it is fixed", error)


def policy_path(gx_app=None) -> str | None:
    path = os.environ.get(POLICY_FILE_VARIABLE, "").strip()
    if not path and gx_app is not None:
        path = str(gx_app.config.config_dict.get(POLICY_FILE_OPTION) or "").strip()
    return path or None


def admin_rules_line(policy_file: str | None, audit_target: str) -> str:
    """The start-up line saying which admin rules are in force (one per serving process)."""
    if not policy_file:
        policy = "no policy file (every tool for every user)"
    elif not os.path.exists(policy_file):
        policy = f"policy file {policy_file} (absent: no rules until it exists; read when it changes)"
    else:
        rules = load_policy(policy_file).rules
        policy = f"policy file {policy_file} ({len(rules)} rules; read again when it changes)"
    return f"galaxy-mcp-analysis admin rules: {policy}; audit trail: {audit_target or 'off'}"


def check_policy_file(path: str | None) -> None:
    """Start-up: an existing but invalid policy file stops Galaxy, naming the line and field."""
    if path and os.path.exists(path):
        load_policy(path)


def refused(refusal: Refusal) -> AnalysisError:
    if refusal.rate_limited:
        return AnalysisError(
            ErrorCode.RATE_LIMITED,
            f"rule {refusal.rule}: {refusal.reason} retry_after_seconds={refusal.retry_after_seconds}",
            f"Wait {refusal.retry_after_seconds} seconds, then call again; nothing was done.",
        )
    return AnalysisError(
        ErrorCode.FORBIDDEN,
        f"rule {refusal.rule}: {refusal.reason}",
        "This server's policy refuses the call; nothing was done. Do without it or ask the Galaxy admin.",
    )


def requested_toolset() -> str | None:
    from fastmcp.server.dependencies import get_http_request

    try:
        return get_http_request().query_params.get("toolset") or None
    except RuntimeError:
        return None


def tool_facts(tool, arguments: dict | None = None) -> ToolFacts:
    """What rules match of a tool (listing: ``arguments`` None) or of one call of it."""
    annotations = getattr(tool, "annotations", None)
    return ToolFacts(
        tool.name,
        read_only=bool(annotations and annotations.readOnlyHint),
        destructive=bool(annotations and annotations.destructiveHint),
        purge=tool.name in PURGING_TOOLS and arguments is not None and bool(arguments.get("purge")),
    )


class SharedRateLimiter(RateLimiter):
    """The rate limits' counts in one small file per user under ``directory``, read and written under an
    exclusive ``flock``: every process that shares the directory (gunicorn's workers) counts together."""

    def __init__(self, directory: str):
        super().__init__(clock=time.time)  # wall clock: the same in every process
        self.directory = directory

    def check(self, policy: Policy, caller: Caller, user_key: str, tool_name: str) -> Refusal | None:
        if not policy.has_rate_limits(caller):
            return None
        os.makedirs(self.directory, exist_ok=True)
        name = hashlib.sha256(user_key.encode()).hexdigest()[:32]
        with open(os.path.join(self.directory, f"{name}.json"), "a+", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed
            handle.seek(0)
            try:
                windows = {key: deque(stamps) for key, stamps in json.loads(handle.read() or "{}").items()}
            except ValueError:  # a torn file (a process killed mid-write): start the count again
                windows = {}
            refusal = self.judge(policy, caller, tool_name, lambda key: windows.setdefault(key, deque()))
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps({key: list(stamps) for key, stamps in windows.items()}))
        return refusal


def counts_directory(gx_app) -> str:
    """Where the rate limits are counted: Galaxy's data directory, shared by all its web workers."""
    return os.path.join(str(gx_app.config.data_dir), "mcp_policy_counts")


class PolicyRules(Middleware):
    def __init__(self, gx_app, source: PolicySource, limiter: RateLimiter | None = None):
        self.gx_app = gx_app
        self.source = source
        self.limiter = limiter or SharedRateLimiter(counts_directory(gx_app))

    def _toolset(self, policy: Policy | None) -> set[str] | None:
        name = requested_toolset()
        if name is None:
            return None
        members = (policy or Policy()).toolset(name)
        if members is None:
            known = ", ".join(["core", *sorted((policy or Policy()).toolsets)])
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"Unknown tool set {name!r} in the MCP URL (?toolset=); this server has: {known}.",
                "Connect to /api/mcp?toolset=core, or to /api/mcp for every tool.",
            )
        return set(members)

    async def on_list_tools(self, context, call_next):
        tools = await call_next(context)
        try:
            policy = self.source.current()
        except AnalysisError:
            return []  # an invalid policy file: fail closed
        members = self._toolset(policy)
        if members is not None:
            tools = [tool for tool in tools if tool.name in members]
        key = api_key_from_request() if policy and policy.rules else None
        caller = await self._caller(key) if key else None
        if caller is not None:
            tools = [tool for tool in tools if policy.check_tool(caller, tool_facts(tool)) is None]
        return tools

    async def on_call_tool(self, context, call_next):
        name = context.message.name
        policy = self.source.current()
        members = self._toolset(policy)
        if members is not None and name not in members:
            raise NotFoundError(f"Unknown tool: {name!r}")
        if not (policy and policy.rules):
            return await call_next(context)
        arguments = dict(context.message.arguments or {})
        key = arguments.get(API_KEY_ARGUMENT) or api_key_from_request()
        caller = await self._caller(key) if key else None
        if caller is None:  # no or an unknown key: the tool reports [AUTHENTICATION_ERROR]
            return await call_next(context)
        tool = await context.fastmcp_context.fastmcp.get_tool(name)
        if tool is None:
            return await call_next(context)
        refusal = policy.check_tool(caller, tool_facts(tool, arguments))
        if refusal is None and name in GALAXY_TOOL_RUNNERS and (
            policy.needs_galaxy_tools(caller) or policy.needs_jobs_count(caller)
        ):
            refusal = await self._in_request_scope(self._check_run, policy, caller, key, name, arguments)
        if refusal is None and policy.has_rate_limits(caller):  # last: refused calls are not counted
            refusal = await anyio.to_thread.run_sync(self.limiter.check, policy, caller, caller.email or key, name)
        if refusal is not None:
            raise refused(refusal)
        result = await call_next(context)
        masked = policy.masked_fields(caller, name)
        return mask_result(result, masked) if masked else result

    async def _caller(self, key: str) -> Caller | None:
        return await self._in_request_scope(self._identify, key)

    async def _in_request_scope(self, function, *args):
        """Run ``function`` in a worker thread with its own database session, closed afterwards."""
        import uuid

        model = self.gx_app.model
        request_id = f"mcp-policy-{uuid.uuid4().hex}"
        token = model.set_request_id(request_id)
        try:
            return await anyio.to_thread.run_sync(function, *args)
        finally:
            model.unset_request_id(request_id)
            token.var.reset(token)

    def _identify(self, key: str) -> Caller | None:
        from galaxy.managers.users import UserManager

        try:
            user = self.gx_app[UserManager].by_api_key(api_key=key)
        except Exception:  # an unknown or deleted key: the tool itself answers
            return None
        if user is None or getattr(user, "bootstrap_admin_user", False):
            return None
        return Caller(
            email=user.email,
            is_admin=self.gx_app.config.is_admin_user(user),
            roles=frozenset(role.name for role in user.all_roles() if role.name),
            groups=frozenset(association.group.name for association in user.groups if not association.group.deleted),
        )

    def _check_run(self, policy: Policy, caller: Caller, key: str, name: str, arguments: dict) -> Refusal | None:
        """Galaxy tool rules first (from the arguments or the recorded job / saved workflow), then the job count."""
        from galaxy_mcp_analysis.mcp.declaration import operations_for

        try:
            ops = operations_for(self.gx_app, key)
            tool_ids = RUN_TOOL_IDS[name](ops, arguments)
        except Exception:  # the call's own checks report what is wrong with it (nothing is created)
            return None
        if tool_ids is None:
            return Refusal("policy-checks", f"{name} runs tools this server cannot list before it runs "
                           "(a subworkflow step); the policy's Galaxy tool rules cannot be checked.")
        refusal = policy.check_galaxy_tools(caller, [self._galaxy_tool(*tool) for tool in tool_ids])
        if refusal is None and policy.needs_jobs_count(caller):
            try:
                jobs = RUN_JOBS[name](ops, arguments)
            except Exception:  # invalid inputs: the tool's own checks refuse the call, before any job
                return None
            refusal = policy.check_jobs(caller, jobs)
        return refusal

    def _galaxy_tool(self, tool_id: str, tool_version: str | None = None) -> GalaxyTool:
        """The tool Galaxy resolves ``tool_id`` (short id or guid) and ``tool_version`` to, as the rules see it."""
        tool = self.gx_app.toolbox.get_tool(tool_id, tool_version=tool_version)
        if tool is None:
            return GalaxyTool(tool_id)
        return GalaxyTool(tool.id, tool.get_panel_section()[1], getattr(tool, "old_id", None))


#: The preflight cannot count the jobs (an unmodelled tool, no history yet): refused under any job limit.
UNCOUNTED = 10**9


def _count_tool_jobs(ops, history_id, tool_id, inputs, tool_version=None) -> int:
    checked = ops.check_tool_inputs(history_id, tool_id, inputs or {}, tool_version=tool_version)
    if not checked.get("valid"):
        raise ValueError("invalid inputs: the tool's own checks refuse the call")
    return UNCOUNTED if checked.get("jobs_expected") is None else int(checked["jobs_expected"])


def _workflow_steps(ops, arguments) -> list[dict]:
    return ops.get_workflow_input_schema(arguments["workflow_id"])["steps"]


def _workflow_tool_ids(ops, arguments) -> list[str] | None:
    steps = _workflow_steps(ops, arguments)
    if any(step.get("type") == "subworkflow" for step in steps):
        return None
    return [(step["tool_id"], step.get("tool_version")) for step in steps if step.get("tool_id")]


def _workflow_jobs(ops, arguments) -> int:
    if not arguments.get("history_id"):
        return UNCOUNTED  # counted against a history's data only
    checked = ops.check_workflow_inputs(arguments["workflow_id"], arguments["history_id"],
                                        arguments.get("inputs") or {}, arguments.get("parameters"))
    if not checked.get("valid"):
        raise ValueError("invalid inputs: invoke_workflow's own checks refuse the call")
    return sum(int(step.get("jobs_expected") or 0) for step in checked["steps"])


def _rerun_jobs(ops, arguments) -> int:
    recorded = ops.get_job_parameters(arguments["job_id"])
    inputs = {**(recorded.get("inputs") or {}), **(arguments.get("changes") or {})}
    history_id = arguments.get("history_id") or recorded.get("history_id")
    return _count_tool_jobs(ops, history_id, recorded["tool_id"], inputs, recorded.get("tool_version"))


def _rerun_tool(ops, arguments) -> list[tuple[str, str | None]]:
    recorded = ops.get_job_parameters(arguments["job_id"])
    return [(recorded["tool_id"], recorded.get("tool_version"))]


#: Per MCP tool that runs Galaxy tools: the (tool id, version) pairs a call runs.
RUN_TOOL_IDS = {
    "run_tool": lambda ops, arguments: [(arguments["tool_id"], arguments.get("tool_version"))],
    "rerun_job": _rerun_tool,
    "invoke_workflow": _workflow_tool_ids,
}
RUN_JOBS = {
    "run_tool": lambda ops, arguments: _count_tool_jobs(ops, arguments.get("history_id"), arguments["tool_id"],
                                                        arguments.get("inputs"), arguments.get("tool_version")),
    "rerun_job": _rerun_jobs,
    "invoke_workflow": _workflow_jobs,
}


def without_fields(value: Any, names: set[str]) -> Any:
    if isinstance(value, dict):
        return {key: without_fields(item, names) for key, item in value.items() if key not in names}
    if isinstance(value, list):
        return [without_fields(item, names) for item in value]
    return value


def mask_result(result, names: set[str]):
    """The result without the named fields, at any depth, in the structured content and the text."""
    from mcp.types import TextContent

    structured = without_fields(result.structured_content, names) if result.structured_content else None
    content = []
    for block in result.content:
        if isinstance(block, TextContent):
            try:
                text = json.dumps(without_fields(json.loads(block.text), names))
            except ValueError:
                text = json.dumps(structured) if structured is not None else block.text
            block = block.model_copy(update={"text": text})
        content.append(block)
    return result.model_copy(update={"content": content, "structured_content": structured})
