"""Managing what was run and made: ``list_jobs``, ``cancel_job``, ``delete_history_items``,
``restore_history_items`` (reading and rerunning a job: ``jobs.reruns``; changing a dataset or a
collection: ``item_updates``).

Each goes through Galaxy's own layers: jobs are listed by ``JobManager.index_query`` (the query of
``JobsService.index``), read with ``JobManager.get_accessible_job`` and stopped by ``JobManager.stop``;
items are deleted through ``HistoriesContentsService.delete`` and restored through its bulk ``undelete``.
Every item and field is checked first, with Galaxy's managers; only then is anything changed.
"""

from collections.abc import Callable
from typing import Any

from galaxy import exceptions
from galaxy.model import (
    HistoryDatasetCollectionAssociation,
    Job,
)
from galaxy.schema.schema import (
    DeleteHistoryContentPayload,
    HistoryContentBulkOperationPayload,
    HistoryContentItem,
    HistoryContentItemOperation,
    HistoryContentType,
    JobIndexSortByEnum,
    JobState,
)
from galaxy.webapps.galaxy.services.history_contents import HistoriesContentsService
from galaxy.webapps.galaxy.services.jobs import JobIndexPayload
from galaxy.schema import ValueFilterQueryParams
from sqlalchemy import (
    func,
    select,
)

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.input_problems import closest_names
from galaxy_mcp_analysis.core.job_logs import OutputVerdict
from galaxy_mcp_analysis.core.job_records import (
    JobRecord,
    Memo,
    outputs_of,
    total_from_page,
)
from galaxy_mcp_analysis.core.managing import (
    cancellable,
    history_item_refs,
    HistoryItemRef,
)
from galaxy_mcp_analysis.operations.item_updates import still_uploading
from galaxy_mcp_analysis.operations.jobs.loading import (
    indexed_jobs,
    job_record,
    job_records,
    jobs_with_outputs,
)
from galaxy_mcp_analysis.operations.jobs.reruns import FAILED_JOB_STATES
from galaxy_mcp_analysis.operations.lookup import problem_line

#: Jobs one list_jobs page holds at most (Galaxy's own default page of job listings).
MAX_LISTED_JOBS = 500
#: Largest offset accepted: PostgreSQL's OFFSET is a bigint, and no history has this many jobs.
MAX_OFFSET = 2**31 - 1
JOB_STATES = tuple(state.value for state in JobState)
#: Which problem code a refused delete/restore reports when several kinds occur (the first wins).
_CODE_ORDER = (ErrorCode.AUTHORIZATION_ERROR, ErrorCode.NOT_FOUND, ErrorCode.CONFLICT, ErrorCode.VALIDATION_ERROR)


