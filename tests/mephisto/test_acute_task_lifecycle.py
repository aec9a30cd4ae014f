"""Stopping and restarting the ACUTE-Eval task, and bad input: nothing lost, nothing left behind."""
from __future__ import annotations

import socket
import subprocess

import pytest

from acute_task_helpers import Launcher, free_port, launch_cmd, make_pairings, pid_alive, write_pairings

from parlai_acute.mephisto_tasks.live import setup
from parlai_acute.mephisto_tasks.acute import simulated_workers as sw
from parlai_acute.mephisto_tasks.acute import store


def prefer_a(view):
    try:
        return sw.side_with_text(view, "hike"), "coherent and asks a question"
    except LookupError:
        return sw.side_with_text(view, "A-line"), "A answers more warmly"


def test_sigterm_mid_run_keeps_judgments_stops_router_and_relaunch_continues(tmp_path, launch, chromium):
    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(6))
    overrides = ("mephisto.blueprint.comparisons_per_unit=4", "mephisto.blueprint.max_judgments_per_worker=6")
    task = launch(pairings, *overrides)
    task.wait_ready()
    node = task.node_pids()
    assert len(node) == 1

    # onboarding + 2 of 4 comparisons, then the worker is still on the page when the launcher is stopped
    run = sw.run_worker(chromium, task.url, "carol", "c1", prefer_a, max_comparisons=3)
    assert len(run.made) == 3 and not run.finished
    assert task.terminate() == 0
    assert not pid_alive(node[0]), "the Node router outlived the launcher"
    assert "stopped" in task.log()

    db = setup.open_db(task.data_dir)
    df = store.judgments_for_task(db, "acute_test")
    assert len(df) == 3
    assert list(df["winner_side"]) == [m["choice"] for m in run.made]
    judged = set(df.loc[~df["is_onboarding"], "pair_id"])
    assert len(judged) == 2

    # relaunch the same task: only the 4 missing judgments are handed out, carol is not onboarded again
    again = launch(pairings, *overrides, data_dir=task.data_dir)
    again.wait_ready()
    assert "4 judgments to collect" in again.log()
    run2 = sw.run_worker(chromium, again.url, "carol", "c2", prefer_a)
    assert run2.finished and len(run2.made) == 4
    assert again.wait_exit(timeout=120) == 0  # everything judged: the run ends by itself
    db = setup.open_db(task.data_dir)
    df = store.judgments_for_task(db, "acute_test")
    regular = df[~df["is_onboarding"]]
    assert len(df[df["is_onboarding"]]) == 1
    assert sorted(regular["pair_id"]) == sorted(f"a{n}|b{n}" for n in range(6))  # 2 before + 4 after, no repeat
    assert (regular["winner"] == "model_a").all()


