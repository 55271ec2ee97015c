"""The one lookup layer: an id -> the Galaxy object the caller may use, or a coded error.

One method per object kind (history, dataset, collection, library dataset, tool, job, workflow,
invocation, page). Each decodes the id, asks Galaxy's own manager, which makes the permission
check, and turns Galaxy's refusals into the contract's codes: a malformed id is a
[VALIDATION_ERROR] naming the argument it came in, an unknown one [NOT_FOUND], another user's
[AUTHORIZATION_ERROR]. A caller that knows better what to say next passes its own ``argument``,
hints or ``denied`` text; a caller that reports many items at once turns a refusal into one line
with ``problem_line``. Every operations mixin finds Galaxy objects by id through
``self.lookup`` (``Lookups``), never with its own ``except ObjectNotFound``.
"""

from collections.abc import (
    Callable,
    Iterator,
)
from contextlib import contextmanager
from typing import (
    Any,
    Literal,
)

from galaxy import exceptions
from galaxy.managers import base as managers_base
from galaxy.managers.collections import DatasetCollectionManager
from galaxy.managers.histories import HistoryManager
from galaxy.managers.jobs import JobManager
from galaxy.managers.lddas import LDDAManager
from galaxy.model import (
    History,
    HistoryDatasetAssociation,
    HistoryDatasetCollectionAssociation,
    Job,
    Page,
    StoredWorkflow,
    WorkflowInvocation,
)

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)

#: What the caller means to do with a history: read it, add to it, or use it as its owner.
HistoryAccess = Literal["read", "write", "own"]

#: Galaxy's refusals of another user's item, whatever the manager calls them.
_DENIED = (exceptions.ItemOwnershipException, exceptions.ItemAccessibilityException)


