"""Where Galaxy's jobs run (``make serve JOB_RUNNER=local|slurm|pulsar``): each engine is started before
Galaxy and stopped after it, and gives Galaxy its job configuration (base.RunningEngine)."""

from pathlib import Path

from galaxy_mcp_analysis.serve.engines.base import (
    EngineNotAvailable,
    RunningEngine,
)
from galaxy_mcp_analysis.serve.engines.local import LocalEngine
from galaxy_mcp_analysis.serve.engines.pulsar import PulsarEngine
from galaxy_mcp_analysis.serve.engines.routes import combined
from galaxy_mcp_analysis.serve.engines.slurm import SlurmEngine

#: Engine name -> class (``available()``, ``EngineClass(root).start()``).
ENGINES: dict[str, type] = {
    "local": LocalEngine,
    "slurm": SlurmEngine,
    "pulsar": PulsarEngine,
}

DEFAULT_ENGINE = "local"


def engine_names(switch: str) -> list[str]:
    """``JOB_RUNNER``'s engines: one name, or several comma-separated (the first is the default)."""
    names = [name.strip() for name in switch.split(",") if name.strip()]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"JOB_RUNNER={switch!r}: name each engine once, comma-separated ({', '.join(ENGINES)})")
    if unknown := [name for name in names if name not in ENGINES]:
        raise ValueError(f"unknown job runner {', '.join(unknown)}; choose from {', '.join(ENGINES)}")
    return names


def start_engines(switch: str, root: Path) -> RunningEngine:
    """Start every engine ``switch`` names, each in ``root/<name>``: one engine as it is, several behind
    one Galaxy (routes.combined); those already started are stopped again if a later one fails."""
    names = engine_names(switch)
    if len(names) == 1:
        return start_engine(names[0], Path(root) / names[0])
    started: list[RunningEngine] = []
    try:
        for name in names:
            started.append(start_engine(name, Path(root) / name))
    except BaseException:
        for engine in reversed(started):
            engine.stop()
        raise
    return combined(started)


def start_engine(name: str, root: Path) -> RunningEngine:
    """Start the engine ``name`` with its files under ``root``; EngineNotAvailable when not installed."""
    if name not in ENGINES:
        raise ValueError(f"unknown job runner {name!r}; choose one of {', '.join(ENGINES)}")
    engine = ENGINES[name]
    if reason := engine.available():
        raise EngineNotAvailable(reason)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    return engine(root).start()


__all__ = ["DEFAULT_ENGINE", "ENGINES", "EngineNotAvailable", "RunningEngine", "engine_names", "start_engine",
           "start_engines"]
