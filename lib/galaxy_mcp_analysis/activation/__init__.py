"""Activation: checking and applying the runtime patches once per process, before Galaxy builds its app.

``registry`` is the generic part (a patch, its self-check, refusal to start, the start-up
line); ``patches`` is the table of what is patched and how. ``activate()`` is what the
entry points (``galaxy_mcp_analysis.worker``, ``galaxy_mcp_analysis.fast_factory``, the
``make serve`` launcher, the test mixin) call.
"""

from galaxy_mcp_analysis.activation.registry import Activation
from galaxy_mcp_analysis.core.settings import (
    Settings,
    SettingsError,
)


def activate(settings: Settings | None = None) -> Activation:
    """Check and apply every patch of ``patches.PATCHES`` (once per process); returns the activation."""
    from galaxy_mcp_analysis.activation import registry
    from galaxy_mcp_analysis.activation.patches import PATCHES
    from galaxy_mcp_analysis.operations import AnalysisOperationsManager

    if settings is None:
        try:
            settings = Settings.from_environ()
        except SettingsError as error:  # one line naming the variable and what it allows, no traceback
            raise registry.PatchSetRefused(f"galaxy-mcp-analysis refuses to start Galaxy: {error}") from None
    activation = registry.activate(settings, PATCHES)
    AnalysisOperationsManager.active_patches = activation.applied
    return activation


__all__ = ["activate"]
