"""Issue 51 item 3: a pasted table keeps its header as Galaxy's column metadata (what a page's table reads)."""

import pytest

from galaxy_mcp_analysis.testing import rest

TABLE = "gene\tcount\nmecA\t3\nblaZ\t5\n"


@pytest.fixture(scope="module")
def tables_history(mcp, api_key):
    return mcp.call_ok("create_history", name="tables", api_key=api_key)["id"]


def metadata(galaxy, api_key, dataset_id) -> dict:
    """What Galaxy's page table (history_dataset_as_table) reads: column names, columns and comment lines to skip."""
    shown = rest(galaxy.galaxy_url, f"/api/datasets/{dataset_id}", api_key)
    return {key: shown.get(f"metadata_{key}") for key in ("column_names", "columns", "comment_lines", "data_lines")}


def history_size(galaxy, api_key, history_id) -> int:
    return len(rest(galaxy.galaxy_url, f"/api/histories/{history_id}/contents", api_key))


def test_a_header_line_names_the_columns_and_is_no_data_row(galaxy, mcp, api_key, tables_history):
    made = mcp.call_ok("create_dataset_from_text", history_id=tables_history, content=TABLE, file_type="tabular",
                       header=True, name="counts", api_key=api_key)
    assert (made["column_names_set"], made["column_names"], made["state"]) == (True, ["gene", "count"], "ok"), made
    assert metadata(galaxy, api_key, made["dataset_id"]) == {
        "column_names": ["gene", "count"], "columns": 2, "comment_lines": 1, "data_lines": 2}
    # The bytes are still exactly the text given (the header line stays in the file).
    read = mcp.call_ok("peek_dataset_content", dataset_id=made["dataset_id"], api_key=api_key)
    assert read["content"] == TABLE
    # A page embeds it as a table; Galaxy's page checks accept it.
    content = f"```galaxy\nhistory_dataset_as_table(history_dataset_id={made['dataset_id']})\n```\n"
    assert mcp.call_ok("validate_page_content", content=content, api_key=api_key)["valid"] is True
    page = mcp.call_ok("create_page", history_id=tables_history, content=content, api_key=api_key)
    rendered = mcp.call_ok("get_page", page_id=page["page_id"], include_rendered=True, api_key=api_key)
    assert "mecA" in rendered["rendered_content"]
    # Galaxy's export shows no header cells (get_page's include_rendered says the header shows only on the web
    # page, where test_web_ui.py finds it): the header line is an ordinary row there.
    assert "<th" not in rendered["rendered_content"] and "<td>gene</td>" in rendered["rendered_content"], rendered


def test_column_names_and_a_hash_header(galaxy, mcp, api_key, tables_history):
    named = mcp.call_ok("create_dataset_from_text", history_id=tables_history, content="mecA\t3\nblaZ\t5\n",
                        file_type="tabular", column_names=["gene", "count"], api_key=api_key)
    assert metadata(galaxy, api_key, named["dataset_id"]) == {
        "column_names": ["gene", "count"], "columns": 2, "comment_lines": 0, "data_lines": 2}
    hashed = mcp.call_ok("create_dataset_from_text", history_id=tables_history, content="#gene\tcount\n" + TABLE[11:],
                         file_type="tabular", header=True, api_key=api_key)
    assert metadata(galaxy, api_key, hashed["dataset_id"]) == {
        "column_names": ["gene", "count"], "columns": 2, "comment_lines": 1, "data_lines": 2}


def test_pasted_collection_elements_keep_their_headers(galaxy, mcp, api_key, tables_history):
    made = mcp.call_ok("create_collection", history_id=tables_history, collection_type="list", api_key=api_key,
                       element_identifiers=[
                           {"name": "A", "src": "pasted", "content": TABLE, "file_type": "tabular", "header": True},
                           {"name": "B", "src": "pasted", "content": "x\t1\n", "file_type": "tabular",
                            "column_names": ["gene", "count"]},
                           {"name": "C", "src": "pasted", "content": "x\t1\n", "file_type": "tabular"}])
    first, second, third = made["pasted_dataset_ids"]
    assert set(made["column_names"]) == {first, second}
    assert metadata(galaxy, api_key, first)["column_names"] == ["gene", "count"]
    assert metadata(galaxy, api_key, first)["comment_lines"] == 1
    assert metadata(galaxy, api_key, second)["column_names"] == ["gene", "count"]
    assert not metadata(galaxy, api_key, third)["column_names"]


@pytest.mark.parametrize("arguments, says", [
    ({"content": "\nmecA\t3\n", "header": True}, "first line is empty"),
    ({"content": TABLE, "column_names": ["gene", ""]}, "column_names[1]"),
    ({"content": ">s1\nACGT\n", "file_type": "fasta", "column_names": ["a"]}, "not a tabular datatype"),
])
def test_bad_column_names_are_refused_and_create_nothing(galaxy, mcp, api_key, tables_history, arguments, says):
    before = history_size(galaxy, api_key, tables_history)
    message = mcp.call_error("create_dataset_from_text", history_id=tables_history, api_key=api_key,
                             **{"file_type": "tabular", **arguments})
    assert message.startswith("[VALIDATION_ERROR]") and says in message, message
    assert history_size(galaxy, api_key, tables_history) == before
