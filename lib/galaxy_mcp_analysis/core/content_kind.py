"""Decide how a dataset's bytes may be shown to an agent: text, gzip-compressed text, or binary.

Galaxy's datatype says what a dataset *should* be; the first bytes say what it is.
Both are needed: ``fastqsanger.gz`` and ``vcf_bgzip`` are gzip streams of text, BAM
is a gzip-framed binary format, and some datatypes only say "maybe binary".
"""

import enum

GZIP_MAGIC = b"\x1f\x8b"
#: How many leading bytes the caller should pass as ``head``.
HEAD_BYTES = 4096


class ContentKind(enum.Enum):
    TEXT = "text"
    GZIP_TEXT = "gzip_text"
    BINARY = "binary"


def content_kind(
    *, declared_binary: bool | str, compressed_format: str | None, text_inside: bool, head: bytes
) -> ContentKind:
    """Classify a dataset.

    ``declared_binary`` is the datatype's ``is_binary`` (True, False or "maybe");
    ``text_inside`` says the datatype (or the one it compresses) is a text format.
    """
    if not head:  # an empty file has nothing to refuse
        return ContentKind.TEXT
    if compressed_format == "gzip" and text_inside and head.startswith(GZIP_MAGIC):
        return ContentKind.GZIP_TEXT
    if declared_binary is True:
        return ContentKind.BINARY
    if declared_binary == "maybe" and looks_binary(head):
        return ContentKind.BINARY
    return ContentKind.TEXT


def looks_binary(head: bytes) -> bool:
    """NUL bytes or bytes that are not UTF-8 (a character cut at the end of ``head`` is fine)."""
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start < len(head) - 3
    return False
