import base64
import gzip
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from galaxy_mcp_analysis.core.byte_range import (
    Chunk,
    clamp_max_bytes,
    elements_within,
    MAX_ELEMENTS_PER_CALL,
    RangeError,
    read_chunk,
)

PROPERTY = settings(max_examples=200, deadline=None)

# Text biased towards what breaks pagers: multi-byte characters, emoji, empty
# lines, CRLF, and (by chance) no trailing newline.
_PIECES = st.one_of(
    st.sampled_from(["\n", "\n\n", "\r\n", "a", "é", "€", "😀", "𝄞", "日本語", "line\n"]),
    st.characters(blacklist_categories=("Cs",)),
)
TEXT = st.lists(_PIECES, max_size=80).map("".join)
MAX_BYTES = st.integers(min_value=1, max_value=64)


def page_through(open_stream, whole_lines: bool, max_bytes: int, size: int) -> list[Chunk]:
    """Follow next_offset from 0 to eof; each call gets a fresh stream, as the adapter does."""
    chunks: list[Chunk] = []
    offset = 0
    for _ in range(size + 2):  # every chunk but the last covers >= 1 byte
        chunk = read_chunk(open_stream(), offset, max_bytes, whole_lines=whole_lines)
        chunks.append(chunk)
        if chunk.eof:
            assert chunk.next_offset is None
            return chunks
        assert chunk.length > 0 and chunk.content, "empty chunk before eof would loop forever"
        assert chunk.next_offset == chunk.offset + chunk.length
        offset = chunk.next_offset
    raise AssertionError("paging did not terminate")


def check_valid_paging(data: bytes, chunks: list[Chunk], whole_lines: bool, max_bytes: int) -> None:
    assert "".join(c.content for c in chunks).encode("utf-8") == data
    for chunk in chunks:
        assert not chunk.invalid_utf8 and not chunk.offset_adjusted
        assert chunk.encoding == "utf-8"
        # Content is exactly the raw range, decoded without replacement: no split character.
        assert data[chunk.offset : chunk.offset + chunk.length].decode("utf-8") == chunk.content
        assert chunk.length <= max_bytes or len(chunk.content) == 1
    if whole_lines:
        for chunk in chunks[:-1]:
            assert chunk.content.endswith("\n") or chunk.line_truncated


@PROPERTY
@given(text=TEXT, max_bytes=MAX_BYTES, whole_lines=st.booleans())
def test_paging_reassembles_valid_utf8_exactly(text, max_bytes, whole_lines):
    data = text.encode("utf-8")
    chunks = page_through(lambda: io.BytesIO(data), whole_lines, max_bytes, len(data))
    check_valid_paging(data, chunks, whole_lines, max_bytes)


@PROPERTY
@given(text=TEXT, max_bytes=MAX_BYTES, whole_lines=st.booleans())
def test_paging_through_gzip_counts_decompressed_bytes(text, max_bytes, whole_lines):
    data = text.encode("utf-8")
    compressed = gzip.compress(data)
    chunks = page_through(
        lambda: gzip.GzipFile(fileobj=io.BytesIO(compressed)), whole_lines, max_bytes, len(data)
    )
    check_valid_paging(data, chunks, whole_lines, max_bytes)


def _char_starts(text: str) -> list[int]:
    starts, position = [], 0
    for char in text:
        starts.append(position)
        position += len(char.encode("utf-8"))
    return starts + [position]


@PROPERTY
@given(text=TEXT, max_bytes=MAX_BYTES, whole_lines=st.booleans(), data=st.data())
def test_any_offset_starts_at_next_character_boundary(text, max_bytes, whole_lines, data):
    raw = text.encode("utf-8")
    offset = data.draw(st.integers(min_value=0, max_value=len(raw) + 5), label="offset")
    chunk = read_chunk(io.BytesIO(raw), offset, max_bytes, whole_lines=whole_lines)
    if offset >= len(raw):
        assert (chunk.offset, chunk.length, chunk.content, chunk.eof, chunk.next_offset) == (
            offset, 0, "", True, None,
        )
        return
    boundary = min(start for start in _char_starts(text) if start >= offset)
    assert chunk.offset == boundary and chunk.offset - offset <= 3
    assert chunk.offset_adjusted == (boundary != offset)
    assert raw[chunk.offset : chunk.offset + chunk.length].decode("utf-8") == chunk.content
    # The window is counted from the requested offset; only the one-character
    # progress rule (or an empty eof chunk) may reach past it.
    assert chunk.offset + chunk.length <= offset + max_bytes or len(chunk.content) <= 1
    assert chunk.eof == (chunk.offset + chunk.length == len(raw))
    assert chunk.eof or chunk.content


