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
