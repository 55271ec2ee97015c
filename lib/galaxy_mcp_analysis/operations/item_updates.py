"""Changing a history or a history item: ``update_history``, ``update_dataset`` and ``update_collection``.

Each item is resolved with Galaxy's managers (``HistoryManager``, ``HDAManager``,
``DatasetCollectionManager``; the history must be the caller's and mutable), every field is checked
first, and the change goes through ``HistoriesService.update`` (a history) or
``HistoriesContentsService.update``, whose datatype change starts Galaxy's set-metadata job; a
collection is serialized back with Galaxy's ``HDCASerializer``. A refusal changes nothing.
"""

from typing import Any

from galaxy import (
    exceptions,
    model,
)
from galaxy.managers.histories import HistoryManager
from galaxy.model import (
    HistoryDatasetAssociation,
    HistoryDatasetCollectionAssociation,
)
from galaxy.schema import SerializationParams
from galaxy.schema.schema import HistoryContentType
from galaxy.util.sanitize_html import sanitize_html
from galaxy.webapps.galaxy.services.histories import HistoriesService
from galaxy.webapps.galaxy.services.history_contents import HistoriesContentsService

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.managing import (
    collection_update,
    dataset_update,
    history_update,
)
from galaxy_mcp_analysis.operations.galaxy_tags import (
    is_galaxy_tag,
    TAG_FORM_HINT,
)


