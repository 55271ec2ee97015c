"""A private Slurm cluster on 127.0.0.1 (Debian's slurm-wlm + munge, no systemd), reached through Galaxy's CLI
job runner with its Slurm job plugin (``sbatch``/``squeue``/``scancel``), as sites without DRMAA do.

One ``munged`` (own key and socket), one ``slurmctld`` and one ``slurmd`` on private ports, all in the
foreground of process groups of their own and stopped by them; every command finds the cluster through
``SLURM_CONF`` (put into Galaxy's environment). ``jobcomp/filetxt`` appends one line per finished job to
``jobs.log`` (the engine's ``job_runner_log``). State is kept in ``root`` across restarts, so Slurm never
reuses a job id Galaxy may still hold.
"""

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from galaxy_mcp_analysis.serve.engines.base import (
    free_port,
    RunningEngine,
    stop_process,
    wait_for,
)

PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo", "scontrol")
SYSTEM_DIRS = ("/usr/sbin", "/usr/bin", "/sbin")
PARTITION = "galaxy"
#: Jobs that may share one CPU (the partition's OverSubscribe): Galaxy's small jobs mostly wait on files.
JOBS_PER_CPU = 4
START_TIMEOUT_SECONDS = 60

# Galaxy's Slurm job plugin asks ``sacct`` why a job failed (TIMEOUT, OUT_OF_MEMORY). Sites answer that from
# slurmdbd; this one-node cluster has no accounting database, so its ``sacct`` answers the plugin's one question
# (``-o JobIDRaw,State -P -n -j ID``) from the controller (``squeue -t all`` while it remembers the job, for
# MinJobAge seconds) and then from the job completion log. Anything else goes to the real sacct.
SACCT = """#!/bin/sh
# sacct for a cluster without slurmdbd: the state of one job (galaxy_mcp_analysis.serve.engines.slurm).
job=""; for arg in "$@"; do [ "$prev" = "-j" ] && job=$arg; prev=$arg; done
case "$*" in *JobIDRaw,State*) ;; *) exec {real} "$@" ;; esac
[ -n "$job" ] || exec {real} "$@"
if line=$(squeue -h -t all -o '%A|%T' -j "$job" 2>/dev/null) && [ -n "$line" ]; then echo "$line"; exit 0; fi
sed -n "s/^JobId=$job .*JobState=\\([A-Z_]*\\) .*/$job|\\1/p" '{log}' | tail -n 1
"""


def program(name: str) -> str | None:
    return shutil.which(name) or next((f"{d}/{name}" for d in SYSTEM_DIRS if os.access(f"{d}/{name}", os.X_OK)), None)


