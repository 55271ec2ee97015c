"""The MCP calls a result's repair, suggestion or resume_with names, parsed so a test can make them.

A hint names a call as ``tool(arg=value, ...)`` with Python literals (``'id'``), the JSON words
``true``/``false``/``null``, and ``...`` where the agent must choose a value. ``calls_in`` finds
every such call of a served tool in a text; ``fill`` replaces each ``...`` with the caller's choice.
"""

import ast
import re
from dataclasses import dataclass
from typing import Any

_JSON_WORDS = {"true": True, "false": False, "null": None}
CHOOSE = Ellipsis  # a value the hint leaves to the agent


@dataclass(frozen=True)
class SuggestedCall:
    tool: str
    arguments: dict[str, Any]  # values the hint fixes, CHOOSE where the agent chooses
    text: str  # as the hint wrote it

    def fill(self, **chosen: Any) -> dict[str, Any]:
        """The arguments with every chosen value in; a test that forgets one fails here."""
        missing = [name for name, value in self.arguments.items() if value is CHOOSE and name not in chosen]
        assert not missing, f"{self.text}: choose {missing}"
        return {name: chosen.get(name, value) if value is CHOOSE else value for name, value in self.arguments.items()}


def calls_in(text: str, tools: set[str]) -> list[SuggestedCall]:
    """Every call of one of ``tools`` written with arguments in ``text``, in order."""
    found = []
    for match in re.finditer(r"\b([a-z_]+)\(", text):
        if match.group(1) not in tools:
            continue
        end = _closing(text, match.end() - 1)
        call_text = text[match.start():end + 1]
        node = ast.parse(call_text, mode="eval").body
        assert isinstance(node, ast.Call) and not node.args, f"not a keyword call: {call_text}"
        found.append(SuggestedCall(match.group(1), {k.arg: _value(k.value) for k in node.keywords}, call_text))
    return found


def _closing(text: str, opening: int) -> int:
    depth, quote = 0, None
    for index in range(opening, len(text)):
        char = text[index]
        if quote:
            if char == "\\":
                continue
            if char == quote and text[index - 1] != "\\":
                quote = None
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index
    raise AssertionError(f"unclosed call in {text[opening - 20:]!r}")


def _value(node: ast.AST) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_WORDS:
        return _JSON_WORDS[node.id]
    return ast.literal_eval(node)
