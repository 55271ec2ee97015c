"""The text block of large results (mcp/result_text.py): the payload once, raw, after a summary line."""

import json

from galaxy_mcp_analysis.mcp.result_text import (
    RawText,
    RecordTexts,
    shaped_result,
    Table,
)

CHUNK = "chr1\t10\t20\tpeak_1\nchr2\t30\t40\tpéak_2 😀\n"
PEEK = {
    "dataset_id": "abc",
    "content": CHUNK,
    "offset": 0,
    "length": len(CHUNK.encode()),
    "next_offset": None,
    "eof": True,
    "encoding": "utf-8",
    "peek": "<table>x</table>",
    "capped": False,
}


def test_raw_text_is_a_summary_line_then_the_chunk_byte_for_byte():
    text = RawText("content", first=("offset", "length", "next_offset", "eof", "encoding"))(PEEK)
    summary, chunk = text.split("\n", 1)
    assert chunk.encode() == CHUNK.encode()
    fields = json.loads(summary)
    assert list(fields)[:5] == ["offset", "length", "next_offset", "eof", "encoding"]
    assert fields["length"] == len(CHUNK.encode()) and fields["eof"] is True and fields["next_offset"] is None
    assert "content" not in fields and fields["capped"] is False  # the payload is not repeated


def test_a_field_too_long_for_the_summary_follows_as_a_section_and_the_payload_is_labelled():
    # get_job_errors of a failed upload: Galaxy's long message made `outputs`, `failed_outputs` and
    # `repair` too long for the summary, and a client showing only text never saw the failure or its repair.
    failed = [{"name": "output0", "dataset_id": "d1", "state": "error", "message": "samtools: " + "x" * 300}]
    result = {"job_id": "j1", "state": "ok", "failed_outputs": failed, "repair": "create_dataset_from_text(" + "y" * 250,
              "tool_stderr": "warn\n"}
    text = RawText("tool_stderr")(result)
    lines = text.split("\n")
    assert json.loads(lines[0]) == {"job_id": "j1", "state": "ok"}
    assert "--- tool_stderr (5 characters) ---\nwarn\n" in text
    assert f"--- failed_outputs ---\n{json.dumps(failed, separators=(',', ':'))}" in text
    assert f"--- repair ---\n{result['repair']}" in text
    for record_text in (RecordTexts("elements", "content")({"elements": [dict(failed[0], content="a\tb\n")]}),):
        header = record_text.split("\n")[2]
        assert json.loads(header.removeprefix("--- "))["message"] == failed[0]["message"]


def test_several_raw_fields_follow_each_other_under_a_labelled_line():
    logs = {"job_id": "j1", "state": "error", "tool_stderr": "Traceback\nboom\n", "tool_stdout": "", "exit_code": 1}
    text = RawText("tool_stderr", "tool_stdout")(logs)
    lines = text.split("\n")
    assert json.loads(lines[0]) == {"job_id": "j1", "state": "error", "exit_code": 1}
    assert lines[1] == "--- tool_stderr (15 characters) ---"
    assert text.endswith("Traceback\nboom\n") and "tool_stdout" not in text  # empty logs are left out


def test_a_table_writes_each_key_once_and_keeps_every_value():
    records = [{"id": "a", "name": "x\ty", "hid": 1, "tags": ["t"], "deleted": False},
               {"id": "b", "name": "plain", "hid": 2, "extra": None}]
    structured = {"collection": {"id": "c", "elements": records, "element_count": 2}, "collection_id": "c"}
    lines = Table("collection", "elements")(structured).split("\n")
    assert json.loads(lines[0]) == {"collection_id": "c", "id": "c", "element_count": 2}
    assert lines[1] == "collection.elements: 2 rows"
    assert lines[2].split("\t") == ["id", "name", "hid", "tags", "deleted", "extra"]
    assert lines[3].split("\t") == ["a", '"x\\ty"', "1", '["t"]', "false", ""]  # a tab in a value is quoted
    assert lines[4].split("\t") == ["b", "plain", "2", "", "", "null"]


def test_nested_objects_become_dotted_columns():
    structured = {"elements": [{"element_identifier": "a", "object": {"id": "d1", "state": "ok"}}]}
    lines = Table("elements")(structured).split("\n")
    assert lines[2].split("\t") == ["element_identifier", "object.id", "object.state"]
    assert lines[3].split("\t") == ["a", "d1", "ok"]


