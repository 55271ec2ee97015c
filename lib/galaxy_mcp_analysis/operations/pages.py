"""Notebook pages: Galaxy's PagesService and PageManager as MCP operations (field report gap 6).

Galaxy 26.1 has the page service (revisions, history-attached notebooks) but no MCP
tools for it. Writes are checked before Galaxy sees them, so an invalid page is never
saved and its latest revision stays the latest: the syntax by operations.page_directives
(exactly Galaxy's verdict, explained), the ids it embeds through Galaxy's managers.
"""

import io
from typing import Any

from galaxy import exceptions
from galaxy.managers.markdown_util import to_basic_markdown
from galaxy.managers.pages import PageManager
from galaxy.schema.schema import (
    CreatePagePayload,
    PageIndexQueryPayload,
    UpdatePagePayload,
)

from galaxy_mcp_analysis.core.byte_range import read_chunk
from galaxy_mcp_analysis.operations.page_directives import (
    diagnose,
    DirectiveProblem,
    IdReference,
    PageContentError,
    referenced_ids,
)
from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.storable import check_storable

#: What agent-made revisions are recorded as (Galaxy shows it as the revision's source).
AGENT_EDIT_SOURCE = "agent"
#: Bounds of list_pages arguments the database must accept (SQL integers; sqlite's LIKE pattern limit).
MAX_OFFSET = 2**31 - 1
MAX_SEARCH_LENGTH = 1000
#: Bytes of a rendered page returned at most: Galaxy embeds up to 1 MB of each dataset, images in base64.
RENDERED_MAX_BYTES = 32768
#: Page fields an agent needs; Galaxy's serialization carries more (email hashes, ...).
PAGE_FIELDS = (
    "id", "title", "slug", "history_id", "username", "published", "importable", "deleted",
    "latest_revision_id", "revision_ids", "edit_source", "content_format", "annotation",
    "create_time", "update_time",
)  # fmt: skip


#: The lookup (``operations.lookup.Lookup``) of each id argument a page directive embeds.
_REFERENCED_KINDS = {
    "history_dataset_id": "dataset",
    "history_dataset_collection_id": "collection",
    "history_id": "history",
    "job_id": "job",
    "invocation_id": "invocation",
    "workflow_id": "workflow",
}


#: Where the ids of pages and their revisions come from, for a malformed one.
PAGE_ID_HINT = "Page ids come from list_pages or create_page; revision ids from list_page_revisions."

