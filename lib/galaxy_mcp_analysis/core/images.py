"""Which datasets are shown to an agent as an image, and at what size.

A multimodal model reads an MCP ``image`` content block; the same bytes as base64 text are noise to it.
The size cap: Claude's vision input downscales any image whose long side exceeds 1568 px or whose area
exceeds about 1.15 megapixels (~1,600 tokens); GPT-4o's high-detail mode fits images in 2048 px and then
scales the short side to 768 px. Pixels past those limits cost the agent bytes (base64 in every result it
keeps in context) and buy no detail the model sees, so an image is scaled down to fit both bounds.
"""

import re
from dataclasses import dataclass

#: Long side of a returned image, in pixels (the largest any common multimodal model keeps).
MAX_LONG_SIDE = 1568
#: Area of a returned image, in pixels (Claude's ~1,600-token bound).
MAX_PIXELS = 1_150_000

#: Galaxy extensions shown as images: ``raster`` ones decoded as they are, ``svg`` and ``pdf`` rendered to PNG.
RASTER_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "webp", "tiff", "bmp"})
RENDERED_EXTENSIONS = {"svg": "svg", "pdf": "pdf"}

#: Formats a returned image keeps when it is sent unchanged (every multimodal MCP client reads these).
SENDABLE_MIME_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}

_SVG_TAG = re.compile(rb"<svg\b[^>]*>", re.IGNORECASE | re.DOTALL)
_LENGTH = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(px)?\s*$")
_HREF = re.compile(rb"""href\s*=\s*["']\s*([^"'#\s][^"']*)["']""", re.IGNORECASE)


def image_kind(extension: str) -> str | None:
    """``raster``, ``svg`` or ``pdf`` for a dataset shown as an image; None for everything else."""
    if extension in RASTER_EXTENSIONS:
        return "raster"
    return RENDERED_EXTENSIONS.get(extension)


def fitted_size(width: int, height: int, long_side: int = MAX_LONG_SIDE, pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """The largest size with ``width:height``'s aspect that fits both bounds (never larger than the original)."""
    if width <= 0 or height <= 0:
        return max(width, 1), max(height, 1)
    scale = min(1.0, long_side / max(width, height), (pixels / (width * height)) ** 0.5)
    # The epsilon keeps a binding bound exact (6000 * 1568 / 6000 is 1567.99... in floating point).
    return max(1, int(width * scale + 1e-9)), max(1, int(height * scale + 1e-9))


def svg_size(head: bytes) -> tuple[float, float] | None:
    """The intrinsic size of an SVG from its root tag (``width``/``height`` in px, else the viewBox), if stated."""
    tag = _SVG_TAG.search(head)
    if tag is None:
        return None
    attributes = dict(
        (name.decode().lower(), value.decode(errors="replace"))
        for name, value in re.findall(rb"""([A-Za-z:-]+)\s*=\s*["']([^"']*)["']""", tag.group(0))
    )
    width, height = (_LENGTH.match(attributes.get(name, "")) for name in ("width", "height"))
    if width and height:
        return float(width.group(1)), float(height.group(1))
    box = attributes.get("viewbox", "").replace(",", " ").split()
    if len(box) == 4:
        try:
            box_width, box_height = float(box[2]), float(box[3])
        except ValueError:
            return None
        if box_width > 0 and box_height > 0:
            return box_width, box_height
    return None


def svg_external_reference(svg: bytes) -> str | None:
    """The first ``href`` of an SVG that points outside it (a file or URL), or None.

    Such a reference is never followed: a renderer would read a server file or fetch a URL on the
    caller's behalf. Same-document (``#id``) and inline ``data:`` references are fine.
    """
    for match in _HREF.finditer(svg):
        target = match.group(1).decode(errors="replace")
        if not target.lower().startswith("data:"):
            return target
    return None


@dataclass(frozen=True)
class ImageBlock:
    """An image to send as an MCP ``image`` content block, and what the structured result says of it."""

    data: bytes
    mime_type: str
    width: int
    height: int
    original_width: int
    original_height: int

    @property
    def scaled(self) -> bool:
        return (self.width, self.height) != (self.original_width, self.original_height)

    def as_dict(self) -> dict:
        return {
            "mime_type": self.mime_type,
            "width": self.width,
            "height": self.height,
            "original_width": self.original_width,
            "original_height": self.original_height,
            "scaled": self.scaled,
            "bytes": len(self.data),
        }


class WithImages(dict):
    """A tool's structured result that also carries image blocks, sent after its text block in that order."""

    def __init__(self, result: dict, images: list[ImageBlock]):
        super().__init__(result)
        self.images = list(images)
