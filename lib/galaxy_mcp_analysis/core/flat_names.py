"""Galaxy's flat parameter names, the one style every result and request of the patch set uses.

A parameter inside a conditional or section is ``cond|param``; inside the first block of a repeat
``queries_0|input2`` (Galaxy's ``visit_input_values`` names them so, and its legacy tool API reads
them). Where a name stands for every block of a repeat, ``<index>`` takes the number's place:
``queries_<index>|input2``.
"""

import re

#: Between the names of a group and of what it holds: ``cond|param``.
SEPARATOR = "|"
#: Stands for a repeat block's number in a name that holds for every block.
ANY_BLOCK = "<index>"
#: ``queries_0``: a block of the repeat ``queries`` (group 1 the repeat's name, group 2 the number).
REPEAT_KEY = re.compile(r"(.+)_(\d+)")


def flat_name(prefix: str, name: str) -> str:
    """``name`` under the flat name ``prefix`` of the group holding it ("" at the top)."""
    return f"{prefix}{SEPARATOR}{name}" if prefix else name


def repeat_block(name: str, index: int | str = ANY_BLOCK) -> str:
    """The flat step of block ``index`` of the repeat ``name`` (every block: ``name_<index>``)."""
    return f"{name}_{index}"


def path_name(path: tuple[str, ...], repeats: frozenset[int] = frozenset()) -> str:
    """The flat name of the parameter at ``path`` (names from the top), ``<index>`` for each repeat
    block: ``repeats`` holds the positions in ``path`` that are repeats."""
    name = ""
    for position, step in enumerate(path):
        name = flat_name(name, repeat_block(step) if position in repeats else step)
    return name
