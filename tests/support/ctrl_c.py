"""Children that Ctrl-C reaches, whatever the test process inherited."""

from __future__ import annotations

import sys

# A Python started with SIGINT ignored keeps ignoring it, and so does every Python it starts: that is
# what any test run inside a background job (`cmd &` in a script, `nohup`) would hand to the
# kafkatool it starts.  A test that interrupts a child starts it with this command, which puts
# Python's own Ctrl-C handler in place before kafkatool runs (tests/test_test_hygiene.py checks).
KAFKATOOL_CTRL_C = [
    sys.executable,
    "-c",
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('kafkatool', run_name='__main__', alter_sys=True)",
]

# kafkatool as a background job of a script starts it (`kafkatool … &`): SIGINT ignored from the start.
KAFKATOOL_BACKGROUND_JOB = [
    sys.executable,
    "-c",
    "import runpy, signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "runpy.run_module('kafkatool', run_name='__main__', alter_sys=True)",
]
