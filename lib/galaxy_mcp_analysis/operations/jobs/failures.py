"""A job's failure: ``get_job_errors`` and the silent-failure verdict ``get_job_status`` adds.

Galaxy already records a job's tool and job stdout/stderr; stock MCP had no way
to read them by job, and nothing noticed a job that finished ``ok`` with empty
outputs. The job is found through the lookup layer (Galaxy's ``JobManager`` and
``HDAManager`` decide), the log view is Galaxy's REST view of a job (so
``command_line`` appears exactly where Galaxy shows it), and the rules live in
``core.job_logs``.
"""

from collections.abc import (
    Callable,
    Iterable,
)
from functools import partial
from typing import Any

from galaxy.managers.jobs import view_show_job
from galaxy.model import (
    DynamicTool,
    Job,
)
from galaxy.tool_util.parser.output_collection_def import DEFAULT_DATASET_COLLECTOR_DESCRIPTION

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.job_logs import (
    declared_output,
    engine_cause,
    excerpt,
    judge_outputs,
    JobEvidence,
    JobOutput,
    log_budget,
    OutputVerdict,
)
from galaxy_mcp_analysis.core.job_records import (
    JobRecord,
    OutputRecord,
)
from galaxy_mcp_analysis.operations.jobs.loading import (
    evidences_of,
    job_evidence,
    job_record,
)

#: The logs get_job_errors returns, each cut to the byte budget on its own.
LOG_FIELDS = ("info", "tool_stderr", "tool_stdout", "job_stderr", "job_stdout")
#: The tool stderr a wait entry of a failed or flagged job quotes (get_job_errors has the whole log).
STDERR_HEAD_CHARS = 300


class JobFailures:
    """Why a job failed, a mixin of ``Jobs`` (needs the manager's ``app``, ``trans``, ``lookup``, ``settings``
    and ``remedy`` of ``JobReruns``)."""

    def get_job_errors(
        self, *, job_id: str | None = None, dataset_id: str | None = None, max_bytes: int = 4000
    ) -> dict[str, Any]:
        """A job's logs, exit code and output verdict, keyed by the job or by a dataset it created.

        Keyword-only: Galaxy's own signature was ``get_job_errors(dataset_id)``, and a
        dataset id passed positionally must not be read as a job id.
        """
        budget, capped = log_budget(max_bytes, self.settings.max_read_bytes)
        job = self._job_named_by(job_id, dataset_id)
        logs = {field: excerpt(getattr(job, field), budget) for field in LOG_FIELDS}
        verdict = self.output_verdict(job)
        result: dict[str, Any] = {
            "job_id": self.trans.security.encode_id(job.id),
            "history_id": self.trans.security.encode_id(job.history_id) if job.history_id else None,
            "tool_id": job.tool_id,
            "tool_version": job.tool_version,
            "state": job.state,
            "exit_code": job.exit_code,
            **{field: log.text for field, log in logs.items()},
            "truncated": any(log.truncated for log in logs.values()),
            "job_messages": job.job_messages or [],
            # The job engine ended it (a time limit, a memory limit), not the tool: None when nothing says so. Also
            # on an ok job: Galaxy 26.1's CLI runner was measured recording a job Slurm killed at its time limit
            # as ok with exit code 0, slurmstepd's line in its stderr the only trace.
            "engine_cause": engine_cause(job.info, job.job_stderr),
            **verdict_fields(verdict),
            **self._output_states(job, budget),
            "max_bytes_applied": budget,
            "capped": capped,
        }
        # Galaxy's REST view of the job decides: admins, or everyone with expose_dataset_path.
        if (command_line := view_show_job(self.trans, job, full=False).get("command_line")) is not None:
            command = excerpt(command_line, budget)
            result["command_line"] = command.text
            result["truncated"] = result["truncated"] or command.truncated
        if dataset_id:
            result["dataset_id"] = dataset_id
        result.update(self.remedy(job))
        return result

    def _output_states(self, job: Job, budget: int) -> dict[str, Any]:
        """Each output dataset's own state and Galaxy's message on it: a dataset can fail after its job
        succeeded (an upload's datatype check, metadata), and that message is the evidence."""
        encode = self.trans.security.encode_id
        outputs = []
        for association in job.output_datasets:
            hda = association.dataset
            if hda is None:
                continue
            entry: dict[str, Any] = {"name": association.name, "dataset_id": encode(hda.id), "state": hda.state}
            if hda.info:
                entry["message"] = excerpt(hda.info, budget).text
            outputs.append(entry)
        failed = [entry for entry in outputs if entry["state"] in ("error", "failed_metadata", "paused")]
        return {"outputs": outputs, "failed_outputs": failed}

    def get_job_status(self, job_id: str) -> dict[str, Any]:
        """Galaxy's job status plus the silent-failure verdict (this changes the stock tool too)."""
        status = super().get_job_status(job_id)
        status.update(verdict_fields(self.output_verdict(self.lookup.job(job_id))))
        return status

    # ---- which job ----

    def _job_named_by(self, job_id: str | None, dataset_id: str | None) -> Job:
        if bool(job_id) == bool(dataset_id):
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"Pass exactly one of job_id or dataset_id (got {'both' if job_id else 'neither'}).",
                "Use job_id from run_tool's `jobs` or wait_for_jobs, or dataset_id of an output "
                "(get_history_contents) to get the job that created it.",
            )
        if job_id:
            return self.lookup.job(job_id)
        return self.creating_job(dataset_id)

    def creating_job(self, dataset_id: str, argument: str = "dataset_id") -> Job:
        hda = self.lookup.dataset(
            dataset_id,
            argument=argument,
            denied_hint="Debug only your own datasets or ones shared with you (get_history_contents(history_id)).",
        )
        job = hda.creating_job
        if job is None:
            raise AnalysisError(
                ErrorCode.NOT_FOUND,
                f"Dataset {dataset_id} ({hda.name!r}) has no job that created it.",
                "Only tool outputs and uploads have a creating job; check the id with get_dataset_details.",
            )
        return self.lookup.job(self.trans.security.encode_id(job.id))

    # ---- silent failures ----

    def job_tool(self, job: Job | JobRecord):
        """The tool the job ran, as this Galaxy has it for the caller; None when it is no longer installed."""
        dynamic_tool = self.trans.sa_session.get(DynamicTool, job.dynamic_tool_id) if job.dynamic_tool_id else None
        return self.app.toolbox.get_tool(
            job.tool_id,
            job.tool_version,
            tool_uuid=dynamic_tool.uuid if dynamic_tool else None,
            user=self.trans.user,
        )

    def output_verdict(self, job: Job) -> OutputVerdict:
        """Whether the job's outputs look like a silent failure (finished ok, complained, a required output empty)."""
        return self.record_verdicts([job_record(job)], lambda ids: {job.id: job_evidence(job)})[job.id]

    def record_verdicts(
        self,
        records: Iterable[JobRecord],
        evidences: Callable[[list[int]], dict[int, JobEvidence]] | None = None,
        encode_id: Callable[[int], str] | None = None,
    ) -> dict[int, OutputVerdict]:
        """Job id -> output_verdict of each record. Only a job with an empty output has anything to judge, so only
        those are given their tool and their ``evidences`` (default: read for all of them in two queries)."""
        encode_id = encode_id or self.trans.security.encode_id
        records = list(records)
        judged = [record for record in records if record.has_empty_output]
        clean = OutputVerdict([], False)
        verdicts = {record.id: clean for record in records}
        if not judged:
            return verdicts
        evidence = (evidences or partial(evidences_of, self.trans.sa_session))([record.id for record in judged])
        tools: dict[tuple, Any] = {}  # a map-over's jobs share one tool: looked up once
        for record in judged:
            key = (record.tool_id, record.tool_version, record.dynamic_tool_id)
            tool = tools[key] if key in tools else tools.setdefault(key, self.job_tool(record))
            outputs = [job_output(output, tool, encode_id) for output in record.outputs if output.dataset_id is not None]
            verdicts[record.id] = judge_outputs(record.state, outputs, evidence.get(record.id, JobEvidence()))
        return verdicts