class ManagingRuns:
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans``, services, ``lookup``
    and ``output_verdict`` of the job capability)."""

    # ---- list_jobs ----

    def list_jobs(
        self,
        history_id: str | None = None,
        state: str | None = None,
        tool_id: str | None = None,
        limit: int = 50,
        offset: int = 0,
        include_parameters: bool = False,
    ) -> dict[str, Any]:
        """The caller's jobs (or a readable history's), newest first, with outputs and the silent-failure flag
        (and with ``include_parameters`` what each ran with: one call instead of get_job_parameters per job)."""
        if not 1 <= limit <= MAX_LISTED_JOBS or not 0 <= offset <= MAX_OFFSET:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"limit must be 1 to {MAX_LISTED_JOBS} and offset 0 or more (got limit={limit}, offset={offset}).",
                "Page with limit=50, offset=0, then offset=50, ... while offset < total.",
            )
        if state is not None and state not in JOB_STATES:
            close = closest_names(state, JOB_STATES)
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"state {state[:40]!r} is not a job state." + (f" Did you mean {', '.join(close)}?" if close else ""),
                f"Use one of: {', '.join(JOB_STATES)}.",
            )
        decoded_history = self.lookup.history(history_id).id if history_id else None
        payload = JobIndexPayload(
            history_id=history_id,
            # Without a history, only the caller's own jobs (admins too: tools act as the key's user).
            user_id=None if history_id else self.trans.security.encode_id(self.trans.user.id),
            states=[state] if state else None,
            tool_ids=[tool_id] if tool_id else None,
            order_by=JobIndexSortByEnum.create_time,
            limit=limit,
            offset=offset,
        )
        listed = indexed_jobs(self.trans, self.jobs_service.job_manager, payload)
        records = job_records(self.trans.sa_session, listed)
        total = total_from_page(offset, limit, len(listed))
        if total is None:  # a full page, or past the end: count (one query over every page)
            total = self._count_jobs(decoded_history, state, tool_id)
        encode = Memo(self.trans.security.encode_id)
        replacements = self.replacements_of(record for record in records.values() if record.has_ended)
        verdicts = self.record_verdicts(records.values(), encode_id=encode)
        # include_parameters reads each job's recorded parameters through Galaxy's tool: those need the objects.
        loaded = jobs_with_outputs(self.trans.sa_session, records) if include_parameters else {}
        rows = []
        for job in listed:
            row = self._job_row(records[job.id], verdicts[job.id], replacements, encode)
            if include_parameters:
                row.update(self.recorded_values(loaded[job.id]))
            rows.append(row)
        return {"jobs": rows, "total": total, "limit": limit, "offset": offset}

    def _count_jobs(self, history: int | None, state: str | None, tool_id: str | None) -> int:
        """How many jobs the same listing holds over every page (the index itself returns one page)."""
        count = select(func.count(Job.id))
        count = count.where(Job.history_id == history) if history else count.where(Job.user_id == self.trans.user.id)
        if state:
            count = count.where(Job.state == state)
        if tool_id:
            count = count.where(Job.tool_id == tool_id)
        return self.trans.sa_session.scalar(count) or 0

    def _job_row(
        self, job: JobRecord, verdict: OutputVerdict, replacements: dict[int, str], encode: Callable[[int], str]
    ) -> dict[str, Any]:
        """``replacements``: replacements_of the listed jobs (one query for the page, not one per job)."""
        row = {
            "job_id": encode(job.id),
            "tool_id": job.tool_id,
            "tool_version": job.tool_version,
            "state": job.state,
            "exit_code": job.exit_code,
            "create_time": job.create_time.isoformat(),
            "update_time": job.update_time.isoformat(),
            "history_id": encode(job.history_id) if job.history_id else None,
            "outputs": outputs_of(job, encode),
            "suspected_silent_failure": job.state == "ok" and verdict.suspected_silent_failure,
            # An output can fail after its job ended ok (an upload's datatype check): the row must say so.
            "failed_outputs": [encode(dataset_id) for dataset_id in job.failed_outputs],
        }
        flagged = row["suspected_silent_failure"] or row["failed_outputs"] or job.state in FAILED_JOB_STATES
        if (flagged or job.hidden_outputs) and (replacer := replacements.get(job.id)):
            row["replaced_by"] = replacer
        return row

    def job_outputs(self, job: Job) -> list[dict[str, Any]]:
        """The job's outputs by name, each a dataset_id or a collection_id."""
        return outputs_of(job_record(job), self.trans.security.encode_id)

    # ---- cancel_job ----

    def cancel_job(self, job_id: str) -> dict[str, Any]:
        """Galaxy's stop of a job that is not finished yet; a finished job is a [CONFLICT]."""
        job = self.lookup.job(job_id)
        self.lookup.job_history(job, job_id, "cancel it")
        previous = job.state
        if not cancellable(previous):
            raise AnalysisError(
                ErrorCode.CONFLICT,
                f"Job {job_id} is already {previous!r}; only a job that has not finished can be cancelled.",
                "Nothing to stop. To drop its outputs use delete_history_items; to run it again use rerun_job.",
            )
        self.jobs_service.job_manager.stop(job)
        self.trans.sa_session.refresh(job)
        if job.state == Job.states.DELETING and job.job_runner_name is None:
            # No runner has the job, so nothing is running to stop: end the deletion as Galaxy's stop queue
            # would. That queue only takes jobs its handler has claimed, so a job stopped before any handler
            # claimed it would otherwise read 'deleting' for ever (found by test_managing.py).
            job.set_final_state(Job.states.DELETED)
            self.trans.sa_session.commit()
        history = self.trans.security.encode_id(job.history_id) if job.history_id else None
        return {"job_id": job_id, "history_id": history, "previous_state": previous, "state": job.state}

    # ---- delete / restore ----

    def delete_history_items(
        self, history_id: str, items: list[dict[str, Any]], purge: bool = False, recursive: bool = False
    ) -> dict[str, Any]:
        """Galaxy's delete (and purge) of every item, once every item is known to be the caller's, in the history."""
        refs = history_item_refs(items)
        history = self.lookup.history(history_id, "write")
        found = self._owned_items(refs, history, "delete", purge=purge, recursive=recursive)
        if purge:
            self._check_purge_allowed()
        service = self.app[HistoriesContentsService]
        # Galaxy's purge of a dataset runs as a background task: delete first, so every item reads deleted at once.
        for purging in (False, True) if purge else (False,):
            for ref, item in found:
                content_type = HistoryContentType.dataset if ref.src == "hda" else HistoryContentType.dataset_collection
                service.delete(
                    self.trans,
                    item.id,
                    content_type,
                    DeleteHistoryContentPayload(purge=purging, recursive=recursive, stop_job=False),
                )
        result = self._items_result(history_id, found, purge=purge)
        result.update(self._deleted_ids(found, purge=purge, recursive=recursive))
        return result

    def _deleted_ids(self, found: list[tuple[HistoryItemRef, Any]], purge: bool, recursive: bool) -> dict[str, Any]:
        """Every item the call deleted, by {src, id}: the items named and, recursive, their collections'
        datasets; with purge the same items as purged_items, pending while Galaxy's purge task runs."""
        encode = self.trans.security.encode_id
        deleted: dict[tuple[str, str], Any] = {}
        for ref, item in found:
            if item.deleted:
                deleted[(ref.src, ref.id)] = item
            if recursive and isinstance(item, HistoryDatasetCollectionAssociation):
                deleted.update((("hda", encode(hda.id)), hda) for hda in item.dataset_instances if hda.deleted)
        purged = [
            {"src": src, "id": item_id, "pending": not _purged(item)} for (src, item_id), item in deleted.items()
        ] if purge else []
        return {"deleted_items": [{"src": src, "id": item_id} for src, item_id in deleted], "purged_items": purged}

    def restore_history_items(self, history_id: str, items: list[dict[str, Any]]) -> dict[str, Any]:
        """Galaxy's undelete of every item (a collection with its deleted datasets), once all are known to be restorable."""
        refs = history_item_refs(items)
        history = self.lookup.history(history_id, "write")
        found = self._owned_items(refs, history, "restore")
        encode = self.trans.security.encode_id
        contents = [
            HistoryContentItem(
                id=encode(item.id),
                history_content_type=HistoryContentType.dataset if ref.src == "hda" else HistoryContentType.dataset_collection,
            )
            for ref, item in found
        ]
        # A collection deleted with recursive=true comes back with its datasets.
        contents += [
            HistoryContentItem(id=encode(hda.id), history_content_type=HistoryContentType.dataset)
            for ref, item in found
            if ref.src == "hdca"
            for hda in item.dataset_instances
            if hda.deleted and hda.history_id == history.id
        ]
        result = self.app[HistoriesContentsService].bulk_operation(
            self.trans,
            history.id,
            ValueFilterQueryParams(),
            HistoryContentBulkOperationPayload(operation=HistoryContentItemOperation.undelete, items=contents),
        )
        if result.errors:  # checked above, so only a race with another call can get here
            raise AnalysisError(
                ErrorCode.CONFLICT,
                f"{len(result.errors)} item(s) could not be restored: {result.errors[0].error}",
                "Read the items back with get_history_contents(history_id) and call again.",
            )
        return self._items_result(history_id, found)

    def _owned_items(
        self, refs: list[HistoryItemRef], history, action: str, purge: bool = False, recursive: bool = False
    ) -> list[tuple[HistoryItemRef, Any]]:
        """Each item, looked up with Galaxy's ownership checks; one coded error naming every problem."""
        found: list[tuple[HistoryItemRef, Any]] = []
        problems: list[tuple[ErrorCode, str]] = []
        for ref in refs:
            item, problem = self._owned_item(ref)
            if problem is None:
                problem = _item_problem(ref, item, history.id, action, purge, recursive)
            if problem:
                problems.append(problem)
            else:
                found.append((ref, item))
        if problems:
            code = min((code for code, _ in problems), key=_CODE_ORDER.index)
            shown = problems[:20]
            raise AnalysisError(
                code,
                f"Nothing was {'deleted' if action == 'delete' else 'restored'}; "
                f"{len(problems)} of {len(refs)} item(s) cannot be {action}d:\n"
                + "\n".join(f"- {text}" for _, text in shown)
                + (f"\n- ... and {len(problems) - len(shown)} more." if len(problems) > len(shown) else ""),
                "Name only your own items of this history (ids from get_history_contents(history_id)) "
                "and call again.",
            )
        return found

    def _owned_item(self, ref: HistoryItemRef) -> tuple[Any, tuple[ErrorCode, str] | None]:
        try:
            return self.lookup.item(ref.src, ref.id, own=True), None
        except AnalysisError as refused:
            kind = "dataset" if ref.src == "hda" else "collection"
            return None, problem_line(refused, ref.path, kind, ref.id, "belongs to another user")

    def _check_purge_allowed(self) -> None:
        try:
            self.hda_manager.dataset_manager.error_unless_dataset_purge_allowed()
        except exceptions.ConfigDoesNotAllowException:
            raise AnalysisError(
                ErrorCode.AUTHORIZATION_ERROR,
                "This Galaxy does not let users purge datasets (allow_user_dataset_purge is off). Nothing was deleted.",
                "Delete without purge (purge=false); an admin can purge deleted datasets later.",
            ) from None

    def _items_result(self, history_id: str, found: list[tuple[HistoryItemRef, Any]], purge: bool = False):
        session = self.trans.sa_session
        rows = []
        for ref, item in found:
            session.refresh(item)
            row = {"src": ref.src, "id": ref.id, "deleted": item.deleted, "visible": item.visible}
            row["purged"] = _purged(item)
            if isinstance(item, HistoryDatasetCollectionAssociation):
                elements = item.dataset_instances
                row["datasets_deleted"] = sum(hda.deleted for hda in elements)
                row["datasets_purged"] = sum(hda.purged for hda in elements)
            if purge and not row["purged"]:
                row["purge_pending"] = True  # Galaxy's purge task frees the space in the background
            rows.append(row)
        return {"history_id": history_id, "items": rows}