class ItemUpdates:
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans``, ``lookup``,
    ``get_dataset_details``, ``check_file_type`` and ``remedy``)."""

    def _require_mutable_history(self, history, item: str, kind: str) -> None:
        """Galaxy's own rule (``HistoryManager.error_unless_mutable``) as a coded error about an item of it
        (``kind`` "history": about the history itself)."""
        try:
            self.app[HistoryManager].error_unless_mutable(history)
        except exceptions.ItemImmutableException:
            if kind == "history":
                message, suggestion = (
                    f"{item} is archived or purged; Galaxy does not change it. Nothing was changed.",
                    "Restore it from its archive first, or work in a current history (list_histories()).",
                )
            else:
                message, suggestion = (
                    f"{item} is in an archived or purged history, which cannot change.",
                    f"Restore the history from its archive first, or copy the {kind} into a current history.",
                )
            raise AnalysisError(ErrorCode.CONFLICT, message, suggestion) from None

    # ---- update_history ----

    def update_history(self, history_id: str, **fields: Any) -> dict[str, Any]:
        """Galaxy's history update (name, annotation, tags), after every field and the history were checked."""
        payload = history_update(**fields)
        if payload.get("tags"):
            self._check_tags(payload["tags"])
        history = self.lookup.history(history_id, "own")
        self._require_mutable_history(history, f"History {history_id}", "history")
        service = self.app[HistoriesService]
        shown = service.update(
            self.trans, history.id, payload, SerializationParams(keys=list(_HISTORY_FIELDS), default_view="summary")
        )
        return {
            "history_id": history_id,
            **{key: shown.get(key) for key in _HISTORY_FIELDS},
            "changed": list(payload),
        }

    # ---- update_dataset ----

    def update_dataset(self, dataset_id: str, **fields: Any) -> dict[str, Any]:
        """Galaxy's dataset update, after every field was checked; a datatype change regenerates metadata."""
        payload = dataset_update(**fields)
        if payload.get("tags"):
            self._check_tags(payload["tags"])
        hda = self._owned_dataset(dataset_id)
        if "datatype" in payload:
            if payload["datatype"] == hda.extension:
                del payload["datatype"]  # already that datatype: no metadata job to start
            else:
                self._check_datatype_change(hda, dataset_id, payload["datatype"])
        metadata_jobs_before = set(self._metadata_jobs(hda))
        if payload:
            self.app[HistoriesContentsService].update(
                self.trans,
                history_id=None,
                id=hda.id,
                payload=payload,
                serialization_params=SerializationParams(view="summary"),
                contents_type=HistoryContentType.dataset,
            )
        new_jobs = [job for job in self._metadata_jobs(hda) if job not in metadata_jobs_before]
        details = self.get_dataset_details(dataset_id)
        details["history_id"] = self.trans.security.encode_id(hda.history_id)  # the audit trail's history too
        details["changed"] = [_FIELD_NAMES[key] for key in payload]
        details["metadata_job_id"] = self.trans.security.encode_id(max(new_jobs)) if new_jobs else None
        return details

    @staticmethod
    def _check_tags(tags: list[str]) -> None:
        if bad := [tag for tag in tags if not is_galaxy_tag(tag)]:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"{len(bad)} tag(s) are not in Galaxy's tag form: {', '.join(repr(tag[:40]) for tag in bad[:5])}. "
                "Nothing was changed.",
                TAG_FORM_HINT,
            )

    def _owned_dataset(self, dataset_id: str) -> HistoryDatasetAssociation:
        hda = self.lookup.dataset(dataset_id, own=True)
        self._require_mutable_history(hda.history, f"Dataset {dataset_id}", "dataset")
        if hda.purged:
            raise AnalysisError(
                ErrorCode.CONFLICT, f"Dataset {dataset_id} has been purged; it can no longer be changed.",
                "Purged datasets cannot be recovered; make the data again.",
            )
        if still_uploading(hda):
            raise AnalysisError(
                ErrorCode.NOT_READY, f"Dataset {dataset_id} is still uploading.",
                "Wait with wait_for_jobs(dataset_ids=[...]) and call again.",
            )
        return hda

    def _check_datatype_change(self, hda: HistoryDatasetAssociation, dataset_id: str, file_type: str) -> None:
        """The checks Galaxy's datatype change makes half-way through an update, made before anything changes."""
        if file_type == "auto":
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                "file_type 'auto' detects a datatype on upload only; update_dataset sets a named datatype.",
                "Pass the datatype to set, e.g. file_type='tabular'.",
            )
        try:
            self.check_file_type(file_type)
        except AnalysisError as unknown:
            raise AnalysisError(
                unknown.code,
                unknown.message + " Nothing was changed.",
                "Pass a datatype extension such as txt, tabular, csv, bed, gff3, fasta, fastqsanger, vcf, json; "
                "this server's full list is at GET /api/datatypes.",
            ) from None
        registry = self.app.datatypes_registry
        if not hda.datatype.is_datatype_change_allowed():
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"Dataset {dataset_id} is {hda.extension!r}, a datatype Galaxy does not let anyone change.",
                "Convert it with a tool instead (search_tools('convert')).",
            )
        if not registry.get_datatype_by_extension(file_type).is_datatype_change_allowed():
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"Galaxy does not let a dataset become {file_type!r} by a datatype change.",
                "Make it with a tool that outputs that datatype, or upload it as that datatype.",
            )
        if hda.state == model.Dataset.states.ERROR:
            # Galaxy accepts the change but pauses the metadata job it starts behind an errored dataset,
            # leaving the dataset in setting_metadata for good.
            raise AnalysisError(
                ErrorCode.CONFLICT,
                f"Dataset {dataset_id} is in the error state; a datatype change would start a metadata job that "
                "Galaxy pauses behind it, and the dataset would stay in setting_metadata. Nothing was changed.",
                f"Read why it failed with get_job_errors(dataset_id={dataset_id!r}) (failed_outputs has Galaxy's "
                f"message). {self._remaking(hda)}",
            )
        if not hda.ok_to_edit_metadata():
            raise AnalysisError(
                ErrorCode.CONFLICT,
                f"Dataset {dataset_id} is an input or output of a job that has not finished; its datatype "
                "cannot change now.",
                "Wait for those jobs (wait_for_jobs(dataset_ids=[...])) or cancel them, then call again.",
            )

    def _remaking(self, hda: HistoryDatasetAssociation) -> str:
        """The call that makes an errored dataset again, its creating job's repair, or why none can (Jobs.remedy)."""
        remedy = self.remedy(hda.creating_job) if hda.creating_job is not None else {}
        if "no_repair" in remedy:
            return remedy["no_repair"]
        return ("Then make it again: "
                + (remedy.get("repair") or "create_dataset_from_text or upload_file_from_url with the right file_type."))

    def _metadata_jobs(self, hda: HistoryDatasetAssociation) -> list[int]:
        """Ids of the set-metadata jobs that read this dataset (Galaxy's datatype change starts one)."""
        self.trans.sa_session.refresh(hda)
        return [
            association.job.id
            for association in hda.dependent_jobs
            if association.job.tool_id == self.app.datatypes_registry.set_external_metadata_tool.id
        ]

    # ---- update_collection ----

    def update_collection(self, collection_id: str, **fields: Any) -> dict[str, Any]:
        """Galaxy's collection update (name, tags, visible), after every field and the collection were checked."""
        payload = collection_update(**fields)
        if payload.get("tags"):
            self._check_tags(payload["tags"])
        _refuse_html_rewrites(payload)
        hdca = self._owned_collection(collection_id)
        service = self.app[HistoriesContentsService]
        service.update(
            self.trans,
            history_id=None,
            id=hdca.id,
            payload=payload,
            serialization_params=SerializationParams(view="summary"),
            contents_type=HistoryContentType.dataset_collection,
        )
        self.trans.sa_session.refresh(hdca)
        shown = service.hdca_serializer.serialize_to_view(
            hdca, keys=list(_COLLECTION_FIELDS), user=self.trans.user, trans=self.trans
        )
        return {
            "collection_id": collection_id,
            **{key: shown.get(key) for key in _COLLECTION_FIELDS},
            "changed": list(payload),
        }

    def _owned_collection(self, collection_id: str) -> HistoryDatasetCollectionAssociation:
        """The caller's history collection (Galaxy's managers decide), if it can still change; else a coded error."""
        hdca = self.lookup.collection(collection_id, own=True)
        self._require_mutable_history(hdca.history, f"Collection {collection_id}", "collection")
        if hdca.deleted and (elements := hdca.dataset_instances) and all(hda.purged for hda in elements):
            # What delete_history_items reports as purged: deleted with every dataset purged.
            raise AnalysisError(
                ErrorCode.CONFLICT,
                f"Collection {collection_id} has been purged; it can no longer be changed.",
                "Purged collections cannot be recovered; make the collection again (create_collection).",
            )
        return hdca


