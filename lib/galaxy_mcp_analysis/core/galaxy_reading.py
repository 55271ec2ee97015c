"""Which values of a flat request Galaxy's own reading keeps, found by following each value through it.

Galaxy reads a flat request (``cond|param``, ``rep_0|param``) by walking the tool's inputs and taking
the keys that walk names: the selected branch of each conditional only, repeat blocks from 0 up to the
first one the request skips (and no more than the repeat's maximum). ``operations.galaxy_reading``
asks Galaxy to do that walk, without checking values, on a copy of the request whose every value is a
distinct object; this module makes those objects and finds them again in Galaxy's populated state, so
the nested request the typed model checks holds exactly what Galaxy read, and the rest is named.
Pure: no Galaxy import.
"""

import copy
from collections.abc import (
    Mapping,
    Sequence,
)
from typing import Any


class _SentText(str):
    """A text value as sent; a distinct object Galaxy's reading passes along unchanged."""


class _SentInteger(int):
    pass


class _SentNumber(float):
    pass


_NOTHING = object()


def traceable(flat: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``flat`` whose values are distinct objects equal to the sent ones (booleans and nulls, which
    cannot be told apart this way, stay as they are and are found by their place instead)."""
    return {key: _traceable(value) for key, value in flat.items()}


def _traceable(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return _SentText(value)
    if isinstance(value, int):
        return _SentInteger(value)
    if isinstance(value, float):
        return _SentNumber(value)
    return copy.deepcopy(value)


def _plain(value: Any) -> Any:
    if isinstance(value, _SentText):
        return str(value)
    if isinstance(value, _SentInteger):
        return int(value)
    if isinstance(value, _SentNumber):
        return float(value)
    return value


def kept_and_dropped(
    traced: Mapping[str, Any], populated: Any, path_of
) -> tuple[dict[str, Any], list[str]]:
    """``(nested request of what Galaxy read, keys it did not read)``.

    ``populated``: Galaxy's state after its reading of ``traced``; ``path_of(key)``: the steps (names and
    block numbers) of a flat key in a nested state (Galaxy's ``nested_key_to_path``)."""
    by_object = {id(value): key for key, value in traced.items() if not (isinstance(value, bool) or value is None)}
    read: set[str] = set()
    nested = _sent_only(populated, by_object, read)
    nested = nested if isinstance(nested, dict) else {}
    for key, value in traced.items():
        if key in by_object.values():
            continue
        steps = path_of(key)
        found = _at(populated, steps)
        if found is not _NOTHING and found == value and type(found) is type(value):
            _put(nested, steps, value)
            read.add(key)
    return nested, [key for key in traced if key not in read]


def _sent_only(state: Any, by_object: Mapping[int, str], read: set[str]) -> Any:
    """The part of a populated state that holds sent values (Galaxy's own book-keeping keys and the values
    it filled in itself left out); a repeat keeps its blocks up to the last one holding a sent value."""
    if id(state) in by_object:
        read.add(by_object[id(state)])
        return _plain(state)
    if isinstance(state, Mapping):
        kept = {}
        for key, value in state.items():
            if isinstance(key, str) and key.startswith("__"):
                continue
            inner = _sent_only(value, by_object, read)
            if inner is not _NOTHING:
                kept[key] = inner
        return kept or _NOTHING
    if isinstance(state, list):
        blocks = [_sent_only(block, by_object, read) for block in state]
        last = max((index for index, block in enumerate(blocks) if block is not _NOTHING), default=-1)
        return [{} if block is _NOTHING else block for block in blocks[: last + 1]] if last >= 0 else _NOTHING
    return _NOTHING


def _at(state: Any, steps: Sequence[str | int]) -> Any:
    for step in steps:
        if isinstance(step, int):
            if not isinstance(state, list) or step >= len(state):
                return _NOTHING
        elif not isinstance(state, Mapping) or step not in state:
            return _NOTHING
        state = state[step]
    return state


def _put(nested: dict[str, Any], steps: Sequence[str | int], value: Any) -> None:
    target: Any = nested
    for position, step in enumerate(steps):
        if position == len(steps) - 1:
            if isinstance(step, int):
                while len(target) <= step:
                    target.append({})
            target[step] = value
            return
        empty: Any = [] if isinstance(steps[position + 1], int) else {}
        if isinstance(step, int):
            while len(target) <= step:
                target.append({})
            target = target[step]
        else:
            target = target.setdefault(step, empty)
