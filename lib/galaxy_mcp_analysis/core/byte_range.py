"""Read one bounded chunk of a dataset by byte offset: the core of ``peek_dataset_content``.

Why this exists: an agent pages through dataset files that may be gigabytes
long, so each call must cost O(max_bytes) whatever the offset and file size.
We seek to the offset (never read from the start) and read only the requested
window plus a few bytes around it; the file size is never needed because one
extra byte tells us whether the stream ends.

Offsets are byte offsets, but the agent gets text, so a chunk never splits a
UTF-8 character: an offset inside a character moves forward to the next
character start (``offset_adjusted``), and the chunk end moves back to a
character boundary (or to the last newline with ``whole_lines``).  Bytes that
are not valid UTF-8 count as one-byte characters, so the raw ranges
``[offset, offset + length)`` of successive chunks always tile the file exactly.

Cost: at most ``max(max_bytes, 4) + 7`` bytes are read: 3 bytes before the
offset (to tell whether it falls inside a character), the window, and 4 after
(to find a character boundary and detect the end).  For a ``gzip.GzipFile``
offsets count decompressed bytes and ``seek`` decompresses forward, so time is
O(offset) there while memory stays O(max_bytes).
"""

import base64
import dataclasses
from dataclasses import dataclass
from typing import Any, BinaryIO, Optional

from galaxy_mcp_analysis.core.errors import InvalidInput

_LOOKBEHIND = 3  # a character is at most 4 bytes, so its start is at most 3 bytes back
_LOOKAHEAD = 4  # 3 to complete a character that straddles the window end, 1 to detect EOF
_LARGEST_OFFSET = 2**63 - 1  # what a file position can hold; no file reaches it, so past it is past the end


class RangeError(InvalidInput):
    """An offset or size argument the agent can fix and retry with."""


@dataclass(frozen=True)
class Chunk:
    offset: int  # byte offset actually read from
    length: int  # raw bytes covered by this chunk
    next_offset: Optional[int]  # pass as ``offset`` to continue; None once eof
    eof: bool  # the chunk reaches the end of the stream
    content: str
    encoding: str  # "utf-8", or "base64" in binary mode
    line_truncated: bool = False  # a line longer than max_bytes was cut at a character boundary
    offset_adjusted: bool = False  # requested offset fell inside a character
    invalid_utf8: bool = False  # invalid bytes were replaced by U+FFFD in ``content``

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def clamp_max_bytes(requested: int, cap: int) -> tuple[int, bool]:
    """Return ``(applied, capped)``: ``requested`` limited to the server ``cap``."""
    _check_int("max_bytes", requested, minimum=1)
    if cap < 1:
        raise ValueError(f"server cap on max_bytes must be >= 1, got {cap}")
    return min(requested, cap), requested > cap


#: Elements one peek_collection_content call reads at most.
MAX_ELEMENTS_PER_CALL = 100