def test_a_table_with_columns_keeps_those_in_order_and_names_the_rest():
    structured = {"elements": [{"element_identifier": "a", "object": {"peek": "<table>x</table>", "id": "d1",
                                                                      "state": "ok", "url": "/api/x"}}]}
    table = Table("elements", columns=("object.state", "element_identifier", "object.id", "object.size"))
    lines = table(structured).split("\n")
    assert lines[2].split("\t") == ["object.state", "element_identifier", "object.id"]
    assert lines[3].split("\t") == ["ok", "a", "d1"]
    assert lines[4:] == ["--- columns left out (structuredContent has them) ---", "object.peek, object.url"]
    assert "<table>" not in table(structured)


def test_a_result_without_the_expected_list_falls_back_to_compact_json():
    assert json.loads(Table("contents")({"contents": "not a list"})) == {"contents": "not a list"}


def test_a_shaped_result_keeps_structured_content_whole():
    result = shaped_result(dict(PEEK), RawText("content"))
    assert result.structured_content == PEEK
    assert [block.type for block in result.content] == ["text"]


def test_a_once_column_writes_each_distinct_object_once_after_the_table():
    schema = {"type": "object", "properties": {"column": {"type": "integer", "title": "on\tcolumn"}}}
    other = {"type": "object", "properties": {}}
    structured = {"workflow_id": "w", "parameters": [
        {"step_index": 1, "tool_id": "sort1", "schema": schema},
        {"step_index": 2, "tool_id": "cat1", "schema": other},
        {"step_index": 3, "tool_id": "sort1", "schema": dict(schema)},
        {"step_index": 4, "tool_id": "unmodelled", "schema": None},
    ]}
    text = Table("parameters", once=("schema",))(structured)
    lines = text.split("\n")
    assert json.loads(lines[0]) == {"workflow_id": "w"}
    assert lines[2].split("\t") == ["step_index", "tool_id", "schema"]
    assert [line.split("\t")[2] for line in lines[3:7]] == ["schema 1", "schema 2", "schema 1", "null"]
    sections = text.split("\n--- ")[1:]
    assert [json.loads(section.split(" ---\n", 1)[1]) for section in sections] == [schema, other]
    assert text.count('"on\\tcolumn"') == 1


def test_a_field_too_long_for_the_summary_follows_the_table():
    steps = [{"step_index": i, "label": f"step {i}" * 5} for i in range(20)]
    structured = {"workflow_id": "w", "parameters": [{"step_index": 1}], "steps": steps}
    text = Table("parameters")(structured)
    assert "steps" not in json.loads(text.split("\n")[0])
    assert text.endswith("\n--- steps ---\n" + json.dumps(steps, separators=(",", ":")))
    nested = {"collection": {"id": "c", "elements": [{"id": "e"}], "notes": "n" * 300}}
    assert Table("collection", "elements")(nested).endswith("\n--- collection.notes ---\n" + json.dumps("n" * 300))


def test_record_texts_write_each_records_text_raw_under_its_small_fields():
    result = {"collection_id": "c", "element_count": 2, "next_element_offset": None, "elements": [
        {"element_identifier": "a", "dataset_id": "d1", "content": CHUNK, "eof": True},
        {"element_identifier": "b", "dataset_id": "d2", "error": "[NOT_READY] still running"},
    ]}
    text = RecordTexts("elements", "content")(result)
    summary, count, first, *rest = text.split("\n")
    assert json.loads(summary) == {"collection_id": "c", "element_count": 2, "next_element_offset": None}
    assert count.startswith("elements: 2 (each a '---' line of its fields as JSON, then its content as raw text")
    assert json.loads(first.removeprefix("--- ")) == {"element_identifier": "a", "dataset_id": "d1", "eof": True}
    assert "\n".join(rest).startswith(CHUNK)  # the chunk byte for byte, once
    assert text.count(CHUNK) == 1 and json.loads(rest[-1].removeprefix("--- "))["error"] == "[NOT_READY] still running"
    assert RecordTexts("elements", "content")({"elements": "x"}) == '{"elements":"x"}'


def test_an_inline_column_keeps_each_records_object_in_one_cell():
    jobs = {"jobs": [{"job_id": "a", "parameters": {"columnList": "c1", "delimiter": "T"}},
                     {"job_id": "b", "parameters": {"pattern": "(gene", "lines": [1, 2]}, "datasets": {}}]}
    text = Table("jobs", inline=("parameters", "datasets"))(jobs)
    lines = text.splitlines()
    assert lines[2] == "job_id\tparameters\tdatasets"  # no parameters.<name> column per key
    assert lines[3:] == ["a\tcolumnList=c1; delimiter=T\t", "b\tpattern=(gene; lines=[1,2]\t"]
