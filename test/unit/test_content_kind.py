import gzip

import pytest

from galaxy_mcp_analysis.core.content_kind import (
    content_kind,
    ContentKind,
    looks_binary,
)

TEXT = "chr1\t1\t2\tnamé\n".encode()


@pytest.mark.parametrize(
    ("declared", "compressed", "text_inside", "head", "kind"),
    [
        (False, None, True, TEXT, ContentKind.TEXT),
        (True, None, False, b"SQLite format 3\0", ContentKind.BINARY),
        ("maybe", None, False, TEXT, ContentKind.TEXT),
        ("maybe", None, False, b"\x89PNG\r\n\x1a\n\0\0", ContentKind.BINARY),
        (True, "gzip", True, gzip.compress(TEXT), ContentKind.GZIP_TEXT),  # vcf_bgzip
        ("maybe", "gzip", True, gzip.compress(TEXT), ContentKind.GZIP_TEXT),  # fastqsanger.gz
        (True, "gzip", False, gzip.compress(TEXT), ContentKind.BINARY),  # bam-like: gzip framing, binary inside
        ("maybe", "gzip", True, TEXT, ContentKind.TEXT),  # says gzip but is not: trust the bytes
        (True, None, False, b"", ContentKind.TEXT),  # nothing to refuse
    ],
)
def test_content_kind(declared, compressed, text_inside, head, kind):
    assert content_kind(declared_binary=declared, compressed_format=compressed, text_inside=text_inside, head=head) is kind


def test_a_character_cut_by_the_head_window_is_not_binary():
    assert not looks_binary("ab€".encode()[:-1])
    assert looks_binary(b"\xff\xfeab")