def _purged(item) -> bool:
    """Purged as delete_history_items reports it: a dataset's flag; a collection with every dataset purged."""
    if isinstance(item, HistoryDatasetCollectionAssociation):
        elements = item.dataset_instances
        return bool(elements) and all(hda.purged for hda in elements)
    return bool(item.purged)


def _item_problem(
    ref: HistoryItemRef, item, history_id: int, action: str, purge: bool, recursive: bool
) -> tuple[ErrorCode, str] | None:
    """What stops ``action`` on an item the caller owns, if anything."""
    kind = "dataset" if ref.src == "hda" else "collection"
    if item.history_id != history_id:
        return ErrorCode.VALIDATION_ERROR, f"{ref.path}: {kind} {ref.id} is in another history."
    if action == "delete":
        if ref.src == "hda" and still_uploading(item):
            return ErrorCode.CONFLICT, f"{ref.path}: dataset {ref.id} is still uploading; wait for it first."
        if ref.src == "hdca" and purge and not recursive:
            return (
                ErrorCode.VALIDATION_ERROR,
                f"{ref.path}: purging a collection frees its datasets' space only with recursive=true.",
            )
        return None
    if getattr(item, "purged", False):
        return ErrorCode.CONFLICT, f"{ref.path}: dataset {ref.id} was purged and cannot be restored."
    if ref.src == "hdca" and any(hda.purged for hda in item.dataset_instances if hda.deleted):
        return ErrorCode.CONFLICT, f"{ref.path}: collection {ref.id} has purged datasets; it cannot be restored whole."
    return None

