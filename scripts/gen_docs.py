#!/usr/bin/env python3
"""Regenerate completions/ and man/ from the CLI definitions (run after changing any option)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docgen import generated_files  # noqa: E402  (beside this script)


def main() -> int:
    files = generated_files()
    for sub in ("completions", "man"):
        for old in (ROOT / sub).glob("*"):
            if str(old.relative_to(ROOT)) not in files and old.name != "README.md":
                old.unlink()
    for rel, text in files.items():
        p = ROOT / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    print(f"wrote {len(files)} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
