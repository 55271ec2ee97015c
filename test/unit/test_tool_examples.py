"""A tool's own test cases as plain examples (pure)."""

from galaxy_mcp_analysis.core.tool_examples import example_from_test


def test_a_test_case_keeps_every_value_and_names_what_it_checks():
    example = example_from_test(
        2,
        "1.0",
        {"input": ["1.bed"], "cond|n": ["3"], "multi": ["a", "b"], "empty": [None]},
        [{"name": "out_file1", "value": "out.bed", "attributes": {"compare": "diff"}}, "not a dict"],
        ["split"],
        expect_failure=True,
    )
    assert example == {
        "index": 2,
        "tool_version": "1.0",
        "inputs": {"input": "1.bed", "cond|n": "3", "multi": ["a", "b"], "empty": None},
        "outputs": {"out_file1": {"file": "out.bed"}},
        "output_collections": ["split"],
        "expect_failure": True,
    }


def test_a_passing_test_without_collections_says_only_what_it_has():
    example = example_from_test(0, "2", {}, [])
    assert example == {"index": 0, "tool_version": "2", "inputs": {}, "outputs": {}}
