"""Job engines (placeholder of the framework's shape until the slurm branch lands)."""

from dataclasses import dataclass
from pathlib import Path


@dataclass
class RunningEngine:
    name: str
    job_config: dict
    job_runner_log: Path | None

    def stop(self) -> None:
        pass

    def describe(self) -> dict:
        return {}


def _engines() -> dict:
    from galaxy_mcp_analysis.serve.engines.pulsar import PulsarEngine

    return {"pulsar": PulsarEngine}


def start_engine(name: str, root: Path) -> RunningEngine:
    return _engines()[name](root).start()
