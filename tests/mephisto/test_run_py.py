"""Every Mephisto task folder carries a ``run.py`` beside its Hydra config, launching the task the way
Mephisto's and ParlAI's task folders do, through the same code as ``parlai-acute <protocol> launch``."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import parlai_acute.mephisto_tasks as tasks

TASKS = {"acute": "parlai_acute_eval", "per_turn": "parlai_acute_per_turn", "ssa": "parlai_acute_ssa_label",
         "multiref": "parlai_acute_multiref"}


def test_every_task_folder_has_a_run_py_beside_its_config():
    folders = sorted(p.name for p in Path(tasks.__file__).parent.iterdir() if (p / "blueprint.py").is_file())
    assert folders == sorted(TASKS)
    for folder in folders:
        assert (Path(tasks.__file__).parent / folder / "run.py").is_file()
        assert (Path(tasks.__file__).parent / folder / "hydra_configs" / "conf" / "default.yaml").is_file()


@pytest.mark.parametrize("folder", sorted(TASKS))
def test_run_py_composes_the_task_config_with_mephisto_overrides(folder, tmp_path):
    (tmp_path / "p.jsonl").write_text("")
    (tmp_path / "items.jsonl").write_text(json.dumps({"item": "c1:m", "context": ["Hi"], "reply": "Hello", "model": "m"})
                                          + "\n")
    overrides = {"acute": [f"mephisto.blueprint.pairings_file={tmp_path / 'p.jsonl'}"],
                 "ssa": [f"mephisto.blueprint.items_file={tmp_path / 'items.jsonl'}"],
                 "per_turn": [], "multiref": []}[folder]
    done = subprocess.run([sys.executable, "-m", f"parlai_acute.mephisto_tasks.{folder}.run", "conf=default",
                           *overrides, "mephisto.provider.requester_name=lab_sandbox", "mephisto.task.task_name=t1",
                           "--print-config"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"_blueprint_type: {TASKS[folder]}" in done.stdout
    assert "requester_name: lab_sandbox" in done.stdout and "task_name: t1" in done.stdout


def test_run_py_says_a_mistake_in_one_line():
    done = subprocess.run([sys.executable, "-m", "parlai_acute.mephisto_tasks.ssa.run", "conf=default",
                           "mephisto.blueprint.labels_per_item=0", "mephisto.blueprint.items_file=x.jsonl"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr


def test_what_a_run_stored_before_the_folder_move_is_read_as_before(tmp_path):
    """Stored runs name their task by blueprint type and their units' data by schema and file name,
    never by the task's folder or module path. The folders moved (acute_eval -> acute, ssa_label ->
    ssa); an agent directory written before the move still reads as the task's unit data."""
    from parlai_acute.mephisto_tasks.acute import state as acute_state
    from parlai_acute.mephisto_tasks.acute.blueprint import BLUEPRINT_TYPE as ACUTE
    from parlai_acute.mephisto_tasks.live.stored_units import _agent_data
    from parlai_acute.mephisto_tasks.ssa import state as ssa_state
    from parlai_acute.mephisto_tasks.ssa.blueprint import BLUEPRINT_TYPE as SSA

    assert (ACUTE, SSA) == ("parlai_acute_eval", "parlai_acute_ssa_label")
    for name, schema, state in (("acute_eval_state.json", "parlai_acute.acute_eval/1", acute_state.AcuteEvalAgentState),
                                ("ssa_label_state.json", "parlai_acute.ssa_label/1", ssa_state.SsaLabelAgentState)):
        agent = tmp_path / name.split("_state")[0]
        agent.mkdir()
        (agent / name).write_text(json.dumps({"schema": schema, "worker_name": "w1"}))
        (agent / "agent_meta.json").write_text(json.dumps({"task_start": 1.0, "task_end": 2.0}))
        assert (state.FILENAME, state.SCHEMA) == (name, schema)
        assert _agent_data(agent) == {"schema": schema, "worker_name": "w1", "start_time": 1.0, "end_time": 2.0}
