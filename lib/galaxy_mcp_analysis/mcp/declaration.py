"""The one helper that turns an operation into an MCP tool, and the tool table.

A tool is declared once, as a typed function whose first parameter is the
caller's operations manager::

    @analysis_tool(title="Read dataset content", read_only=True)
    def peek_dataset_content(ops, dataset_id: Annotated[str, Field(...)], ...) -> dict:
        \"\"\"Description shown to agents.\"\"\"
        return ops.read_dataset_range(...)

``register_analysis_tools`` replaces ``ops`` with the ``api_key`` parameter every
Galaxy MCP tool takes, resolves the key to that user's AnalysisOperationsManager,
and runs the body under the one error mapping (mcp.errors.coded_errors).
"""

import contextlib
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import (
    Annotated,
    Any,
)

from mcp.types import ToolAnnotations
from pydantic import Field

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.tool_facts import ToolFacts
from galaxy_mcp_analysis.mcp.api_key import API_KEY_DESCRIPTION
from galaxy_mcp_analysis.mcp.caller import request_caller
from galaxy_mcp_analysis.mcp.errors import coded_errors
from galaxy_mcp_analysis.mcp.result_text import (
    shaped_result,
    TextShape,
)
from galaxy_mcp_analysis.mcp.surface import ToolSurface


@dataclass(frozen=True)
class ToolSpec:
    function: Callable[..., Any]
    #: The tool's row of the facts table (core.tool_facts): its annotations among them.
    facts: ToolFacts
    #: What the result's text block carries instead of the whole result as JSON (mcp.result_text).
    text: TextShape | None = None

    @property
    def name(self) -> str:
        return self.function.__name__

    @property
    def annotations(self) -> ToolAnnotations:
        return annotations_of(self.facts)


#: Every tool the patch set adds, in registration order.
TOOL_SPECS: list[ToolSpec] = []


def annotations_of(facts: ToolFacts) -> ToolAnnotations:
    """A tool's MCP annotations, as its facts state them."""
    return ToolAnnotations(
        title=facts.title,
        readOnlyHint=facts.read_only,
        destructiveHint=facts.destructive,
        idempotentHint=facts.idempotent,
        openWorldHint=facts.open_world,
    )


def analysis_tool(
    *,
    title: str,
    read_only: bool,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = False,
    text: TextShape | None = None,
    **facts: Any,
):
    """Declare an MCP tool; its facts (core.tool_facts.ToolFacts) are stated here, next to the code they describe.

    The MCP annotations come from ``title`` ... ``open_world``; ``facts`` are the rest of its row of the
    facts table the policy and the audit trail read: ``starts_jobs``, ``runs``, ``purges_with``,
    ``history`` and ``effects``. ``text``: for a tool whose results can be large, the shape of its
    text block (``mcp.result_text.RawText`` or ``Table``), so the payload goes out once, not twice.
    """

    def declare(function):
        row = ToolFacts(function.__name__, title, read_only, destructive, idempotent, open_world, **facts)
        TOOL_SPECS.append(ToolSpec(function, row, text))
        return function

    return declare


def operations_for(gx_app, api_key: str):
    """The caller's operations manager, built the way Galaxy's own MCP tools build theirs, for the request's caller."""
    if not api_key:
        raise AnalysisError(
            ErrorCode.AUTHENTICATION_ERROR,
            "No API key was given.",
            "Send the x-api-key header from the MCP client, or pass api_key "
            "(User -> Preferences -> Manage API Key in Galaxy).",
        )
    caller = request_caller(gx_app, api_key)
    user = caller.user()  # the request's one lookup (mcp.caller)
    if caller.failure is not None:
        raise caller.failure  # Galaxy's own error for an unknown key, mapped like any other
    if user is None:
        raise AnalysisError(
            ErrorCode.AUTHENTICATION_ERROR,
            "This API key does not belong to a Galaxy user account.",
            "Use a user's API key; the bootstrap admin key cannot own histories or datasets.",
        )
    return operations_for_user(gx_app, user)


def operations_for_user(gx_app, user):
    """An operations manager acting as ``user`` (a Galaxy ``User``), as Galaxy's MCP tools build theirs."""
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp
    from galaxy.work.context import SessionRequestContext

    from galaxy_mcp_analysis.operations import AnalysisOperationsManager

    base_url = gx_app.config.galaxy_infrastructure_url
    trans = SessionRequestContext(
        app=gx_app,
        user=user,
        url_builder=galaxy_mcp.get_mcp_url_builder(base_url),
        request=galaxy_mcp._StaticRequest(base_url),
        response=galaxy_mcp._StaticResponse(),
    )
    return AnalysisOperationsManager(app=gx_app, trans=trans)


def _as_mcp_function(spec: ToolSpec, gx_app) -> Callable[..., Any]:
    """``spec.function`` with ``ops`` swapped for ``api_key``, keeping every other parameter's schema."""
    signature = inspect.signature(spec.function)
    parameters = list(signature.parameters.values())[1:]
    api_key = inspect.Parameter(
        "api_key",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=Annotated[str, Field(description=API_KEY_DESCRIPTION)],
    )
    keyword_only = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in parameters]
    # Required parameters first so the signature stays valid with api_key among them.
    ordered = [p for p in keyword_only if p.default is inspect.Parameter.empty] + [api_key]
    ordered += [p for p in keyword_only if p.default is not inspect.Parameter.empty]

    @functools.wraps(spec.function)
    def tool(*, api_key: str, **arguments):
        with coded_errors(spec.name, arguments):
            result = spec.function(operations_for(gx_app, api_key), **arguments)
            return result if spec.text is None else shaped_result(result, spec.text)

    del tool.__wrapped__  # FastMCP must read the signature below, not the operation's.
    tool.__signature__ = signature.replace(parameters=ordered)
    tool.__annotations__ = {p.name: p.annotation for p in ordered} | {"return": signature.return_annotation}
    return tool


def register_analysis_tools(
    mcp,
    gx_app,
    specs: list[ToolSpec],
    stock_annotations: dict[str, ToolAnnotations],
    stock_descriptions: dict[str, str],
) -> list[str]:
    """Add the declared tools (``specs``) to Galaxy's FastMCP instance (the one serving /api/mcp).

    Galaxy's stock tools get their annotations and corrected descriptions through one
    transform on the same instance. The caller (activation) hands over what the tools
    package declared, so this helper never imports the declarations built on it.
    """
    mcp.add_transform(ToolSurface(stock_annotations, stock_descriptions))
    for spec in specs:
        with contextlib.suppress(KeyError):  # a stock tool declared again (run_tool: a parameter it lacks)
            mcp.local_provider.remove_tool(spec.name)
        mcp.tool(
            _as_mcp_function(spec, gx_app),
            name=spec.name,
            title=spec.annotations.title,
            description=inspect.cleandoc(spec.function.__doc__),
            annotations=spec.annotations,
        )
    return [spec.name for spec in specs]
