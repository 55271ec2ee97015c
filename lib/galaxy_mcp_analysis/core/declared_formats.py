"""A data or collection input's formats as its tool declares them, where Galaxy's typed model left them out.

Galaxy 26.1.0 and 26.1.1 build the typed model of a ``data`` or ``data_collection`` input without
its ``format`` list (their parameter factory does not pass it; 26.1.2's does), so the model says
the input takes any datatype: the schema showed ``dataset of type data`` for sort1's tabular input
and the preflight's datatype check had nothing to check. ``with_declared_formats`` puts back the
formats the tool's own XML declares (read by Galaxy's tool source, ``operations.declared_formats``).
It only fills an input the model leaves at its default, ``["data"]``, and only where the names lead
to one declaration (one name declared with different formats in sibling branches stays as Galaxy
modelled it), so on 26.1.2, where the model has them already, nothing changes.
"""

from collections.abc import (
    Iterable,
    Mapping,
)
from typing import Any

DATA_KINDS = ("gx_data", "gx_data_collection")
#: Parameters whose children hold further parameters, and the attribute holding them.
NESTING = {"gx_repeat": "parameters", "gx_section": "parameters"}
#: The model's default: the input takes any datatype.
ANY = ["data"]

Path = tuple[str, ...]


def one_declaration_per_path(declarations: Iterable[tuple[Path, list[str]]]) -> dict[Path, list[str]]:
    """Formats by the input's names from the top (branch values left out); a path declared twice with
    different formats (sibling branches) is left out: which one applies depends on the request."""
    found: dict[Path, list[str]] = {}
    ambiguous: set[Path] = set()
    for path, formats in declarations:
        if path in found and found[path] != formats:
            ambiguous.add(path)
        found.setdefault(path, formats)
    return {path: formats for path, formats in found.items() if path not in ambiguous}


def formats_left_out(parameters: Iterable) -> bool:
    """Whether some data or collection input takes any datatype by the model (declared so, or left out)."""
    for parameter in parameters:
        kind = parameter.parameter_type
        if kind in DATA_KINDS and list(parameter.extensions) == ANY:
            return True
        if kind == "gx_conditional" and any(formats_left_out(when.parameters) for when in parameter.whens):
            return True
        if kind in NESTING and formats_left_out(getattr(parameter, NESTING[kind])):
            return True
    return False


def with_declared_formats(parameters: list, declared: Mapping[Path, list[str]]) -> list:
    """``parameters`` with each data input the model left at ``["data"]`` given its declared formats;
    the same objects where nothing changes."""
    filled = [_filled(parameter, (), declared) for parameter in parameters]
    return parameters if all(new is old for new, old in zip(filled, parameters)) else filled


def _filled(parameter: Any, path: Path, declared: Mapping[Path, list[str]]) -> Any:
    here = path + (parameter.name,)
    kind = parameter.parameter_type
    if kind in DATA_KINDS:
        formats = declared.get(here)
        if formats and formats != ANY and list(parameter.extensions) == ANY:
            return parameter.model_copy(update={"extensions": list(formats)})
        return parameter
    if kind == "gx_conditional":
        whens = [_with_children(when, "parameters", here, declared) for when in parameter.whens]
        if all(new is old for new, old in zip(whens, parameter.whens)):
            return parameter
        return parameter.model_copy(update={"whens": whens})
    if kind in NESTING:
        return _with_children(parameter, NESTING[kind], here, declared)
    return parameter


def _with_children(holder: Any, attribute: str, path: Path, declared: Mapping[Path, list[str]]) -> Any:
    children = getattr(holder, attribute)
    filled = [_filled(child, path, declared) for child in children]
    if all(new is old for new, old in zip(filled, children)):
        return holder
    return holder.model_copy(update={attribute: filled})
