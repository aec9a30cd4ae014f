"""Unattended Mephisto setup (data dir, mock requester) and the question presets."""
import os
import subprocess
import sys

import pytest

from parlai_acute.errors import UserError
from parlai_acute.acute.questions import PRESETS, resolve


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != "PARLAI_ACUTE_MEPHISTO_DATA"}
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=full_env,
                          stdin=subprocess.DEVNULL)


def test_data_dir_is_written_to_mephisto_config_once_without_prompting(tmp_path):
    code = ("import parlai_acute\nfrom parlai_acute.mephisto_tasks.live import setup\n"
            "print('DIR=' + setup.configure_data_dir())\n")
    first = run_python(code, HOME=str(tmp_path))
    assert first.returncode == 0, first.stderr
    expected = tmp_path / ".mephisto" / "data"
    assert f"DIR={expected}" in first.stdout and expected.is_dir()
    config = (tmp_path / ".mephisto" / "config.yml").read_text()
    assert str(expected) in config
    second = run_python(code, HOME=str(tmp_path))
    assert f"DIR={expected}" in second.stdout
    assert (tmp_path / ".mephisto" / "config.yml").read_text() == config


def test_env_data_dir_leaves_user_config_alone(tmp_path):
    code = ("import parlai_acute\nfrom parlai_acute.mephisto_tasks.live import setup\n"
            "db = setup.open_db()\n"
            "a = setup.ensure_mock_requester(db); b = setup.ensure_mock_requester(db)\n"
            "reqs = db.find_requesters(provider_type='mock')\n"
            "print('REQ=', a == b, len(reqs), reqs[0].is_registered())\n")
    (tmp_path / "home").mkdir()
    result = run_python(code, HOME=str(tmp_path / "home"), PARLAI_ACUTE_MEPHISTO_DATA=str(tmp_path / "data"))
    assert result.returncode == 0, result.stderr
    assert "REQ= True 1 True" in result.stdout
    assert (tmp_path / "data" / "database.db").exists()
    # `import mephisto` itself creates an empty config; the data directory is not written into it
    assert "main_data_directory" not in (tmp_path / "home" / ".mephisto" / "config.yml").read_text()


def test_question_presets_and_custom_question():
    assert resolve("engaging") == ("engaging", "Who would you prefer to talk to for a long conversation?")
    assert resolve("humanlike")[1] == "Which speaker sounds more human?"
    assert set(PRESETS) == {"engaging", "interesting", "humanlike", "knowledgeable"}
    assert resolve("engaging", "Who is funnier?", "funny") == ("funny", "Who is funnier?")
    with pytest.raises(UserError, match="custom_question"):
        resolve("funniest")
