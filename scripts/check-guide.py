#!/usr/bin/env python3
"""Checks the README and the docs before the guide is built: every relative link and image in
README.md and docs/**/*.md names a file that exists, every chapter of the guide is in its
SUMMARY.md (and every SUMMARY entry is a chapter), the README stays short (200 lines) and the
architecture map's lines within 120 characters.
Links to other sites are not fetched. Exits 1 with one line per problem."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
guide = root / "docs" / "guide" / "src"
problems = []

LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|\bsrc=\"([^\"]+)\"")


def links(path):
    fence = False
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        for m in LINK.finditer(line):
            yield n, m.group(1) or m.group(2)


files = [root / "README.md"] + sorted((root / "docs").rglob("*.md"))
files = [f for f in files if "book" not in f.relative_to(root).parts[:3]]
for f in files:
    for n, target in links(f):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        where = target.split("#", 1)[0]
        if not (f.parent / where).exists():
            problems.append(f"{f.relative_to(root)}:{n}: {target} is not a file")

summary = guide / "SUMMARY.md"
listed = {t.split("#", 1)[0] for _, t in links(summary)}
chapters = {p.name for p in guide.glob("*.md")} - {"SUMMARY.md"}
for missing in sorted(chapters - listed):
    problems.append(f"docs/guide/src/{missing} is not in SUMMARY.md")
for extra in sorted(listed - chapters):
    problems.append(f"SUMMARY.md lists {extra}, which is not a chapter")

readme_lines = len((root / "README.md").read_text().splitlines())
if readme_lines > 200:
    problems.append(f"README.md has {readme_lines} lines; it keeps to 200 (the rest is the guide)")

for n, line in enumerate((root / "docs" / "architecture.md").read_text().splitlines(), 1):
    if len(line) > 120:
        problems.append(f"docs/architecture.md:{n}: {len(line)} characters; the map keeps to 120")

for p in problems:
    print(f"check-guide: {p}")
sys.exit(1 if problems else 0)
