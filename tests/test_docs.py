"""Every relative link of the README and the docs leads to a file of the repository: a
moved study, config or results file must not leave a reader at a dead link. Links into
what a command makes (metrics/, training/, corpus/, assets/, packages/) are not checked."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "archive" / "README.md"]
# [text](target) and ![alt](target); the target ends at whitespace or ")"
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
MADE_BY_COMMANDS = {"metrics", "training", "corpus", "assets", "packages"}


def relative_links(page: Path):
    text = page.read_text(encoding="utf8")
    # links inside code blocks are examples, not links
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # a URL, mailto: or an anchor in the same page
        yield target.split("#", 1)[0]


@pytest.mark.parametrize("page", [p for p in PAGES if p.exists()], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_lead_to_files(page):
    missing = []
    for target in relative_links(page):
        path = (page.parent / target).resolve()
        try:
            parts = path.relative_to(ROOT).parts
        except ValueError:
            missing.append(f"{target} (outside the repository)")
            continue
        if MADE_BY_COMMANDS & set(parts):
            continue
        if not path.exists():
            missing.append(target)
    assert missing == [], f"{page.relative_to(ROOT)}: dead links {missing}"
