"""Where a rerun's outputs go when they replace a failed job's, and what an upload recorded (core.reruns)."""

import json

from galaxy_mcp_analysis.core.reruns import (
    OutputPlace,
    Placement,
    placements,
    upload_sources,
)


def test_each_new_output_takes_the_place_of_the_failed_output_of_its_name():
    failed = [OutputPlace("out_file1", 10, 4, "genes cut", True), OutputPlace("log", 11, 5, "log", False)]
    new = [OutputPlace("log", 21, 9, "Cut on data 1 (log)", False), OutputPlace("out_file1", 20, 8, "Cut", False)]
    paired, unpaired = placements(failed, new)
    assert paired == [Placement(21, failed[1]), Placement(20, failed[0])]
    assert unpaired == []


def test_a_new_output_without_a_failed_counterpart_is_named_and_left_where_it_is():
    failed = [OutputPlace("out_file1", 10, 4, "genes cut", True)]
    new = [OutputPlace("out_file1", 20, 8, "Cut", False), OutputPlace("summary", 22, 9, "Summary", False)]
    paired, unpaired = placements(failed, new)
    assert paired == [Placement(20, failed[0])]
    assert unpaired == ["summary"]


# ---- what an upload recorded (a repair repeats it; Galaxy does not rerun uploads) ----


def test_an_uploads_recorded_sources_are_its_pasted_texts_and_urls_only():
    request = {"targets": [{"destination": {"type": "hdas"}, "elements": [
        {"src": "pasted", "paste_content": "a\tb\n", "ext": "tabular", "name": "t"},
        {"src": "url", "url": "https://example.org/x.fa", "ext": "fasta"},
        {"src": "path", "path": "/srv/secret/file"},
        {"src": "files", "ext": "txt"},
    ]}]}
    assert upload_sources(request) == [
        {"src": "pasted", "paste_content": "a\tb\n", "ext": "tabular"},
        {"src": "url", "url": "https://example.org/x.fa", "ext": "fasta"},
    ]
    assert upload_sources(json.dumps(request)) == upload_sources(request)  # Galaxy may record it as text


def test_an_unreadable_request_has_no_sources():
    assert upload_sources(None) == upload_sources("not json") == upload_sources({"targets": "x"}) == []
    nested = {"targets": [{"elements": [{"elements": [{"src": "pasted", "paste_content": "z"}]}]}]}
    assert upload_sources(nested) == [{"src": "pasted", "paste_content": "z"}]
