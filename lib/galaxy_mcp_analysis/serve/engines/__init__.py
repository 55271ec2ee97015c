"""Where Galaxy's jobs run (``make serve JOB_RUNNER=local|slurm|pulsar``): each engine is started before
Galaxy and stopped after it, and gives Galaxy its job configuration (base.RunningEngine)."""

from pathlib import Path

from galaxy_mcp_analysis.serve.engines.base import (
    EngineNotAvailable,
    RunningEngine,
)
from galaxy_mcp_analysis.serve.engines.local import LocalEngine
from galaxy_mcp_analysis.serve.engines.pulsar import PulsarEngine
from galaxy_mcp_analysis.serve.engines.slurm import SlurmEngine

#: Engine name -> class (``available()``, ``EngineClass(root).start()``).
ENGINES: dict[str, type] = {
    "local": LocalEngine,
    "slurm": SlurmEngine,
    "pulsar": PulsarEngine,
}

DEFAULT_ENGINE = "local"


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


__all__ = ["DEFAULT_ENGINE", "ENGINES", "EngineNotAvailable", "RunningEngine", "start_engine"]
