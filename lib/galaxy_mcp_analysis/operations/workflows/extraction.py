"""Writing a workflow from a history: ``create_workflow_from_history`` picks the jobs (by default every
finished tool job) and the inputs (by default what those jobs read and none of them made), has Galaxy
extract them, labels the steps and returns a clean Format 2 definition.
"""

from typing import Any

from galaxy.model import (
    HistoryDatasetAssociation,
    HistoryDatasetCollectionAssociation,
    ImplicitCollectionJobs,
    Job,
    StoredWorkflow,
    Workflow,
)
from galaxy.schema.workflows import WorkflowExtractionByIdsPayload
from sqlalchemy import select

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.input_problems import (
    InputProblem,
    problems_error,
)
from galaxy_mcp_analysis.core.workflows import (
    clean_format2,
    clean_tool_state,
    unique_labels,
)
from galaxy_mcp_analysis.operations.workflow_steps import label_steps_and_outputs


#: Jobs that only bring data in: never workflow steps.
UPLOAD_TOOLS = frozenset({"__DATA_FETCH__", "upload1", "__SET_METADATA__"})
#: Steps of one extraction (Galaxy builds them all in one request).
MAX_EXTRACTED_JOBS = 1000


class WorkflowExtraction:
    """A history's jobs turned into a saved workflow, a mixin of ``Workflows``."""

    def create_workflow_from_history(
        self,
        history_id: str,
        name: str,
        job_ids: list[str] | None = None,
        dataset_ids: list[str] | None = None,
        collection_ids: list[str] | None = None,
        input_labels: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        history = self.lookup.history(history_id, "own")
        if not name or not name.strip():
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR, "name is empty.", "Name the workflow, e.g. name='Sort and count'."
            )
        jobs = self._extraction_jobs(history, job_ids)
        plain, groups = _plain_and_mapped(jobs)
        representatives = plain + [self._representative(group) for group in groups]
        if dataset_ids is None and collection_ids is None:
            datasets, collections = _consumed_not_produced(representatives, groups, self.trans.sa_session)
        else:
            datasets = [self._history_item(history, "hda", item) for item in dataset_ids or []]
            collections = [self._history_item(history, "hdca", item) for item in collection_ids or []]
        if not representatives and not datasets and not collections:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"History {history_id} has no finished tool jobs to turn into workflow steps.",
                "Run tools with run_tool, wait_for_jobs, then extract; or pass job_ids.",
            )
        encode = self.trans.security.encode_id
        labels = unique_labels(self._input_labels(datasets + collections, input_labels or {}))
        payload = WorkflowExtractionByIdsPayload(
            workflow_name=name,
            job_ids=[encode(job.id) for job in plain],
            implicit_collection_jobs_ids=[encode(group) for group in groups],
            hda_ids=[encode(item.id) for item in datasets],
            hdca_ids=[encode(item.id) for item in collections],
            dataset_names=labels[: len(datasets)],
            dataset_collection_names=labels[len(datasets) :],
        )
        extracted = self.workflows_service.extract_by_ids(self.trans, payload)
        stored_id = extracted.id if isinstance(extracted.id, int) else self.trans.security.decode_id(extracted.id)
        stored = self.trans.sa_session.get(StoredWorkflow, stored_id)
        self._drop_internal_parameters(stored.latest_workflow)
        if label_steps_and_outputs(stored.latest_workflow, self.app.toolbox, self.trans.user):
            self.trans.sa_session.commit()
        workflow_id = encode(stored.id)
        schema = self.get_workflow_input_schema(workflow_id)
        return {
            "workflow_id": workflow_id,
            "name": stored.name,
            "inputs": schema["inputs"],
            "steps": schema["steps"],
            "definition": self._clean_definition(stored),
            "jobs_extracted": len(jobs),
        }

    def _input_labels(self, items: list, chosen: dict[str, str]) -> list[str]:
        """Each input's label: the one the caller chose by the item's id, else the item's name (Galaxy's default,
        which names a reusable workflow's input after this run's data)."""
        encode = self.trans.security.encode_id
        ids = {encode(item.id): item.name for item in items}
        unknown = sorted(set(chosen) - set(ids))
        if unknown:
            shown = ", ".join(f"{item_id} ({name!r})" for item_id, name in ids.items())
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"input_labels names {', '.join(unknown[:5])}, which is no input of this workflow.",
                f"Key input_labels by the inputs' ids: {shown or 'this extraction has no inputs'}.",
            )
        return [chosen.get(encode(item.id)) or item.name for item in items]

    def _extraction_jobs(self, history, job_ids: list[str] | None) -> list[Job]:
        if job_ids is not None:
            jobs = []
            for encoded in job_ids:
                job = self.lookup.job(encoded, argument="job_ids")
                if job.history_id != history.id:
                    raise AnalysisError(
                        ErrorCode.VALIDATION_ERROR,
                        f"Job {encoded} ran in another history, not in {self.trans.security.encode_id(history.id)}.",
                        "Pass jobs of this history only (list_jobs(history_id=...)).",
                    )
                jobs.append(job)
            return sorted(jobs, key=lambda job: job.id)
        statement = (
            select(Job)
            .where(Job.history_id == history.id, Job.state == "ok", Job.tool_id.not_in(UPLOAD_TOOLS))
            .order_by(Job.id)
            .limit(MAX_EXTRACTED_JOBS + 1)
        )
        jobs = list(self.trans.sa_session.scalars(statement))
        if len(jobs) > MAX_EXTRACTED_JOBS:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"History has over {MAX_EXTRACTED_JOBS} finished tool jobs; one extraction takes at most that many.",
                "Pass job_ids of the jobs to keep (list_jobs(history_id=...)).",
            )
        return jobs

    def _representative(self, group_id: int) -> Job:
        return self.trans.sa_session.get(ImplicitCollectionJobs, group_id).representative_job

    def _history_item(self, history, src: str, encoded: str):
        item = self.input_item(src, encoded, f"{'dataset_ids' if src == 'hda' else 'collection_ids'}[{encoded}]")
        if isinstance(item, InputProblem):
            raise problems_error([item], "create_workflow_from_history", nothing_done="No workflow was created.")
        if item.history_id != history.id:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"{encoded} ({item.name!r}) is not in history {self.trans.security.encode_id(history.id)}.",
                "Name items of the history being extracted (get_history_contents).",
            )
        return item

    def _drop_internal_parameters(self, workflow: Workflow) -> None:
        """Job bookkeeping Galaxy copies into extracted steps (invocation uuids, chromInfo paths...)."""
        changed = False
        for step in workflow.steps:
            if step.type != "tool" or not step.tool_inputs:
                continue
            names = self._tool_parameter_names(step.tool_id, step.tool_version)
            cleaned = clean_tool_state(step.tool_inputs, names, "", [])
            if cleaned != step.tool_inputs:
                step.tool_inputs = cleaned
                changed = True
        if changed:
            self.trans.sa_session.commit()

    def _tool_parameter_names(self, tool_id: str, tool_version: str | None) -> set[str] | None:
        tool = self.app.toolbox.get_tool(tool_id, tool_version, user=self.trans.user)
        return set(tool.inputs) if tool is not None else None

    def _clean_definition(self, stored: StoredWorkflow) -> dict[str, Any]:
        native = self.app.workflow_contents_manager.workflow_to_dict(self.trans, stored, style="format2")
        config = self.app.config
        server_paths = [
            str(path)
            for path in (
                getattr(config, "data_dir", None),
                getattr(config, "file_path", None),
                getattr(config, "tool_data_path", None),
                getattr(config, "job_working_directory", None),
                getattr(config, "new_file_path", None),
                getattr(config, "root", None),
            )
            if path
        ]
        cleaned = clean_format2(native, self._tool_parameter_names, server_paths)
        definition = cleaned.definition
        definition.pop("uuid", None)
        return definition


