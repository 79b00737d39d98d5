#!/usr/bin/env python3
"""Print the supported-agents table, or rewrite it in docs/formats.md with --write.

The table is generated from the importer registry (tests/sessions/test_sess_readme.py
fails when docs/formats.md is out of date).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hermes_store.sessions.importers import IMPORTERS
from hermes_store.sessions.importers.catalog import README_END, README_START, readme_section

README = Path(__file__).resolve().parent.parent / "docs" / "formats.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="rewrite the table in docs/formats.md")
    args = parser.parse_args()
    section = readme_section(IMPORTERS)
    if not args.write:
        print(section)
        return 0
    text = README.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        print(f"{README}: markers not found ({README_START!r} ... {README_END!r})", file=sys.stderr)
        return 1
    README.write_text(text[:start] + section + text[end + len(README_END):], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
