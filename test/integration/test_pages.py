"""Issue 6: notebook pages through /api/mcp, with directive errors an agent can fix in one try."""

import urllib.error

import pytest

from conftest import (
    fetch,
    missing_id,
)
from galaxy_mcp_analysis.testing import rest


@pytest.fixture(scope="module")
def notebook_history(galaxy, mcp, api_key):
    history_id = mcp.call_ok("create_history", name="notebook", api_key=api_key)["id"]
    dataset = fetch(galaxy, api_key, history_id, {"src": "pasted", "paste_content": "gene\tcount\nmecA\t3\n",
                                                 "ext": "tabular", "name": "counts"})
    collection = rest(galaxy.galaxy_url, "/api/dataset_collections", api_key, {
        "history_id": history_id, "collection_type": "list", "name": "isolates",
        "element_identifiers": [{"name": "a", "src": "hda", "id": dataset["id"]}],
    })
    return {"history_id": history_id, "dataset_id": dataset["id"], "collection_id": collection["id"]}


def notebook_markdown(ids, title='"Gene counts"'):
    return (
        "# Results\n\n"
        "```galaxy\n"
        f"history_dataset_as_table(history_dataset_id={ids['dataset_id']}, title={title})\n"
        "```\n\n"
        f"Counts come from ${{galaxy history_dataset_name(history_dataset_id={ids['dataset_id']})}}.\n\n"
        "```galaxy\n"
        f"history_dataset_collection_display(history_dataset_collection_id={ids['collection_id']})\n"
        "```\n"
    )


@pytest.fixture
def page(mcp, api_key, notebook_history):
    return mcp.call_ok("create_page", history_id=notebook_history["history_id"],
                       content=notebook_markdown(notebook_history), api_key=api_key)


def revisions(mcp, api_key, page_id):
    return mcp.call_ok("list_page_revisions", page_id=page_id, api_key=api_key)["revisions"]


def test_create_and_read_back_a_notebook(mcp, api_key, notebook_history, page):
    assert page["history_id"] == notebook_history["history_id"]
    read = mcp.call_ok("get_page", page_id=page["page_id"], api_key=api_key)
    assert read["content_editor"] == notebook_markdown(notebook_history)
    assert "content" not in read
    rendered = mcp.call_ok("get_page", page_id=page["page_id"], include_rendered=True, api_key=api_key)
    # Only rendering replaces the inline embed by the dataset's name ("counts"); the source keeps the directive.
    assert "Counts come from counts." in rendered["content"]
    assert "history_dataset_name" not in rendered["content"] and "history_dataset_name" in read["content_editor"]
    # rendered_content is Galaxy's export of the page: every embed replaced by what it shows.
    shown = rendered["rendered_content"]
    assert "```galaxy" not in shown and "mecA" in shown and "isolates" in shown, shown
    assert "Counts come from counts." in shown and rendered["rendered_truncated"] is False
    assert rendered["rendered_bytes"] == len(shown.encode())


def test_a_rendered_page_is_bounded(galaxy, mcp, api_key, notebook_history):
    """Galaxy embeds up to 1 MB of each dataset; an agent gets the first 32 KB and is told so."""
    rows = "".join(f"gene{row}\t{row}\n" for row in range(20000))
    large = fetch(galaxy, api_key, notebook_history["history_id"], {"src": "pasted", "paste_content": rows,
                                                                   "ext": "tabular", "name": "large counts"})
    page = mcp.call_ok("create_page", history_id=notebook_history["history_id"], api_key=api_key,
                       content=f"```galaxy\nhistory_dataset_display(history_dataset_id={large['id']})\n```\n")
    rendered = mcp.call_ok("get_page", page_id=page["page_id"], include_rendered=True, api_key=api_key)
    assert rendered["rendered_truncated"] is True and rendered["rendered_bytes"] > 200_000, rendered["rendered_bytes"]
    assert 30_000 < len(rendered["rendered_content"].encode()) <= 32768
    assert "large counts" in rendered["rendered_content"] and "<td>gene100</td>" in rendered["rendered_content"]


