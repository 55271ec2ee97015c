"""Pasted text: what the server accepts as the content of a dataset made from text.

One rule for ``create_dataset_from_text`` and for the pasted elements of ``create_collection``:
at least one byte, at most the server's ``max_paste_bytes`` counted in UTF-8.
"""


def paste_problem(content: str, max_bytes: int) -> str | None:
    """Why ``content`` cannot be pasted (empty, or over ``max_bytes`` UTF-8 bytes); None when it can."""
    size = len(content.encode("utf-8", "surrogatepass"))
    if size == 0:
        return "content is empty; a dataset needs at least one byte."
    if size > max_bytes:
        return f"content is {size} bytes; the server accepts at most {max_bytes} bytes of pasted text."
    return None
