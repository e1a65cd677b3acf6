#!/usr/bin/env python3
"""Re-run the ```console examples of README.md and docs/*.md and write their real output back.

README's examples run in order in one scratch dir; each docs/ page's in a scratch dir of its own.
Needs a ZooKeeper for the cluster examples: it starts one (like the tests) and populates a chroot
per file.  Expected text that already matches (with its `...` elisions) is kept as written.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import FIXTURES  # noqa: E402
from tests.support.readme import environment, page_environment, pages, refreshed  # noqa: E402
from tests.support.readme_cluster import populated, readme_cluster  # noqa: E402


def main() -> int:
    only = set(sys.argv[1:])  # file names to refresh (default: all)
    files = [ROOT / "README.md", *pages(ROOT / "docs")]
    files = [f for f in files if not only or f.name in only or str(f.relative_to(ROOT)) in only]
    with tempfile.TemporaryDirectory() as tmp, readme_cluster(Path(tmp) / "zk") as zk:
        root = zk.rsplit("/", 1)[0]
        for f in files:
            work = Path(tmp) / f.stem
            work.mkdir()
            text = f.read_text()
            if f.name == "README.md":
                f.write_text(refreshed(text, work, environment({"ZK": zk})))
            else:
                name = f"docs-{f.stem}"
                with populated(f"{root}/{name}"):
                    f.write_text(refreshed(text, work, page_environment(text, root, name, FIXTURES)))
            print(f"updated {f.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
