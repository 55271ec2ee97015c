"""Where a rerun's outputs go when they replace a failed job's, and what an upload recorded (core.reruns)."""

import json

from galaxy_mcp_analysis.core.reruns import (
    OutputPlace,
    Placement,
    placements,
    upload_remedy,
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


def test_pasted_text_declared_as_a_binary_type_has_no_repair_only_the_reason():
    sources = [{"src": "pasted", "paste_content": "not a bam file\n", "ext": "bam"}]
    remedy = upload_remedy(sources, "h1", binary_types={"bam"})
    assert list(remedy) == ["no_repair"]
    assert "15 characters of pasted text, 'not a bam file\\n', declared as 'bam'" in remedy["no_repair"]
    assert "create_dataset_from_text" not in remedy["no_repair"]  # nothing poses as the fix


def test_pasted_text_declared_binary_is_offered_as_the_type_it_fits():
    sources = [{"src": "pasted", "paste_content": "gene\tn\nmecA\t3\n", "ext": "bam"}]
    remedy = upload_remedy(sources, "h1", binary_types={"bam"}, fitting_type="tabular")
    assert set(remedy) == {"no_repair", "recreate"}  # the BAM meant is still nobody's to make here
    assert remedy["recreate"].startswith(
        "create_dataset_from_text(history_id='h1', content='gene\\tn\\nmecA\\t3\\n', file_type='tabular'): ")
    assert "no bam" in remedy["recreate"] and "recreate" in remedy["no_repair"]
    assert "create_dataset_from_text" not in remedy["no_repair"]


def test_an_upload_of_a_text_type_or_a_url_is_repaired_by_uploading_it_again():
    pasted = upload_remedy([{"src": "pasted", "paste_content": "a\tb\n", "ext": "fasta"}], "h1", {"bam"})
    assert pasted["repair"].startswith("create_dataset_from_text(history_id='h1', content='a\\tb\\n', file_type=...)")
    url = upload_remedy([{"src": "url", "url": "https://example.org/r.bam", "ext": "bam"}], "h1", {"bam"})
    assert url["repair"].startswith("upload_file_from_url(history_id='h1', url='https://example.org/r.bam'")
    long = upload_remedy([{"src": "pasted", "paste_content": "x" * 3000, "ext": "txt"}], "h1", set())
    assert "content=...," in long["repair"]  # too long to repeat: the agent supplies it
