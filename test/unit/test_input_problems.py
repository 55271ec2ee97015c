"""The shared error shape of tool and workflow input checks."""

from galaxy_mcp_analysis.core.errors import ErrorCode
from galaxy_mcp_analysis.core.input_problems import (
    closest_names,
    InputProblem,
    MAX_REPORTED_PROBLEMS,
    NOT_AN_OPTION,
    problems_error,
    unknown_name_problem,
)


def test_closest_names_catch_misspellings_and_case():
    assert closest_names("colum", ["column", "order", "style"])[0] == "column"
    assert closest_names("Input1", ["input1", "input2"])[0] == "input1"
    assert closest_names("zzz", ["column", "order"]) == []


def test_an_unknown_name_offers_the_closest_valid_ones():
    problem = unknown_name_problem("inputs.stlye", "stlye", ["style", "order", "column"], "sort1")
    assert problem.rule == "unknown_parameter"
    assert "Did you mean 'style'" in problem.message
    assert problem.suggestion.startswith("Rename it to 'style'.")
    assert problem.as_dict()["valid_values"] == ["style", "order", "column"]


def test_one_error_names_every_problem_with_its_path():
    problems = [
        unknown_name_problem("inputs.colum", "colum", ["column"], "sort1"),
        InputProblem("inputs.order", NOT_AN_OPTION, "'UP' is not an option.", "Use 'ASC' or 'DESC'.", ("ASC", "DESC")),
    ]
    error = problems_error(problems, "run_tool sort1")
    assert error.code is ErrorCode.VALIDATION_ERROR
    assert "2 problems" in error.message
    assert "- inputs.colum:" in error.message and "- inputs.order:" in error.message
    assert error.message.endswith("Nothing was queued or created.")


def test_a_long_list_is_cut_and_says_how_many_more():
    problems = [InputProblem(f"inputs.p{i}", NOT_AN_OPTION, "bad", "fix") for i in range(MAX_REPORTED_PROBLEMS + 5)]
    message = problems_error(problems, "run_tool x").message
    assert message.count("\n- inputs.p") == MAX_REPORTED_PROBLEMS
    assert "... and 5 more." in message


def test_options_that_offer_nothing_for_this_request_say_so_instead_of_listing_none():
    from types import SimpleNamespace

    from galaxy_mcp_analysis.core.tool_input_problems import not_an_option

    species = SimpleNamespace(name="species", multiple=True)
    problem = not_an_option(species, "inputs.species", "hg17", [])
    assert problem.valid_values == () and "valid values: ." not in problem.message
    assert "'species'" in problem.message and "it has none for this request" in problem.message
    assert "get_dataset_details" in problem.suggestion
    listed = not_an_option(species, "inputs.species", "hg71", ["hg17", "mm10"])
    assert "valid values: 'hg17', 'mm10'" in listed.message and "Did you mean 'hg17'?" in listed.message
