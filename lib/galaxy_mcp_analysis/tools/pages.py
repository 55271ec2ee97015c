"""MCP declarations for notebook pages (operations in galaxy_mcp_analysis.operations.pages)."""

from typing import (
    Annotated,
    Any,
)

from pydantic import Field

from galaxy_mcp_analysis.core.tool_facts import Item
from galaxy_mcp_analysis.mcp.declaration import analysis_tool
from galaxy_mcp_analysis.mcp.params import HistoryId

PageId = Annotated[str, Field(description="Encoded page id, e.g. from list_pages or create_page.")]
RevisionId = Annotated[str, Field(description="Encoded revision id, from list_page_revisions.")]
IncludeRendered = Annotated[
    bool, Field(description="Also return rendered_content: the page as Galaxy exports it, embeds expanded (32 KB; "
                            "a table's title and header show only on the web page).")
]
PageContent = Annotated[str, Field(description="The whole page as Galaxy-flavoured markdown (see the rules above).")]

DIRECTIVE_RULES = """
    Page rules: one directive per ```galaxy fence, on its own line, as name(arg=value, ...);
    quote values with spaces or symbols (title="Resistance genes"); inline embeds look like
    ${galaxy history_dataset_name(history_dataset_id=<id>)}. Example:
        ```galaxy
        history_dataset_as_table(history_dataset_id=f2db41e1fa331b3e, title="Resistance genes")
        ```
    Common directives: history_dataset_as_table, history_dataset_display, history_dataset_peek,
    history_dataset_as_image, history_dataset_collection_display, history_dataset_link,
    history_link, job_parameters, tool_stderr, invocation_outputs, generate_time.
"""


@analysis_tool(title="List pages", read_only=True, idempotent=True,
               example={"history_id": Item("history")})
def list_pages(
    ops,
    history_id: Annotated[HistoryId | None, Field(description="Only notebooks attached to this history.")] = None,
    search: Annotated[str | None, Field(description="Free-text filter on titles and slugs.")] = None,
    limit: Annotated[int, Field(description="Page size, at most 999.")] = 100,
    offset: Annotated[int, Field(description="Pages to skip, for paging.")] = 0,
    show_shared: Annotated[bool, Field(description="Also list pages other users shared with you.")] = False,
    show_published: Annotated[bool, Field(description="Also list published pages.")] = False,
    deleted: Annotated[bool, Field(description="List deleted pages instead.")] = False,
) -> dict[str, Any]:
    """List your pages (notebooks and reports), newest activity first by default.

    Returns pages [{id, title, slug, history_id, published, latest_revision_id, update_time, ...}],
    count and total_count. A page with a history_id is that history's notebook.
    Example: list_pages(history_id="f2db41e1fa331b3e").
    Errors: [VALIDATION_ERROR] malformed history_id.
    Next: get_page(page_id) to read one; create_page to start one.
    """
    return ops.list_pages(history_id, search, limit, offset, show_shared, show_published, deleted)


@analysis_tool(title="Read a page", read_only=True, idempotent=True,
               example={"page_id": Item("page")})
def get_page(ops, page_id: PageId, include_rendered: IncludeRendered = False) -> dict[str, Any]:
    """Read a page: its metadata and content_editor, the editable markdown of its latest revision.

    Edit content_editor and pass it whole to update_page. Example: get_page(page_id="1cd8e2f6b131e891").
    Errors: [NOT_FOUND] unknown page; [AUTHORIZATION_ERROR] another user's unshared page.
    Next: update_page, list_page_revisions.
    """
    return ops.get_page(page_id, include_rendered)


@analysis_tool(title="Create a page", read_only=False, effects={"created": (("result.page_id", "page"),)},
               toolsets=("core",),
               example={"history_id": Item("history"), "content": "# example\n"})
def create_page(
    ops,
    history_id: Annotated[
        HistoryId | None, Field(description="Attach the page to this history as its notebook.")
    ] = None,
    title: Annotated[str | None, Field(description="Title; required without history_id.")] = None,
    content: Annotated[str | None, Field(description="Initial markdown (rules above).")] = None,
    slug: Annotated[
        str | None, Field(description="URL slug (lowercase, digits, -); required without history_id.")
    ] = None,
    annotation: Annotated[str | None, Field(description="Short description shown with the page.")] = None,
) -> dict[str, Any]:
    """Create a notebook page attached to a history (history_id) or a standalone report (title + slug).

    Returns the page (page_id, latest_revision_id, content_editor). Content is checked first and
    an invalid page is not created: each error names the line, directive, argument, rule and a
    corrected line; directives must reference datasets/collections/histories you can access.
    {rules}
    Errors: [VALIDATION_ERROR] invalid markdown, unknown id, missing title/slug, slug in use;
    [NOT_FOUND] unknown history.
    Next: update_page to revise; validate_page_content to check a draft without saving.
    """
    return ops.create_page(history_id, title, content, slug, annotation)


@analysis_tool(title="Update a page", read_only=False,
               effects={"changed": (("result.page_id", "page"), ("arguments.page_id", "page"))},
               example={"page_id": Item("page"), "content": "# updated\n"})
