"""Making inputs: pasted datasets, collections, and map-over in run_tool (field report gaps 1, 3, 5).

An agent synthesises small files in context, groups datasets into collections and
maps tools over them. Every write is checked before Galaxy creates anything, so a
refused call leaves the history as it was: arguments first (size, datatype,
collection shape through core.element_identifiers), then, through Galaxy's
managers, that the history is the caller's to write and every element is the
caller's to read. Pasted text goes through the same fetch request as
``upload_file_from_url``; collections through Galaxy's collection service. A
collection of pasted texts is one fetch of all its datasets (one job), then the
collection of them: Galaxy's own collection destination (``HdcaDestination``) would
make a collection that stays unpopulated until the upload job ends, which
``run_tool`` cannot map over until then ("An input collection is not populated").
"""

import datetime
import difflib
import time
from collections.abc import Iterator
from typing import Any

from galaxy import exceptions
from galaxy.model import HistoryDatasetCollectionAssociation
from galaxy.schema.fetch_data import (
    DataElementsTarget,
    FetchDataPayload,
    FileDataElement,
    HdaDestination,
    PastedDataElement,
    UrlDataElement,
)
from galaxy.schema.schema import CreateNewCollectionPayload

from galaxy_mcp_analysis.core.collection_summary import (
    collection_fields,
    summarize_elements,
)
from galaxy_mcp_analysis.core.element_identifiers import (
    check_element_identifiers,
    ElementReference,
    MAX_REPORTED_PROBLEMS,
    PastedElement,
    with_dataset_ids,
)
from galaxy_mcp_analysis.core.map_over import input_references
from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.pasted_text import paste_problem
from galaxy_mcp_analysis.core.oauth import public_base
from galaxy_mcp_analysis.core.storable import check_storable
from galaxy_mcp_analysis.core.upload_urls import (
    allowed_bytes,
    curl_line,
    make_token,
    name_problem,
    new_nonce,
    ROUTE_PREFIX,
    signing_key,
    UploadClaims,
)
from galaxy_mcp_analysis.operations.galaxy_tags import is_galaxy_tag
from galaxy_mcp_analysis.operations.lookup import problem_line

#: file_type values Galaxy's fetch accepts without a registered datatype of that name.
DETECTED_FILE_TYPES = ("auto",)


#: Copies create_collection lists in its result (all are counted in copied_count).
COPIES_SHOWN = 20

