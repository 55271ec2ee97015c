"""Unit tests that need Galaxy's library (the ``galaxy`` package, no server) live in this folder;
every other unit test must pass with ``galaxy`` impossible to import, so its name tells the truth."""

import os
import subprocess
import sys
from pathlib import Path

import galaxy_mcp_analysis

UNIT = Path(__file__).parents[1]
#: The package these tests import (a worktree's lib on PYTHONPATH, not the checkout the virtualenv installed).
LIB = Path(galaxy_mcp_analysis.__file__).parents[1]

BLOCKER = '''import sys
class _NoGalaxy:
    def find_spec(self, name, path=None, target=None):
        if name == "galaxy" or name.startswith("galaxy."):
            raise ImportError(f"{name}: unit tests outside test/unit/galaxy_library may not import Galaxy")
sys.meta_path.insert(0, _NoGalaxy())
'''


def test_unit_tests_outside_this_folder_pass_without_galaxy(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={tmp_path / 'run'}",
         f"--ignore={Path(__file__).parent}", str(UNIT)],
        capture_output=True, text=True, timeout=600, env={"PYTHONPATH": os.pathsep.join((str(tmp_path), str(LIB))), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1], done.stdout[-500:]
