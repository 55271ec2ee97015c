"""Reading outputs: ranged ``peek_dataset_content`` (field report gap 2), and
``peek_collection_content``: the same range of every dataset of a collection, a page of elements per call.

An agent lives by reading tool outputs. This pages through a history dataset's
bytes with O(max_bytes) cost at any offset (core.byte_range), decides whether the
bytes are text (core.content_kind), and leaves permission checks to Galaxy's
HDAManager. The file is opened through the object store, in binary mode: the disk
store's own ``_get_data`` reads text mode and cannot seek by byte.
"""

import gzip
from typing import Any

from galaxy.datatypes.data import (
    Data,
    Text,
)
from galaxy.managers.histories import HistoryManager
from sqlalchemy import (
    exists,
    select,
)

from galaxy_mcp_analysis.core.byte_range import (
    clamp_max_bytes,
    elements_within,
    read_chunk,
)
from galaxy_mcp_analysis.core.content_kind import (
    content_kind,
    ContentKind,
    HEAD_BYTES,
)
from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.images import (
    image_kind,
    ImageBlock,
    WithImages,
)
from galaxy_mcp_analysis.operations.images import image_of

#: Dataset states whose bytes are final (an errored job's partial output is worth reading).
READABLE_STATES = frozenset({"ok", "error", "failed_metadata"})
#: Below this many bytes left of a call's read cap, a further image is not sent (it says so instead).
MIN_IMAGE_BUDGET = 32 * 1024
#: Datasets one peek_datasets_content call reads at most.
MAX_DATASETS_PER_CALL = 50


