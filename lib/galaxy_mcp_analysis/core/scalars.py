"""The words for booleans and nulls, in one place: what a request, a setting or Galaxy's config may write.

Galaxy's own reading of a boolean (``galaxy.util.string_as_bool``) takes ``true/yes/on/1`` (any case) as
true and anything else as false; the words below that it reads as false are the ones that mean false
(``"nope"`` is read as false too, but does not say it). The preflight, the settings and the config
options all read these words; a request's value is sent as Galaxy reads it only where it means it.
"""

from typing import Any

TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
FALSE_WORDS = frozenset({"false", "no", "off", "0"})
NULL_WORDS = frozenset({"", "none", "null"})


def boolean_word(value: Any) -> bool | None:
    """True or False for a value that says it (a boolean, or one of the words, any case, spaces around);
    None for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, int)):
        word = str(value).strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    return None
