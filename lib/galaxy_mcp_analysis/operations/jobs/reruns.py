"""Reading and rerunning a job: ``get_job_parameters`` and ``rerun_job``.

A job's recorded values are read with ``Tool.get_param_values`` (``recorded_state``)
and rerun through ``run_tool`` (so the preflight checks the changed request like any other).
``replace_outputs`` is Galaxy's rerun-and-remap (``rerun_remap_job_id`` in the tool request):
Galaxy hides the new job's outputs and the failed ones, and hands the new outputs to the jobs that
were paused on the failed ones. With nothing waiting, that leaves the fix hidden, so afterwards each
new output takes the failed one's place in the history (its name, hid and visibility), and the
result lists what was replaced (``core.reruns``).
"""

import tempfile
from collections.abc import Iterable
from typing import Any

from galaxy.datatypes.binary import Binary
from galaxy.datatypes.sniff import guess_ext
from galaxy.model import (
    HistoryDatasetAssociation,
    Job,
)
from galaxy.schema import SerializationParams
from galaxy.schema.schema import HistoryContentType
from galaxy.webapps.galaxy.services.history_contents import HistoriesContentsService
from sqlalchemy import (
    bindparam,
    select,
)

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.job_logs import cause_line
from galaxy_mcp_analysis.core.job_records import (
    FAILED_OUTPUT_STATES,
    JobRecord,
)
from galaxy_mcp_analysis.core.managing import merge_changes
from galaxy_mcp_analysis.core.reruns import (
    OutputPlace,
    placements,
    upload_remedy,
    upload_sources,
)
from galaxy_mcp_analysis.operations.jobs.loading import job_record
from galaxy_mcp_analysis.operations.jobs.recorded_state import (
    conditional_selectors,
    RecordedState,
)

#: Newer ok uploads of the history a failed upload's source is looked for in.
RECREATED_LOOKBACK = 50

#: States of a job whose outputs a repair replaces (Galaxy offers rerun-and-remap for failed jobs).
FAILED_JOB_STATES = ("error", "failed")
#: States a job may be in for replace_outputs: failed, or ok with a wrong result (Galaxy's remap takes both).
REPLACEABLE_STATES = (*FAILED_JOB_STATES, "ok")
#: States of a job reading the outputs that Galaxy's remap may rewire: waiting on them, or never to run.
REWIRABLE_STATES = ("paused", "error", "failed", "deleted", "deleted_new", "stopped", "skipped")
#: The key of a tool request that asks Galaxy to remap a failed job's outputs (tools.expand_incoming reads it).
REMAP_KEY = "rerun_remap_job_id"


#: Every dataset at the bound hids of the bound histories, deleted or not (replacements_of keeps the newest not
#: deleted). Built once (a statement's construction costs more than its execution at a listing's sizes). The deleted
#: flag is weighed in Python, not in SQL: with it in the WHERE clause, sqlite chose the index on ``deleted`` and read
#: every dataset of every history not deleted (2-5 ms on an 11,000-dataset database, growing with the whole table);
#: without it, the history's own index (``history_id``) bounds the read to the histories listed.
DATASETS_AT_HIDS = select(
    HistoryDatasetAssociation.history_id, HistoryDatasetAssociation.hid, HistoryDatasetAssociation.id,
    HistoryDatasetAssociation.deleted,
).where(HistoryDatasetAssociation.history_id.in_(bindparam("histories", expanding=True)),
        HistoryDatasetAssociation.hid.in_(bindparam("hids", expanding=True)))