def _refuse_html_rewrites(payload: dict[str, Any]) -> None:
    """Galaxy's collection update stores a name or tag through ``sanitize_html`` (``a > b`` becomes
    ``a &gt; b``): a value it would store otherwise than asked is refused, before anything changes."""
    for value in ([payload["name"]] if "name" in payload else []) + list(payload.get("tags") or []):
        if (stored := sanitize_html(value)) != value:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"Galaxy would store {value[:60]!r} as {stored[:80]!r}: it escapes <, > and & in a collection's "
                "name and tags. Nothing was changed.",
                "Write it without <, > and & (e.g. 'depth gt 10', 'A and B'). Dataset names "
                "(update_dataset) and new collections' names (create_collection) keep these characters.",
            )


_FIELD_NAMES = {
    "name": "name",
    "genome_build": "dbkey",
    "info": "info",
    "annotation": "annotation",
    "tags": "tags",
    "visible": "visible",
    "datatype": "file_type",
}


#: The fields of update_collection's result besides collection_id, as Galaxy's HDCASerializer names them.
_COLLECTION_FIELDS = ("history_id", "hid", "name", "collection_type", "element_count", "populated_state", "tags",
                      "visible", "deleted")


#: The fields of update_history's result besides history_id, as Galaxy's HistorySerializer names them.
_HISTORY_FIELDS = ("name", "annotation", "tags", "update_time", "deleted")


#: Galaxy's upload tools. Their datasets are queued or running while the upload runs: 26.1's fetch API
#: never sets the 'upload' state, so that state alone does not tell an upload in progress.
_UPLOAD_TOOLS = frozenset({"__DATA_FETCH__", "upload1"})
_UNFINISHED = (model.Dataset.states.NEW, model.Dataset.states.QUEUED, model.Dataset.states.RUNNING)


def still_uploading(hda: HistoryDatasetAssociation) -> bool:
    """Whether the dataset is still being uploaded (its upload job has not finished)."""
    if hda.state == model.Dataset.states.UPLOAD:
        return True
    if hda.state not in _UNFINISHED:
        return False
    job = hda.creating_job
    return job is not None and job.tool_id in _UPLOAD_TOOLS
