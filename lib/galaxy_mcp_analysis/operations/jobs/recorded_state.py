"""A job's recorded parameter values (Galaxy's objects, as ``Tool.get_param_values`` returns them)
turned back into a run_tool-shaped request, with a labelled list of every value: what
``get_job_parameters`` shows, what ``rerun_job`` lays its changes over, and (subclassed in
``workflow_steps``) what a saved workflow step will use.

This walks one recorded state, as Galaxy's ``visit_input_values`` walks a state, but not with it:
Galaxy's visitor fills the state it walks in place (a missing group, a conditional's default test
value, each branch chosen again from its test value), and a job's record must be shown as it was
recorded: the branch it ran (``__current_case__``), and a note, not a default, where the tool has
changed since. Flat names are ``core.flat_names``'; the tool's declared conditionals come from
``operations.declared_inputs``."""

from typing import Any

from galaxy import model
from galaxy.model import (
    HistoryDatasetAssociation,
    HistoryDatasetCollectionAssociation,
)

from galaxy_mcp_analysis.core.flat_names import (
    flat_name,
    repeat_block,
)
from galaxy_mcp_analysis.operations.declared_inputs import declared_inputs


def conditional_selectors(inputs: dict) -> dict[tuple[str, ...], str]:
    """Path (parameter names, repeat indices left out) -> test parameter name, of every conditional of a tool."""
    return {
        declared.path: declared.parameter.test_param.name
        for declared in declared_inputs(inputs)
        if declared.kind == "conditional"
    }


class RecordedState:
    """A job's parameter values (Galaxy's objects) as run_tool-shaped inputs, plus a labelled list of each."""

    def __init__(self, app, encode_id):
        self.app = app
        self.encode_id = encode_id
        self.inputs: dict[str, Any] = {}
        self.parameters: list[dict[str, Any]] = []
        self.datasets: list[dict[str, Any]] = []
        self.notes: list[str] = []

    def walk(self, inputs: dict, values: dict, prefix: str = "") -> dict[str, Any]:
        """The run_tool-shaped state of ``values`` of ``inputs``, which sit under the flat name ``prefix``."""
        state: dict[str, Any] = {}
        for parameter in inputs.values():
            name = parameter.name
            path = flat_name(prefix, name)
            if name not in values:
                self.notes.append(f"{path}: added to the tool after this job ran; Galaxy's default applies.")
                continue
            value = values[name]
            if parameter.type == "repeat":
                state[name] = [
                    self.walk(parameter.inputs, block, flat_name(prefix, repeat_block(name, index)))
                    for index, block in enumerate(value)
                ]
            elif parameter.type == "section":
                state[name] = self.walk(parameter.inputs, value, path)
            elif parameter.type == "conditional":
                state[name] = self._conditional(parameter, value, path)
            elif parameter.type in ("data", "data_collection"):
                state[name] = self._data(parameter, value, path)
            elif parameter.type == "upload_dataset":
                continue  # uploads are not rerun
            else:
                state[name] = self._plain(parameter, value, path)
        return state

    def _conditional(self, parameter, value: dict, path: str) -> dict[str, Any]:
        test = parameter.test_param
        case = value.get("__current_case__")
        if case is None or not 0 <= case < len(parameter.cases):
            self.notes.append(f"{path}: the recorded branch no longer exists; Galaxy's default applies.")
            return {}
        branch = {test.name: self._plain(test, value.get(test.name), flat_name(path, test.name))}
        branch.update(self.walk(parameter.cases[case].inputs, value, path))
        return branch

    def _data(self, parameter, value: Any, path: str) -> Any:
        references, shown = [], []
        for item in value if isinstance(value, list) else [value]:
            reference = self._reference(item)
            if reference is None:
                continue
            references.append(reference)
            name = getattr(item, "name", None) or getattr(item, "element_identifier", None)
            entry = {"path": path, "name": name}
            entry["dataset_id" if reference["src"] in ("hda", "ldda") else "collection_id"] = reference["id"]
            entry["src"] = reference["src"]
            self.datasets.append(entry)
            hid = getattr(item, "hid", None)
            shown.append(f"{hid}: {name}" if hid is not None else name)
        label = parameter.label or parameter.name
        self.parameters.append({"path": path, "label": label, "value": shown or None})
        if getattr(parameter, "multiple", False):
            return references or None
        return references[0] if references else None

    def _reference(self, item: Any) -> dict[str, str] | None:
        if isinstance(item, HistoryDatasetAssociation):
            return {"src": "hda", "id": self.encode_id(item.id)}
        if isinstance(item, HistoryDatasetCollectionAssociation):
            return {"src": "hdca", "id": self.encode_id(item.id)}
        if isinstance(item, model.DatasetCollectionElement):
            return {"src": "dce", "id": self.encode_id(item.id)}
        if isinstance(item, model.LibraryDatasetDatasetAssociation):
            return {"src": "ldda", "id": self.encode_id(item.id)}
        return None

    def _plain(self, parameter, value: Any, path: str) -> Any:
        basic = parameter.value_to_basic(value, self.app, use_security=True)
        request = _request_typed(parameter, basic)
        if parameter.type != "hidden":
            self.parameters.append(
                {
                    "path": path,
                    "label": parameter.label or parameter.name,
                    "value": parameter.value_to_display_text(value),
                }
            )
        return request


def _request_typed(parameter, basic: Any) -> Any:
    """A basic (JSON) parameter value in the type Galaxy's tool request model gives that parameter."""
    kind = parameter.type
    if basic is None or isinstance(basic, dict):
        return basic
    try:
        if kind == "integer":
            return int(basic) if basic != "" else None
        if kind == "float":
            return float(basic) if basic != "" else None
        if kind == "boolean":
            return basic if isinstance(basic, bool) else str(basic).lower() == "true"
        if kind == "data_column":
            columns = basic if isinstance(basic, list) else [basic]
            numbers = [int(str(column).lstrip("c")) for column in columns if str(column) != ""]
            if getattr(parameter, "multiple", False):
                return numbers or None
            return numbers[0] if numbers else None
    except (TypeError, ValueError):
        return basic
    return basic
