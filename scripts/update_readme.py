#!/usr/bin/env python3
"""Re-run the README's ```console examples and write their real output back into the README.

Needs a ZooKeeper for the cluster examples: it starts one (like the tests) and populates it.
Expected text that already matches (with its `...` elisions) is kept as written.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.readme import BLOCK, environment, examples, matches, run, shorten  # noqa: E402
from tests.support.readme_cluster import readme_cluster  # noqa: E402


def main() -> int:
    readme = ROOT / "README.md"
    text = readme.read_text()
    with tempfile.TemporaryDirectory() as tmp, readme_cluster(Path(tmp) / "zk") as zk:
        work = Path(tmp) / "tour"
        work.mkdir()
        env = environment({"ZK": zk})
        actual = {}
        for ex in examples(text):
            out = run(ex, work, env)
            actual[ex.command] = ex.expected if matches(ex.expected, out) else shorten(out)

    def rewrite(m):  # type: ignore[no-untyped-def]
        lines = []
        for line in m.group(1).splitlines():
            if line.startswith("$ "):
                lines.append(line + "\n" + actual[line[2:]])
        return "```console\n" + "".join(lines) + "```"

    readme.write_text(BLOCK.sub(rewrite, text))
    print(f"updated {len(actual)} examples")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
