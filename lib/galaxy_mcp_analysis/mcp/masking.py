"""The policy's ``mask_fields``: a result without the named fields, at any depth, in both of its forms."""

import json
from typing import Any


def without_fields(value: Any, names: set[str]) -> Any:
    if isinstance(value, dict):
        return {key: without_fields(item, names) for key, item in value.items() if key not in names}
    if isinstance(value, list):
        return [without_fields(item, names) for item in value]
    return value


def mask_result(result, names: set[str]):
    """The result without the named fields, at any depth, in the structured content and the text."""
    from mcp.types import TextContent

    structured = without_fields(result.structured_content, names) if result.structured_content else None
    content = []
    for block in result.content:
        if isinstance(block, TextContent):
            try:
                text = json.dumps(without_fields(json.loads(block.text), names))
            except ValueError:
                text = json.dumps(structured) if structured is not None else block.text
            block = block.model_copy(update={"text": text})
        content.append(block)
    return result.model_copy(update={"content": content, "structured_content": structured})
