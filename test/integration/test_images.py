"""Issue 51 item 1: an image dataset read through /api/mcp is an MCP image block a multimodal model can look at."""

import base64
import io

import pytest
from PIL import (
    Image,
    ImageDraw,
)

from conftest import (
    wait_for_dataset,
    wait_for_state,
)
from galaxy_mcp_analysis.core.images import (
    MAX_LONG_SIDE,
    MAX_PIXELS,
)
from galaxy_mcp_analysis.testing import rest

SVG = """<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200" viewBox="0 0 400 200">
  <rect width="400" height="200" fill="white"/><rect x="20" y="20" width="160" height="160" fill="#ff0000"/>
</svg>
"""


def encoded(picture: Image.Image, image_format: str, **options) -> bytes:
    out = io.BytesIO()
    picture.save(out, format=image_format, **options)
    return out.getvalue()


def plot(size: tuple[int, int]) -> Image.Image:
    """A plot-like picture: white, a red square top-left, a blue bar bottom-right."""
    picture = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(picture)
    width, height = size
    draw.rectangle((0, 0, width // 4, height // 4), fill=(255, 0, 0))
    draw.rectangle((width * 3 // 4, height // 2, width - 1, height - 1), fill=(0, 0, 255))
    return picture


@pytest.fixture(scope="module")
def images(galaxy, mcp, api_key, file_server):
    """Image datasets made in Galaxy by URL upload (their datatype declared), and an SVG pasted as text."""
    history = mcp.call_ok("create_history", name="images", api_key=api_key)["id"]
    files = {
        "large.png": ("png", encoded(plot((3200, 2400)), "PNG")),
        "small.jpg": ("jpg", encoded(plot((300, 200)), "JPEG", quality=90)),
        "small.gif": ("gif", encoded(plot((120, 80)).convert("P"), "GIF")),
        "wide.tiff": ("tiff", encoded(plot((2000, 500)), "TIFF")),  # Galaxy 26.1 has no webp datatype
        "figure.pdf": ("pdf", encoded(plot((1000, 700)), "PDF", resolution=100)),
    }
    elements = [{"src": "url", "url": file_server(name, data), "ext": extension, "name": name}
                for name, (extension, data) in files.items()]
    fetched = rest(galaxy.galaxy_url, "/api/tools/fetch", api_key, {  # one upload job for all of them
        "history_id": history, "targets": [{"destination": {"type": "hdas"}, "elements": elements}]})
    ids = {output["name"]: output["id"] for output in fetched["outputs"]}
    for dataset_id in ids.values():
        assert wait_for_dataset(galaxy, api_key, dataset_id, timeout=600)["state"] == "ok"
    pasted = mcp.call_ok("create_dataset_from_text", history_id=history, content=SVG, file_type="svg", name="chart.svg",
                         api_key=api_key)
    ids["chart.svg"] = pasted["dataset_id"]
    assert wait_for_state(galaxy, api_key, ids["chart.svg"], "ok", timeout=600) == "ok"
    return history, ids, files


def image_result(mcp, api_key, dataset_id):
    result = mcp.call("peek_dataset_content", {"dataset_id": dataset_id, "api_key": api_key})
    assert not result.is_error, result.content
    assert [block.type for block in result.content] == ["text", "image"], result.content
    block = result.content[1]
    picture = Image.open(io.BytesIO(base64.b64decode(block.data)))
    return result.structured_content, block, picture


def test_a_large_png_is_an_image_block_scaled_to_the_cap(mcp, api_key, images):
    _, ids, files = images
    read, block, picture = image_result(mcp, api_key, ids["large.png"])
    image = read["image"]
    assert (image["original_width"], image["original_height"], image["scaled"]) == (3200, 2400, True)
    assert picture.size == (image["width"], image["height"]) and block.mime_type == image["mime_type"] == "image/png"
    assert max(picture.size) <= MAX_LONG_SIDE and picture.size[0] * picture.size[1] <= MAX_PIXELS
    assert abs(picture.size[0] / picture.size[1] - 4 / 3) < 0.01
    # The model sees the figure: the red square top-left, the blue bar bottom-right.
    rgb = picture.convert("RGB")
    corner = (picture.size[0] - 5, picture.size[1] - 5)
    assert rgb.getpixel((5, 5)) == (255, 0, 0) and rgb.getpixel(corner) == (0, 0, 255)
    assert image["bytes"] == len(base64.b64decode(block.data)) < len(files["large.png"][1])
    assert (read["extension"], read["encoding"], read["eof"], "content" not in read) == ("png", "image", True, True)
    # The text block says what the image is for a reader of text.
    assert '"image":' in result_text(mcp, api_key, ids["large.png"])


def result_text(mcp, api_key, dataset_id) -> str:
    return mcp.call("peek_dataset_content", {"dataset_id": dataset_id, "api_key": api_key}).content[0].text


def test_a_small_image_is_sent_as_stored(mcp, api_key, images):
    _, ids, files = images
    for name, mime_type in (("small.jpg", "image/jpeg"), ("small.gif", "image/gif")):
        read, block, picture = image_result(mcp, api_key, ids[name])
        assert base64.b64decode(block.data) == files[name][1], name
        assert read["image"]["scaled"] is False and read["image"]["mime_type"] == block.mime_type == mime_type


def test_tiff_svg_and_pdf_become_pngs(mcp, api_key, images):
    _, ids, _ = images
    read, _, picture = image_result(mcp, api_key, ids["wide.tiff"])
    assert read["image"]["mime_type"] == "image/png"  # TIFF is not an image type MCP clients read
    assert (read["image"]["original_width"], read["image"]["original_height"]) == (2000, 500)
    assert picture.size == (MAX_LONG_SIDE, 392) and read["image"]["scaled"] is True
    read, block, picture = image_result(mcp, api_key, ids["chart.svg"])
    assert (block.mime_type, picture.size, read["image"]["scaled"]) == ("image/png", (400, 200), False)
    assert picture.convert("RGB").getpixel((100, 100)) == (255, 0, 0)  # the red square is drawn
    assert picture.convert("RGB").getpixel((300, 100)) == (255, 255, 255)
    read, block, picture = image_result(mcp, api_key, ids["figure.pdf"])
    assert block.mime_type == "image/png" and read["image"]["original_width"] == 1440  # 10 in at 144 dpi
    red, green, blue = picture.convert("RGB").getpixel((10, 10))  # Pillow's PDF holds the picture as a JPEG
    assert red > 240 and green < 20 and blue < 20


def test_allow_binary_still_returns_the_raw_bytes(mcp, api_key, images):
    _, ids, files = images
    read = mcp.call_ok("peek_dataset_content", dataset_id=ids["small.jpg"], allow_binary=True, api_key=api_key)
    assert read["encoding"] == "base64" and base64.b64decode(read["content"]) == files["small.jpg"][1]
    assert "image" not in read
    svg = mcp.call_ok("peek_dataset_content", dataset_id=ids["chart.svg"], allow_binary=True, api_key=api_key)
    assert svg["content"] == SVG  # an SVG is text: its XML


def test_a_collection_of_images_reads_as_image_blocks(galaxy, mcp, api_key, images):
    history, ids, files = images
    collection = rest(galaxy.galaxy_url, "/api/dataset_collections", api_key, {
        "history_id": history, "collection_type": "list", "name": "figures",
        "element_identifiers": [{"name": name, "src": "hda", "id": ids[name]} for name in ("small.jpg", "chart.svg")],
    })["id"]
    result = mcp.call("peek_collection_content", {"collection_id": collection, "api_key": api_key})
    assert not result.is_error, result.content
    assert [block.type for block in result.content] == ["text", "image", "image"]
    elements = result.structured_content["elements"]
    assert [element["image"]["mime_type"] for element in elements] == ["image/jpeg", "image/png"]
    assert base64.b64decode(result.content[1].data) == files["small.jpg"][1]


def test_an_svg_pointing_outside_itself_is_not_rendered(galaxy, mcp, api_key, images):
    history, _, _ = images
    hostile = SVG.replace("</svg>", '<image href="file:///etc/passwd" width="10" height="10"/></svg>')
    dataset = mcp.call_ok("create_dataset_from_text", history_id=history, content=hostile, file_type="svg",
                          api_key=api_key)
    assert wait_for_state(galaxy, api_key, dataset["dataset_id"], "ok", timeout=600) == "ok"
    message = mcp.call_error("peek_dataset_content", dataset_id=dataset["dataset_id"], api_key=api_key)
    assert "[VALIDATION_ERROR]" in message and "href to a 'file:' address" in message and "allow_binary=true" in message
    assert "/etc/passwd" not in message  # the reference's path is not echoed (it names a server file)


def test_a_page_embeds_an_image_dataset(mcp, api_key, images):
    history, ids, files = images
    content = f"A figure:\n\n```galaxy\nhistory_dataset_as_image(history_dataset_id={ids['small.jpg']})\n```\n"
    assert mcp.call_ok("validate_page_content", content=content, api_key=api_key)["valid"] is True
    page = mcp.call_ok("create_page", history_id=history, content=content, api_key=api_key)
    rendered = mcp.call_ok("get_page", page_id=page["page_id"], include_rendered=True, api_key=api_key)
    embedded = base64.b64encode(files["small.jpg"][1]).decode()
    assert f"![small.jpg](data:image/" in rendered["rendered_content"]
    assert embedded in rendered["rendered_content"]
