"""The launcher's stop is bounded: a Mephisto shutdown that never returns ends the process anyway."""
from __future__ import annotations

import subprocess
import sys
import textwrap

STUCK = textwrap.dedent("""
    import sys, time
    from parlai_acute.mephisto_tasks.live.launcher import shutdown_deadline
    with shutdown_deadline([], seconds=0.5, interrupted=sys.argv[1] == "signal"):
        time.sleep(60)  # a shutdown that hangs
    print("returned")
""")

QUICK = textwrap.dedent("""
    import time
    from parlai_acute.mephisto_tasks.live.launcher import shutdown_deadline
    with shutdown_deadline([], seconds=1.0):
        pass
    time.sleep(2)  # past the deadline: the cancelled timer must not fire
    print("returned")
""")


def test_a_hanging_shutdown_is_ended_with_a_message():
    done = subprocess.run([sys.executable, "-c", STUCK, "signal"], capture_output=True, text=True, timeout=50)
    assert done.returncode == 130 and "returned" not in done.stdout
    assert "did not finish in 0.5 s" in done.stderr and "already stored" in done.stderr
    # a run that ended by itself and then hung is not reported as stopped by a signal
    done = subprocess.run([sys.executable, "-c", STUCK, "done"], capture_output=True, text=True, timeout=50)
    assert done.returncode == 1 and "did not finish in 0.5 s" in done.stderr


def test_a_shutdown_that_returns_is_left_alone():
    done = subprocess.run([sys.executable, "-c", QUICK], capture_output=True, text=True, timeout=50)
    assert done.returncode == 0 and done.stdout.strip() == "returned" and done.stderr == ""
