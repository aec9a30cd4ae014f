"""Which stored units keep a run serving although nothing is left to collect (issue 25, item 1): finished
work whose page never submitted, counted once per registration, and no longer once its page took it
back (the browser test in test_one_owner.py runs the whole relaunch)."""
from __future__ import annotations

from parlai_acute.mephisto_tasks.acute.runner import AcuteEvalRunner
from parlai_acute.mephisto_tasks.acute.state import SCHEMA
from parlai_acute.mephisto_tasks.live.sessions import Sessions


def state(judged: int, *, submitted: bool = False, registration: str = "a1-w") -> dict:
    data = {"schema": SCHEMA, "plan": [{"pair": 0}, {"pair": 1}], "comparisons": [{}] * judged,
            "registration": registration}
    if submitted:
        data["final_submission"] = {}
    return data


def test_only_finished_never_submitted_units_are_waited_for_and_each_once():
    sessions = Sessions(AcuteEvalRunner.resumable, AcuteEvalRunner.holds_work)
    sessions.add("w", "a1-w", None, state(2))  # finished, the launcher stopped before the page's submit
    sessions.add("w", "a1-w", None, state(2))  # the same registration read twice: one page, one slot
    sessions.add("v", "a2-v", None, state(2, submitted=True, registration="a2-v"))  # submitted: done
    sessions.add("u", "a3-u", None, state(1, registration="a3-u"))  # unfinished: resumable work, not a submit
    sessions.add("t", None, None, state(2, registration=""))  # no registration: no page can come back for it
    assert sessions.unsubmitted() == 1
    assert sessions.take("w", "a1-w") is not None  # its page registered again and was handed the work
    assert sessions.unsubmitted() == 0


def test_a_run_waits_for_an_unsubmitted_page_as_long_as_an_assignment_lasts_then_ends():
    """All work handed out, one finished page not yet submitted: the run keeps its unit slot for that
    page, but not past the assignment's duration (the provider expires it then), so a page that never
    comes back cannot keep a run up for ever; the work stays open for a later launch."""
    import time
    import types

    from parlai_acute.mephisto_tasks.live.live_runner import LiveRunner

    sessions = Sessions(AcuteEvalRunner.resumable, AcuteEvalRunner.holds_work)
    sessions.add("w", "a1-w", None, state(2))
    runner = object.__new__(LiveRunner)
    runner.scheduler = types.SimpleNamespace(complete=lambda: True, stop=None)
    runner.sessions, runner.duration, runner._no_more_work_said = sessions, 0.3, True
    runner._stopped_and_done_at, runner._unsubmitted_since, runner._unsubmitted_given_up = None, None, False
    assert runner.finished() is False
    time.sleep(0.35)
    assert runner.finished() is True and sessions.unsubmitted() == 1
