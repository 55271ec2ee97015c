"""Text the database cannot store, refused before Galaxy starts writing.

PostgreSQL refuses NUL characters in text columns and over-long indexed values in the
middle of a flush (a server error, perhaps after part of a write); sqlite stores them. One
check for every write of the patch set (pages, pasted datasets, collections) says which
argument to fix instead.
"""

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)

#: Longest slug accepted: Galaxy indexes slugs, and PostgreSQL refuses index rows over 8191 bytes.
MAX_SLUG_LENGTH = 255
#: Largest annotation, in UTF-8 bytes: Galaxy indexes annotations too, and PostgreSQL's btree
#: index refuses a row over about 2,700 bytes (a 2 MiB page annotation was a server error there).
MAX_ANNOTATION_BYTES = 2000


def check_storable(**fields: str | None) -> None:
    """Refuse text the database cannot store, before Galaxy starts writing (PostgreSQL refuses NUL
    characters and over-long indexed values mid-flush; sqlite stores them)."""
    for name, value in fields.items():
        if value is not None and "\x00" in value:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"{name} contains a NUL character (\\x00), which Galaxy cannot store.",
                f"Remove the NUL characters from {name} and call again.",
            )
    annotation = fields.get("annotation")
    if annotation is not None and len(annotation.encode("utf-8", "surrogatepass")) > MAX_ANNOTATION_BYTES:
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            f"annotation is {len(annotation.encode('utf-8', 'surrogatepass'))} bytes long; "
            f"at most {MAX_ANNOTATION_BYTES} bytes are allowed.",
            "Keep the annotation to a sentence or two; put longer text in the page's content.",
        )
    slug = fields.get("slug")
    if slug is not None and len(slug) > MAX_SLUG_LENGTH:
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            f"slug is {len(slug)} characters long; at most {MAX_SLUG_LENGTH} are allowed.",
            "Use a short slug of lowercase letters, digits and '-', e.g. slug='amr-report'.",
        )