class ReadingOutputs:
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans``, ``lookup``, ``settings``)."""

    def peek_dataset_content(
        self,
        dataset_id: str,
        offset: int = 0,
        max_bytes: int = 65536,
        whole_lines: bool = True,
        allow_binary: bool = False,
    ) -> dict[str, Any]:
        """A byte range of a history dataset, decoded for an agent (extends Galaxy's fixed-size peek)."""
        max_bytes_applied, capped = clamp_max_bytes(max_bytes, self.settings.max_read_bytes)
        hda = self._readable_hda(dataset_id)
        images: list[ImageBlock] = []
        result = {
            "dataset_id": dataset_id,
            "history_id": self.trans.security.encode_id(hda.history_id) if hda.history_id else None,
            "name": hda.name,
            **self._hda_chunk(hda, offset, max_bytes_applied, whole_lines, allow_binary, images),
            "peek": hda.peek or "",
            "max_bytes_applied": max_bytes_applied,
            "capped": capped,
        }
        if hda.deleted:
            result["deleted"] = True
        if other := self._other_item_named_by(hda.id):
            kind, name, suggestion = other
            result["warning"] = f"This id also names the {kind} {name!r}; if you meant it: {suggestion}"
        return WithImages(result, images)

    def peek_collection_content(
        self,
        collection_id: str,
        element_offset: int = 0,
        max_elements: int = 20,
        offset: int = 0,
        max_bytes: int = 4096,
    ) -> dict[str, Any]:
        """The same byte range (whole lines) of each dataset of a collection (nested ones flattened, in order),
        a page of elements per call within the server's read cap; an element that cannot be read says why."""
        cap = self.settings.max_read_bytes
        max_bytes_applied, capped = clamp_max_bytes(max_bytes, cap)
        hdca = self.lookup.collection(collection_id)
        elements = hdca.collection.dataset_elements_and_identifiers()
        chosen = elements_within(len(elements), element_offset, max_elements, max_bytes_applied, cap)
        page = [elements[index] for index in chosen]
        _, readable = self.lookup.datasets({element.hda.id for element in page if element.hda is not None})
        images: list[ImageBlock] = []
        read = [self._element_chunk(element, readable, offset, max_bytes_applied, images) for element in page]
        following = chosen.stop if chosen.stop < len(elements) else None
        return WithImages({
            "collection_id": collection_id,
            "history_id": self.trans.security.encode_id(hdca.history_id) if hdca.history_id else None,
            "name": hdca.name,
            "collection_type": hdca.collection.collection_type,
            "element_count": len(elements),
            "element_offset": chosen.start,
            "next_element_offset": following,
            "max_bytes_applied": max_bytes_applied,
            "capped": capped or (following is not None and len(page) < max_elements),
            "elements": read,
        }, images)

    def _element_chunk(self, element, readable: dict[int, bool], offset: int, max_bytes: int,
                       images: list[ImageBlock]):
        """One element's chunk, or its identifier, dataset and the coded reason it cannot be read."""
        hda = element.hda
        identifiers = element._identifiers  # set by Galaxy's dataset_elements_and_identifiers
        shown: dict[str, Any] = {"element_identifier": identifiers[-1]}
        if len(identifiers) > 1:
            shown["path"] = identifiers
        if hda is None:
            return {**shown, "error": "[NOT_FOUND] this element holds no history dataset."}
        dataset_id = self.trans.security.encode_id(hda.id)
        shown["dataset_id"] = dataset_id
        if not readable.get(hda.id):
            return {**shown, "error": "[AUTHORIZATION_ERROR] this dataset is not accessible to this API key's user."}
        try:
            self._require_readable(hda, dataset_id)
            return {**shown, "name": hda.name, **self._hda_chunk(hda, offset, max_bytes, True, False, images),
                    **_failure_of(hda)}
        except AnalysisError as unreadable:
            return {**shown, "state": hda.state, "error": f"[{unreadable.code.value}] {unreadable.message}"}

    def _hda_chunk(self, hda, offset: int, max_bytes: int, whole_lines: bool, allow_binary: bool,
                   images: list[ImageBlock]) -> dict[str, Any]:
        """One chunk of a readable dataset's bytes with its extension, state and size (a binary one refused);
        an image dataset (without allow_binary) is added to ``images`` instead, within the call's read cap."""
        datatype = hda.datatype
        path = self._dataset_file(hda)
        if not allow_binary and (kind := image_kind(hda.extension)) and hda.state == "ok":
            return self._image_chunk(hda, path, kind, images)
        with open(path, "rb") as raw:
            kind = content_kind(
                # Galaxy's generic "data" type claims binary without knowing: let the bytes decide.
                declared_binary="maybe" if type(datatype) is Data else datatype.is_binary,
                compressed_format=getattr(datatype, "compressed_format", None),
                text_inside=_is_text_datatype(getattr(datatype, "uncompressed_datatype_instance", None) or datatype),
                head=raw.read(HEAD_BYTES),
            )
            if kind is ContentKind.BINARY and not allow_binary:
                raise self._binary_refusal(hda)
            raw.seek(0)  # the classification read the head; GzipFile starts where raw stands
            stream = gzip.GzipFile(fileobj=raw, mode="rb") if kind is ContentKind.GZIP_TEXT else raw
            chunk = read_chunk(stream, offset, max_bytes, whole_lines=whole_lines, binary=kind is ContentKind.BINARY)
        result = {
            "extension": hda.extension,
            "state": hda.state,
            "file_size": int(hda.get_size()),  # Galaxy stores it as a Decimal
            **chunk.as_dict(),
            "truncated": not chunk.eof,
        }
        if kind is ContentKind.GZIP_TEXT:
            # Offsets count decompressed bytes; file_size is the compressed size on disk.
            result["compressed"] = "gzip"
        return result

    def _image_chunk(self, hda, path: str, kind: str, images: list[ImageBlock]) -> dict[str, Any]:
        """An image dataset's entry: its image goes into ``images`` (sent as an MCP image block)."""
        shown = {"extension": hda.extension, "state": hda.state, "file_size": int(hda.get_size())}
        left = self.settings.max_read_bytes - sum(len(image.data) for image in images)
        if left < MIN_IMAGE_BUDGET:
            return {**shown, "image_skipped": "this call's read cap is spent on earlier images; read this one "
                                              "with peek_dataset_content(dataset_id)."}
        image = image_of(path, kind, hda.name, left)
        images.append(image)
        return {**shown, "encoding": "image", "image": image.as_dict(), "eof": True, "next_offset": None}

    def peek_datasets_content(self, dataset_ids: list[str], offset: int = 0, max_bytes: int = 4096) -> dict[str, Any]:
        """The same byte range (whole lines) of several datasets in one call: every id is checked first (an
        unknown or another user's dataset refuses the call); a dataset that cannot be read yet says why."""
        chosen = list(dict.fromkeys(dataset_ids))
        if not 1 <= len(chosen) <= MAX_DATASETS_PER_CALL:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"dataset_ids holds {len(chosen)} distinct ids; pass 1 to {MAX_DATASETS_PER_CALL}.",
                "Split the ids over several calls, or read a collection's datasets with peek_collection_content.",
            )
        cap = self.settings.max_read_bytes
        max_bytes_applied, capped = clamp_max_bytes(max_bytes, cap)
        share = max(1, cap // len(chosen))  # all share the one server cap
        if max_bytes_applied > share:
            max_bytes_applied, capped = share, True
        found = [(dataset_id, self._accessible_hda(dataset_id)) for dataset_id in chosen]
        images: list[ImageBlock] = []
        return WithImages({
            "datasets": [self._dataset_chunk(dataset_id, hda, offset, max_bytes_applied, images)
                         for dataset_id, hda in found],
            "max_bytes_applied": max_bytes_applied,
            "capped": capped,
        }, images)

    def _dataset_chunk(self, dataset_id: str, hda, offset: int, max_bytes: int,
                       images: list[ImageBlock]) -> dict[str, Any]:
        shown = {"dataset_id": dataset_id, "name": hda.name}
        try:
            self._require_readable(hda, dataset_id)
            return {**shown, **self._hda_chunk(hda, offset, max_bytes, True, False, images), **_failure_of(hda)}
        except AnalysisError as unreadable:
            return {**shown, "state": hda.state, "error": f"[{unreadable.code.value}] {unreadable.message}"}

    def _readable_hda(self, dataset_id: str):
        hda = self._accessible_hda(dataset_id)
        self._require_readable(hda, dataset_id)
        return hda

    def _accessible_hda(self, dataset_id: str):
        """The dataset if the caller may read it, whatever its state (Galaxy decides); a coded refusal else."""
        try:
            hda = self.lookup.dataset(
                dataset_id,
                missing_hint="List datasets with get_history_contents(history_id) and use an `id` from there.",
                denied_hint="Read only your own datasets or ones shared with you (get_history_contents(history_id)).",
            )
        except AnalysisError as refused:
            # The id may be the caller's collection whose number is also some dataset's.
            if refused.code is not ErrorCode.VALIDATION_ERROR and (
                other := self._other_item_named_by(self.trans.security.decode_id(dataset_id))
            ):
                kind, name, suggestion = other
                raise AnalysisError(
                    ErrorCode.VALIDATION_ERROR, f"{dataset_id} is a {kind} ({name!r}), not a history dataset.", suggestion
                ) from None
            raise
        return hda

    @staticmethod
    def _require_readable(hda, dataset_id: str) -> None:
        """A purged dataset is [NOT_FOUND]; one whose bytes are not final yet [NOT_READY]."""
        if hda.purged or hda.dataset.purged:
            raise AnalysisError(
                ErrorCode.NOT_FOUND,
                f"Dataset {dataset_id} ({hda.name!r}) has been purged; its content no longer exists.",
                "Re-run the job that created it (get_job_details(dataset_id)) or pick another dataset.",
            )
        if hda.state not in READABLE_STATES:
            raise AnalysisError(
                ErrorCode.NOT_READY,
                f"Dataset {dataset_id} is not ready: its state is {hda.state!r} (readable: ok, error).",
                "Wait with get_job_status(job_id) or get_dataset_details(dataset_id) until the state is ok, "
                "then read again."
                + (" A paused dataset waits on a failed input: fix that first." if hda.state == "paused" else ""),
            )

    def _other_item_named_by(self, decoded: int) -> tuple[str, str, str] | None:
        """(kind, name, what to pass instead) of a collection or library dataset with this id.

        Galaxy's encoded ids carry no kind: a collection's id also decodes to some
        history dataset's id, so this is asked both when no dataset matched and
        when one did (then it becomes a warning in the result).
        """
        session = self.trans.sa_session
        model = self.app.model
        hdca, ldda = model.HistoryDatasetCollectionAssociation, model.LibraryDatasetDatasetAssociation
        # One statement asks both tables (a read that succeeds asks on every call); the rare hit loads its row.
        has_collection, has_library_dataset = session.execute(
            select(exists().where(hdca.id == decoded), exists().where(ldda.id == decoded))
        ).one()
        collection = session.get(hdca, decoded) if has_collection else None
        if collection is not None and self.app[HistoryManager].is_accessible(collection.history, self.trans.user):
            return (
                "dataset collection",
                collection.name,
                "List its elements with get_collection_details(collection_id) and read an element's dataset id.",
            )
        library_dataset = session.get(ldda, decoded) if has_library_dataset else None
        if library_dataset is not None and self.app.security_agent.can_access_dataset(
            self.trans.get_current_user_roles(), library_dataset.dataset
        ):
            return (
                "library dataset",
                library_dataset.name,
                "Import it into a history first (Galaxy UI: Libraries -> Add to History), then read that dataset.",
            )
        return None

    def _dataset_file(self, hda) -> str:
        """Path of the dataset's bytes, through the object store (cached locally for remote stores)."""
        object_store = self.app.object_store
        if not object_store.exists(hda.dataset):
            raise AnalysisError(
                ErrorCode.NOT_FOUND,
                f"The file of dataset {hda.name!r} is missing from Galaxy's storage.",
                "Ask the Galaxy admin to check the object store, or re-run the job that created it.",
            )
        return object_store.get_filename(hda.dataset)

    def _binary_refusal(self, hda):
        targets = sorted(self.app.datatypes_registry.get_converters_by_datatype(hda.extension))
        convert = (
            f"Convert it with a converter tool to one of: {', '.join(targets[:8])}; or "
            if targets
            else "Run a tool that turns it into a text format (search_tools), or "
        )
        return AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            f"Dataset {hda.name!r} has the binary datatype {hda.extension!r}; its bytes are not text.",
            convert + "call peek_dataset_content again with allow_binary=true to get base64.",
        )


def _is_text_datatype(datatype) -> bool:
    return isinstance(datatype, Text)


def _failure_of(hda) -> dict[str, Any]:
    """Why a dataset that failed holds what it holds (Galaxy's message), beside its content: a reader of
    several datasets must not take an errored one's empty content for a result."""
    if hda.state not in ("error", "failed_metadata"):
        return {}
    return {"misc_info": (hda.info or "").strip()}