class JobReruns:
    """Reading and rerunning a job, a mixin of ``Jobs`` (needs the manager's ``app``, ``trans``, ``lookup``,
    ``run_tool``, ``preflight``, and ``output_verdict`` and ``job_tool`` of ``JobFailures``)."""

    # ---- get_job_parameters ----

    def get_job_parameters(self, job_id: str) -> dict[str, Any]:
        """What the job ran with: run_tool-shaped ``inputs``, and a labelled list of every value."""
        job = self.lookup.job(job_id)
        tool = self._tool_of(job, job_id)
        recorded = self._recorded(job, tool)
        if not tool.is_workflow_compatible:
            # An upload's request holds staging details (server paths among them), and it is not rerun.
            recorded.inputs = {}
            recorded.notes.append("Galaxy does not rerun this tool (an upload or data source); inputs are left out.")
        return {
            "job_id": job_id,
            "tool_id": job.tool_id,
            "tool_version": job.tool_version,
            "state": job.state,
            "history_id": self.trans.security.encode_id(job.history_id) if job.history_id else None,
            "inputs": recorded.inputs,
            "parameters": recorded.parameters,
            "datasets": recorded.datasets,
            "outputs": self.job_outputs(job),
            "rerunnable": bool(tool.is_workflow_compatible),
            **({"notes": recorded.notes} if recorded.notes else {}),
        }


    def recorded_values(self, job: Job) -> dict[str, Any]:
        """``get_job_parameters``' values in brief, for a job listing: {path: value} and {path: dataset_id};
        None where get_job_parameters would refuse (a tool this Galaxy lost, a job Galaxy does not show the caller)."""
        tool = self.job_tool(job)
        try:  # a listing of a readable history must not show more than get_job_parameters would
            self.lookup.job(self.trans.security.encode_id(job.id))
        except AnalysisError:
            tool = None
        if tool is None:
            return {"parameters": None, "datasets": None}
        recorded = self._recorded(job, tool)
        return {
            "parameters": {entry["path"]: entry["value"] for entry in recorded.parameters},
            "datasets": {entry["path"]: entry["dataset_id"] for entry in recorded.datasets},
        }

    def _tool_of(self, job: Job, job_id: str):
        tool = self.job_tool(job)
        if tool is None:
            raise AnalysisError(
                ErrorCode.NOT_FOUND,
                f"Job {job_id} ran tool {job.tool_id!r} version {job.tool_version}, which this Galaxy no longer has.",
                "Find a current version with search_tools and run it with run_tool.",
            )
        return tool

    def _recorded(self, job: Job, tool) -> "RecordedState":
        notes = []
        try:
            values = tool.get_param_values(job, ignore_errors=False)
        except Exception:  # a parameter changed type since the job ran: keep what still reads
            values = tool.get_param_values(job, ignore_errors=True)
            notes.append("Some recorded values no longer fit the tool's current parameters; they were left out.")
        recorded = RecordedState(self.app, self.trans.security.encode_id)
        recorded.inputs = recorded.walk(tool.inputs, values)
        recorded.notes = notes + recorded.notes
        return recorded

    # ---- rerun_job ----

    def rerun_job(
        self,
        job_id: str,
        changes: dict[str, Any] | None = None,
        history_id: str | None = None,
        replace_outputs: bool = False,
    ) -> dict[str, Any]:
        """The job's tool run again on its recorded inputs with ``changes`` laid over them, through run_tool."""
        if changes and REMAP_KEY in changes:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"changes may not set {REMAP_KEY}; it is not a parameter of the tool.",
                "Pass replace_outputs=true to replace this failed job's outputs.",
            )
        job = self.lookup.job(job_id)
        tool = self._tool_of(job, job_id)
        if job.tool_version and tool.version != job.tool_version and not job.dynamic_tool:
            # Galaxy answers a version it lacks with the newest one: a rerun must not change the version unasked.
            self.lookup.tool(job.tool_id, job.tool_version)  # [NOT_FOUND] naming the versions served
        if not tool.is_workflow_compatible:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"Job {job_id} ran {job.tool_id!r}, which Galaxy does not rerun (uploads and data sources).",
                next(iter(upload_remedy_of(job, tool, self.app, self.trans.security.encode_id).values())),
            )
        job_history = self.trans.security.encode_id(job.history_id)
        target_history = history_id or job_history
        inputs = self._rerun_inputs(job, tool, changes)
        if not replace_outputs:
            result = self.run_tool(target_history, job.tool_id, inputs, tool_version=tool.version)
            result.update(rerun_of=job_id, replaced_outputs=False, history_id=target_history)
            return result
        paused = self._check_replaceable(job, job_id, target_history, job_history)
        self._check_one_job(tool, inputs, job_id)
        failed = _places(job)
        # Galaxy's rerun-and-remap: read from the tool request itself (tools.expand_incoming).
        inputs[REMAP_KEY] = job_id
        result = self.run_tool(target_history, job.tool_id, inputs, tool_version=tool.version)
        result.update(rerun_of=job_id, replaced_outputs=True, history_id=target_history)
        self._take_places(result, failed)
        # Galaxy resumes the paused jobs inside a remap that logs and swallows its own failures: say what happened.
        states = {paused_id: self.trans.sa_session.get(Job, paused_id).state for paused_id in paused}
        encode = self.trans.security.encode_id
        result["resumed_jobs"] = [encode(paused_id) for paused_id, state in states.items() if state != "paused"]
        result["still_paused_jobs"] = [encode(paused_id) for paused_id, state in states.items() if state == "paused"]
        return result

    def rerun_request(
        self, job_id: str, changes: dict[str, Any] | None = None, history_id: str | None = None
    ) -> dict[str, Any]:
        """What rerun_job would run, nothing run: {tool_id, tool_version, history_id, inputs} (the job's own
        version; the recorded inputs, changes merged)."""
        job = self.lookup.job(job_id)
        tool = self._tool_of(job, job_id)
        return {
            "tool_id": job.tool_id,
            "tool_version": tool.version,
            "history_id": history_id or self.trans.security.encode_id(job.history_id),
            "inputs": self._rerun_inputs(job, tool, changes),
        }

    def _rerun_inputs(self, job: Job, tool, changes: dict[str, Any] | None) -> dict[str, Any]:
        """The one merge of a rerun's changes (nested or flat ``cond|param``) over the job's recorded inputs."""
        return merge_changes(self._recorded(job, tool).inputs, changes, conditional_selectors(tool.inputs))

    def _check_one_job(self, tool, inputs: dict[str, Any], job_id: str) -> None:
        """replace_outputs swaps one job's outputs for another's: a request that maps over is refused before it runs."""
        mapped_over = self.preflight(tool, inputs, raise_problems=True).mapped_over
        if mapped_over:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"With these changes the rerun of job {job_id} maps over {mapped_over[0]['collection_id']} and "
                "would make one job per element; replace_outputs replaces the outputs of one job with one job's.",
                "Give a single dataset in changes, or rerun without replace_outputs.",
            )

    def _take_places(self, result: dict[str, Any], failed: list[OutputPlace]) -> None:
        """Each new output takes its failed counterpart's name, hid and visibility; the failed one is hidden."""
        [made] = result["jobs"]
        new_job = self.trans.sa_session.get(Job, self.trans.security.decode_id(made["id"]))
        paired, unpaired = placements(failed, _places(new_job))
        made_outputs = {association.dataset.id: association.dataset for association in new_job.output_datasets}
        contents = self.app[HistoriesContentsService]
        encode = self.trans.security.encode_id
        replaced = []
        for placement in paired:
            place = placement.place
            taken = {"visible": place.visible} | ({"name": place.name} if place.name else {})
            for dataset, payload in ((place.dataset, {"visible": False}), (placement.dataset, taken)):
                contents.update(self.trans, history_id=None, id=dataset, payload=payload,
                                serialization_params=SerializationParams(view="summary"),
                                contents_type=HistoryContentType.dataset)
            # The hid is no editable field; Galaxy's own remap gives a dependent's new input the old hid the same way.
            made_outputs[placement.dataset].hid = place.hid
            replaced.append({"output_name": place.output_name, "replaced_dataset_id": encode(place.dataset),
                             "dataset_id": encode(placement.dataset), "hid": place.hid, "name": place.name,
                             "visible": place.visible})
        self.trans.sa_session.commit()
        shown = {entry["dataset_id"]: entry for entry in replaced}
        for output in result.get("outputs", []):
            if output.get("id") in shown:
                output.update({field: shown[output["id"]][field] for field in ("hid", "name", "visible")})
        result["replaced"] = replaced
        if unpaired:
            result["not_replaced"] = unpaired

    def remedy(self, job: Job) -> dict[str, str]:
        """What is left to do about a failed or suspect job: nothing once another job took its outputs' places
        (``replaced_by``: a survey after the fix must not invite a second rerun), else its ``repair``, if any, or for
        an upload no call can remake, ``no_repair`` (why)."""
        if replacer := self.replaced_by(job):
            return {"replaced_by": replacer}
        if removed := _removed(job):
            return {"removed": removed}
        if (tool := self.job_tool(job)) is not None and not tool.is_workflow_compatible:
            remedy = self._upload_remedy(job, tool)
            if remedy and (again := self.recreated_by(job, tool)):
                return {"recreated_by": again}
            return remedy
        return {"repair": hint} if (hint := self.repair_hint(job)) else {}

    def recreated_by(self, job: Job, tool) -> str | None:
        """For a failed upload: the newer ok dataset of this history uploaded from the same recorded text or url
        (the upload done again, as its repair or recreate says), or None."""
        recorded = upload_sources(tool.get_param_values(job, ignore_errors=True).get("request_json"))
        wanted = {source.get("paste_content") or source.get("url") for source in recorded} - {None, ""}
        if not wanted or job.history_id is None:
            return None
        newer = self.trans.sa_session.scalars(
            select(Job).where(Job.history_id == job.history_id, Job.tool_id == job.tool_id, Job.id > job.id,
                              Job.state == "ok").order_by(Job.id.desc()).limit(RECREATED_LOOKBACK)
        )
        for candidate in newer:
            sources = upload_sources(tool.get_param_values(candidate, ignore_errors=True).get("request_json"))
            if wanted & {source.get("paste_content") or source.get("url") for source in sources}:
                made = [a.dataset for a in candidate.output_datasets
                        if a.dataset is not None and a.dataset.state == "ok" and not a.dataset.deleted]
                if made:
                    return self.trans.security.encode_id(made[0].id)
        return None

    def _upload_remedy(self, job: Job, tool) -> dict[str, str]:
        """An upload's ``repair`` or ``no_repair`` if the job or an output failed, else nothing."""
        failed_output = any(a.dataset.state in FAILED_OUTPUT_STATES for a in job.output_datasets if a.dataset)
        if job.state not in FAILED_JOB_STATES and not failed_output:
            return {}
        return upload_remedy_of(job, tool, self.app, self.trans.security.encode_id)

    def replaced_by(self, job: Job) -> str | None:
        """The job whose output now holds one of this job's outputs' hids, or None (replacements_of)."""
        return self.replacements_of([job_record(job)]).get(job.id)

    def replacements_of(self, jobs: Iterable[JobRecord]) -> dict[int, str]:
        """Job id -> encoded id of the job that replaced it, for each of ``jobs`` that was replaced: two queries
        for any number of jobs (a survey of a map-over lists hundreds, each with hidden outputs).

        A history gives each new item the next hid; only a replacement (replace_outputs here, or Galaxy's
        own remap of a failed job) puts a newer dataset at an existing hid, so that dataset's job replaced this one.
        """
        model = HistoryDatasetAssociation
        outputs = [(job, output) for job in jobs for output in job.outputs
                   if output.dataset_id is not None and output.hid is not None]
        if not outputs:
            return {}
        newest: dict[tuple[int, int], int] = {}  # (history, hid) -> its newest dataset not deleted
        at_hids = {"histories": sorted({hda.history_id for _, hda in outputs}),
                   "hids": sorted({hda.hid for _, hda in outputs})}
        for history, hid, dataset_id, deleted in self.trans.sa_session.execute(DATASETS_AT_HIDS, at_hids):
            if deleted is False and dataset_id > newest.get((history, hid), 0):  # NULL: not counted, as in SQL
                newest[(history, hid)] = dataset_id
        newer: dict[int, list[int]] = {}  # job id -> the newest dataset at each of its outputs' hids, in order
        for job, hda in outputs:
            if (newest_id := newest.get((hda.history_id, hda.hid))) is not None and newest_id > hda.dataset_id:
                newer.setdefault(job.id, []).append(newest_id)
        if not newer:
            return {}
        newer_ids = {dataset_id for ids in newer.values() for dataset_id in ids}
        found = self.trans.sa_session.scalars(select(model).where(model.id.in_(newer_ids)))
        creators = {hda.id: hda.creating_job for hda in found}
        replaced = {}
        for job_id, newer_ids in newer.items():
            if replacer := next((creators[i] for i in newer_ids if creators.get(i) is not None
                                 and creators[i].id != job_id), None):
                replaced[job_id] = self.trans.security.encode_id(replacer.id)
        return replaced

    def repair_hint(self, job: Job) -> str | None:
        """A call that can succeed for a failed or suspect job (None for other jobs): for a tool's job
        rerun_job as it will take it, for an upload (which Galaxy does not rerun) the upload again."""
        tool = self.job_tool(job)
        if tool is not None and not tool.is_workflow_compatible:
            return self._upload_remedy(job, tool).get("repair")
        suspect = job.state == "ok" and self.output_verdict(job).suspected_silent_failure
        if job.state not in FAILED_JOB_STATES and not suspect:
            return None
        job_id = self.trans.security.encode_id(job.id)
        if tool is None:
            return (f"search_tools(query={job.tool_id.rsplit('/', 2)[-2] if '/' in job.tool_id else job.tool_id!r}): "
                    f"this Galaxy no longer has {job.tool_id} {job.tool_version}; run a current version with run_tool.")
        try:
            self.lookup.job_history(job, job_id, "replace its outputs")
            refusal = self._replace_refusal(job, job_id)
        except AnalysisError as foreign:
            refusal = foreign
        # The stderr line naming the cause decides what `changes` should be: quoted, the repair needs no log read.
        cause = f" Its stderr names the cause: {line!r}." if (line := cause_line(job.tool_stderr)) else ""
        if refusal is None:
            return (f"rerun_job(job_id={job_id!r}, changes=..., replace_outputs=true): the new outputs take these "
                    f"outputs' places (hid, name, collection element) and these are hidden.{cause}")
        return (f"rerun_job(job_id={job_id!r}, changes=...) makes new outputs beside these (replace_outputs is "
                f"refused: {refusal.message}); then delete_history_items the old ones.{cause}")

    def _replace_refusal(self, job: Job, job_id: str) -> AnalysisError | None:
        """Why Galaxy's remap cannot replace this job's outputs as replace_outputs says, or None."""
        if job.state not in REPLACEABLE_STATES:
            return AnalysisError(
                ErrorCode.CONFLICT,
                f"Job {job_id} is {job.state!r}; replace_outputs replaces the outputs of a finished job (state "
                "ok or error).",
                "Wait for it (wait_for_jobs), or rerun without replace_outputs to make new outputs.",
            )
        readers = sorted({
            self.trans.security.encode_id(dependent.job.id)
            for output in job.output_datasets
            for dependent in output.dataset.dependent_jobs
            if dependent.job.state not in REWIRABLE_STATES
        })
        if readers:
            return AnalysisError(
                ErrorCode.CONFLICT,
                f"Job(s) {', '.join(readers[:5])} already read job {job_id}'s outputs; Galaxy's remap would "
                "rewire them after the fact.",
                "Rerun without replace_outputs (new outputs beside the old), rerun those jobs on the new "
                "outputs, then delete the old ones with delete_history_items.",
            )
        return None

    def _check_replaceable(self, job: Job, job_id: str, target_history: str, job_history: str) -> list[int]:
        """Refuse replace_outputs unless Galaxy's remap can do what it says; the paused jobs it will resume."""
        self.lookup.job_history(job, job_id, "replace its outputs")
        if refusal := self._replace_refusal(job, job_id):
            raise refusal
        if target_history != job_history:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                "replace_outputs puts the new outputs where the failed ones were, in the job's own history; "
                f"history_id {target_history} is another history.",
                "Leave history_id out with replace_outputs=true.",
            )
        return sorted(
            {
                dependent.job.id
                for output in job.output_datasets
                for dependent in output.dataset.dependent_jobs
                if dependent.job.state == "paused" and dependent.job.user_id == job.user_id
            }
        )