class Lookup:
    """The lookups of one call: its ``trans`` and Galaxy's managers, from the operations manager."""

    def __init__(self, operations: Any):
        self.trans = operations.trans
        self.app = operations.app
        self.hda_manager = operations.hda_manager
        #: Datasets ``datasets`` found readable in this call: a later ``dataset`` of the same id (the
        #: preflight's type check after run_tool's reference check) answers without asking Galaxy again.
        self._readable: dict[int, HistoryDatasetAssociation] = {}
        #: Every item ``item`` found, held for the call: SQLAlchemy's session keeps objects only while
        #: something references them, so Galaxy's own code later in the call (a workflow invocation's
        #: ``session.get`` of each input, its access check on the loaded dataset) finds them there instead
        #: of loading them again.
        self._held: list[Any] = []
        #: Workflow version id -> its stored workflow's id, for each version this call found
        #: (``accessible_workflow``): an invocation's result names its stored workflow from here, as
        #: Galaxy's commit has expired the version and reading it again would cost a select.
        self.stored_workflow_ids: dict[int, int] = {}

    # ---- ids ----

    def decode(self, encoded: Any, argument: str, hint: str) -> int:
        """The database id behind an encoded id; a [VALIDATION_ERROR] naming ``argument`` otherwise."""
        try:  # Galaxy's decode_id raises MalformedId for any string it cannot decode
            return self.trans.security.decode_id(encoded)
        except (exceptions.MalformedId, ValueError, TypeError):
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR, f"{argument} {str(encoded)[:40]!r} is not a valid encoded id.", hint
            ) from None

    @contextmanager
    def _refusals(
        self, missing: tuple[str, str], denied: tuple[str, str], unknown: type[Exception] = exceptions.ObjectNotFound
    ) -> Iterator[None]:
        """Galaxy's refusals inside the block as coded errors: ``unknown`` -> [NOT_FOUND] ``missing``,
        another user's item -> [AUTHORIZATION_ERROR] ``denied`` (each a message and a suggestion)."""
        try:
            yield
        except _DENIED:
            raise AnalysisError(ErrorCode.AUTHORIZATION_ERROR, *denied) from None
        except unknown:
            raise AnalysisError(ErrorCode.NOT_FOUND, *missing) from None

    # ---- histories ----

    def history(self, history_id: str, access: HistoryAccess = "read") -> History:
        """The history, if the caller may ``access`` it (Galaxy's HistoryManager decides)."""
        histories = self.app[HistoryManager]
        get = {"write": histories.get_mutable, "own": histories.get_owned, "read": histories.get_accessible}[access]
        decoded = self.decode(history_id, "history_id", "Pass an `id` from list_histories() or create_history(name).")
        try:
            return get(decoded, self.trans.user, current_history=self.trans.history)
        except exceptions.ObjectNotFound:
            raise AnalysisError(
                ErrorCode.NOT_FOUND,
                f"No history with id {history_id} exists.",
                "List yours with list_histories() or make one with create_history(name).",
            ) from None
        except exceptions.ItemImmutableException:
            raise AnalysisError(
                ErrorCode.CONFLICT,
                f"History {history_id} is purged or archived; nothing can be added to it.",
                "Create a new history with create_history(name) and work there.",
            ) from None
        except exceptions.ItemAccessibilityException:
            raise AnalysisError(
                ErrorCode.AUTHORIZATION_ERROR,
                f"History {history_id} is not accessible to this API key's user (another user's history).",
                "Use one of your histories (list_histories()) or one shared with you.",
            ) from None
        except exceptions.ItemOwnershipException:
            raise AnalysisError(
                ErrorCode.AUTHORIZATION_ERROR,
                f"History {history_id} belongs to another user; only your own histories can be "
                + ("written to." if access == "write" else "used here."),
                "Use one of your histories (list_histories()) or create one with create_history(name).",
            ) from None

    def job_history(self, job: Job, job_id: str, action: str) -> History:
        """The job's history if the caller owns it (Galaxy's HistoryManager decides); ``action`` says what
        only its owner may do."""
        try:
            return self.app[HistoryManager].get_owned(job.history_id, self.trans.user, current_history=None)
        except (*_DENIED, exceptions.ObjectNotFound):
            raise AnalysisError(
                ErrorCode.AUTHORIZATION_ERROR,
                f"Job {job_id} belongs to another user; only its owner can {action}.",
                "Rerun it into your own history instead (rerun_job without replace_outputs), or list your "
                "jobs with list_jobs().",
            ) from None

    # ---- history items ----

    def dataset(
        self,
        dataset_id: str,
        *,
        own: bool = False,
        argument: str = "dataset_id",
        denied: str | None = None,
        denied_hint: str | None = None,
        missing_hint: str = "List datasets with get_history_contents(history_id) and pass an `id` from there.",
    ) -> HistoryDatasetAssociation:
        """The history dataset, if the caller may read it (or owns it: ``own``); Galaxy's HDAManager decides."""
        decoded = self.decode(dataset_id, argument, "Pass an `id` from get_history_contents(history_id).")
        if own:
            denied = denied or f"Dataset {dataset_id} belongs to another user; only its owner can change it."
            denied_hint = denied_hint or (
                "Copy it into your own history first, or change your own datasets (get_history_contents)."
            )
        with self._refusals(
            (f"No history dataset with id {dataset_id} exists.", missing_hint),
            (
                denied
                or f"Dataset {dataset_id} is not accessible to this API key's user (its permissions are private).",
                denied_hint or "Use only your own datasets or ones shared with you (get_history_contents(history_id)).",
            ),
        ):
            if own:
                return self.hda_manager.get_owned(decoded, self.trans.user, current_history=self.trans.history)
            if decoded in self._readable:
                return self._readable[decoded]
            return self.hda_manager.get_accessible(decoded, self.trans.user)

    def datasets(self, decoded_ids: set[int]) -> tuple[dict[int, HistoryDatasetAssociation], dict[int, bool]]:
        """Many history datasets at once: ``(found by id, whether the caller may read each)``. One query
        finds them all (a collection of 10,000 elements); the permission check stays Galaxy's, made once
        per distinct dataset."""
        found = {hda.id: hda for hda in self.hda_manager.by_ids(sorted(decoded_ids))}
        user = self.trans.user
        readable = {hda_id: self.hda_manager.is_accessible(hda, user) for hda_id, hda in found.items()}
        self._readable.update((hda_id, found[hda_id]) for hda_id, may in readable.items() if may)
        return found, readable

    def collection(
        self,
        collection_id: str,
        *,
        own: bool = False,
        argument: str = "collection_id",
        denied: str | None = None,
        denied_hint: str | None = None,
    ) -> HistoryDatasetCollectionAssociation:
        """The history collection, if the caller may read it (or owns its history: ``own``); Galaxy's
        DatasetCollectionManager decides."""
        decoded = self.decode(
            collection_id, argument, "Pass an `id` of a dataset_collection from get_history_contents(history_id)."
        )
        if own:
            denied = denied or f"Collection {collection_id} belongs to another user; only its owner can change it."
            denied_hint = denied_hint or (
                "Copy it into your own history first, or change your own collections (get_history_contents)."
            )
        with self._refusals(
            (f"No history collection with id {collection_id} exists.",
             "List collections with get_history_contents(history_id)."),
            (
                denied or f"Collection {collection_id} is not accessible to this API key's user (another user's "
                "history).",
                denied_hint or "Use only your own collections or ones shared with you (get_history_contents).",
            ),
            unknown=exceptions.MessageException,  # Galaxy reports an unknown collection id as a bad parameter
        ):
            return self.app[DatasetCollectionManager].get_dataset_collection_instance(
                self.trans, "history", decoded, check_ownership=own
            )

    def library_dataset(self, library_dataset_id: str, *, argument: str = "id"):
        """The library dataset (an LDDA), if the caller may read it; Galaxy's LDDAManager decides."""
        decoded = self.decode(library_dataset_id, argument, "Pass the `id` of a library dataset.")
        with self._refusals(
            (f"No library dataset with id {library_dataset_id} exists.", "Check the id in the data library."),
            (f"Library dataset {library_dataset_id} is not accessible to this API key's user.",
             "Use library datasets your roles may access."),
            unknown=exceptions.MessageException,  # Galaxy reports an unknown id as a plain error
        ):
            return self.app[LDDAManager].get(self.trans, decoded, check_accessible=True)

    def item(self, src: str, item_id: str, *, own: bool = False, **wording: Any):
        """The item a ``{"src", "id"}`` reference names: ``hda``, ``hdca`` or ``ldda`` (read only)."""
        if src == "hda":
            found = self.dataset(item_id, own=own, **wording)
        elif src == "hdca":
            found = self.collection(item_id, own=own, **wording)
        elif src == "ldda" and not own:
            found = self.library_dataset(item_id, **wording)
        else:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR, f"src {src!r} names no history item here.", "Use src 'hda' or 'hdca'."
            )
        self._held.append(found)
        return found

    # ---- tools ----

    def tool(self, tool_id: str, tool_version: str | None = None):
        """The tool (in ``tool_version``, else the default one), if this server serves it to the caller
        (Galaxy's toolbox and the tool's own access rule decide)."""
        if not isinstance(tool_id, str) or not tool_id.strip():
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                "tool_id is empty.",
                "Find a tool id with search_tools(query), e.g. search_tools('sort') -> 'sort1'.",
            )
        # Galaxy's own resolution: a short id or a ToolShed guid, the version looked up along the tool's lineage.
        tool = self.app.toolbox.get_tool(tool_id, tool_version=tool_version)
        if tool_version and tool is not None and tool.version != tool_version:
            tool = None  # Galaxy falls back to the newest version; a pinned version must not
        if tool is None or not tool.allow_user_access(self.trans.user):
            served = [each.version for each in self.tool_versions(tool_id)] if tool_version else []
            raise AnalysisError(
                ErrorCode.NOT_FOUND,
                f"No tool {tool_id!r}" + (f" in version {tool_version!r}" if tool_version else "") + " is served."
                + (f" Versions served: {', '.join(served)}." if served else ""),
                "Find tool ids with search_tools(query) and versions with get_tool_versions(tool_id); omit "
                "tool_version for the default version.",
            )
        return tool

    def tool_versions(self, tool_id: str) -> list:
        """Every version of the tool this server serves to the caller, oldest first (Galaxy's toolbox finds
        them along the tool's lineage: a short id and each version's guid name the same versions)."""
        found = self.app.toolbox.get_tool(tool_id, get_all_versions=True) or []
        served = {tool.version: tool for tool in found if tool.allow_user_access(self.trans.user)}
        return sorted(served.values(), key=lambda tool: tool.version_object)

    # ---- jobs ----

    def job(
        self,
        job_id: str,
        *,
        argument: str = "job_id",
        denied_hint: str = "Debug only your own jobs, or jobs of histories shared with you (list_histories).",
    ) -> Job:
        """The job, if the caller may see it (Galaxy's JobManager decides)."""
        decoded = self.decode(job_id, argument, "Job ids come from run_tool's `jobs`, list_jobs or wait_for_jobs.")
        with self._refusals(
            (f"No job with id {job_id} exists.",
             "Job ids come from run_tool's `jobs`; for an output dataset pass dataset_id instead."),
            (f"Job {job_id} is not accessible to this API key's user (another user's job).", denied_hint),
        ):
            return self.app[JobManager].get_accessible_job(self.trans, decoded)

    # ---- workflows, invocations, pages ----

    def workflow(self, workflow_id: str, *, argument: str = "workflow_id", own: bool = False) -> StoredWorkflow:
        """The stored workflow, if the caller may use it: owned, shared or published (or, ``own``, owned);
        Galaxy's WorkflowsManager decides."""
        decoded = self.decode(workflow_id, argument, "Use an `id` from list_workflows().")
        with self._refusals(
            (f"No workflow with id {workflow_id} exists.", "List yours with list_workflows()."),
            (
                f"Workflow {workflow_id} belongs to another user; only its owner can change it."
                if own else
                f"Workflow {workflow_id} is not accessible to this API key's user (another user's private workflow).",
                "Use your own workflows (list_workflows()); import a shared or published one to get your own copy."
                if own else
                "Use your own workflows, or published or shared ones (list_workflows(show_published=True)).",
            ),
        ):
            manager = self.app.workflow_manager
            if not own:
                return manager.get_stored_accessible_workflow(self.trans, decoded, by_stored_id=True)
            stored = manager.get_stored_workflow(self.trans, decoded, by_stored_id=True)
            manager.check_security(self.trans, stored, check_ownership=True)
            return stored

    def invocation(self, invocation_id: str, *, argument: str = "invocation_id") -> WorkflowInvocation:
        """The workflow invocation, if the caller may see it (Galaxy's WorkflowsManager decides)."""
        where = "Invocation ids come from invoke_workflow's `id` or get_invocations()."
        decoded = self.decode(invocation_id, argument, where)
        with self._refusals(
            (f"No workflow invocation with id {invocation_id} exists.", where),
            (f"Invocation {invocation_id} is not accessible to this API key's user (another user's invocation).",
             "Follow your own invocations (get_invocations())."),
        ):
            return self.app.workflow_manager.get_invocation(
                self.trans, decoded, check_ownership=False, check_accessible=True
            )

    def page(self, page_id: str, *, argument: str = "page_id", own: bool = False) -> Page:
        """The page, if the caller may read it (or, ``own``, owns it): Galaxy's own check, as its
        PagesService makes it for show (read) and delete (own)."""
        decoded = self.decode(page_id, argument, "Use an `id` from list_pages().")
        with self._refusals(
            (f"No page with id {page_id} exists.", "List pages with list_pages()."),
            (f"Page {page_id} belongs to another user; only its owner can change it.",
             "Change only your own pages (list_pages()).")
            if own else
            (f"Page {page_id} is not accessible to this API key's user (another user's private page).",
             "Use your own pages, or shared or published ones (list_pages(show_shared=True, show_published=True))."),
            unknown=exceptions.MessageException,  # Galaxy reports an unknown page id as a plain error
        ):
            return managers_base.get_object(
                self.trans, decoded, "Page", check_ownership=own, check_accessible=not own
            )


class Lookups:
    """Operations mixin of AnalysisOperationsManager: ``self.lookup``, the call's lookup layer."""

    @property
    def lookup(self) -> Lookup:
        # One per call: Galaxy builds the operations manager anew for every MCP tool call.
        if "_lookup" not in self.__dict__:
            self.__dict__["_lookup"] = Lookup(self)
        return self.__dict__["_lookup"]


def problem_line(refused: AnalysisError, path: str, kind: str, item_id: str, denied: str) -> tuple[ErrorCode, str]:
    """One line of a refusal naming many items: the lookup's code, the item named by its path and id only
    (an item the caller may not read must not tell its name)."""
    if refused.code is ErrorCode.VALIDATION_ERROR:
        return refused.code, f"{path}: {str(item_id)[:40]!r} is not a valid encoded id."
    if refused.code is ErrorCode.AUTHORIZATION_ERROR:
        return refused.code, f"{path}: {kind} {item_id} {denied}."
    return refused.code, f"{path}: no {kind} with id {item_id} exists."


def or_none(lookup: Callable[[], Any]) -> Any:
    """What ``lookup`` finds, or None where it refuses (for callers that checked access before)."""
    try:
        return lookup()
    except (AnalysisError, exceptions.MessageException):
        return None