@PROPERTY
@given(data=st.binary(max_size=200), max_bytes=MAX_BYTES, whole_lines=st.booleans())
def test_arbitrary_bytes_tile_the_file_through_raw_ranges(data, max_bytes, whole_lines):
    chunks = page_through(lambda: io.BytesIO(data), whole_lines, max_bytes, len(data))
    assert b"".join(data[c.offset : c.offset + c.length] for c in chunks) == data
    for chunk in chunks:
        raw = data[chunk.offset : chunk.offset + chunk.length]
        assert chunk.content == raw.decode("utf-8", errors="replace")
        assert chunk.invalid_utf8 == (chunk.content != raw.decode("utf-8", errors="ignore"))
        # A chunk end is a boundary: reading from it again must not move the offset.
        if chunk.next_offset is not None:
            assert not read_chunk(io.BytesIO(data), chunk.next_offset, 1).offset_adjusted


def test_offset_past_end_is_empty_eof():
    chunk = read_chunk(io.BytesIO(b"abc\n"), 100, 10)
    assert chunk.as_dict() == {
        "offset": 100, "length": 0, "next_offset": None, "eof": True, "content": "",
        "encoding": "utf-8", "line_truncated": False, "offset_adjusted": False, "invalid_utf8": False,
    }


def test_offset_exactly_at_end_is_empty_eof():
    chunk = read_chunk(io.BytesIO(b"abc\n"), 4, 10)
    assert (chunk.offset, chunk.length, chunk.content, chunk.eof, chunk.next_offset) == (4, 0, "", True, None)


def test_offset_inside_last_character_moves_to_end():
    chunk = read_chunk(io.BytesIO("a😀".encode()), 2, 10)
    assert (chunk.offset, chunk.length, chunk.eof, chunk.offset_adjusted) == (5, 0, True, True)


@pytest.mark.parametrize("offset, max_bytes, name", [(0, 0, "max_bytes"), (0, -5, "max_bytes"), (-1, 10, "offset")])
def test_invalid_arguments_raise_range_error(offset, max_bytes, name):
    with pytest.raises(RangeError, match=name) as raised:
        read_chunk(io.BytesIO(b"abc"), offset, max_bytes)
    assert isinstance(raised.value, ValueError)


def test_chunk_ends_after_last_newline_that_fits():
    chunk = read_chunk(io.BytesIO(b"one\ntwo\nthree\n"), 0, 10)
    assert (chunk.content, chunk.next_offset, chunk.eof, chunk.line_truncated) == ("one\ntwo\n", 8, False, False)


def test_long_single_line_is_cut_at_character_boundary():
    data = ("é" * 10 + "\n").encode()
    chunk = read_chunk(io.BytesIO(data), 0, 5)
    assert (chunk.content, chunk.length, chunk.line_truncated, chunk.eof) == ("éé", 4, True, False)


def test_last_line_without_newline_is_returned_whole():
    chunk = read_chunk(io.BytesIO(b"one\ntail"), 4, 10)
    assert (chunk.content, chunk.eof, chunk.line_truncated, chunk.next_offset) == ("tail", True, False, None)


def test_four_byte_character_with_max_bytes_one_makes_progress():
    chunk = read_chunk(io.BytesIO("😀😀".encode()), 0, 1)
    assert (chunk.content, chunk.length, chunk.next_offset, chunk.eof) == ("😀", 4, 4, False)


def test_binary_mode_round_trips_base64():
    data = bytes(range(256)) * 3
    chunks, offset = [], 0
    while offset is not None:
        chunk = read_chunk(io.BytesIO(data), offset, 100, binary=True)
        assert chunk.encoding == "base64" and chunk.length == min(100, len(data) - offset)
        chunks.append(chunk)
        offset = chunk.next_offset
    assert b"".join(base64.b64decode(c.content) for c in chunks) == data
    assert chunks[-1].eof and not any(c.eof for c in chunks[:-1])


def test_binary_mode_offset_past_end():
    chunk = read_chunk(io.BytesIO(b"abc"), 3, 10, binary=True)
    assert (chunk.length, chunk.content, chunk.eof, chunk.next_offset) == (0, "", True, None)


