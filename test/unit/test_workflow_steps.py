"""Labels for an extracted workflow's steps and outputs, and schemas showing saved values (pure)."""

from galaxy_mcp_analysis.core.workflow_steps import (
    output_labels,
    schema_with_saved_defaults,
    step_labels,
    terminal_outputs,
    ToolStepShape,
)


def test_steps_are_labelled_by_tool_name_and_what_they_read_when_a_tool_repeats():
    steps = [
        ToolStepShape(1, "Sort", ["out_file1"], sources=[0]),
        ToolStepShape(2, "Sort", ["out_file1"], sources=[1]),
        ToolStepShape(3, "Cut", ["out_file1"], sources=[2]),
    ]
    labels = step_labels(steps, {0: "samples"})
    assert labels == {1: "Sort on samples", 2: "Sort on Sort on samples", 3: "Cut"}


def test_labels_never_collide_with_labels_already_taken():
    steps = [ToolStepShape(1, "samples", ["out"]), ToolStepShape(2, "Sort", ["out"]), ToolStepShape(3, "", ["out"])]
    labels = step_labels(steps, {0: "samples", 2: "Sort"})
    assert labels == {1: "samples 2", 3: "step"}


def test_terminal_outputs_are_the_ones_no_step_reads_and_get_unique_labels():
    steps = [ToolStepShape(1, "Cut", ["out_file1"]), ToolStepShape(2, "Split", ["matched", "unmatched"])]
    outputs = terminal_outputs(steps, consumed={(1, "out_file1")})
    assert outputs == [(2, "matched"), (2, "unmatched")]
    assert output_labels(outputs, {2: "Split"}) == {(2, "matched"): "Split: matched", (2, "unmatched"): "Split: unmatched"}
    assert output_labels([(1, "out_file1")], {1: "Cut"}) == {(1, "out_file1"): "Cut"}


def test_saved_values_replace_defaults_along_the_saved_branch_only():
    schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "default": "^chr"},
            "input": {"type": "object", "properties": {"src": {}, "id": {}}},
            "columns": {"type": "array", "items": {"type": "integer"}},
            "queries": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "default": 10}}},
            "mode": {
                "type": "object",
                "oneOf": [
                    {"properties": {"kind": {"const": "a"}, "size": {"type": "integer", "default": 1}}},
                    {"properties": {"kind": {"const": "b"}, "size": {"type": "string", "default": "x"}}},
                ],
            },
        },
    }
    saved = {"pattern": "gene", "input": None, "columns": [2, 3], "queries": [{"x": "y"}], "opts": {"n": 2},
             "mode": {"kind": "b", "size": "big"}}
    shown = schema_with_saved_defaults(schema, saved)
    properties = shown["properties"]
    assert properties["pattern"]["default"] == "gene"
    assert "default" not in properties["input"]  # a connection, not a value
    assert properties["columns"]["default"] == [2, 3]
    assert "default" not in properties["queries"]  # repeats keep their shape
    assert properties["opts"]["properties"]["n"]["default"] == 2
    assert properties["mode"]["oneOf"][1]["properties"]["size"]["default"] == "big"
    assert properties["mode"]["oneOf"][0]["properties"]["size"]["default"] == 1
    assert schema["properties"]["pattern"]["default"] == "^chr"  # the tool's own schema is untouched
