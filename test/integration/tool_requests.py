"""Requests for the tool inputs sweep: synthetic inputs, the tools' own test cases made runnable, requests
generated from a tool's input schema, and mutations of them the preflight must refuse."""

import copy
import json

SYNTHETIC = {
    "txt": "line one\nline two\n",
    "tabular": "a\t1\nb\t2\n",
    "bed": "chr1\t10\t20\tr1\t0\t+\nchr1\t30\t40\tr2\t0\t-\n",
    "fasta": ">s1\nACGT\n",
    "fastqsanger": "@r1\nACGT\n+\nIIII\n",
    "sam": "@HD\tVN:1.0\nr1\t0\tchr1\t1\t0\t4M\t*\t0\t0\tACGT\tIIII\n",
    "png": "not a png\n",
}
#: A test file's datatype from its suffix when the test declares none (Galaxy's test runner sniffs those;
#: the synthetic text files are tabular, which every txt input accepts too).
#: A test file's suffix that is no datatype name, as the datatype the sweep uploads for it (Galaxy's test
#: runner sniffs these files; trimmer's .dat files are tab-separated columns).
SUFFIXES = {"fa": "fasta", "tab": "tabular", "tsv": "tabular", "txt": "tabular", "dat": "tabular"}
UNKNOWN = "zz_not_a_parameter"


class Inputs:
    """Synthetic datasets (one per datatype) and collections (one per shape), shared by the whole sweep."""

    def __init__(self, galaxy, mcp, api_key, history_id):
        self.galaxy, self.mcp, self.api_key, self.history_id = galaxy, mcp, api_key, history_id
        self.datasets: dict[str, str] = {}
        self.collections: dict[str, str] = {}

    def dataset(self, ext: str, copy: int = 1) -> str:
        """The synthetic dataset of a datatype; ``copy=2``: a second, distinct one (a multiple input's second)."""
        if ext in ("data", "input"):
            ext = "txt"
        key = ext if copy == 1 else f"{ext} #{copy}"
        if key not in self.datasets:
            self.datasets[key] = self.mcp.call_ok(
                "create_dataset_from_text", history_id=self.history_id, content=SYNTHETIC.get(ext, "x\n"),
                file_type=ext, name=f"synthetic{'' if copy == 1 else copy}.{ext}", api_key=self.api_key)["dataset_id"]
        return self.datasets[key]

    def collection(self, collection_type: str, identifiers=None, ext="txt") -> str:
        key = json.dumps([collection_type, identifiers, ext])
        if key not in self.collections:
            self.collections[key] = self.mcp.call_ok(
                "create_collection", history_id=self.history_id, collection_type=collection_type, api_key=self.api_key,
                element_identifiers=self._elements(collection_type, identifiers, ext))["collection_id"]
        return self.collections[key]

    def _elements(self, collection_type, identifiers, ext):
        outer, _, inner = collection_type.partition(":")
        names = identifiers or {"paired": ["forward", "reverse"], "paired_or_unpaired": ["unpaired"]}.get(
            outer, ["e1", "e2"])
        if not inner:
            return [{"name": name, "src": "hda", "id": self.dataset(ext)} for name in names]
        return [{"name": name, "src": "new_collection", "collection_type": inner,
                 "element_identifiers": self._elements(inner, None, ext)} for name in names]

    def from_test_file(self, value: dict) -> dict:
        """A test case's {"class": "File"|"Collection", ...} as a reference to a synthetic item."""
        if value.get("class") == "File":
            suffix = value.get("path", "x.txt").rsplit(".", 1)[-1]
            return {"src": "hda", "id": self.dataset(value.get("filetype") or SUFFIXES.get(suffix, suffix))}
        return {"src": "hdca", "id": self.mcp.call_ok(
            "create_collection", history_id=self.history_id, collection_type=value["collection_type"],
            api_key=self.api_key, element_identifiers=self._test_elements(value["elements"]))["collection_id"]}

    def _test_elements(self, elements):
        result = []
        for element in elements:
            if element.get("class") == "Collection":
                result.append({"name": element["identifier"], "src": "new_collection",
                               "collection_type": element["collection_type"],
                               "element_identifiers": self._test_elements(element["elements"])})
            else:
                result.append({"name": element["identifier"], **self.from_test_file(element)})
        return result


def replace_test_files(value, inputs: Inputs):
    if isinstance(value, dict):
        if value.get("class") in ("File", "Collection"):
            return inputs.from_test_file(value)
        return {key: replace_test_files(inner, inputs) for key, inner in value.items()}
    if isinstance(value, list):
        return [replace_test_files(inner, inputs) for inner in value]
    return value


# ---- Requests generated from a schema ----------------------------------------------------------


def accepted_types(description: str) -> list[str]:
    return [part.strip() for part in description.split(" of type ", 1)[1].split(",")]