def upload_remedy_of(job: Job, tool, app, encode_id) -> dict[str, str]:
    """``core.reruns.upload_remedy`` for an upload's job: its recorded sources and the binary types Galaxy knows."""
    recorded = upload_sources(tool.get_param_values(job, ignore_errors=True).get("request_json"))
    registry = app.datatypes_registry
    # Galaxy's own test for a binary datatype (galaxy.datatypes.data._is_binary_file); its is_binary flag is
    # "maybe" for compressed formats such as bam.
    binary = {source["ext"] for source in recorded if source.get("ext")
              and isinstance(registry.get_datatype_by_extension(source["ext"]), Binary)}
    pasted = recorded[0].get("paste_content") if len(recorded) == 1 and recorded[0].get("ext") in binary else None
    return upload_remedy(recorded, encode_id(job.history_id), binary, _fitting_type(pasted, registry, binary))


def _fitting_type(text: str | None, registry, binary: set[str]) -> str | None:
    """The datatype Galaxy's sniffers give ``text`` (what an upload with file_type 'auto' would make), never one
    of the ``binary`` types it failed as; None without text."""
    if not text:
        return None
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt") as written:
        written.write(text)
        written.flush()
        sniffed = guess_ext(written.name, registry.sniff_order, is_binary=False)
    return sniffed if sniffed and sniffed not in binary else "txt"


def _removed(job: Job) -> str | None:
    """"purged" or "deleted" when every output of the job is (nothing of it is left to fix), else None."""
    outputs = [association.dataset for association in job.output_datasets if association.dataset is not None]
    if not outputs or not all(hda.deleted or hda.purged for hda in outputs):
        return None
    return "purged" if all(hda.purged for hda in outputs) else "deleted"


def _places(job: Job) -> list[OutputPlace]:
    return [
        OutputPlace(association.name, association.dataset.id, association.dataset.hid, association.dataset.name,
                    bool(association.dataset.visible))
        for association in job.output_datasets
    ]