def _consumed_not_produced(jobs: list[Job], groups: list[int], session) -> tuple[list, list]:
    """Workflow inputs by default: what the selected jobs read that none of them made, by hid."""
    produced_datasets: set[int] = set()
    produced_collections: set[int] = set()
    group_of = {}
    for group in groups:
        icj = session.get(ImplicitCollectionJobs, group)
        group_of[icj.representative_job.id] = icj
        for job in icj.job_list:
            produced_datasets.update(assoc.dataset_id for assoc in job.output_datasets)
        produced_collections.update(hdca.id for hdca in icj.output_dataset_collection_instances)
    for job in jobs:
        produced_datasets.update(assoc.dataset_id for assoc in job.output_datasets)
        produced_collections.update(assoc.dataset_collection_id for assoc in job.output_dataset_collection_instances)
    datasets: dict[int, HistoryDatasetAssociation] = {}
    collections: dict[int, HistoryDatasetCollectionAssociation] = {}
    for job in jobs:
        mapped_names: set[str] = set()
        icj = group_of.get(job.id)
        if icj is not None:
            outputs = icj.output_dataset_collection_instances
            for icol in outputs[0].implicit_input_collections if outputs else []:
                mapped_names.add(icol.name)
                hdca = icol.input_dataset_collection
                if hdca is not None and hdca.id not in produced_collections:
                    collections[hdca.id] = hdca
        for assoc in job.input_datasets:
            if assoc.name in mapped_names or _base_name(assoc.name) in mapped_names or assoc.dataset is None:
                continue
            if assoc.dataset_id not in produced_datasets:
                datasets[assoc.dataset_id] = assoc.dataset
        for assoc in job.input_dataset_collections:
            if assoc.dataset_collection_id not in produced_collections and assoc.dataset_collection is not None:
                collections[assoc.dataset_collection_id] = assoc.dataset_collection
    return sorted(datasets.values(), key=lambda item: item.hid), sorted(collections.values(), key=lambda item: item.hid)


def _base_name(name: str) -> str:
    """A multiple data input's job association names end in a number (``input1`` -> ``input``)."""
    return name.rstrip("0123456789")


def _plain_and_mapped(jobs: list[Job]) -> tuple[list[Job], list[int]]:
    """The jobs run on their own, and the ids of the map-over groups the others belong to (one step each)."""
    plain = [job for job in jobs if job.implicit_collection_jobs_association is None]
    groups = sorted(
        {
            job.implicit_collection_jobs_association.implicit_collection_jobs_id
            for job in jobs
            if job.implicit_collection_jobs_association is not None
        }
    )
    return plain, groups
