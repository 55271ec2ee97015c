"""core.images: which datasets are images, the size cap, SVG sizes and references; image blocks in a result."""

import base64

import pytest

from galaxy_mcp_analysis.core.images import (
    fitted_size,
    image_kind,
    ImageBlock,
    MAX_LONG_SIDE,
    MAX_PIXELS,
    svg_external_reference,
    svg_size,
    WithImages,
)
from galaxy_mcp_analysis.mcp.result_text import (
    RawText,
    shaped_result,
)


@pytest.mark.parametrize("extension, kind", [
    ("png", "raster"), ("jpg", "raster"), ("gif", "raster"), ("webp", "raster"), ("tiff", "raster"),
    ("svg", "svg"), ("pdf", "pdf"), ("tabular", None), ("txt", None), ("bam", None),
])
def test_image_kinds(extension, kind):
    assert image_kind(extension) == kind


def test_a_small_image_keeps_its_size():
    assert fitted_size(800, 600) == (800, 600)


def test_the_long_side_and_the_area_both_bound_the_size():
    assert fitted_size(6000, 100) == (MAX_LONG_SIDE, 26)  # a wide strip: the long side binds
    width, height = fitted_size(3200, 2400)  # a 4:3 plot: the area binds before the long side
    assert width * height <= MAX_PIXELS and max(width, height) < MAX_LONG_SIDE and abs(width / height - 4 / 3) < 0.01
    assert fitted_size(1, 1) == (1, 1) and fitted_size(0, 5) == (1, 5)


def test_svg_sizes_from_width_height_or_viewbox():
    assert svg_size(b'<?xml version="1.0"?><svg xmlns="x" width="400px" height="200">') == (400.0, 200.0)
    assert svg_size(b'<svg viewBox="0 0 720 576" width="100%">') == (720.0, 576.0)
    assert svg_size(b"<svg width='10cm' height='5cm'>") is None
    assert svg_size(b"<html></html>") is None


def test_svg_references_outside_itself_are_found():
    assert svg_external_reference(b'<svg><use href="#a"/><image href="data:image/png;base64,AA"/></svg>') is None
    assert svg_external_reference(b'<svg><image xlink:href="file:///etc/passwd"/></svg>') == "file:///etc/passwd"
    assert svg_external_reference(b"<svg><image href='http://example.org/x.png'/></svg>") == "http://example.org/x.png"
    assert svg_external_reference(b'<svg><image href="other.png"/></svg>') == "other.png"


def test_a_result_with_images_gets_one_image_block_each_after_its_text():
    image = ImageBlock(b"\x89PNG-bytes", "image/png", 10, 5, 20, 10)
    assert image.as_dict() == {"mime_type": "image/png", "width": 10, "height": 5, "original_width": 20,
                               "original_height": 10, "scaled": True, "bytes": 10}
    result = shaped_result(WithImages({"name": "plot.png", "image": image.as_dict()}, [image]), RawText("content"))
    text, block = result.content
    assert text.type == "text" and '"image":' in text.text
    assert (block.type, block.mime_type, base64.b64decode(block.data)) == ("image", "image/png", b"\x89PNG-bytes")
    assert type(result.structured_content) is dict and result.structured_content["name"] == "plot.png"
    plain = shaped_result({"content": "a\n"}, RawText("content"))
    assert [block.type for block in plain.content] == ["text"]