class NotebookPages:
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans`` and ``lookup``)."""

    @property
    def pages_service(self):
        from galaxy.webapps.galaxy.services.pages import PagesService

        return self.app[PagesService]

    def list_pages(
        self,
        history_id: str | None = None,
        search: str | None = None,
        limit: int = 100,
        offset: int = 0,
        show_shared: bool = False,
        show_published: bool = False,
        deleted: bool = False,
    ) -> dict[str, Any]:
        # Galaxy's payload caps limit but lets a negative limit or offset through: sqlite reads LIMIT -1
        # as "no limit" and PostgreSQL refuses it mid-query (a server error).
        if limit < 1 or not 0 <= offset <= MAX_OFFSET:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"limit must be >= 1 and offset >= 0 (at most {MAX_OFFSET}); got limit={limit}, offset={offset}.",
                "Page through with limit=100 (at most 999) and offset=0, 100, 200, ...",
            )
        if search is not None and len(search) > MAX_SEARCH_LENGTH:
            # sqlite refuses LIKE patterns over 50,000 bytes mid-query (a server error).
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"search is {len(search)} characters long; at most {MAX_SEARCH_LENGTH} are matched.",
                "Search for a word of the title or slug, e.g. search='resistance'.",
            )
        payload = PageIndexQueryPayload(
            show_own=True,
            show_shared=show_shared,
            show_published=show_published,
            deleted=deleted,
            search=search,
            limit=limit,
            offset=offset,
            history_id=history_id,  # Galaxy's payload field decodes it
        )
        pages, total = self.pages_service.index(self.trans, payload, include_total_count=True)
        summaries = [self._page_summary(page) for page in pages.model_dump(mode="json")]
        return {"pages": summaries, "count": len(summaries), "total_count": total, "offset": offset, "limit": limit}

    def get_page(self, page_id: str, include_rendered: bool = False) -> dict[str, Any]:
        details = self.pages_service.show(self.trans, self._decode(page_id)).model_dump(mode="json")
        result = self._page_result(details, include_rendered)
        if include_rendered:
            result.update(self._rendered(self.lookup.page(page_id).latest_revision))
        return result

    def create_page(
        self,
        history_id: str | None = None,
        title: str | None = None,
        content: str | None = None,
        slug: str | None = None,
        annotation: str | None = None,
    ) -> dict[str, Any]:
        if not history_id and not (title and slug):
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                "A page needs either history_id (a notebook attached to that history) or both title and slug "
                "(a standalone report).",
                "Pass history_id from list_histories, or title='My report' and slug='my-report'.",
            )
        check_storable(title=title, content=content, slug=slug, annotation=annotation)
        self._check_content(content or "")
        payload = CreatePagePayload(
            history_id=history_id,  # Galaxy's payload field decodes it
            title=title,
            slug=slug,
            annotation=annotation,
            content=content or "",
            content_format="markdown",
        )
        details = self._write(lambda: self._created_by_agent(self.pages_service.create(self.trans, payload)))
        return self._page_result(details.model_dump(mode="json"), include_rendered=False)

    def _created_by_agent(self, details):
        """Galaxy's create leaves the first revision's edit_source empty; the agent wrote it, as update_page
        records for every later revision."""
        page = self.lookup.page(details.id)
        page.latest_revision.edit_source = AGENT_EDIT_SOURCE
        self.trans.sa_session.commit()
        details.edit_source = AGENT_EDIT_SOURCE
        return details

    def update_page(self, page_id: str, content: str | None = None, title: str | None = None) -> dict[str, Any]:
        if content is None and title is None:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                "Nothing to update: pass content (a new revision) and/or title.",
                "Read the page with get_page(page_id), edit content_editor, and pass it as content.",
            )
        check_storable(title=title, content=content)
        if content is not None:
            self._check_content(content)
        payload = UpdatePagePayload(
            content=content,
            content_format="markdown" if content is not None else None,
            title=title,
            edit_source=AGENT_EDIT_SOURCE,
        )
        details = self._write(lambda: self.pages_service.update(self.trans, self._decode(page_id), payload))
        return self._page_result(details.model_dump(mode="json"), include_rendered=False)

    def list_page_revisions(self, page_id: str) -> dict[str, Any]:
        revisions = self.pages_service.list_revisions(self.trans, self._decode(page_id)).model_dump(mode="json")
        return {"page_id": page_id, "revisions": revisions, "count": len(revisions)}

    def get_page_revision(self, page_id: str, revision_id: str, include_rendered: bool = False) -> dict[str, Any]:
        # Galaxy's PageRevisionDetails keeps only the rendered form; the manager has both.
        page = self.lookup.page(page_id)
        manager = self.app[PageManager]
        revision = manager.get_revision(self.trans, page, self._decode(revision_id, "revision_id"))
        exported = manager.rewrite_content_for_export(self.trans, {**revision.to_dict(), "page_id": page.id})
        result = {
            "id": revision_id,
            "page_id": page_id,
            "title": exported.get("title"),
            "edit_source": revision.edit_source,
            "content_format": exported.get("content_format"),
            "create_time": revision.create_time.isoformat(),
            "is_latest": page.latest_revision_id == revision.id,
            "content_editor": exported.get("content_editor", exported.get("content")),
        }
        if include_rendered:
            result["content"] = exported.get("content")
            result.update(self._rendered(revision))
        return result

    def revert_page_revision(self, page_id: str, revision_id: str) -> dict[str, Any]:
        reverted = self._write(
            lambda: self.pages_service.revert_revision(self.trans, self._decode(page_id), self._decode(revision_id, "revision_id"))
        ).model_dump(mode="json")
        return {
            "page_id": page_id,
            "new_revision_id": reverted["id"],
            "reverted_to": revision_id,
            "edit_source": reverted.get("edit_source"),
        }

    def delete_page(self, page_id: str) -> dict[str, Any]:
        return self._set_page_deleted(page_id, True)

    def restore_page(self, page_id: str) -> dict[str, Any]:
        return self._set_page_deleted(page_id, False)

    def _set_page_deleted(self, page_id: str, deleted: bool) -> dict[str, Any]:
        """Galaxy's page delete or undelete (its deleted flag), for the page's owner."""
        page = self.lookup.page(page_id, own=True)
        (self.pages_service.delete if deleted else self.pages_service.undelete)(self.trans, page.id)
        self.trans.sa_session.refresh(page)
        return {"page_id": page_id, "title": page.title, "slug": page.slug, "deleted": page.deleted,
                "published": page.published}

    def validate_page_content(self, content: str) -> dict[str, Any]:
        problems = self._content_problems(content)
        return {"valid": not problems, "errors": [problem.as_dict() for problem in problems]}

    # ---- helpers ----------------------------------------------------------------

    def _decode(self, encoded_id: str, argument: str = "page_id") -> int:
        return self.lookup.decode(encoded_id, argument, PAGE_ID_HINT)

    def _rendered(self, revision) -> dict[str, Any]:
        """The revision as Galaxy renders it for export (to_basic_markdown: every embed expanded), bounded."""
        if revision.content_format != "markdown":
            return {"rendered_content": None, "rendered_error": "Galaxy renders only markdown pages; this one is "
                    f"{revision.content_format}."}
        try:
            rendered = to_basic_markdown(self.trans, revision.content or "")
        except (exceptions.MessageException, OSError) as e:
            # An embedded item this user may no longer read, or whose file is gone (purged).
            message = e.err_msg if isinstance(e, exceptions.MessageException) else "an embedded dataset's file is gone"
            return {"rendered_content": None, "rendered_error": f"Galaxy cannot render this page: {message}. "
                    "validate_page_content(content_editor) names the embed."}
        encoded = rendered.encode()
        # Galaxy renders a table as one line of HTML: cut at a character, not at a line.
        chunk = read_chunk(io.BytesIO(encoded), 0, RENDERED_MAX_BYTES, whole_lines=False)
        return {"rendered_content": chunk.content, "rendered_bytes": len(encoded), "rendered_truncated": not chunk.eof}

    def _content_problems(self, content: str) -> list[DirectiveProblem]:
        syntax = diagnose(content, internal=False)
        if syntax:
            return syntax
        return [problem for reference in referenced_ids(content) if (problem := self._reference_problem(reference))]

    def _check_content(self, content: str) -> None:
        if problems := self._content_problems(content):
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                str(PageContentError(problems)) + "\nNothing was saved; the latest revision is unchanged.",
                "Apply each 'fix:' line and send the whole page again; validate_page_content(content) checks "
                "without saving.",
            )

    def _reference_problem(self, reference: IdReference) -> DirectiveProblem | None:
        """Whether the object a directive embeds exists and this user may see it (Galaxy's checks)."""
        kind = _REFERENCED_KINDS.get(reference.argument)
        if kind is None:
            return None
        try:
            getattr(self.lookup, kind)(reference.value)
            return None
        except AnalysisError as refused:
            reason = {
                ErrorCode.AUTHORIZATION_ERROR: "is not accessible to you",
                ErrorCode.VALIDATION_ERROR: "is not a valid Galaxy id",
            }.get(refused.code, "does not exist")
        except exceptions.MessageException as e:  # a refusal the lookup does not name
            reason = "is not accessible to you" if e.status_code == 403 else "does not exist"
        return DirectiveProblem(
            line=reference.line,
            directive=reference.directive,
            argument=reference.argument,
            rule="unknown_reference",
            message=f"{reference.argument}={reference.value} {reason}.",
            suggestion=f"Use an id from get_history_contents(history_id) (or the matching list tool) in "
            f"{reference.directive}({reference.argument}=...).",
        )

    def _write(self, write):
        """Run a page write; on any failure roll back so nothing half-done stays in the session."""
        try:
            return write()
        except Exception:
            self.trans.sa_session.rollback()
            raise

    def _page_summary(self, page: dict) -> dict[str, Any]:
        return {field: page[field] for field in PAGE_FIELDS if field in page}

    def _page_result(self, details: dict, include_rendered: bool) -> dict[str, Any]:
        result = self._page_summary(details)
        result["page_id"] = details["id"]
        result["content_editor"] = details.get("content_editor")
        if include_rendered:
            result["content"] = details.get("content")
            result["generate_version"] = details.get("generate_version")
            result["generate_time"] = details.get("generate_time")
        return result
