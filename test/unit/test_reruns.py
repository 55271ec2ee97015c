"""Where a rerun's outputs go when they replace a failed job's (core.reruns)."""

from galaxy_mcp_analysis.core.reruns import (
    OutputPlace,
    Placement,
    placements,
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
