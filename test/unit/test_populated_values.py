"""core.populated_values: Galaxy's populated value against the value sent (issue 41, item 4).

What Galaxy itself reads the same passes; a coercion to another meaning, a default in the value's place,
a dropped value or Galaxy's own error keeps the typed model's refusal."""

import pytest

from galaxy_mcp_analysis.core.input_problems import InputProblem
from galaxy_mcp_analysis.core.populated_values import (
    flat_key,
    path_steps,
    same_meaning,
    value_at,
    verdict,
)


@pytest.mark.parametrize(("path", "steps"), [
    ("inputs.a", ["a"]),
    ("inputs.cond.param", ["cond", "param"]),
    ("inputs.rep[0].x", ["rep", 0, "x"]),
    ("inputs.rep[10].inner[2].y", ["rep", 10, "inner", 2, "y"]),
    ("inputs", None),
    ("inputs.cond|param", None),
    ("steps.sort.column", None),
    ("inputs..a", None),
])
def test_paths_become_steps(path, steps):
    assert path_steps(path) == steps


def test_flat_keys_are_the_ones_galaxy_files_errors_under():
    assert flat_key(["cond", "param"]) == "cond|param"
    assert flat_key(["rep", 0, "x"]) == "rep_0|x"
    assert flat_key(["a", "rep", 3, "cond", "b"]) == "a|rep_3|cond|b"


def test_value_at_walks_dicts_and_lists():
    state = {"rep": [{"__index__": 0, "x": 5}], "cond": {"t": "a", "__current_case__": 0}}
    assert value_at(state, ["rep", 0, "x"]) == (True, 5)
    assert value_at(state, ["rep", 1, "x"]) == (False, None)
    assert value_at(state, ["cond", "missing"]) == (False, None)


@pytest.mark.parametrize(("sent", "populated"), [
    ("2", 2), (2, 2), (" 2 ", 2), ("2.0", 2.0), (1.5, 1.5), ("1e3", 1000.0),
    ("true", True), ("Yes", True), ("on", True), ("1", True), (True, True), (1, True),
    ("false", False), ("no", False), ("off", False), ("0", False), (False, False),
    (None, None), ("", None), ("None", None), ([], None),
    ("abc", "abc"), (5, "5"),
    ("a,b", ["a", "b"]), (["b", "a"], ["a", "b"]), ("x", ["x"]), ([1, 2], ["1", "2"]),
])
def test_what_galaxy_reads_the_same_is_the_same(sent, populated):
    assert same_meaning(sent, populated)


@pytest.mark.parametrize(("sent", "populated"), [
    (2.5, 2),                 # an integer parameter's int(2.5): another number
    ("banana", False),        # anything not "true" is false to Galaxy's boolean
    ("--flag", False),        # a boolean's truevalue, read by Galaxy as false
    (None, False),            # a null read as false
    ("nan", float("nan")),
    ("abc", None),            # replaced by no value
    (True, "True"),           # a boolean into a text parameter
    ("", "default text"),     # a default in the value's place
    ("a,b", ["a"]),           # part of a multiple value dropped
    ({"src": "hda"}, "x"),
    ("x", object()),          # an item: never compared here
])
def test_a_different_meaning_is_not_the_same(sent, populated):
    assert not same_meaning(sent, populated)


def _problem(path, rule="wrong_type"):
    return InputProblem(path, rule, "refused by the model", "fix")


def test_verdict_lets_through_only_what_every_job_runs_as_sent():
    sent = {"cond": {"t": "a", "size": "12"}}
    populated = {"cond": {"t": "a", "size": 12, "__current_case__": 0}}
    takes_plain = lambda steps: True  # noqa: E731
    entry = verdict(_problem("inputs.cond.size"), sent, [(populated, {})], takes_plain)
    assert entry == {"path": "inputs.cond.size", "model_rule": "wrong_type", "sent": "12", "galaxy_reads": 12}
    # Galaxy's own error on that parameter, in any job of a batch: the refusal stands.
    assert verdict(_problem("inputs.cond.size"), sent, [(populated, {}), (populated, {"cond|size": "bad"})],
                   takes_plain) is None
    # Dropped by Galaxy (another branch was populated): the refusal stands.
    assert verdict(_problem("inputs.cond.size"), sent, [({"cond": {"t": "b"}}, {})], takes_plain) is None
    # An item (dataset input) or a path Galaxy has no plain parameter at: never overruled.
    assert verdict(_problem("inputs.cond.size"), sent, [(populated, {})], lambda steps: False) is None
    # Rules Galaxy's handling never overrules: unknown names, other branches, datatypes, missing values.
    for rule in ("unknown_parameter", "unselected_branch", "datatype_not_accepted", "missing_required"):
        assert verdict(_problem("inputs.cond.size", rule), sent, [(populated, {})], takes_plain) is None
    # Galaxy refused the whole request (no populated job): nothing is overruled.
    assert verdict(_problem("inputs.cond.size"), sent, [], takes_plain) is None


def test_as_read_puts_galaxys_reading_in_place_and_leaves_the_request_alone():
    from galaxy_mcp_analysis.core.populated_values import as_read

    sent = {"queries": [{"how": {"window": {"strict": "off", "size": 4}}}], "flag": "yes"}
    read = as_read(sent, [{"path": "inputs.queries[0].how.window.strict", "galaxy_reads": False},
                          {"path": "inputs.flag", "galaxy_reads": True}])
    assert read == {"queries": [{"how": {"window": {"strict": False, "size": 4}}}], "flag": True}
    assert sent["queries"][0]["how"]["window"]["strict"] == "off" and sent["flag"] == "yes"
