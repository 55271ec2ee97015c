import re
from pathlib import Path

import pytest

from galaxy_mcp_analysis.activation import registry
from galaxy_mcp_analysis.activation.patches import PATCHES
from galaxy_mcp_analysis.activation.registry import (
    activate,
    Patch,
    PatchSetRefused,
    release_problem,
)
from galaxy_mcp_analysis.core.settings import Settings


@pytest.fixture(autouse=True)
def fresh_activation(monkeypatch):
    monkeypatch.setattr(registry, "_activation", None)


def fake_patch(patch_id, reason=None, applied=None):
    return Patch(patch_id, f"galaxy.{patch_id}", "test", lambda: reason, lambda settings: applied.append(patch_id))


def test_a_failing_self_check_refuses_to_start_naming_the_patch():
    applied = []
    patches = (fake_patch("good", applied=applied), fake_patch("moved", "the target moved", applied))
    with pytest.raises(PatchSetRefused) as refused:
        activate(Settings(), patches)
    message = str(refused.value)
    assert "patch moved (galaxy.moved): the target moved" in message
    assert "GALAXY_MCP_ANALYSIS_ALLOW_UNVERIFIED=true" in message
    assert applied == []  # nothing is half-applied


def test_the_override_skips_failing_patches_and_applies_the_rest():
    applied = []
    patches = (fake_patch("good", applied=applied), fake_patch("moved", "the target moved", applied))
    activation = activate(Settings(allow_unverified=True), patches)
    assert applied == ["good"]
    assert activation.skipped == ("moved",)
    assert "SKIPPED" in activation.startup_line and "moved" in activation.startup_line


def test_activation_happens_once_per_process():
    applied = []
    first = activate(Settings(), (fake_patch("once", applied=applied),))
    assert activate(Settings(), (fake_patch("again", applied=applied),)) is first
    assert applied == ["once"]


@pytest.mark.parametrize(("version", "refused"), [("26.1.2", False), ("26.1.0", False), ("26.0.3", True), ("27.0", True)])
def test_release_series(version, refused):
    assert (release_problem(version) is not None) == refused


def test_every_real_patch_passes_its_self_check_on_the_installed_galaxy():
    assert {patch.id: patch.check() for patch in PATCHES} == {patch.id: None for patch in PATCHES}


def test_patches_md_has_one_row_per_registered_patch():
    text = (Path(__file__).parents[3] / "PATCHES.md").read_text()
    rows = re.findall(r"^\| `([a-z-]+)` \| `([^`]+)` \|", text, re.MULTILINE)
    assert [(patch.id, patch.target) for patch in PATCHES] == rows


REPO = Path(__file__).parents[3]


def test_every_test_patches_md_names_exists_in_the_file_it_names():
    """The "proved by" column names real tests: `test_x`, `test_y` (file.py) means both are in file.py.
    Every name is followed by its file, and every file the column names exists. The rows of patches outside
    Galaxy (the Pulsar the launcher starts) are checked too."""
    files = {path.relative_to(REPO).as_posix(): path for path in (REPO / "test").rglob("test_*.py")}
    rows = [line for line in (REPO / "PATCHES.md").read_text().splitlines() if line.startswith("| `")]
    assert len([row for row in rows if re.match(r"\| `[a-z-]+` \|", row)]) == len(PATCHES)
    missing, checked = [], 0
    for row in rows:
        proved_by = row.rstrip(" |").rsplit(" | ", 1)[1]
        # A run of names, then its file in parentheses (a remark may follow the file after a colon).
        runs = re.findall(r"((?:`test_\w+`(?:, )?)+) \(((?:test/[\w/]+/)?test_\w+\.py)[):]", proved_by)
        named = re.findall(r"`(test_\w+)`", proved_by)
        in_runs = [name for names, _ in runs for name in re.findall(r"`(test_\w+)`", names)]
        if in_runs != named:
            missing.append(f"{row[:40]}: names without their file: {sorted(set(named) - set(in_runs))}")
        for names, file_name in runs:
            # test/unit and test/integration may both have a test_x.py: a bare file name counts in either.
            candidates = [path for key, path in files.items() if key == file_name or key.endswith("/" + file_name)]
            if not candidates:
                missing.append(f"{file_name}: no such test file")
            for name in re.findall(r"`(test_\w+)`", names):
                checked += 1
                if not any(re.search(rf"^(?:async )?def {name}\(", path.read_text(), re.MULTILINE) for path in candidates):
                    missing.append(f"{name} ({file_name})")
        for file_name in re.findall(r"(?<![\w/])(test/[\w/]+/test_\w+\.py)", proved_by):
            if file_name not in files:
                missing.append(f"{file_name}: no such test file")
    assert not missing, missing
    assert checked >= len(PATCHES)


def test_the_admin_guides_start_up_line_lists_every_patch():
    text = (REPO / "doc" / "admin-guide.md").read_text()
    [line] = re.findall(r"patches applied: (.+)", text)
    assert line.split(", ") == [patch.id for patch in PATCHES]


def test_a_setting_out_of_bounds_refuses_to_start_in_one_line(monkeypatch):
    """What the entry points (fast_factory, the worker, the launcher) call: a bad variable is PatchSetRefused
    (SystemExit: its message is all Python prints, no traceback), naming the variable and what it allows."""
    from galaxy_mcp_analysis.activation import activate as activate_patch_set

    monkeypatch.setenv("GALAXY_MCP_ANALYSIS_OAUTH_ACCESS_TOKEN_SECONDS", "5")
    with pytest.raises(PatchSetRefused) as refused:
        activate_patch_set()
    assert str(refused.value) == ("galaxy-mcp-analysis refuses to start Galaxy: "
                                  "GALAXY_MCP_ANALYSIS_OAUTH_ACCESS_TOKEN_SECONDS='5' must be from 10 to 86400 (seconds).")