def test_list_pages_own_history_filter_search_and_paging(mcp, api_key, notebook_history, page):
    by_history = mcp.call_ok("list_pages", history_id=notebook_history["history_id"], api_key=api_key)["pages"]
    assert page["page_id"] in [p["id"] for p in by_history]
    assert {p["history_id"] for p in by_history} == {notebook_history["history_id"]}
    report = mcp.call_ok("create_page", title="Zebra report", slug=f"zebra-{page['page_id']}", content="# Z\n",
                         api_key=api_key)
    found = mcp.call_ok("list_pages", search="Zebra", api_key=api_key)["pages"]
    assert [p["id"] for p in found] == [report["page_id"]]
    first = mcp.call_ok("list_pages", limit=1, offset=0, api_key=api_key)
    second = mcp.call_ok("list_pages", limit=1, offset=1, api_key=api_key)
    assert first["count"] == second["count"] == 1 and first["pages"][0]["id"] != second["pages"][0]["id"]
    assert first["total_count"] >= 2


def test_update_records_an_agent_revision(mcp, api_key, notebook_history, page):
    assert page["edit_source"] == "agent"  # the first revision is the agent's too (Galaxy's create leaves it empty)
    new_content = notebook_markdown(notebook_history) + "\nUpdated by the agent.\n"
    mcp.call_ok("update_page", page_id=page["page_id"], content=new_content, api_key=api_key)
    listed = revisions(mcp, api_key, page["page_id"])
    assert [revision["edit_source"] for revision in listed] == ["agent", "agent"]
    assert mcp.call_ok("get_page", page_id=page["page_id"], api_key=api_key)["content_editor"] == new_content


def test_an_invalid_update_is_explained_and_changes_nothing(mcp, api_key, notebook_history, page):
    before = revisions(mcp, api_key, page["page_id"])
    broken = notebook_markdown(notebook_history, title="Gene counts")  # unquoted value with a space
    error = mcp.call_error("update_page", page_id=page["page_id"], content=broken, api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] ")
    assert "line 4 (history_dataset_as_table) [unquoted_value_with_spaces]" in error
    assert f'fix: history_dataset_as_table(history_dataset_id={notebook_history["dataset_id"]}, title="Gene counts")' in error
    assert revisions(mcp, api_key, page["page_id"]) == before
    assert mcp.call_ok("get_page", page_id=page["page_id"], api_key=api_key)["content_editor"] == notebook_markdown(
        notebook_history
    )
    # The error alone is enough to fix the page in one try.
    fix = error.split("fix: ")[1].splitlines()[0]
    fixed = broken.replace(broken.splitlines()[3], fix)
    mcp.call_ok("update_page", page_id=page["page_id"], content=fixed, api_key=api_key)


@pytest.mark.parametrize(
    ("markdown", "rule", "says"),
    [
        ("```galaxy\ngenerate_time()\ngenerate_galaxy_version()\n```\n", "one_directive_per_fence", "own fence"),
        ("```galaxy\nhistory_dataset_as_tabel(history_dataset_id=abc)\n```\n", "unknown_directive",
         "history_dataset_as_table"),
        ("```galaxy\nhistory_dataset_as_table(history_dataset_idd=abc)\n```\n", "unknown_argument",
         "valid arguments of history_dataset_as_table"),
        ("```galaxy\ngenerate_time()\n", "unclosed_fence", "never closed"),
        ("Made ${galaxy generate_time(}\n", "malformed_embed", "closing ')'"),
    ],
)
def test_validate_page_content_names_the_rule(mcp, api_key, markdown, rule, says):
    before = mcp.call_ok("list_pages", api_key=api_key)["total_count"]
    checked = mcp.call_ok("validate_page_content", content=markdown, api_key=api_key)
    assert checked["valid"] is False
    problem = checked["errors"][0]
    assert set(problem) == {"line", "directive", "argument", "rule", "message", "suggestion"}
    assert problem["rule"] == rule and says in problem["message"] + problem["suggestion"]
    assert mcp.call_ok("list_pages", api_key=api_key)["total_count"] == before


