"""Each compatibility fix in parlai_acute.compat: the defect without it, the fix with it."""
import subprocess
import sys

import pytest


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def without_fix(module: str) -> str:
    """The import line that installs every fix but the one for ``module`` (importing Mephisto at all
    needs the dataclass fix, so the others stay)."""
    return f"import parlai_acute.compat as c; c.POST_IMPORT_FIXES.pop({module!r})"


def test_mephisto_operator_fails_to_import_without_fix():
    result = run_python("import mephisto.operations.operator")
    assert result.returncode != 0
    assert "mutable default" in result.stderr


def test_mephisto_operator_imports_after_parlai_acute():
    result = run_python(
        "import parlai_acute, dataclasses\n"
        "import mephisto.operations.operator\n"
        "from mephisto.operations.hydra_config import MephistoConfig, TaskConfig\n"
        "a, b = MephistoConfig(), MephistoConfig()\n"
        "assert a.task is not b.task, 'each config must get its own TaskRunArgs'\n"
        "assert TaskConfig().mephisto.database._database_type == 'singleton'\n"
        "print('ok')"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_patched_module_keeps_its_real_file_name():
    result = run_python(
        "import parlai_acute, mephisto.operations.hydra_config as m; print(m.__file__)"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("mephisto/operations/hydra_config.py")


def test_changed_upstream_text_is_reported(monkeypatch):
    from parlai_acute import compat

    monkeypatch.setitem(compat.SOURCE_PATCHES, "json.tool", [("no such text in json.tool\n", "x\n")])
    sys.modules.pop("json.tool", None)
    with pytest.raises(compat.CompatError, match="expected upstream text"):
        import json.tool  # noqa: F401
    sys.modules.pop("json.tool", None)


def test_pkg_resources_warning_silenced():
    result = run_python("import parlai_acute, warnings; warnings.simplefilter('default'); "
                        "import parlai_acute.compat as c; c.install(); import parlai.core.opt")
    assert "pkg_resources is deprecated" not in result.stderr
    plain = run_python("import warnings; warnings.simplefilter('default'); import parlai.core.opt")
    assert "pkg_resources is deprecated" in plain.stderr


SAVE_THAT_FAILS = (
    "import os, sys, tempfile\n"
    "{imports}\n"
    "from parlai.utils.conversations import Conversations\n"
    "d = tempfile.mkdtemp()\n"
    "episode = [[{{'id': 'a', 'text': 'hi'}}, {{'id': 'b', 'text': 'ok'}}]]\n"
    "try:\n"
    "    Conversations.save_conversations([episode], os.path.join(d, 'log.jsonl'), {{'bad': object()}})\n"
    "except TypeError:\n"
    "    pass\n"
    "print(sorted(os.listdir(d)))\n"
)


def test_parlai_conversations_leave_a_partial_log_without_fix():
    # the metadata cannot be serialised: ParlAI has already written log.jsonl in place
    result = run_python(SAVE_THAT_FAILS.format(imports=""))
    assert result.returncode == 0, result.stderr
    assert "'log.jsonl'" in result.stdout


@pytest.mark.parametrize("imports", ["import parlai_acute",
                                     "import parlai.utils.conversations\nimport parlai_acute"])
def test_parlai_conversations_are_atomic_with_fix(imports):
    # also when parlai imported the module before parlai_acute (the `parlai` console script)
    result = run_python(SAVE_THAT_FAILS.format(imports=imports))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_local_architect_serves_from_the_run_directory(tmp_path):
    # Without the fix the router is copied to site-packages/tmp/local_server_<run id>/server,
    # shared by every data directory (run ids restart at 1): a second launch collides.
    result = run_python(
        "import os, parlai_acute\n"
        "from mephisto.abstractions.architects.local_architect import LocalArchitect\n"
        f"root = {str(tmp_path)!r}\n"
        "src = os.path.join(root, 'src'); os.makedirs(src)\n"
        "open(os.path.join(src, 'server.js'), 'w').write('setTimeout(() => {}, 60000);')\n"
        "arch = LocalArchitect.__new__(LocalArchitect)\n"
        "arch.server_dir, arch.build_dir, arch.task_run_id = src, os.path.join(root, 'run', 'build'), '1'\n"
        "arch.server_type, arch.port, arch.hostname, arch.server_process = 'node', '0', 'localhost', None\n"
        "arch.deploy(); print('DIR=' + arch.running_dir); arch.shutdown()\n"
        "print('EXISTS=' + str(os.path.exists(arch.running_dir)))\n"
    )
    assert result.returncode == 0, result.stderr
    values = dict(line.split("=", 1) for line in result.stdout.splitlines() if line.startswith(("DIR=", "EXISTS=")))
    running_dir, exists_after = values["DIR"], values["EXISTS"]
    assert running_dir == str(tmp_path / "run" / "local_server" / "server")
    assert exists_after == "False"


MEPHISTO_LOG_ONCE = (
    "{imports}\n"
    "from mephisto.utils.logger_core import get_logger\n"
    "get_logger('parlai_acute.test').warning('hello from mephisto')\n"
)


def test_mephisto_log_lines_twice_without_fix():
    result = run_python(MEPHISTO_LOG_ONCE.format(
        imports=without_fix("mephisto.utils.logger_core")))
    assert result.returncode == 0, result.stderr
    assert (result.stdout + result.stderr).count("hello from mephisto") == 2


def test_mephisto_log_lines_once_with_fix():
    result = run_python(MEPHISTO_LOG_ONCE.format(imports="import parlai_acute"))
    assert result.returncode == 0, result.stderr
    assert (result.stdout + result.stderr).count("hello from mephisto") == 1


# Mephisto's metrics port is fixed (3031). The script holds it itself: another Mephisto process of
# the suite may hold it now and let it go before the metrics server starts (the test then saw a free
# port and no traceback), so the script waits for it (up to two minutes) rather than trusting it.
METRICS_PORT_TAKEN = (
    "import socket, time\n"
    "busy = socket.socket(); busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "deadline = time.monotonic() + 120\n"
    "while True:\n"
    "    try:\n"
    "        busy.bind(('', 3031)); busy.listen(); break\n"
    "    except OSError:\n"
    "        if time.monotonic() > deadline:\n"
    "            break  # held by another process all along: taken either way\n"
    "        time.sleep(0.2)\n"
    "import parlai_acute\n"
    "{uninstall}\n"
    "import mephisto.operations.operator as op\n"
    "op.start_metrics_server()\n"
)


def test_metrics_port_taken_prints_a_traceback_without_fix():
    code = METRICS_PORT_TAKEN.format(uninstall=without_fix("mephisto.operations.operator"))
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert "Traceback" in result.stdout + result.stderr
    assert "Could not launch prometheus metrics" in result.stdout + result.stderr


def test_metrics_port_taken_is_quiet_with_fix():
    result = run_python(METRICS_PORT_TAKEN.format(uninstall=""))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "Could not launch prometheus metrics" not in result.stdout + result.stderr


# A worker's action arrives while the operator's event loop is busy (registering other workers
# does blocking database work there): it must reach its agent without waiting for the loop.
LIVE_UPDATE_WHILE_LOOP_BUSY = (
    "import asyncio, tempfile, threading, time, types\n"
    "import parlai_acute\n"
    "{uninstall}\n"
    "from mephisto.abstractions.databases.local_database import LocalMephistoDB\n"
    "from mephisto.data_model.agent import Agent\n"
    "from mephisto.data_model.packet import Packet, PACKET_TYPE_MEPHISTO_BOUND_LIVE_UPDATE\n"
    "from mephisto.operations.client_io_handler import ClientIOHandler\n"
    "from mephisto.operations.datatypes import LoopWrapper\n"
    "from mephisto.operations.worker_pool import WorkerPool\n"
    "from mephisto.utils.testing import get_test_agent\n"
    "db = LocalMephistoDB(tempfile.mkdtemp() + '/mephisto.db')\n"
    "agent = Agent.get(db, get_test_agent(db))\n"
    "pool = WorkerPool(db); pool.agents[agent.db_id] = agent\n"
    "loop = asyncio.new_event_loop()\n"
    "threading.Thread(target=loop.run_forever, daemon=True).start()\n"
    "handler = ClientIOHandler(db)\n"
    "handler.register_run(types.SimpleNamespace(loop_wrap=LoopWrapper(loop), worker_pool=pool))\n"
    "loop.call_soon_threadsafe(time.sleep, 3)  # the loop is busy for 3 s\n"
    "time.sleep(0.1)\n"
    "def update(update_id, subject=agent.db_id):\n"
    "    return Packet(PACKET_TYPE_MEPHISTO_BOUND_LIVE_UPDATE, subject, {{'update_id': update_id, 'n': 1}})\n"
    "handler._on_channel_message('router', update('u1'))\n"
    "handler._on_channel_message('router', update('u1'))  # the router's duplicate delivery\n"
    "handler._on_channel_message('router', update('u2', subject='no-such-agent'))  # logged, not raised\n"
    "print('delivered' if agent.has_live_update.wait(1.0) else 'waited')\n"
    "time.sleep(3.5)\n"
    "print('queued', agent.pending_actions.qsize())\n"
)


def _outcome(stdout: str) -> list[str]:
    """The script's own lines (Mephisto logs to stdout too)."""
    return [line for line in stdout.splitlines() if line in ("delivered", "waited") or line.startswith("queued ")]


def test_live_update_waits_for_a_busy_event_loop_without_fix():
    code = LIVE_UPDATE_WHILE_LOOP_BUSY.format(
        uninstall=without_fix("mephisto.operations.client_io_handler"))
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert _outcome(result.stdout) == ["waited", "queued 1"]


def test_live_update_reaches_its_agent_while_the_event_loop_is_busy_with_fix():
    result = run_python(LIVE_UPDATE_WHILE_LOOP_BUSY.format(uninstall=""))
    assert result.returncode == 0, result.stderr
    assert _outcome(result.stdout) == ["delivered", "queued 1"]
    # an update for an unknown agent is logged, as the loop's handler logs it
    assert "encountered error" in result.stdout + result.stderr


MOCK_UNIT_LAUNCH = (
    "{imports}\n"
    "from mephisto.utils.logger_core import set_mephisto_log_level\n"
    "from mephisto.abstractions.providers.mock.mock_unit import MockUnit\n"
    "set_mephisto_log_level(level='{level}')\n"
    "from types import SimpleNamespace\n"
    "unit = SimpleNamespace(db_id='7', assignment_id='3', set_db_status=lambda status: None)\n"
    "MockUnit.launch(unit, 'http://localhost:3999/')\n"
)


def test_mock_units_print_past_the_log_level_without_fix():
    imports = without_fix("mephisto.abstractions.providers.mock.mock_unit")
    result = run_python(MOCK_UNIT_LAUNCH.format(imports=imports, level="warning"))
    assert result.returncode == 0, result.stderr
    assert "Mock task launched" in result.stdout


def test_mock_units_log_at_info_once_with_fix():
    quiet = run_python(MOCK_UNIT_LAUNCH.format(imports="import parlai_acute", level="warning"))
    assert quiet.returncode == 0, quiet.stderr
    assert "Mock task launched" not in quiet.stdout + quiet.stderr
    verbose = run_python(MOCK_UNIT_LAUNCH.format(imports="import parlai_acute", level="info"))
    assert (verbose.stdout + verbose.stderr).count("Mock task launched") == 1  # its INFO line, no print beside it


# Two registrations of a brand-new worker at once: both looked the name up and found none, then both
# create it (what WorkerPool.register_worker does); the live race is tests/mephisto/test_new_worker_race.py
NEW_WORKER_TWICE = (
    "import tempfile\n"
    "import parlai_acute\n"
    "{uninstall}\n"
    "from mephisto.abstractions.databases.local_database import LocalMephistoDB\n"
    "from mephisto.abstractions.providers.mock.mock_worker import MockWorker\n"
    "db = LocalMephistoDB(tempfile.mkdtemp() + '/mephisto.db')\n"
    "first = MockWorker.new_from_provider_data(db, {{'worker_name': 'zoe'}})\n"
    "try:\n"
    "    second = MockWorker.new_from_provider_data(db, {{'worker_name': 'zoe'}})\n"
    "    print('same' if second.db_id == first.db_id else 'other', len(db.find_workers(worker_name='zoe_sandbox')))\n"
    "except Exception as exc:\n"
    "    print('raised', type(exc).__name__)\n"
)


def test_a_new_worker_created_twice_raises_without_fix():
    result = run_python(NEW_WORKER_TWICE.format(
        uninstall=without_fix("mephisto.data_model.worker")))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "raised EntryAlreadyExistsException"


def test_a_new_worker_created_twice_is_one_worker_with_fix():
    result = run_python(NEW_WORKER_TWICE.format(uninstall=""))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "same 1"
