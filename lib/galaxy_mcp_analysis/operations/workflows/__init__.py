"""Workflows an agent can check, follow and write.

Galaxy decides everything here through its own objects: the workflow manager finds
workflows and invocations the caller may see, workflow modules say what each step
takes and makes, Galaxy's datatype registry and collection-type descriptions say what
an input accepts or maps over, ``WorkflowsService`` invokes and extracts, and the
workflow contents manager (with gxformat2, in Galaxy's virtualenv) reads and writes
Format 2. Tool parameters of steps are checked by the tool-input capability
(``tool_state_problems``); rules that need no Galaxy are in
``core.workflows``.

One mixin per subject, joined here into ``Workflows``: ``input_schema`` (reading a
workflow's inputs), ``preflight`` (checking and invoking) with ``input_checks`` (each
input's value), ``progress`` (following an invocation), ``extraction`` (a workflow from
a history), ``definitions`` (a workflow from a document), ``deletion`` (deleting and
restoring one), ``common`` (finding the
caller's workflow, helpers they share).
"""

from galaxy_mcp_analysis.operations.workflows.common import WorkflowAccess
from galaxy_mcp_analysis.operations.workflows.definitions import WorkflowDefinitions
from galaxy_mcp_analysis.operations.workflows.deletion import WorkflowDeletion
from galaxy_mcp_analysis.operations.workflows.extraction import WorkflowExtraction
from galaxy_mcp_analysis.operations.workflows.input_checks import WorkflowInputChecks
from galaxy_mcp_analysis.operations.workflows.input_schema import WorkflowInputSchema
from galaxy_mcp_analysis.operations.workflows.preflight import WorkflowPreflight
from galaxy_mcp_analysis.operations.workflows.progress import WorkflowProgress


class Workflows(
    WorkflowInputSchema,
    WorkflowPreflight,
    WorkflowInputChecks,
    WorkflowProgress,
    WorkflowExtraction,
    WorkflowDefinitions,
    WorkflowDeletion,
    WorkflowAccess,
):
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans``, services, and the
    tool-input capability's ``get_tool_input_schema`` and ``tool_state_problems``)."""