def elements_within(total: int, element_offset: int, max_elements: int, bytes_each: int, cap: int) -> range:
    """Which elements of a collection of ``total`` one call reads: from ``element_offset``, at most
    ``max_elements``, and no more than the server ``cap`` of bytes allows at ``bytes_each`` (at least one)."""
    _check_int("element_offset", element_offset, minimum=0)
    _check_int("max_elements", max_elements, minimum=1)
    if max_elements > MAX_ELEMENTS_PER_CALL:
        raise RangeError(f"max_elements must be at most {MAX_ELEMENTS_PER_CALL}, got {max_elements}")
    if element_offset and element_offset >= total:
        raise RangeError(f"element_offset {element_offset} is past the last element (the collection has {total})")
    fit = max(1, cap // max(1, bytes_each))
    return range(element_offset, min(total, element_offset + min(max_elements, fit)))


def read_chunk(
    stream: BinaryIO, offset: int, max_bytes: int, *, whole_lines: bool = True, binary: bool = False
) -> Chunk:
    """Read the chunk of ``stream`` that starts at byte ``offset``.

    The chunk is the whole characters (whole lines with ``whole_lines``, unless a
    single line does not fit) within the requested window ``[offset, offset +
    max_bytes)``.  To always make progress, when not even one character fits the
    first character is returned whole, so ``length`` may exceed ``max_bytes`` by
    at most 3.  ``stream`` must be binary and seekable (a ``gzip.GzipFile`` is).
    """
    _check_int("offset", offset, minimum=0)
    _check_int("max_bytes", max_bytes, minimum=1)
    if offset > _LARGEST_OFFSET:  # seek() would raise OverflowError; answer as for any offset past the end
        return Chunk(offset, 0, None, True, "", "base64" if binary else "utf-8")
    if binary:
        return _read_binary(stream, offset, max_bytes)

    # Buffer index i is stream position base + i.
    base = max(0, offset - _LOOKBEHIND)
    stream.seek(base)
    buf = _read_up_to(stream, offset - base + _LOOKBEHIND)  # enough to place the start
    requested = offset - base
    if requested >= len(buf):
        return Chunk(offset, 0, None, True, "", "utf-8")
    containing = _enclosing_char(buf, requested)
    start = containing[1] if containing else requested
    # The window is counted from the requested offset; it always holds one byte past start.
    limit = max(requested + max_bytes, start + 1)
    buf += _read_up_to(stream, limit + _LOOKAHEAD - len(buf))
    if start >= len(buf):  # the offset was inside the last character
        return Chunk(base + start, 0, None, True, "", "utf-8", offset_adjusted=True)

    end, line_truncated = _chunk_end(buf, start, limit, whole_lines)
    raw = buf[start:end]
    invalid_utf8 = False
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError:
        content, invalid_utf8 = raw.decode("utf-8", errors="replace"), True
    eof = end == len(buf)  # we always asked for bytes past ``end``
    return Chunk(
        offset=base + start,
        length=end - start,
        next_offset=None if eof else base + end,
        eof=eof,
        content=content,
        encoding="utf-8",
        line_truncated=line_truncated,
        offset_adjusted=start != requested,
        invalid_utf8=invalid_utf8,
    )


def _chunk_end(buf: bytes, start: int, limit: int, whole_lines: bool) -> tuple[int, bool]:
    """Where the chunk of ``buf`` from ``start`` ends within ``limit``: at a character boundary, at a line's
    end with ``whole_lines`` (and whether a line had to be cut instead)."""
    # Short read means the stream ended inside the window: its end is a boundary.
    end = len(buf) if len(buf) <= limit else limit
    if end < len(buf):
        containing = _enclosing_char(buf, end)
        if containing:
            end = containing[0]
    if end <= start:  # not one whole character fits: return the first one anyway
        end = start + _char_length(buf, start)
    if whole_lines and end < len(buf):
        newline = buf.rfind(b"\n", start, end)
        if newline < 0:
            return end, True
        end = newline + 1  # b"\n" never occurs inside a multi-byte character
    return end, False


def _read_binary(stream: BinaryIO, offset: int, max_bytes: int) -> Chunk:
    stream.seek(offset)
    data = _read_up_to(stream, max_bytes + 1)  # one extra byte detects EOF
    eof = len(data) <= max_bytes
    data = data[:max_bytes]
    return Chunk(
        offset=offset,
        length=len(data),
        next_offset=None if eof else offset + len(data),
        eof=eof,
        content=base64.b64encode(data).decode("ascii"),
        encoding="base64",
    )


def _check_int(name: str, value: int, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RangeError(f"{name} must be an integer >= {minimum}, got {value!r}")


def _read_up_to(stream: BinaryIO, size: int) -> bytes:
    """Read ``size`` bytes, fewer only at EOF (raw streams may return short reads)."""
    parts = []
    while size > 0:
        data = stream.read(size)
        if not data:
            break
        parts.append(data)
        size -= len(data)
    return b"".join(parts)


def _sequence_length(lead: int) -> int:
    """Length of the UTF-8 sequence a byte announces; 1 for ASCII and invalid leads."""
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 1


def _valid_char_at(buf: bytes, index: int) -> int:
    """Length of the valid multi-byte character starting at ``index``, else 0."""
    length = _sequence_length(buf[index])
    if length == 1 or index + length > len(buf):
        return 0
    try:  # the codec rejects overlongs, surrogates and code points above U+10FFFF
        buf[index : index + length].decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return length


def _enclosing_char(buf: bytes, index: int) -> Optional[tuple[int, int]]:
    """``(start, end)`` of the valid character that ``index`` lies strictly inside, if any.

    Being a boundary is a local property: valid multi-byte characters cannot
    overlap (their non-first bytes are continuation bytes, never leads), so the
    only candidate is the nearest non-continuation byte at most 3 bytes back.
    Needs ``buf`` to hold index-3 .. index+2 unless the stream ends sooner.
    """
    for start in range(index - 1, max(index - 4, -1), -1):
        if buf[start] & 0xC0 != 0x80:
            length = _valid_char_at(buf, start)
            return (start, start + length) if start + length > index else None
    return None


def _char_length(buf: bytes, index: int) -> int:
    return _valid_char_at(buf, index) or 1
