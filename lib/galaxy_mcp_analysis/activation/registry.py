"""The registry of every runtime patch the package applies to Galaxy, and activation.

A patch names the Galaxy object it touches and carries a self-check that the
object still has the shape the patch relies on. Activation checks the Galaxy
release and every patch *before* Galaxy builds its app, so an incompatible Galaxy
refuses to start with a message naming the patch instead of half-working.
The patches themselves are in ``activation.patches`` (PATCHES.md documents each entry;
``test_patches_md_has_one_row_per_registered_patch`` keeps them in step).
"""

import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass

from galaxy_mcp_analysis import __version__
from galaxy_mcp_analysis.core.settings import (
    ENV_PREFIX,
    Settings,
)

log = logging.getLogger(__name__)

#: Galaxy releases verified with this patch set: the newest (26.1.2) by the whole suite in CI, the
#: others by `make verify-release GALAXY=<release>` (self-checks, unit and foundation tests, the
#: field-report replay; doc/testing.md, "Which Galaxy releases are verified").
VERIFIED_RELEASES = ("26.1.0", "26.1.1", "26.1.2")
#: The release series the self-checks are written for; anything else is refused.
SUPPORTED_SERIES = "26.1"
OVERRIDE_VARIABLE = ENV_PREFIX + "ALLOW_UNVERIFIED"


@dataclass(frozen=True)
class Patch:
    id: str
    #: Dotted path of the Galaxy object the patch replaces or wraps.
    target: str
    summary: str
    #: Returns None when the target has the expected shape, else why not.
    check: Callable[[], str | None]
    apply: Callable[[Settings], None]


class PatchSetRefused(SystemExit):
    """Galaxy must not start: the message says which patch (or release) and why."""


@dataclass
class Activation:
    galaxy_version: str
    applied: tuple[str, ...]
    skipped: tuple[str, ...]
    settings: Settings

    @property
    def startup_line(self) -> str:
        line = (
            f"galaxy-mcp-analysis {__version__} active on Galaxy {self.galaxy_version}: "
            f"patches applied: {', '.join(self.applied) or 'none'}"
        )
        if self.skipped:
            line += f"; SKIPPED (self-check failed, {OVERRIDE_VARIABLE} set): {', '.join(self.skipped)}"
        return line


_activation: Activation | None = None


def galaxy_version() -> str:
    from galaxy.version import VERSION

    return VERSION


def release_problem(version: str) -> str | None:
    if version.split(".")[:2] != SUPPORTED_SERIES.split("."):
        return (
            f"Galaxy {version} is outside the supported series {SUPPORTED_SERIES}.x "
            f"(verified: {', '.join(VERIFIED_RELEASES)})."
        )
    return None


def activate(settings: Settings, patches: tuple[Patch, ...]) -> Activation:
    """Check and apply ``patches`` once per process; later calls return the first result.

    The registry receives what it applies (``galaxy_mcp_analysis.activation.patches.PATCHES``
    through ``galaxy_mcp_analysis.activation.activate``) and imports nothing above it.
    """
    global _activation
    if _activation is not None:
        return _activation
    version = galaxy_version()
    problems = []
    if problem := release_problem(version):
        problems.append(f"release: {problem}")
    failed = []
    for patch in patches:
        if reason := patch.check():
            failed.append(patch.id)
            problems.append(f"patch {patch.id} ({patch.target}): {reason}")
    if problems and not settings.allow_unverified:
        raise PatchSetRefused(
            "galaxy-mcp-analysis refuses to start Galaxy:\n  "
            + "\n  ".join(problems)
            + f"\nUpgrade galaxy-mcp-analysis, install a verified Galaxy ({', '.join(VERIFIED_RELEASES)}), "
            f"or set {OVERRIDE_VARIABLE}=true to start with the failing patches skipped."
        )
    for problem in problems:
        log.warning("galaxy-mcp-analysis: %s (continuing: %s=true)", problem, OVERRIDE_VARIABLE)
    applied = []
    for patch in patches:
        if patch.id not in failed:
            patch.apply(settings)
            applied.append(patch.id)
    _activation = Activation(version, tuple(applied), tuple(failed), settings)
    announce(_activation.startup_line)
    return _activation


def current() -> Activation | None:
    return _activation


def announce(line: str) -> None:
    # Activation runs before Galaxy configures logging (in the app factory or the
    # gunicorn arbiter); an unconfigured root logger would drop an INFO record, and so
    # would the WARNING-level root handler a Galaxy import sets up with basicConfig
    # (seen under gravity's gunicorn: the line was missing from gunicorn.log).
    if logging.getLogger().handlers and log.isEnabledFor(logging.INFO):
        log.info(line)
    else:
        print(line, file=sys.stderr, flush=True)