def update_page(
    ops,
    page_id: PageId,
    content: Annotated[str | None, Field(description="The whole new markdown; records a new revision.")] = None,
    title: Annotated[str | None, Field(description="New title.")] = None,
) -> dict[str, Any]:
    """Save a new revision of a page you own (recorded with edit_source "agent"), and/or retitle it.

    Pass the whole document, not a diff. An invalid document is refused and nothing changes: the
    latest revision stays the latest. Errors name line, directive, argument, rule and a fix.
    {rules}
    Errors: [VALIDATION_ERROR] invalid markdown or unknown id (fix and resend);
    [AUTHORIZATION_ERROR] not your page; [NOT_FOUND] unknown page.
    Next: get_page to re-read; revert_page_revision to undo.
    """
    return ops.update_page(page_id, content, title)


@analysis_tool(title="Delete a page", read_only=False, destructive=True, idempotent=True,
               effects={"deleted": (("result.page_id", "page"),)},
               example={"page_id": Item("spare_page")})
def delete_page(ops, page_id: PageId) -> dict[str, Any]:
    """Delete a page you own (it leaves list_pages). Undo: restore_page(page_id).
    Returns {page_id, title, slug, deleted, published}.
    Errors: [AUTHORIZATION_ERROR] not your page (shared or published too); [NOT_FOUND].
    Next: list_pages(deleted=True).
    """
    return ops.delete_page(page_id)


@analysis_tool(title="Restore a page", read_only=False, idempotent=True,
               effects={"changed": (("result.page_id", "page"),)},
               example={"page_id": Item("spare_page")})
def restore_page(ops, page_id: PageId) -> dict[str, Any]:
    """Undelete a page you own, revisions and all. Returns {page_id, title, slug, deleted, published}.
    Errors: [AUTHORIZATION_ERROR] not your page; [NOT_FOUND]. Next: get_page(page_id).
    """
    return ops.restore_page(page_id)


@analysis_tool(title="List page revisions", read_only=True, idempotent=True,
               example={"page_id": Item("page")})
def list_page_revisions(ops, page_id: PageId) -> dict[str, Any]:
    """List a page's revisions, oldest first: [{id, edit_source ("user", "agent", "restore"), create_time}].

    Example: list_page_revisions(page_id="1cd8e2f6b131e891").
    Errors: [NOT_FOUND] unknown page; [AUTHORIZATION_ERROR] a page you cannot see.
    Next: get_page_revision to read one; revert_page_revision to restore one.
    """
    return ops.list_page_revisions(page_id)


@analysis_tool(title="Read a page revision", read_only=True, idempotent=True,
               example={"page_id": Item("page"), "revision_id": Item("revision")})
def get_page_revision(
    ops, page_id: PageId, revision_id: RevisionId, include_rendered: IncludeRendered = False
) -> dict[str, Any]:
    """Read one revision of a page: content_editor (editable markdown), edit_source, is_latest.

    Errors: [NOT_FOUND] unknown page or a revision of another page.
    Next: revert_page_revision(page_id, revision_id) to make it the latest again.
    """
    return ops.get_page_revision(page_id, revision_id, include_rendered)


@analysis_tool(title="Revert a page", read_only=False, effects={
    "changed": (("result.page_id", "page"),), "created": (("result.new_revision_id", "page_revision"),)},
               example={"page_id": Item("page"), "revision_id": Item("revision")})
def revert_page_revision(ops, page_id: PageId, revision_id: RevisionId) -> dict[str, Any]:
    """Make an old revision current again by copying it into a new revision (history is kept).

    Returns new_revision_id and reverted_to. Only the page's owner may revert.
    Errors: [AUTHORIZATION_ERROR] not your page; [NOT_FOUND] unknown page or revision.
    Next: get_page(page_id).
    """
    return ops.revert_page_revision(page_id, revision_id)


@analysis_tool(title="Check page markdown", read_only=True, idempotent=True,
               example={"content": "# draft\n"})
def validate_page_content(ops, content: PageContent) -> dict[str, Any]:
    """Check page markdown without saving anything: the same checks create_page and update_page make.

    Returns {valid, errors: [{line, directive, argument, rule, message, suggestion}]}; an invalid
    document is a successful check (valid: false), not a tool error. suggestion is a corrected
    line to copy; ids are checked against what you can access (rule "unknown_reference").
    {rules}
    Example: validate_page_content(content="```galaxy\\nhistory_dataset_as_table(history_dataset_id=ab12, title=My title)\\n```")
    -> errors[0]: rule "unquoted_value_with_spaces", suggestion '...title="My title")'.
    Next: create_page or update_page with the corrected content.
    """
    return ops.validate_page_content(content)


# The directive rules are written out once, in validate_page_content (every agent sees all
# descriptions in the same tools/list); the writing tools point there.
validate_page_content.__doc__ = validate_page_content.__doc__.replace("    {rules}\n", DIRECTIVE_RULES.lstrip("\n"))
for _function in (create_page, update_page):
    _function.__doc__ = _function.__doc__.replace(
        "    {rules}\n", "    Markdown rules and common directives: see validate_page_content.\n"
    )