def test_valid_content_checks_clean(mcp, api_key, notebook_history):
    assert mcp.call_ok("validate_page_content", content=notebook_markdown(notebook_history), api_key=api_key) == {
        "valid": True, "errors": []}


def test_an_id_that_does_not_exist_or_is_not_yours_is_refused_by_name(galaxy, mcp, api_key, other_user_key, page,
                                                                        notebook_history):
    other_history = mcp.call_ok("create_history", name="other-private", api_key=other_user_key)["id"]
    private = fetch(galaxy, other_user_key, other_history, {"src": "pasted", "paste_content": "x\n", "ext": "txt"})
    rest(galaxy.galaxy_url, f"/api/datasets/{private['id']}/permissions", other_user_key, {"action": "make_private"},
         method="PUT")
    before = revisions(mcp, api_key, page["page_id"])
    cases = ((private["id"], "is not accessible to you"), (missing_id(galaxy), "does not exist"),
             ("0123456789abcdef", "is not a valid Galaxy id"))
    for dataset_id, reason in cases:
        content = f"```galaxy\nhistory_dataset_display(history_dataset_id={dataset_id})\n```\n"
        error = mcp.call_error("update_page", page_id=page["page_id"], content=content, api_key=api_key)
        assert error.startswith("[VALIDATION_ERROR] ") and f"history_dataset_id={dataset_id}" in error
        assert "[unknown_reference]" in error and f"history_dataset_id={dataset_id} {reason}." in error
    assert revisions(mcp, api_key, page["page_id"]) == before


def test_revisions_read_and_revert(mcp, api_key, notebook_history, page):
    first = revisions(mcp, api_key, page["page_id"])[0]["id"]
    mcp.call_ok("update_page", page_id=page["page_id"], content="# Replaced\n", api_key=api_key)
    old = mcp.call_ok("get_page_revision", page_id=page["page_id"], revision_id=first, api_key=api_key)
    assert old["content_editor"] == notebook_markdown(notebook_history) and old["is_latest"] is False
    assert "content" not in old
    rendered = mcp.call_ok("get_page_revision", page_id=page["page_id"], revision_id=first, include_rendered=True,
                           api_key=api_key)
    assert rendered["content_editor"] == old["content_editor"]
    assert "Counts come from counts." in rendered["content"] and "history_dataset_name" not in rendered["content"]
    assert "mecA" in rendered["rendered_content"] and "```galaxy" not in rendered["rendered_content"]
    reverted = mcp.call_ok("revert_page_revision", page_id=page["page_id"], revision_id=first, api_key=api_key)
    assert reverted["edit_source"] == "restore"
    listed = revisions(mcp, api_key, page["page_id"])
    assert [r["edit_source"] for r in listed][-1] == "restore" and len(listed) == 3
    assert mcp.call_ok("get_page", page_id=page["page_id"], api_key=api_key)["content_editor"] == old["content_editor"]


def test_a_standalone_report_needs_title_and_slug(mcp, api_key):
    error = mcp.call_error("create_page", title="No slug", api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] ") and "slug" in error


def test_only_the_owner_edits_or_reverts_and_published_pages_are_read_only(galaxy, mcp, api_key, other_user_key,
                                                                          page):
    before = revisions(mcp, api_key, page["page_id"])
    assert mcp.call_error("get_page", page_id=page["page_id"], api_key=other_user_key).startswith(
        "[AUTHORIZATION_ERROR] ")
    rest(galaxy.galaxy_url, f"/api/pages/{page['page_id']}/publish", api_key, method="PUT")
    assert mcp.call_ok("get_page", page_id=page["page_id"], api_key=other_user_key)["content_editor"]
    assert page["page_id"] in [p["id"] for p in mcp.call_ok("list_pages", show_published=True,
                                                              api_key=other_user_key)["pages"]]
    assert page["page_id"] not in [p["id"] for p in mcp.call_ok("list_pages", api_key=other_user_key)["pages"]]
    error = mcp.call_error("update_page", page_id=page["page_id"], content="# mine now\n", api_key=other_user_key)
    assert error.startswith("[AUTHORIZATION_ERROR] ")
    error = mcp.call_error("revert_page_revision", page_id=page["page_id"], revision_id=before[0]["id"],
                           api_key=other_user_key)
    assert error.startswith("[AUTHORIZATION_ERROR] ")
    assert revisions(mcp, api_key, page["page_id"]) == before