def filled(schema: dict, inputs: Inputs):
    """A valid value for a schema: its default, its first option or branch, a synthetic dataset."""
    if "oneOf" in schema:  # a conditional: its first branch
        return filled({"type": "object", **schema["oneOf"][0]}, inputs)
    if schema.get("type") == "object" and "src" in schema.get("properties", {}):
        kinds = schema["properties"]["src"]["enum"]
        if "hdca" in kinds:
            types = accepted_types(schema["description"])
            return {"src": "hdca", "id": inputs.collection("list" if types == ["any"] else types[0])}
        return {"src": "hda", "id": inputs.dataset(accepted_types(schema["description"])[0])}
    if schema.get("type") == "object":
        return {name: filled(inner, inputs) for name, inner in schema.get("properties", {}).items()}
    if schema.get("type") == "array" and "properties" in schema.get("items", {}):
        if "src" in schema["items"]["properties"]:  # a multiple data input: the array names the types
            # Two distinct datasets, so the comparison with the job's record sees their number and order.
            first = filled({"description": schema["description"], **schema["items"]}, inputs)
            return [first, {"src": "hda", "id": inputs.dataset(accepted_types(schema["description"])[0], copy=2)}]
        return [filled(schema["items"], inputs) for _ in range(schema.get("minItems", 0))]
    if "default" in schema and schema["default"] != "":
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if schema.get("format") == "uri":
        return "http://127.0.0.1/"
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "array" and schema.get("items"):  # a multiple select or column: one value
        return [filled(schema["items"], inputs)]
    # "e1": the first element of every synthetic collection (a text naming an element must name one)
    return {"integer": max(schema.get("minimum", 1), 1), "number": 1.5, "string": "e1", "boolean": True,
            "array": []}.get(kind)


def variants(schema: dict, base: dict, inputs: Inputs, at=()):
    """(label, request): each select option, each conditional branch, each repeat at min and min+1."""
    for name, inner in schema.get("properties", {}).items():
        here = at + (name,)
        if "enum" in inner:
            for option in inner["enum"]:
                yield f"{'.'.join(here)}={option}", set_at(base, here, option)
        elif inner.get("type") == "array" and "enum" in inner.get("items", {}):
            for option in inner["items"]["enum"]:
                yield f"{'.'.join(here)}=[{option}]", set_at(base, here, [option])
        elif "oneOf" in inner:
            for branch in inner["oneOf"]:
                value = filled({"type": "object", **branch}, inputs)
                test_name = next(iter(branch["properties"]))
                request = set_at(base, here, value)
                yield f"{'.'.join(here)}.{test_name}={value[test_name]}", request
                yield from variants(branch, request, inputs, here)
        elif inner.get("type") == "object" and "src" not in inner.get("properties", {}):
            yield from variants(inner, base, inputs, here)
        elif inner.get("type") == "array" and "properties" in inner.get("items", {}) and \
                "src" not in inner["items"]["properties"]:
            low = inner.get("minItems", 0)
            for count in (low, low + 1):
                if count <= inner.get("maxItems", count):
                    yield f"{'.'.join(here)}[{count} blocks]", set_at(
                        base, here, [filled(inner["items"], inputs) for _ in range(count)])


def set_at(request: dict, path, value) -> dict:
    changed = copy.deepcopy(request)
    target = changed
    for name in path[:-1]:
        target = target[name]
    target[path[-1]] = value
    return changed


def mutations(schema: dict, base: dict, inputs: Inputs, at=()):
    """(label, request, path that must be named) of requests the preflight must refuse."""
    here_path = "inputs" + "".join(f".{name}" for name in at)
    yield f"unknown name in {here_path}", set_at(base, at + (UNKNOWN,), 1) if at else {**base, UNKNOWN: 1}, \
        f"{here_path}.{UNKNOWN}"
    for name, inner in schema.get("properties", {}).items():
        here = at + (name,)
        path = f"{here_path}.{name}"
        if "enum" in inner:
            yield f"foreign option {path}", set_at(base, here, "zz_not_an_option"), path
        elif inner.get("type") in ("integer", ["integer", "null"]) and "minimum" in inner:
            yield f"below minimum {path}", set_at(base, here, inner["minimum"] - 1), path
        elif "oneOf" in inner:
            first, *others = inner["oneOf"]
            test_name = next(iter(first["properties"]))
            for other in others:
                moved = [n for n in other["properties"] if n != test_name and n not in first["properties"]]
                if moved:
                    request = set_at(base, here + (moved[0],), filled(other["properties"][moved[0]], inputs))
                    yield f"{moved[0]} moved out of its branch", request, f"{path}.{moved[0]}"
                    break
            yield from mutations(first, base, inputs, here)
        elif inner.get("type") == "object" and "src" in inner.get("properties", {}):
            if "hda" in inner["properties"]["src"]["enum"] and "data" not in accepted_types(inner["description"]):
                yield f"wrong datatype {path}", set_at(base, here, {"src": "hda", "id": inputs.dataset("png")}), path
        elif inner.get("type") == "object" and inner.get("additionalProperties") is False:
            yield from mutations(inner, base, inputs, here)
        elif inner.get("type") == "array" and "src" not in inner.get("items", {}).get("properties", {"src": 1}):
            block = filled(inner["items"], inputs)
            request = set_at(base, here, [block])
            yield f"unknown name in a block of {path}", set_at(request, here, [{**block, UNKNOWN: 1}]), \
                f"{path}[0].{UNKNOWN}"


def flat(request: dict, schema: dict, prefix="") -> dict:
    """Galaxy's flat form of a generated request (conditionals and sections as 'a|b', repeats as 'r_0|b')."""
    result = {}
    for name, value in request.items():
        inner = schema.get("properties", {}).get(name, {})
        if "oneOf" in inner:
            branch = next(b for b in inner["oneOf"] if all(k in b["properties"] for k in value))
            result.update(flat(value, branch, f"{prefix}{name}|"))
        elif inner.get("type") == "object" and "src" not in inner.get("properties", {}):
            result.update(flat(value, inner, f"{prefix}{name}|"))
        elif inner.get("type") == "array" and "src" not in inner.get("items", {}).get("properties", {"src": 1}):
            for index, block in enumerate(value):
                result.update(flat(block, inner["items"], f"{prefix}{name}_{index}|"))
        else:
            result[f"{prefix}{name}"] = value
    return result

