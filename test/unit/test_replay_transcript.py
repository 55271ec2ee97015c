"""The agent guide's transcript normalisation (test/replay_transcript.py): pure logic, no Galaxy."""

from types import SimpleNamespace

import pytest

from replay_transcript import (
    guide_blocks,
    Names,
    pick,
    Transcript,
    trim,
    update_guide,
)

SAME = "0123456789abcdef"  # Galaxy encodes history 5, dataset 5 and job 5 alike


@pytest.fixture
def names():
    names = Names()
    names.name("history", SAME, "history")
    names.name("dataset", SAME, "SA01.fasta")
    names.name("job", SAME, "upload SA01")
    return names


def test_one_encoded_id_is_named_by_the_kind_its_place_says(names):
    response = {
        "id": SAME, "model_class": "History", "history_id": SAME, "job_id": SAME,
        "jobs": [{"id": SAME}], "inputs": {"input": {"src": "hda", "id": SAME}},
        "elements": [{"identifier": "a", "element_type": "hda", "id": SAME},
                     {"element_identifier": "b", "element_type": "hda", "object": {"id": SAME}}],
    }
    assert names.value(response) == {
        "id": "<history>", "model_class": "History", "history_id": "<history>", "job_id": "<upload SA01>",
        "jobs": [{"id": "<upload SA01>"}], "inputs": {"input": {"src": "hda", "id": "<SA01.fasta>"}},
        "elements": [{"identifier": "a", "element_type": "hda", "id": "<SA01.fasta>"},
                     {"element_identifier": "b", "element_type": "hda", "object": {"id": "<SA01.fasta>"}}],
    }


def test_ids_in_text_are_named_by_their_argument_and_unknown_ids_by_kind(names):
    text = f"line 4: history_dataset_id={SAME}, history_dataset_collection_id=fedcba9876543210 at 2026-11-22T03:57:24.5"
    assert names.text(text) == (
        "line 4: history_dataset_id=<SA01.fasta>, history_dataset_collection_id=<collection> at <time>"
    )
    assert names.text(f"ambiguous {SAME}") == "ambiguous <id>"  # three kinds share it
    assert names.value({"job_id": "fedcba9876543210"}) == {"job_id": "<job>"}


def test_volatile_values_are_replaced():
    assert Names().value({"waited_seconds": 4.8, "create_time": "2026-11-22T03:57:24", "exit_code": 0}) == {
        "waited_seconds": "<seconds>", "create_time": "<time>", "exit_code": 0}


def test_pick_and_trim():
    response = {"a": 1, "b": {"c": 2, "d": 3}, "jobs": [{"id": 1, "x": 2}] * 10, "s": "x" * 700}
    picked = pick(response, {"b": ["c"], "jobs": ["id"], "s": True})
    assert picked["b"] == {"c": 2} and picked["jobs"][0] == {"id": 1} and "a" not in picked
    trimmed = trim(picked)
    assert trimmed["jobs"][-1] == "... 3 more" and len(trimmed["jobs"]) == 8
    assert trimmed["s"].endswith("... (100 more characters)")


def fake_client(responses):
    def call(tool, arguments):
        return SimpleNamespace(is_error=False, structured_content=responses[tool], content=[])

    return SimpleNamespace(call=call)


def test_render_groups_blocks_collapses_hidden_calls_and_refers_to_repeated_documents():
    page = "# Title\n\n```galaxy\ngenerate_time()\n```\n" + "Some text.\n" * 20
    t = Transcript(fake_client({"create_page": {"page_id": "1111111111111111"}, "peek_dataset_content": {"eof": True},
                                "get_page": {"content_editor": page}}), "KEY")
    t.names.name("page", "1111111111111111", "notebook")
    t.block = "read"
    t.ok("peek_dataset_content", dataset_id="2222222222222222", show=["eof"])
    t.ok("peek_dataset_content", dataset_id="2222222222222222", show=None)
    t.ok("peek_dataset_content", dataset_id="2222222222222222", show=None)
    t.block = "page"
    t.ok("create_page", content=page, show=True)
    t.ok("get_page", page_id="1111111111111111", show=True)
    blocks = t.render()
    assert blocks["read"] == (
        '````\npeek_dataset_content(dataset_id="<dataset>")\n-> {"eof": true}\n\n'
        "# ... 2 more peek_dataset_content calls like this\n````\n"
    )
    assert 'create_page(\n  content="""\n# Title' in blocks["page"]
    assert '-> {"content_editor": "<same text as the content of create_page above>"}' in blocks["page"]
    assert "KEY" not in "".join(blocks.values()) and len(t.calls) == 5


def test_update_guide_replaces_only_block_bodies_and_needs_markers():
    guide = "intro\n<!-- replay:a -->\nold\n<!-- /replay:a -->\nprose\n<!-- replay:b -->\n<!-- /replay:b -->\n"
    updated = update_guide(guide, {"a": "new a\n", "b": "new b\n"})
    assert updated == "intro\n<!-- replay:a -->\nnew a\n<!-- /replay:a -->\nprose\n<!-- replay:b -->\nnew b\n<!-- /replay:b -->\n"
    assert guide_blocks(updated) == {"a": "new a\n", "b": "new b\n"}
    with pytest.raises(ValueError, match="no markers for \\['c'\\]"):
        update_guide(guide, {"c": "x\n"})
