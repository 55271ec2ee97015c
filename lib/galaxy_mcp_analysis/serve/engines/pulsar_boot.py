"""Starts a Pulsar server (run by Pulsar's own interpreter, by path: nothing of this package is imported).

Two changes to Pulsar 0.16.0 as ``.ci/install-pulsar`` pins it, both in this process only:

* Logging. ``pulsar-serve`` (its gunicorn mode) configures no logging for Pulsar's own loggers, so their INFO
  lines (a job's status changes, outputs staged back) would be dropped; they go to standard output here.
* A job lost in a restart is said to be lost. A job that was running when Pulsar stopped cannot be taken up
  again by the ``queued_python`` manager (its command line is deleted when it starts). Pulsar's recovery then
  reports the job ``lost``, but only to a message queue's listener; over REST its status route keeps answering
  ``running`` (the job's pid file is still there), so Galaxy would poll the job for ever. Here the recovery
  also records ``lost`` as the job's final status, which the status route reads first: Galaxy's Pulsar
  runner then fails the job with its own message ("Remote job server could not determine this job's
  state."), and nothing is run a second time. Pulsar on a message queue needs none of this.

    python pulsar_boot.py SERVER_INI
"""

import logging
import os
import sys

# Run by path, this file's directory comes first on sys.path, where the package's own pulsar.py would shadow Pulsar.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != _HERE]


def record_lost_jobs() -> None:
    from pulsar.managers import stateful, status

    mangled = "_StatefulManagerProxy__handle_recovery_problem"
    report_lost = getattr(stateful.StatefulManagerProxy, mangled)

    def recovery_problem(self, job_id: str) -> None:
        directory = self._proxied_manager.job_directory(job_id)
        with directory.lock("status"):
            if not directory.has_metadata(stateful.JOB_FILE_FINAL_STATUS):
                directory.store_metadata(stateful.JOB_FILE_FINAL_STATUS, status.LOST)
        report_lost(self, job_id)

    setattr(stateful.StatefulManagerProxy, mangled, recovery_problem)


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s [%(name)s] %(message)s")
    record_lost_jobs()
    from pulsar.scripts.serve import main as serve

    return serve()


if __name__ == "__main__":
    sys.exit(main())