def listed_ids(mcp, api_key, **filters) -> list[str]:
    return [listed["id"] for listed in mcp.call_ok("list_pages", api_key=api_key, **filters)["pages"]]


def test_delete_and_restore_a_page_keeps_its_revisions(galaxy, mcp, api_key, page):
    page_id = page["page_id"]
    mcp.call_ok("update_page", page_id=page_id, title="Retitled", api_key=api_key)
    before = revisions(mcp, api_key, page_id)
    deleted = mcp.call_ok("delete_page", page_id=page_id, api_key=api_key)
    assert (deleted["page_id"], deleted["title"], deleted["deleted"]) == (page_id, "Retitled", True), deleted
    assert rest(galaxy.galaxy_url, f"/api/pages/{page_id}", api_key)["deleted"] is True
    assert page_id not in listed_ids(mcp, api_key) and page_id in listed_ids(mcp, api_key, deleted=True)
    assert mcp.call_ok("delete_page", page_id=page_id, api_key=api_key)["deleted"] is True  # idempotent
    restored = mcp.call_ok("restore_page", page_id=page_id, api_key=api_key)
    assert restored["deleted"] is False
    assert rest(galaxy.galaxy_url, f"/api/pages/{page_id}", api_key)["deleted"] is False
    assert page_id in listed_ids(mcp, api_key) and revisions(mcp, api_key, page_id) == before


def test_only_the_owner_deletes_or_restores_a_page_shared_or_published(galaxy, mcp, api_key, other_user_key, page):
    page_id, gx = page["page_id"], galaxy.galaxy_url
    other_id = rest(gx, "/api/users/current", other_user_key)["id"]
    rest(gx, f"/api/pages/{page_id}/share_with_users", api_key, {"user_ids": [other_id]}, method="PUT")
    rest(gx, f"/api/pages/{page_id}/publish", api_key, method="PUT")
    assert mcp.call_ok("get_page", page_id=page_id, api_key=other_user_key)["content_editor"]  # readable to them
    for tool in ("delete_page", "restore_page"):
        error = mcp.call_error(tool, page_id=page_id, api_key=other_user_key)
        assert error.startswith(f"[AUTHORIZATION_ERROR] Page {page_id} belongs to another user"), error
    shown = rest(gx, f"/api/pages/{page_id}", api_key)
    assert (shown["deleted"], shown["published"]) == (False, True), shown
    # Once the owner deleted it, restoring it is the owner's alone too.
    mcp.call_ok("delete_page", page_id=page_id, api_key=api_key)
    error = mcp.call_error("restore_page", page_id=page_id, api_key=other_user_key)
    assert error.startswith("[AUTHORIZATION_ERROR]"), error
    assert rest(gx, f"/api/pages/{page_id}", api_key)["deleted"] is True
    unknown = missing_id(galaxy)
    for tool in ("delete_page", "restore_page"):
        error = mcp.call_error(tool, page_id=unknown, api_key=api_key)
        assert error.startswith(f"[NOT_FOUND] No page with id {unknown}"), error
        assert mcp.call_error(tool, page_id="not-an-id!", api_key=api_key).startswith("[VALIDATION_ERROR] page_id")


def test_rest_page_api_gets_the_explanation_too(galaxy, api_key, notebook_history):
    content = "```galaxy\nhistory_dataset_as_table(history_dataset_id=abc123, title=Two words)\n```\n"
    with pytest.raises(urllib.error.HTTPError) as refused:
        rest(galaxy.galaxy_url, "/api/pages", api_key,
             {"history_id": notebook_history["history_id"], "content": content, "content_format": "markdown"})
    body = refused.value.read().decode()
    assert refused.value.code == 400
    assert "unquoted_value_with_spaces" in body and 'title=\\"Two words\\"' in body
