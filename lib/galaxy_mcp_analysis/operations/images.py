"""An image dataset as an image an agent can look at: decoded with Pillow (Galaxy's own dependency),
SVG rendered by resvg (resvg-py) and PDF's first page by PDFium (pypdfium2), both wheels with their
renderer inside, so a fresh install needs no system package. A missing renderer or an image that
cannot be decoded is a coded error saying so; the raw bytes stay reachable with allow_binary.
"""

import io
import os
import re

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.images import (
    fitted_size,
    ImageBlock,
    SENDABLE_MIME_TYPES,
    svg_external_reference,
    svg_size,
)

#: PDF pages are measured in points (1/72 inch); rendered at 144 dpi, a plot's labels stay readable.
PDF_SCALE = 2.0
#: An SVG larger than this is not rendered (its text is still readable).
MAX_SVG_BYTES = 8 * 1024 * 1024
#: Bytes of one image at most: past the pixel cap's ~1,600 tokens an image shows a model nothing more, and
#: every byte travels (base64, a third more) with each result an agent keeps.
MAX_IMAGE_BYTES = 512 * 1024
#: Each attempt to fit the byte budget shrinks the image's sides by this factor.
SHRINK = 0.7


def image_of(path: str, kind: str, name: str, byte_budget: int) -> ImageBlock:
    """The dataset at ``path`` as an image within the size cap (core.images) and ``byte_budget`` bytes."""
    from PIL import (
        Image,
        UnidentifiedImageError,
    )

    try:
        if kind in ("svg", "pdf"):  # rendered straight at the capped size
            frame, original = _rendered_svg(path) if kind == "svg" else _rendered_pdf(path)
            keep_jpeg, target = False, frame.size
        else:
            with Image.open(path) as picture:
                original, target = picture.size, fitted_size(*picture.size)
                sendable = picture.format in SENDABLE_MIME_TYPES and not getattr(picture, "is_animated", False)
                if sendable and target == original and os.path.getsize(path) <= byte_budget:
                    with open(path, "rb") as stored:  # sent as stored: no re-encoding loss, no time spent
                        return ImageBlock(stored.read(), SENDABLE_MIME_TYPES[picture.format], *original, *original)
                keep_jpeg = picture.format == "JPEG"
                if keep_jpeg:  # decode a large JPEG at a reduced scale (still >= target): less time and memory
                    picture.draft("RGB", target)
                # An alpha channel only where the source has one: it costs a PNG a quarter more bytes.
                transparent = picture.mode in ("RGBA", "LA", "PA") or "transparency" in picture.info
                frame = picture.convert("RGBA" if transparent and not keep_jpeg else "RGB")
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError) as unreadable:
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            f"Dataset {name!r} could not be decoded as an image ({type(unreadable).__name__}: {unreadable}).",
            "Check its datatype with get_dataset_details, or read its bytes with allow_binary=true.",
        ) from None
    budget = min(byte_budget, MAX_IMAGE_BYTES)
    while True:
        sized = frame if target == frame.size else frame.resize(target, Image.Resampling.LANCZOS)
        data = _encoded(sized, keep_jpeg)
        if len(data) > budget and not keep_jpeg and sized.mode == "RGB":
            # A photo-like or finely shaded picture: JPEG keeps its size where PNG would have to shrink it.
            if len(jpeg := _encoded(sized, True)) <= budget:
                return ImageBlock(jpeg, "image/jpeg", *target, *original)
        if len(data) <= budget or max(target) <= 64:
            return ImageBlock(data, "image/jpeg" if keep_jpeg else "image/png", *target, *original)
        target = fitted_size(*target, long_side=int(max(target) * SHRINK))


def _encoded(frame, jpeg: bool) -> bytes:
    out = io.BytesIO()
    if jpeg:
        frame.save(out, format="JPEG", quality=85)
    else:
        frame.save(out, format="PNG", optimize=False)
    return out.getvalue()


def _renderer_missing(package: str, what: str) -> AnalysisError:
    return AnalysisError(
        ErrorCode.VALIDATION_ERROR,
        f"This Galaxy cannot render {what} as an image: the Python package {package} is not installed.",
        f"Ask the Galaxy admin to install {package}; meanwhile read it with allow_binary=true"
        + (" or as text (an SVG is XML)." if what == "SVG" else "."),
    )


def _rendered_svg(path: str):
    """(bitmap at the capped size, the SVG's own size)."""
    try:
        import resvg_py
    except ImportError:
        raise _renderer_missing("resvg-py", "SVG") from None
    from PIL import Image

    if os.path.getsize(path) > MAX_SVG_BYTES:
        raise ValueError(f"the SVG is larger than {MAX_SVG_BYTES // (1024 * 1024)} MiB")
    with open(path, "rb") as source:
        svg = source.read()
    if (reference := svg_external_reference(svg)) is not None:
        # Named by its scheme only: the reference may be a server path ("file:///etc/...").
        scheme = re.match(r"[A-Za-z][\w+.-]*:", reference)
        target = f"a {scheme.group(0).lower()!r} address" if scheme else "a relative path"
        raise ValueError(f"the SVG has an href to {target} outside itself, which is never fetched")
    size = svg_size(svg[:8192])
    original = tuple(max(1, round(side)) for side in size) if size else None
    # Render straight at the capped size: a huge declared size never makes a huge bitmap.
    width, height = fitted_size(*original) if original else (None, None)
    png = resvg_py.svg_to_bytes(svg_string=svg.decode("utf-8", errors="replace"), width=width, height=height)
    with Image.open(io.BytesIO(bytes(png))) as picture:
        frame = picture.convert("RGBA")
    if original is None:  # no stated size: resvg's default; capped like any bitmap
        original = frame.size
        frame = frame.resize(fitted_size(*original), Image.Resampling.LANCZOS)
    return frame, original


def _rendered_pdf(path: str):
    """(first page at the capped size, its size at 144 dpi)."""
    try:
        import pypdfium2
    except ImportError:
        raise _renderer_missing("pypdfium2", "PDF") from None
    try:
        document = pypdfium2.PdfDocument(path)
    except pypdfium2.PdfiumError as unreadable:
        raise ValueError(str(unreadable)) from None
    try:
        page = document[0]
        full = (max(1, round(page.get_width() * PDF_SCALE)), max(1, round(page.get_height() * PDF_SCALE)))
        target = fitted_size(*full)
        frame = page.render(scale=PDF_SCALE * target[0] / full[0]).to_pil().convert("RGB")  # pages are opaque
    finally:
        document.close()
    return frame, full
