"""The admin's policy applied to every MCP call (Galaxy's 37 tools and ours): one middleware.

``PolicyRules`` takes the current policy from ``mcp.policy_file`` (re-read when the file changes),
the caller from ``mcp.caller`` (the request's one lookup of its credential), and what a call does
from the tool's row of the facts table (``core.tool_facts``: classes, the Galaxy tools it runs);
it refuses a call a rule denies with ``[FORBIDDEN]`` or ``[RATE_LIMITED]`` before the tool runs,
so nothing is created. The Galaxy tools and jobs of a call are read by ``mcp.job_counting``, rate
limits counted by ``mcp.rate_limits``, results masked by ``mcp.masking``. ``?toolset=NAME`` on the
MCP URL narrows what is listed and served; without a policy file and without ``?toolset`` nothing
changes.
"""

import anyio
from fastmcp.exceptions import NotFoundError
from fastmcp.server.middleware import Middleware

from galaxy_mcp_analysis.core.consent import cannot_ask
from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.policy import (
    Caller,
    GalaxyTool,
    Policy,
    RateLimiter,
    Refusal,
)
from galaxy_mcp_analysis.core.tool_facts import ToolFacts
from galaxy_mcp_analysis.mcp.api_key import (
    API_KEY_ARGUMENT,
    api_key_from_request,
)
from galaxy_mcp_analysis.mcp.caller import (
    request_caller,
    RequestCaller,
)
from galaxy_mcp_analysis.mcp.job_counting import (
    PlannedRun,
    USER_TOOL_PREFIX,
)
from galaxy_mcp_analysis.mcp.masking import mask_result
from galaxy_mcp_analysis.mcp.policy_file import PolicySource
from galaxy_mcp_analysis.mcp.rate_limits import (
    counts_directory,
    SharedRateLimiter,
)
from galaxy_mcp_analysis.mcp.session import in_own_session


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


def refusal_outside_calls(gx_app, source: PolicySource, facts: ToolFacts, credential: str | None,
                          method: str) -> AnalysisError | None:
    """Work a protocol method does on a tool's behalf (``tasks/cancel`` stops jobs as ``cancel_job`` does): the
    caller's rules for that tool, deny and allow as for a call, and its ``confirm_mcp_tools``, which such a
    method cannot put to the person (the extension gives it no ``input_required``): refused, pointing to the tool."""
    policy = source.current()
    caller = request_caller(gx_app, credential).policy_caller() if policy and policy.rules and credential else None
    if caller is None:
        return None
    refusal = policy.check_tool(caller, facts)
    if refusal is not None:
        return AnalysisError(ErrorCode.FORBIDDEN, f"rule {refusal.rule}: {refusal.reason} ({method} does its work)",
                             "This server's policy refuses it; nothing was done. Ask the Galaxy admin.")
    found = policy.confirmation(caller, facts, None)
    if found is None:
        return None
    rule, entry = found
    message, _suggestion = cannot_ask(facts.name, rule.name, entry, f"{method} cannot ask the person")
    return AnalysisError(ErrorCode.FORBIDDEN, message,
                         f"Nothing was done. Call {facts.name} for each job instead: it asks the person.")


def requested_toolset() -> str | None:
    from fastmcp.server.dependencies import get_http_request

    try:
        return get_http_request().query_params.get("toolset") or None
    except RuntimeError:
        return None


class PolicyRules(Middleware):
    def __init__(self, gx_app, source: PolicySource, facts: dict[str, ToolFacts], limiter: RateLimiter | None = None):
        self.gx_app = gx_app
        self.source = source
        self.facts = facts
        self.limiter = limiter or SharedRateLimiter(counts_directory(gx_app))

    def _toolset(self, policy: Policy | None) -> set[str] | None:
        name = requested_toolset()
        if name is None:
            return None
        members = (policy or Policy()).toolset(name, self.facts)
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
        caller = await in_own_session(self.gx_app, RequestCaller(self.gx_app, key).policy_caller) if key else None
        if caller is not None:
            tools = [tool for tool in tools if tool.name not in self.facts  # no facts: served by no patch of ours
                     or policy.check_tool(caller, self.facts[tool.name]) is None]
        return tools

    async def on_call_tool(self, context, call_next):
        name = context.message.name
        policy = self.source.current()
        members = self._toolset(policy)
        if members is not None and name not in members:
            raise NotFoundError(f"Unknown tool: {name!r}")
        facts = self.facts.get(name)
        if not (policy and policy.rules) or facts is None:  # no facts: no such tool, Galaxy answers
            return await call_next(context)
        arguments = dict(context.message.arguments or {})
        key = arguments.get(API_KEY_ARGUMENT) or api_key_from_request()
        request = request_caller(self.gx_app, key)
        caller = await anyio.to_thread.run_sync(request.policy_caller) if key else None
        if caller is None:  # no or an unknown key: the tool reports [AUTHENTICATION_ERROR]
            return await call_next(context)
        refusal = policy.check_tool(caller, facts, arguments)
        if refusal is None and facts.runs is not None and (
            policy.needs_galaxy_tools(caller) or policy.needs_jobs_count(caller)
        ):
            refusal = await anyio.to_thread.run_sync(self._check_run, policy, caller, key, facts, arguments)
        if refusal is None and policy.has_rate_limits(caller):  # last: refused calls are not counted
            refusal = await anyio.to_thread.run_sync(self.limiter.check, policy, caller, caller.email or key, facts)
        if refusal is not None:
            raise refused(refusal)
        result = await call_next(context)
        masked = policy.masked_fields(caller, name)
        return mask_result(result, masked) if masked else result

    def _check_run(self, policy: Policy, caller: Caller, key: str, facts: ToolFacts, arguments: dict) -> Refusal | None:
        """Galaxy tool rules first (from the arguments, the recorded job or the saved workflow), then the job
        count; in the call's own database session (the operations' dry runs read, never write)."""
        from galaxy_mcp_analysis.mcp.declaration import operations_for

        try:
            run = PlannedRun(operations_for(self.gx_app, key), facts, arguments)
            tool_ids = run.galaxy_tools()
        except Exception:  # the call's own checks report what is wrong with it (nothing is created)
            return None
        if tool_ids is None:
            return Refusal("policy-checks", f"{facts.name} runs tools this server cannot list before it runs "
                           "(a subworkflow step); the policy's Galaxy tool rules cannot be checked.")
        refusal = policy.check_galaxy_tools(caller, [self._galaxy_tool(*tool) for tool in tool_ids])
        if refusal is None and policy.needs_jobs_count(caller):
            try:
                jobs = run.jobs()
            except Exception:  # invalid inputs (InvalidRun, a coded error): the tool's own checks refuse them
                return None
            refusal = policy.check_jobs(caller, jobs)
        return refusal

    def _galaxy_tool(self, tool_id: str, tool_version: str | None = None) -> GalaxyTool:
        """The tool Galaxy resolves ``tool_id`` (short id or guid) and ``tool_version`` to, as the rules see it."""
        if tool_id.startswith(USER_TOOL_PREFIX):
            return GalaxyTool(tool_id)  # a user-defined tool: in no panel section
        tool = self.gx_app.toolbox.get_tool(tool_id, tool_version=tool_version)
        if tool is None:
            return GalaxyTool(tool_id)
        return GalaxyTool(tool.id, tool.get_panel_section()[1], getattr(tool, "old_id", None))
