"""Java oracle programs compiled and run at test time on this machine's JDK (with a jar on the class
path where the oracle is a library's): each case a line in, one line out."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

#: Kafka's TopicPartition as a probe's key: its `hashCode` (31 * (31 + partition) + topic.hashCode()),
#: equality, and `topic/partition` as it prints
JAVA_TP = """  static final class TP {
    final String t; final int p;
    TP(String t, int p) { this.t = t; this.p = p; }
    public int hashCode() { return 31 * (31 + p) + t.hashCode(); }
    public boolean equals(Object o) { return o instanceof TP && ((TP) o).t.equals(t) && ((TP) o).p == p; }
    public String toString() { return t + "/" + p; }
  }
"""


def compile_probe(
    work: Path, name: str, source: str, classpath: str | None = None
) -> Callable[[list[str]], list[str]]:
    """`name`.java written to `work` and compiled (javac, against `classpath`); the runner it returns
    feeds the cases to `java` one a line and gives back one output line per case."""
    (work / f"{name}.java").write_text(source)
    cp = [] if classpath is None else ["-cp", classpath]
    subprocess.run(["javac", *cp, f"{name}.java"], cwd=work, check=True, capture_output=True, timeout=300)
    run_cp = "." if classpath is None else f"{classpath}:."

    def run(cases: list[str]) -> list[str]:
        done = subprocess.run(
            ["java", "-cp", run_cp, name],
            cwd=work,
            input="\n".join(cases) + "\n",
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return done.stdout.split("\n")[: len(cases)]

    return run
