"""What every workflow subject shares: the caller's workflow (by id and version), its steps in order,
a step's reference, and how Galaxy's step states keep lists and select options.
"""

from typing import Any

from galaxy import exceptions
from galaxy.model import (
    StoredWorkflow,
    Workflow,
)

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.workflows import WorkflowStepRef


class WorkflowAccess:
    """Finding the caller's workflow, a mixin of ``Workflows``."""

    def accessible_workflow(self, workflow_id: str, version: int | None) -> tuple[StoredWorkflow, Workflow]:
        stored = self.lookup.workflow(workflow_id)
        try:
            workflow = stored.get_internal_version(version)
        except (exceptions.MessageException, IndexError):
            raise AnalysisError(
                ErrorCode.NOT_FOUND,
                f"Workflow {workflow_id} has no version {version} (versions 0..{len(stored.workflows) - 1}).",
                "Omit version for the latest.",
            ) from None
        self.lookup.stored_workflow_ids[workflow.id] = stored.id
        return stored, workflow


def _ordered_steps(workflow: Workflow) -> list:
    return sorted(workflow.steps, key=lambda step: step.order_index)


def _step_ref(step) -> WorkflowStepRef:
    return WorkflowStepRef(step.order_index, step.effective_label, step.type, step.tool_id)


def _option_value(option: Any) -> Any:
    return option.get("value") if isinstance(option, dict) else option


def _listify(value: Any) -> list:
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return [part for part in value.split(",") if part]
    return [value]