class SlurmEngine:
    name = "slurm"

    @classmethod
    def available(cls) -> str | None:
        if missing := [name for name in PROGRAMS if program(name) is None]:
            return f"Slurm is not installed ({', '.join(missing)} missing); install slurm-wlm and munge: sudo .ci/install-slurm"
        return None

    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.host = socket.gethostname().split(".")[0]
        self.conf = self.root / "slurm.conf"
        self.job_log = self.root / "jobs.log"
        self.processes: dict[str, subprocess.Popen] = {}
        # Unix sockets (munge's, slurmstepd's in the spool) must fit in 108 bytes: a short directory of their own.
        self.run_dir: Path | None = None

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def start(self) -> RunningEngine:
        self.root.mkdir(parents=True, exist_ok=True)
        self.run_dir = Path(tempfile.mkdtemp(prefix="slurm-", dir="/tmp"))
        try:
            self._start_munge()
            self._write_conf()
            self._spawn("slurmctld", [program("slurmctld"), "-D", "-f", str(self.conf)])
            self._spawn("slurmd", [program("slurmd"), "-D", "-f", str(self.conf)])
            wait_for(self._node_idle, START_TIMEOUT_SECONDS, "Slurm's node", self.root / "slurmctld.log")
        except BaseException:
            self.stop()
            raise
        bin_dir = self.root / "bin"
        bin_dir.mkdir(exist_ok=True)
        sacct = bin_dir / "sacct"
        sacct.write_text(SACCT.format(real=program("sacct") or "false", log=self.job_log))
        sacct.chmod(0o755)
        return RunningEngine(
            name=self.name,
            job_config=slurm_job_config(),
            job_runner_log=self.job_log,
            environ={"SLURM_CONF": str(self.conf), "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"},
            stopper=self.stop,
            details={"slurm_conf": str(self.conf)},
        )

    # ---- munge ----

    def _start_munge(self) -> None:
        munge = self.root / "munge"
        munge.mkdir(mode=0o700, exist_ok=True)
        munge.chmod(0o700)
        key = munge / "munge.key"
        if not key.exists():
            key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o400)
        self.socket = self.run_dir / "munge.socket"
        self._spawn("munged", [
            program("munged"), "-F", "-f", f"--key-file={key}", f"--socket={self.socket}",
            f"--pid-file={munge / 'munged.pid'}", f"--log-file={munge / 'munged.log'}", f"--seed-file={munge / 'munged.seed'}",
        ])
        wait_for(self.socket.exists, START_TIMEOUT_SECONDS, "munged", munge / "munged.log")

    # ---- slurm.conf ----

    def _write_conf(self) -> None:
        state = self.root / "state"
        state.mkdir(exist_ok=True)
        spool = self.run_dir / "spool"
        spool.mkdir()
        settings = {
            "ClusterName": "galaxy",
            "SlurmctldHost": f"{self.host}(127.0.0.1)",
            "SlurmctldPort": free_port(),
            "SlurmdPort": free_port(),
            "AuthType": "auth/munge",
            "CredType": "cred/munge",
            "AuthInfo": f"socket={self.socket}",
            "SlurmUser": "root",
            "SlurmdUser": "root",
            "StateSaveLocation": state,
            "SlurmdSpoolDir": spool,
            "SlurmctldPidFile": self.root / "slurmctld.pid",
            "SlurmdPidFile": self.root / "slurmd.pid",
            "SlurmctldLogFile": self.root / "slurmctld.log",
            "SlurmdLogFile": self.root / "slurmd.log",
            "ProctrackType": "proctrack/linuxproc",
            "TaskPlugin": "task/none",
            "JobAcctGatherType": "jobacct_gather/none",
            "AccountingStorageType": "accounting_storage/none",
            "JobCompType": "jobcomp/filetxt",
            "JobCompLoc": self.job_log,
            "SchedulerType": "sched/builtin",
            "SelectType": "select/cons_tres",
            "SelectTypeParameters": "CR_CPU",
            "ReturnToService": 2,
            "MpiDefault": "none",
            "KillWait": 2,  # seconds between SIGTERM and SIGKILL at a time limit or scancel
            "InactiveLimit": 0,
            "MinJobAge": 300,  # seconds a finished job stays in squeue -t all (Galaxy's plugin reads it there)
        }
        lines = [f"{key}={value}" for key, value in settings.items()]
        lines.append(f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN")
        lines.append(f"PartitionName={PARTITION} Nodes={self.host} Default=YES MaxTime=INFINITE State=UP "
                     f"OverSubscribe=FORCE:{JOBS_PER_CPU}")
        self.conf.write_text("\n".join(lines) + "\n")

    # ---- processes ----

    def _spawn(self, name: str, command: list) -> None:
        log = open(self.root / f"{name}.out", "ab")
        with log:
            self.processes[name] = subprocess.Popen(
                [str(part) for part in command], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=self.env, start_new_session=True,
            )

    def _node_idle(self) -> bool:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}: see {self.root}/{name}.log and {name}.out")
        result = self.slurm("sinfo", "-h", "-o", "%t")
        return result.returncode == 0 and result.stdout.strip() in ("idle", "mix", "alloc")

    def slurm(self, *command: str, timeout: float = 30) -> subprocess.CompletedProcess:
        """A Slurm command against this cluster."""
        return subprocess.run([program(command[0]), *command[1:]], capture_output=True, text=True,
                              env=self.env, timeout=timeout)

    def stop(self) -> None:
        """Cancel every job still in the cluster (nothing keeps running), then stop slurmd, slurmctld and
        munged by their process groups."""
        if "slurmctld" in self.processes and self.processes["slurmctld"].poll() is None:
            try:
                self.slurm("scancel", f"--user={os.getuid()}", timeout=10)
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline and self.slurm("squeue", "-h", "-o", "%A", timeout=10).stdout.strip():
                    time.sleep(0.2)
            except (subprocess.TimeoutExpired, OSError):
                pass
        for name in ("slurmd", "slurmctld", "munged"):
            stop_process(self.processes.pop(name, None))
        if self.run_dir is not None:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            self.run_dir = None


def slurm_job_config() -> dict:
    """Galaxy's jobs through the CLI runner's Slurm plugin. Metadata is set after the job, by Celery, as
    the local runner does with ``metadata_strategy: directory_celery`` (not inside the job script): the runner
    queues metadata and the job's finish one after the other, so it runs one worker thread to keep that order."""
    return {
        "runners": {"slurm": {"load": "galaxy.jobs.runners.cli:ShellJobRunner", "workers": 1}},
        "execution": {
            "default": "slurm",
            "environments": {
                "slurm": {
                    "runner": "slurm",
                    "shell_plugin": "LocalShell",
                    "job_plugin": "Slurm",
                    "embed_metadata_in_job": False,
                },
            },
        },
    }