def verdict_fields(verdict: OutputVerdict) -> dict[str, Any]:
    """The verdict as get_job_errors, get_job_status and wait_for_jobs show it: the evidence only with empty outputs."""
    fields: dict[str, Any] = {
        "empty_outputs": verdict.empty_outputs,
        "suspected_silent_failure": verdict.suspected_silent_failure,
    }
    if verdict.evidence is not None:
        fields["evidence"] = verdict.evidence
    return fields


def stderr_head(job: Job) -> str:
    """The first lines of the tool's stderr, at most STDERR_HEAD_CHARS characters ("" when it wrote none)."""
    text = (job.tool_stderr or "").strip()
    return text if len(text) <= STDERR_HEAD_CHARS else text[:STDERR_HEAD_CHARS] + "..."


def job_output(output: OutputRecord, tool, encode_id: Callable[[int], str]) -> JobOutput:
    """One of a job's output datasets as the rule's plain data.

    ``tool`` is the job's tool as Galaxy loaded it; without it (uninstalled since)
    every output counts as required.
    """
    output_name, discovered = declared_output(output.name)
    declared = (tool.outputs.get(output_name) or tool.output_collections.get(output_name)) if tool else None
    return JobOutput(
        name=output.name,
        dataset_id=encode_id(output.dataset_id),
        size=output.size,
        failed=output.failed,
        optional=declared is not None and bool(declared.filters),
        discovered=discovered or (declared is not None and _discovers_datasets(declared)),
    )


def _discovers_datasets(declared) -> bool:
    """Whether a tool output (dataset or collection) is filled by discover_datasets at run time.

    A tool of a profile before 16.04 with no <discover_datasets> gets Galaxy's legacy default collector
    (files named primary_<id>_*) on every output; that alone does not make an ordinary output discovered.
    """
    if declared.collection:
        return declared.dynamic_structure
    return any(
        description is not DEFAULT_DATASET_COLLECTOR_DESCRIPTION for description in declared.dataset_collector_descriptions
    )
