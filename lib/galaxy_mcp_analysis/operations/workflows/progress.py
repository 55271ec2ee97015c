"""Following an invocation: ``get_invocation_details`` (the stock method overridden) with ``progress``,
and the jobs ``wait_for_jobs(invocation_id=...)`` waits for, those of subworkflow invocations included.
"""

from typing import Any

from galaxy.model import WorkflowInvocation

from galaxy_mcp_analysis.core.workflows import (
    StepJob,
    StepProgress,
    summarize_progress,
)
from galaxy_mcp_analysis.operations.workflows.common import (
    _ordered_steps,
    _step_ref,
)


class WorkflowProgress:
    """An invocation's steps, jobs and outputs so far, a mixin of ``Workflows``."""

    def get_invocation_details(self, invocation_id: str) -> dict[str, Any]:
        """Galaxy's invocation view plus ``progress`` (stock method overridden)."""
        details = super().get_invocation_details(invocation_id)
        invocation = self.lookup.invocation(invocation_id)
        details["progress"] = self._progress(invocation)
        return details

    def _progress(self, invocation: WorkflowInvocation) -> dict[str, Any]:
        encode = self.trans.security.encode_id
        by_step = {invocation_step.workflow_step_id: invocation_step for invocation_step in invocation.steps}
        progress = []
        for step in _ordered_steps(invocation.workflow):
            invocation_step = by_step.get(step.id)
            jobs = []
            outputs: dict[str, Any] = {}
            # A subworkflow step runs no job itself: its jobs are those of its own invocation.
            association = (
                invocation.get_subworkflow_invocation_association_for_step(step) if step.type == "subworkflow" else None
            )
            subworkflow = association.subworkflow_invocation if association else None  # None: not scheduled yet
            step_jobs = list(_all_jobs(subworkflow)) if subworkflow else (invocation_step.jobs if invocation_step else [])
            for job in step_jobs:
                silent = job.state == "ok" and self.output_verdict(job).suspected_silent_failure
                jobs.append(StepJob(encode(job.id), job.state, silent))
            if invocation_step is not None:
                for output in invocation_step.output_datasets:
                    outputs[output.output_name] = {"src": "hda", "id": encode(output.dataset_id)}
                for output in invocation_step.output_dataset_collections:
                    outputs[output.output_name] = {"src": "hdca", "id": encode(output.dataset_collection_id)}
            progress.append(
                StepProgress(
                    _step_ref(step),
                    invocation_step.state if invocation_step else None,
                    jobs,
                    outputs,
                    encode(subworkflow.id) if subworkflow else None,
                    bool(subworkflow) and _still_scheduling(subworkflow),
                )
            )
        return summarize_progress(str(invocation.state), progress)

    def invocation_outputs(self, invocation_id: str) -> list[dict[str, Any]]:
        """Each step's outputs so far, for wait_for_jobs(invocation_id=...): the ids an agent reads next,
        without a get_invocation_details call."""
        encode = self.trans.security.encode_id
        outputs: dict[tuple, dict[str, Any]] = {}  # Galaxy may record one output twice on a step: listed once
        for invocation_step in self.lookup.invocation(invocation_id).steps:
            step = invocation_step.workflow_step
            where = {"step_index": step.order_index, "label": step.effective_label}
            made = [(output.output_name, "hda", output.dataset_id) for output in invocation_step.output_datasets]
            made += [(output.output_name, "hdca", output.dataset_collection_id)
                     for output in invocation_step.output_dataset_collections]
            for name, src, item in made:
                outputs[(step.order_index, name, src, item)] = {**where, "output_name": name, "src": src,
                                                                "id": encode(item)}
        return list(outputs.values())

    def invocation_jobs(self, invocation_id: str) -> tuple[dict[int, str], bool]:
        """(decoded job id -> encoded id of every job the invocation has so far, whether scheduling ended);
        used by wait_for_jobs(invocation_id=...)."""
        invocation = self.lookup.invocation(invocation_id)
        self.trans.sa_session.refresh(invocation)
        jobs = {job.id: self.trans.security.encode_id(job.id) for job in _all_jobs(invocation)}
        return jobs, not _still_scheduling(invocation)


def _all_jobs(invocation: WorkflowInvocation):
    """Every job of an invocation so far, those of its subworkflow invocations (at any depth) included."""
    for invocation_step in invocation.steps:
        yield from invocation_step.jobs
    for association in invocation.subworkflow_invocations:
        if association.subworkflow_invocation is not None:
            yield from _all_jobs(association.subworkflow_invocation)


def _still_scheduling(invocation: WorkflowInvocation) -> bool:
    """Whether Galaxy is still scheduling this invocation or one of its subworkflow invocations."""
    return invocation.active or any(
        _still_scheduling(association.subworkflow_invocation)
        for association in invocation.subworkflow_invocations
        if association.subworkflow_invocation is not None
    )
