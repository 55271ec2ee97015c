"""Following each sent value through Galaxy's reading of a flat request (core.galaxy_reading), on a populated
state shaped as Galaxy's legacy reading makes it (its book-keeping keys, its own defaults beside sent values)."""

from galaxy_mcp_analysis.core.galaxy_reading import (
    kept_and_dropped,
    traceable,
)


def _path(key):  # Galaxy's nested_key_to_path, for the keys below
    steps = []
    for part in key.split("|"):
        name, _, index = part.rpartition("_")
        steps += [name, int(index)] if index.isdigit() and "|" in key else [part]
    return steps


def test_what_galaxy_read_is_kept_nested_and_the_rest_is_named():
    flat = {"runs_0|mode|kind": "b", "runs_0|mode|size": "800", "runs_0|mode|other": "x", "runs_2|mode|kind": "a",
            "flag": True, "colum": 2}
    traced = traceable(flat)
    assert traced == flat and all(traced[key] is not flat[key] for key in ("runs_0|mode|size",))
    # Galaxy made one block (block 1 was skipped, so block 2 is not read), populated branch b, filled a default.
    populated = {"runs": [{"__index__": 0, "mode": {"__current_case__": 1, "kind": traced["runs_0|mode|kind"],
                                                    "size": traced["runs_0|mode|size"], "extra": "7"}}],
                 "flag": True, "threshold": 0.5}
    nested, dropped = kept_and_dropped(traced, populated, _path)
    assert nested == {"runs": [{"mode": {"kind": "b", "size": "800"}}], "flag": True}
    assert type(nested["runs"][0]["mode"]["size"]) is str
    assert dropped == ["runs_0|mode|other", "runs_2|mode|kind", "colum"]


def test_a_boolean_is_kept_by_its_place_and_a_default_equal_to_it_is_not_taken_for_it():
    traced = traceable({"opts|strict": False, "other|strict": False})
    populated = {"opts": {"strict": False}, "other": {"__current_case__": 0, "mode": "a"}}
    nested, dropped = kept_and_dropped(traced, populated, _path)
    assert nested == {"opts": {"strict": False}} and dropped == ["other|strict"]
