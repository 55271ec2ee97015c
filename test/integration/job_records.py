"""A job's record in Galaxy read back against the request that created it (the tool inputs sweep).

``disagreements(sent, recorded(job), job["inputs"], decode)`` compares, for each value of a nested request:

- a scalar (text, number, boolean, select option, column): equal to the text Galaxy recorded, or as a number
  (``0.0`` recorded where ``0`` was sent); ``None`` sent may be recorded as empty;
- a list of scalars (a multiple select or column): equal item by item as text;
- a section or conditional: each name sent is recorded (a top-level dataset input excepted: Galaxy keeps those
  in the job's inputs, not its parameters); a repeat: as many blocks as sent, each compared;
- a dataset ``{"src": "hda", "id"}``: the job's input of that parameter's flat name (``a|b``, ``r_0|b``) is that
  dataset; a list of datasets (a multiple data input): the job's inputs ``name1`` .. ``nameN`` are the sent
  datasets in order and there is no ``nameN+1`` (Galaxy's naming of a multiple input's datasets);
- where Galaxy's parameters keep a data reference (a collection input, a dataset input inside a conditional,
  section or repeat): ``{"values": [{"src", "id"}]}`` holds exactly the sent items, in order, by database id.

Encoded ids are turned into Galaxy's database ids by ``decode``, the test Galaxy's own id encoding.
Not compared: what Galaxy adds that was not sent (defaults, ``chromInfo``, ``dbkey``), and a mapped-over run
(the sweep's callers require one job per compared run).
"""

import json


def recorded(job: dict) -> dict:
    """A job's parameters as Galaxy recorded them: nested, bookkeeping keys dropped."""
    def clean(value):
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if not k.startswith("__")}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    params = {}
    for key, value in job["params"].items():
        try:
            params[key] = clean(json.loads(value))
        except (TypeError, ValueError):
            params[key] = value
    return params


def disagreements(sent, stored, job_inputs: dict, decode, path="inputs", name="") -> list[str]:
    """Every sent value Galaxy did not record as sent; ``name`` is the value's flat name (Galaxy's input names)."""
    if is_data(sent):
        return _reference_problems([sent], stored, job_inputs, decode, path, name, multiple=False)
    if _is_data_list(sent):
        return _reference_problems(sent, stored, job_inputs, decode, path, name, multiple=True)
    found = []
    if isinstance(sent, dict):
        for key, value in sent.items():
            inner = f"{name}|{key}" if name else key
            if not isinstance(stored, dict) or (key not in stored and not _kept_as_job_input(value)):
                found.append(f"{path}.{key}: not recorded")
            else:
                found += disagreements(value, stored.get(key), job_inputs, decode, f"{path}.{key}", inner)
    elif isinstance(sent, list) and sent and isinstance(sent[0], dict):
        if not isinstance(stored, list) or len(stored) != len(sent):
            found.append(f"{path}: {len(sent)} blocks sent, {stored!r} recorded")
        else:
            for index, (block, kept) in enumerate(zip(sent, stored)):
                found += disagreements(block, kept, job_inputs, decode, f"{path}[{index}]", f"{name}_{index}")
    elif isinstance(sent, list):
        if _text(sent) != _text(stored):
            found.append(f"{path}: sent {sent!r}, recorded {stored!r}")
    elif not _same_scalar(sent, stored) and not (sent is None and stored in ("", None, "None")):
        found.append(f"{path}: sent {sent!r}, recorded {stored!r}")
    return found


def _reference_problems(sent: list, stored, job_inputs, decode, path, name, multiple) -> list[str]:
    found = []
    values = stored.get("values") if isinstance(stored, dict) else None
    if values is not None or any(item["src"] != "hda" for item in sent):
        # Galaxy keeps these in the job's parameters, by database id: exactly the items sent, in order.
        expected = [(item["src"], decode(item["id"])) for item in sent]
        kept = [(value.get("src"), value.get("id")) for value in values or []] if isinstance(values, list) else None
        if kept != expected:
            found.append(f"{path}: sent {expected} (src, database id), recorded {stored!r}")
    datasets = [item["id"] for item in sent if item["src"] == "hda"]
    if len(datasets) == len(sent):  # every dataset is a job input under the parameter's flat name
        names = [f"{name}{number}" for number in range(1, len(sent) + 1)] if multiple else [name]
        inputs = [job_inputs.get(input_name, {}).get("id") for input_name in names]
        if inputs != datasets:
            found.append(f"{path}: sent {datasets}, the job's inputs {names} are {inputs}")
        if multiple and f"{name}{len(sent) + 1}" in job_inputs:
            found.append(f"{path}: {len(sent)} datasets sent, the job has an input {name}{len(sent) + 1}")
    return found


def is_data(value) -> bool:
    return isinstance(value, dict) and "src" in value


def _is_data_list(value) -> bool:
    return isinstance(value, list) and bool(value) and all(map(is_data, value))


def _kept_as_job_input(value) -> bool:
    """A dataset input Galaxy may drop from the parameters (it keeps it in the job's inputs)."""
    return (is_data(value) and value["src"] == "hda") or (
        _is_data_list(value) and all(item["src"] == "hda" for item in value))


def _same_scalar(sent, stored) -> bool:
    """Equal as Galaxy's recorded text, or as numbers (a float recorded as '0.0' where 0.0 was sent)."""
    if _text(sent) == _text(stored):
        return True
    if isinstance(sent, (int, float)) and not isinstance(sent, bool):
        try:
            return float(stored) == float(sent)
        except (TypeError, ValueError):
            return False
    return False


def _text(value):
    if isinstance(value, list):
        return [_text(v) for v in value]
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


def leaves(value):
    """The values ``disagreements`` compares one by one (a data reference or a list of them is one)."""
    if isinstance(value, dict) and "src" not in value:
        for inner in value.values():
            yield from leaves(inner)
    elif isinstance(value, list) and value and isinstance(value[0], dict) and "src" not in value[0]:
        for inner in value:
            yield from leaves(inner)
    else:
        yield value