class MakingInputs:
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans``, services and ``settings``)."""

    # ---- Datasets from text -------------------------------------------------------------

    def create_dataset_from_text(
        self,
        history_id: str,
        content: str,
        name: str | None = None,
        file_type: str = "auto",
        dbkey: str = "?",
        column_names: list[str] | None = None,
        header: bool = False,
    ) -> dict[str, Any]:
        """A new dataset holding exactly ``content`` (UTF-8), uploaded as a pasted fetch element; with
        ``column_names`` or ``header``, its column metadata is set once the upload has finished."""
        if problem := paste_problem(content, self.settings.max_paste_bytes):
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                problem,
                "Pass the text to store as content (e.g. 'chr1\\t100\\t200\\n')." if not content else
                "Split it into several datasets, or publish the file at a URL and use upload_file_from_url.",
            )
        size = len(content.encode("utf-8"))
        asked = self.checked_header("column_names" if column_names is not None else "header", content, file_type,
                                    column_names, header)
        pasted = PastedElement("content", name, content, file_type, dbkey)
        result = self._fetch_into_history(history_id, [_pasted(pasted)])
        (output,) = result["outputs"]
        created = {
            "dataset_id": output["id"],
            "hid": output["hid"],
            "name": output["name"],
            "job_id": result["jobs"][0]["id"],
            "state": output["state"],
            "file_type": file_type,
            "bytes": size,
            "outputs": result["outputs"],
        }
        if asked is not None:
            created.update(self.name_columns(created["job_id"], {created["dataset_id"]: asked})[created["dataset_id"]])
        return created

    def upload_file_from_url(
        self,
        history_id: str,
        url: str,
        file_type: str = "auto",
        dbkey: str = "?",
        file_name: str | None = None,
    ) -> dict[str, Any]:
        """Galaxy's URL upload, now one element kind of the shared fetch request."""
        element = UrlDataElement(src="url", url=url, ext=file_type, dbkey=dbkey, name=file_name)
        return self._fetch_into_history(history_id, [element])

    # ---- Local files: a one-time upload URL, then Galaxy's fetch of the staged bytes ----------

    def create_upload_url(
        self, history_id: str, name: str, file_type: str = "auto", dbkey: str = "?", max_bytes: int | None = None
    ) -> dict[str, Any]:
        """A signed, one-time URL that takes one file's bytes into this history (uploads.route receives them)."""
        try:
            size = allowed_bytes(max_bytes, self.settings.max_upload_bytes)
        except ValueError as problem:
            raise AnalysisError(ErrorCode.VALIDATION_ERROR, str(problem),
                                "Leave max_bytes out for the server's cap, or pass a smaller value.") from None
        if problem := name_problem(name):
            raise AnalysisError(ErrorCode.VALIDATION_ERROR, problem, "Pass the file's name, e.g. name='reads.bam'.")
        check_storable(name=name, dbkey=dbkey, file_type=file_type)
        self.check_file_type(file_type)
        self.history_to_upload_into(history_id)
        expires = int(time.time()) + self.settings.upload_url_seconds
        claims = UploadClaims(history_id, self._encode_id(self.trans.user.id), name, file_type, dbkey, size, expires,
                              new_nonce())
        config = self.app.config
        url = public_base(config.galaxy_infrastructure_url, config.galaxy_url_prefix) + ROUTE_PREFIX + make_token(
            signing_key(config.id_secret), claims)
        headers = {"Content-Type": "application/octet-stream"}
        return {
            "upload_url": url,
            "method": "PUT",
            "headers": headers,
            "expires_at": datetime.datetime.fromtimestamp(expires, datetime.timezone.utc).isoformat(),
            "expires_in_seconds": self.settings.upload_url_seconds,
            "max_bytes": size,
            "curl": curl_line(url, "PUT", headers),
            "history_id": history_id,
            "name": name,
            "file_type": file_type,
        }

    def fetch_staged_upload(self, claims: UploadClaims, session_id: str) -> dict[str, Any]:
        """Galaxy's fetch of a file staged in its upload store (as its resumable upload hands one over:
        ``files_0|file_data: {session_id}``, element ``src: files``); the job removes the staged file."""
        self.history_to_upload_into(claims.history_id)
        element = FileDataElement(src="files", name=claims.name, ext=claims.file_type, dbkey=claims.dbkey)
        payload = FetchDataPayload(
            history_id=claims.history_id,
            targets=[DataElementsTarget(destination=HdaDestination(type="hdas"), elements=[element])],
            **{"files_0|file_data": {"session_id": session_id, "name": claims.name}},
        )
        result = self._encode_ids_in_response(self.tools_service.create_fetch(self.trans, payload))
        (output,) = result["outputs"]
        return {"dataset_id": output["id"], "hid": output["hid"], "name": output["name"],
                "job_id": result["jobs"][0]["id"], "state": output["state"], "history_id": claims.history_id,
                "file_type": claims.file_type}

    def history_to_upload_into(self, history_id: str):
        history = self.lookup.history(history_id, "write")
        if history.deleted:
            raise AnalysisError(ErrorCode.CONFLICT, f"History {history_id} is deleted; nothing is uploaded into it.",
                                "Create a new history with create_history(name), or restore this one in Galaxy "
                                "and ask again.")
        return history

    def _fetch_into_history(
        self, history_id: str, elements: list[PastedDataElement] | list[UrlDataElement]
    ) -> dict[str, Any]:
        """Galaxy's data fetch of these elements (one job) into a history the caller may write."""
        for element in elements:
            # Pasted content itself may hold any bytes; these land in text columns.
            check_storable(name=element.name, dbkey=element.dbkey, file_type=element.ext)
        for file_type in sorted({element.ext for element in elements}):
            self.check_file_type(file_type)
        self.lookup.history(history_id, "write")
        payload = FetchDataPayload(
            history_id=history_id,
            targets=[DataElementsTarget(destination=HdaDestination(type="hdas"), elements=elements)],
        )
        return self._encode_ids_in_response(self.tools_service.create_fetch(self.trans, payload))

    def check_file_type(self, file_type: str) -> None:
        """Nothing, if this Galaxy knows the datatype (or detects it: 'auto'); else a [VALIDATION_ERROR]."""
        registry = self.app.datatypes_registry
        if file_type in DETECTED_FILE_TYPES or registry.get_datatype_by_extension(file_type) is not None:
            return
        closest = difflib.get_close_matches(file_type, list(registry.datatypes_by_extension), n=6, cutoff=0.5)
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            f"file_type {file_type!r} is not a datatype this Galaxy knows."
            + (f" Closest: {', '.join(closest)}." if closest else ""),
            "Pass file_type='auto' to let Galaxy detect it, or a datatype extension such as "
            "txt, tabular, csv, bed, gff3, fasta, fastqsanger, vcf, json; this server's full list is at "
            "GET /api/datatypes (or in the upload form's type menu).",
        )

    # ---- Collections ---------------------------------------------------------------------

    def create_collection(
        self,
        history_id: str,
        collection_type: str,
        element_identifiers: list[dict[str, Any]],
        name: str | None = None,
        hide_source_items: bool = False,
        copy_elements: bool = True,
    ) -> dict[str, Any]:
        """A new history collection, created only once the whole request is known to succeed."""
        checked = check_element_identifiers(
            collection_type, element_identifiers, is_galaxy_tag, self.settings.max_paste_bytes
        )
        check_storable(name=name)
        for element in checked.pasted:
            if element.header is not None:
                self.check_header_type(element.path, element.file_type)
        uploaded: dict[str, Any] = {}
        if checked.pasted:
            # The pasted texts are the collection's own datasets: no copies, hidden like an upload's elements.
            uploaded = self._fetch_into_history(history_id, [_pasted(element) for element in checked.pasted])
            element_identifiers = with_dataset_ids(element_identifiers, _output_ids(uploaded))
            hide_source_items, copy_elements = True, False
        else:
            self.lookup.history(history_id, "write")
            self._check_element_references(checked.references, hide_source_items, "Elements of the new collection")
        payload = CreateNewCollectionPayload(
            collection_type=collection_type,
            element_identifiers=element_identifiers,
            name=name if name is not None else f"{collection_type} of {len(element_identifiers)}",
            hide_source_items=hide_source_items,
            copy_elements=copy_elements,
            instance_type="history",
            history_id=history_id,
        )
        created = self.dataset_collections_service.create(self.trans, payload)
        result = {
            "collection_id": self._encode_id(created["id"]),
            "history_id": history_id,
            **collection_fields(created),
            **summarize_elements(created["elements"], self._encode_id),
        }
        if copy_elements:
            result.update(self._copied_elements(created["id"]))
        if uploaded:
            result["pasted_dataset_ids"] = _output_ids(uploaded)
            result["job_ids"] = [job["id"] for job in uploaded["jobs"]]
            headers = {dataset_id: element.header for dataset_id, element in zip(result["pasted_dataset_ids"],
                                                                                 checked.pasted) if element.header}
            if headers:
                result["column_names"] = self.name_columns(result["job_ids"][0], headers)
        return result

    def _copied_elements(self, collection_id: int) -> dict[str, Any]:
        """The hidden copies Galaxy made for the new collection's datasets, each with the item it copies
        (a clean-up has to know them: they are history items of their own); the first
        COPIES_SHOWN, with their count (a 10,000-element list keeps a small result)."""
        collection = self.trans.sa_session.get(HistoryDatasetCollectionAssociation, collection_id)
        copies = [hda for hda in collection.dataset_instances if hda.copied_from_history_dataset_association_id]
        return {
            "copied_elements": [
                {
                    "source_id": self._encode_id(hda.copied_from_history_dataset_association_id),
                    "copy_id": self._encode_id(hda.id),
                    "hid": hda.hid,
                }
                for hda in copies[:COPIES_SHOWN]
            ],
            "copied_count": len(copies),
            "copied_elements_truncated": len(copies) > COPIES_SHOWN,
        }

    def _check_element_references(
        self, references: list[ElementReference], hide_source_items: bool, what: str,
        again: str = "create_collection",
    ) -> None:
        """Every element exists and the caller may read it (and hide it, if asked), before anything is made.

        The problems name each element by its path and id only, never by the item's name:
        an item the caller cannot read must not tell its name either.
        """
        problems = list(self._reference_problems(references, hide_source_items))
        if not problems:
            return
        code = problems[0][0]
        shown = [text for _, text in problems[:MAX_REPORTED_PROBLEMS]]
        more = len(problems) - len(shown)
        raise AnalysisError(
            code,
            f"{what} cannot be used:\n"
            + "\n".join(f"- {text}" for text in shown)
            + (f"\n- ... and {more} more." if more else "")
            + "\nNothing was created.",
            "Use ids from get_history_contents(history_id=...) of your own histories (or datasets shared with you), "
            f"then call {again} again.",
        )

    def _reference_problems(
        self, references: list[ElementReference], hide_source_items: bool
    ) -> Iterator[tuple[ErrorCode, str]]:
        decoded: dict[ElementReference, int] = {}
        for reference in references:
            try:
                decoded[reference] = self.trans.security.decode_id(reference.id)
            except exceptions.MalformedId:
                yield ErrorCode.VALIDATION_ERROR, f"{reference.path}: {reference.id!r} is not a valid encoded id."
        by_src: dict[str, list[ElementReference]] = {}
        for reference in decoded:
            by_src.setdefault(reference.src, []).append(reference)
        yield from self._dataset_problems(by_src.get("hda", []), decoded, hide_source_items)
        yield from self._item_problems(by_src.get("hdca", []) + by_src.get("ldda", []))

    def _dataset_problems(
        self, references: list[ElementReference], decoded: dict[ElementReference, int], hide_source_items: bool
    ) -> Iterator[tuple[ErrorCode, str]]:
        user = self.trans.user
        found, accessible = self.lookup.datasets({decoded[reference] for reference in references})
        for reference in references:
            hda = found.get(decoded[reference])
            if hda is None or hda.purged:
                state = "has been purged" if hda is not None else "does not exist"
                yield ErrorCode.NOT_FOUND, f"{reference.path}: history dataset {reference.id} {state}."
            elif not accessible[hda.id]:
                yield (
                    ErrorCode.AUTHORIZATION_ERROR,
                    f"{reference.path}: dataset {reference.id} is not accessible to this API key's user.",
                )
            elif hide_source_items and not self.hda_manager.is_owner(hda, user):
                yield (
                    ErrorCode.VALIDATION_ERROR,
                    f"{reference.path}: dataset {reference.id} belongs to another user, so hide_source_items "
                    "cannot hide it; pass hide_source_items=false or copy it into your history first.",
                )

    def _item_problems(self, references: list[ElementReference]) -> Iterator[tuple[ErrorCode, str]]:
        """Each collection or library dataset element, looked up one by one (Galaxy's managers decide)."""
        for reference in references:
            kind = "history collection" if reference.src == "hdca" else "library dataset"
            try:
                item = self.lookup.item(reference.src, reference.id)
            except AnalysisError as refused:
                yield problem_line(refused, reference.path, kind, reference.id, "is not accessible")
                continue
            actual = item.collection.collection_type if reference.src == "hdca" else None
            if reference.collection_type and actual != reference.collection_type:
                yield (
                    ErrorCode.VALIDATION_ERROR,
                    f"{reference.path}: collection {reference.id} is a {actual!r}; "
                    f"this level needs a {reference.collection_type!r} collection.",
                )

    # ---- The items a tool run names (run_tool: operations.tool_runs) -------------------------

    def check_input_references(self, inputs: Any) -> None:
        """Every item the inputs name exists and is the caller's to read; the error names only ids."""
        references = [
            ElementReference(f"inputs.{path}", src, item_id) for path, src, item_id in input_references(inputs)
        ]
        self._check_element_references(references, False, "Inputs of the tool run", "run_tool (or check_tool_inputs)")


def _pasted(element: PastedElement) -> PastedDataElement:
    """Galaxy's fetch element for pasted text; Galaxy's defaults keep its bytes (no space_to_tab, no
    to_posix_lines)."""
    return PastedDataElement(
        src="pasted", paste_content=element.content, ext=element.file_type, dbkey=element.dbkey, name=element.name
    )


def _output_ids(fetched: dict[str, Any]) -> list[str]:
    """The fetched datasets' ids in the order of the request's elements (Galaxy names them output0, output1, ...)."""
    outputs = sorted(fetched["outputs"], key=lambda output: int(output["output_name"].removeprefix("output")))
    return [output["id"] for output in outputs]
