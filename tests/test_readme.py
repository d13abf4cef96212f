"""The README is the newcomer's five minutes: short, the two set-up commands, links that resolve."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAX_README_LINES = 180


def test_readme_is_short():
    lines = len(README.splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines (max {MAX_README_LINES}): move detail to docs/"


def test_readme_gives_exactly_the_two_setup_commands():
    assert "make chat" in README and "make test" in README
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^chat:", makefile, re.M) and re.search(r"^test:", makefile, re.M)


def test_readme_links_resolve():
    missing = [target for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
               if not target.startswith("http") and not (ROOT / target).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"