def test_invalid_utf8_is_replaced_and_raw_ranges_reassemble():
    data = b"\xff\xfeabc\n\x80\xe2\x82\n"
    chunks = page_through(lambda: io.BytesIO(data), True, 3, len(data))
    assert b"".join(data[c.offset : c.offset + c.length] for c in chunks) == data
    assert chunks[0].invalid_utf8 and chunks[0].content.startswith("\ufffd\ufffd")
    assert not any(c.offset_adjusted for c in chunks)


def test_clamp_max_bytes():
    assert clamp_max_bytes(100, 65536) == (100, False)
    assert clamp_max_bytes(65536, 65536) == (65536, False)
    assert clamp_max_bytes(10**9, 65536) == (65536, True)
    with pytest.raises(RangeError, match="max_bytes"):
        clamp_max_bytes(0, 65536)


class CountingStream(io.RawIOBase):
    """Counts the bytes handed out by read(), so a test can prove reads stay bounded."""

    def __init__(self, data: bytes):
        self._inner = io.BytesIO(data)
        self.bytes_read = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, offset, whence=io.SEEK_SET):
        return self._inner.seek(offset, whence)

    def read(self, size=-1):
        data = self._inner.read(size)
        self.bytes_read += len(data)
        return data


BIG_FILE = ("sample\tvalue\t€\n" * 600_000).encode()  # ~10 MB, 3-byte characters in every line


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("offset_from_end", [4999, 5001, 100])  # 5001 lands inside "€", the others on a line start or end
def test_reading_near_the_end_of_a_big_file_reads_about_max_bytes(binary, offset_from_end):
    max_bytes = 4096
    stream = CountingStream(BIG_FILE)
    chunk = read_chunk(stream, len(BIG_FILE) - offset_from_end, max_bytes, binary=binary)
    assert chunk.length > 0
    assert chunk.offset_adjusted == (offset_from_end == 5001 and not binary)
    assert stream.bytes_read <= max_bytes + 8


# ---- elements_within: which elements of a collection one peek_collection_content call reads ----


def test_elements_within_pages_by_element_and_by_the_cap():
    assert elements_within(5, 0, 20, 4096, 1 << 20) == range(0, 5)
    assert elements_within(5, 0, 2, 4096, 1 << 20) == range(0, 2)
    assert elements_within(5, 4, 2, 4096, 1 << 20) == range(4, 5)
    # The cap is shared: 600,000 bytes each fit once in 1 MiB; a read larger than the cap still reads one.
    assert elements_within(5, 0, 20, 600_000, 1 << 20) == range(0, 1)
    assert elements_within(5, 2, 20, 1 << 20, 1 << 20) == range(2, 3)
    assert elements_within(0, 0, 20, 4096, 1 << 20) == range(0, 0)  # an empty collection


@given(total=st.integers(0, 300), offset=st.integers(0, 300), most=st.integers(1, MAX_ELEMENTS_PER_CALL),
       each=st.integers(1, 1 << 21))
@PROPERTY
def test_elements_within_never_passes_the_cap_or_the_end(total, offset, most, each):
    cap = 1 << 20
    if offset and offset >= total:
        with pytest.raises(RangeError):
            elements_within(total, offset, most, each, cap)
        return
    chosen = elements_within(total, offset, most, each, cap)
    assert chosen.start == offset and chosen.stop <= total and len(chosen) <= most
    assert len(chosen) * each <= cap or len(chosen) == 1
    assert len(chosen) >= 1 or total == 0


@pytest.mark.parametrize(("arguments", "named"), [
    ((5, -1, 20), "element_offset"), ((5, 0, 0), "max_elements"), ((5, 0, MAX_ELEMENTS_PER_CALL + 1), "at most"),
    ((5, 5, 20), "past the last element"), ((5, True, 20), "element_offset"),
])
def test_elements_within_refuses_bad_pages(arguments, named):
    with pytest.raises(RangeError, match=named):
        elements_within(*arguments, 4096, 1 << 20)


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("offset", [2**63, 10**20])
def test_an_offset_beyond_any_file_position_is_past_the_end_not_an_overflow(offset, binary):
    # io.BytesIO.seek(2**63) raises OverflowError, as a real file's seek does: the agent got Python's text.
    chunk = read_chunk(io.BytesIO(b"abc\n"), offset, 10, binary=binary)
    assert (chunk.offset, chunk.length, chunk.content, chunk.eof, chunk.next_offset) == (offset, 0, "", True, None)