def test_port_taken_is_one_line_error_and_creates_nothing(tmp_path):
    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(2))
    data = tmp_path / "data"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(launch_cmd("--pairings", str(pairings), "--data-dir", str(data),
                                           f"mephisto.architect.port={port}"),
                                capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert f"port {port}" in lines[0] and "mephisto.architect.port=" in lines[0]
    assert not data.exists()


def test_bad_pairings_line_names_line_and_field_and_changes_nothing(tmp_path):
    lines = make_pairings(3)
    del lines[2]["speakers_to_eval"]
    pairings = write_pairings(tmp_path / "pairings.jsonl", lines)
    before = pairings.read_bytes()
    data = tmp_path / "data"
    result = subprocess.run(launch_cmd("--pairings", str(pairings), "--data-dir", str(data),
                                       f"mephisto.architect.port={free_port()}"),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and f"{pairings}:3" in err[0] and "speakers_to_eval" in err[0]
    assert pairings.read_bytes() == before
    assert not (data / "database.db").exists() or not list((data / "data").glob("runs/*"))


def test_bad_override_and_missing_pairings_are_user_errors(tmp_path):
    result = subprocess.run(launch_cmd("mephisto.blueprint.no_such_option=1"), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2 and "no_such_option" in result.stderr and "Traceback" not in result.stderr
    result = subprocess.run(launch_cmd(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "pairings" in result.stderr


def test_print_config_takes_mephisto_overrides(tmp_path):
    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(2))
    result = subprocess.run(launch_cmd("--pairings", str(pairings), "--print-config", "mephisto/provider=mturk_sandbox",
                                       "mephisto.blueprint.question=humanlike", "mephisto.architect.port=4123"),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "_provider_type: mturk_sandbox" in result.stdout
    assert "question: humanlike" in result.stdout
    assert "port: '4123'" in result.stdout or "port: 4123" in result.stdout


def test_server_refuses_short_reasons_even_without_the_page(tmp_path, launch):
    """A client that skips the page's check (protocol level) still cannot store a short reason."""
    from parlai_acute.mephisto_tasks.acute.protocol_workers import run_protocol_workers_sync

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(2))
    task = launch(pairings, "mephisto.blueprint.min_reason_length=15", "mephisto.blueprint.onboarding=false")
    task.wait_ready()
    [hasty] = run_protocol_workers_sync(task.url, [("hasty", "h1")], lambda view: ("left", "too short"))
    assert isinstance(hasty, AssertionError) and "at least 15 characters" in str(hasty)
    [ok] = run_protocol_workers_sync(task.url, [("careful", "c1")], lambda view: ("right", "long enough reason here"))
    assert ok.finished and len(ok.made) == 1
    assert task.terminate() == 0
    df = store.judgments_for_task(setup.open_db(task.data_dir), "acute_test")
    assert list(df["reason"]) == ["long enough reason here"]


def test_worker_leaving_mid_unit_frees_their_pairs_for_others(tmp_path, launch, chromium):
    import time

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(3))
    task = launch(pairings, "mephisto.blueprint.comparisons_per_unit=3", "mephisto.blueprint.max_judgments_per_worker=3",
                  "mephisto.blueprint.onboarding=false")
    task.wait_ready()
    left = sw.run_worker(chromium, task.url, "leaver", "l1", prefer_a, max_comparisons=1)  # closes the page
    assert len(left.made) == 1
    busy = sw.run_worker(chromium, task.url, "next", "n1", prefer_a)
    assert busy.unavailable  # the other two pairs are still reserved for the leaver
    # the router notices the missing heartbeats (15 s), Mephisto marks the agent disconnected,
    # and the runner gives the two unjudged pairs back
    deadline, run = time.time() + 90, None
    while time.time() < deadline:
        run = sw.run_worker(chromium, task.url, "next", f"n{int(time.time())}", prefer_a)
        if not run.unavailable:
            break
        time.sleep(3)
    assert run is not None and run.finished and len(run.made) == 2
    # the runner sees the leaver's closed page too (no updates, agent gone), so Mephisto clears that
    # unit and the spare slots are expired: the run ends by itself
    assert task.wait_exit(timeout=120) == 0
    df = store.judgments_for_task(setup.open_db(task.data_dir), "acute_test")
    assert sorted(df["pair_id"]) == ["a0|b0", "a1|b1", "a2|b2"]


@pytest.mark.parametrize("port", ["notaport", "70000", "0"])
def test_bad_port_number_is_one_line_error(tmp_path, port):
    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(2))
    data = tmp_path / "data"
    result = subprocess.run(launch_cmd("--pairings", str(pairings), "--data-dir", str(data),
                                       f"mephisto.architect.port={port}"), capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert f"mephisto.architect.port={port} is not a port number" in lines[0] and "1-65535" in lines[0]
    assert not data.exists()


def test_sigkill_of_the_launcher_takes_the_router_with_it_and_a_stop_is_quiet(tmp_path, launch):
    import signal
    import time

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(2))
    quiet = launch(pairings, "--verbose")  # Mephisto's INFO lines are shown with --verbose (only)
    quiet.wait_ready()  # the address is printed once the first unit is launched; wait for all five
    end = time.time() + 120
    while quiet.log().count("Mock task launched") < 5 and time.time() < end:
        time.sleep(0.3)
    assert quiet.terminate() == 0
    log = quiet.log()
    assert "Traceback" not in log and "ConnectionClosedError" not in log and "Unhandled OSError" not in log
    assert log.count("Creating a task run under task") == 1  # Mephisto's log lines appear once
    assert log.count("Mock task launched") == 5  # one INFO line per unit, no print beside it

    task = launch(pairings, data_dir=tmp_path / "second")
    task.wait_ready()
    [node] = task.node_pids()
    task.proc.send_signal(signal.SIGKILL)  # no finally, no signal handler: only the router's watchdog is left
    task.proc.wait(timeout=30)
    deadline = time.time() + 15
    while pid_alive(node) and time.time() < deadline:
        time.sleep(0.2)
    assert not pid_alive(node), "the Node router outlived a SIGKILLed launcher"


def test_help_blueprint_shows_no_path_inside_the_virtualenv():
    result = subprocess.run(launch_cmd("--help-blueprint"), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "tips_location  default: ''" in result.stdout
    assert "/bin/" not in result.stdout and "pairings_file  (required)" in result.stdout
