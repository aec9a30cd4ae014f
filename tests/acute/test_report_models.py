"""The ACUTE report lists each model's configuration, read from the pairings' logs."""
from parlai_acute.acute.pairings import model_configs
from parlai_acute.scripts.main import main

GENERIC = "parlai_acute.agents.generic_bot:GenericBotAgent"


def test_model_configurations_come_from_the_logs_behind_the_pairings(tmp_path, datapath):
    for name, partner in (("generic", None), ("echo", "repeat_query")):
        argv = ["self-chat", "-m", GENERIC, "-t", "topics", "-n", "2", "--max-turns", "2", "--datapath", datapath,
                "-o", str(tmp_path / f"{name}.jsonl"), "--no-progress"]
        if partner:
            argv[1:3] = ["-m", partner]
        assert main(argv) == 0
    pairings = tmp_path / "pairings.jsonl"
    assert main(["acute", "pairings", f"generic={tmp_path / 'generic.jsonl'}", f"echo={tmp_path / 'echo.jsonl'}",
                 "-n", "2", "-o", str(pairings)]) == 0
    configs = model_configs(pairings)
    assert set(configs) == {"generic", "echo"}
    assert configs["generic"]["options"]["model"] == GENERIC and configs["echo"]["options"]["model"] == "repeat_query"
    assert configs["generic"]["conversations"] == 2 and configs["generic"]["options"]["task"].endswith("topics")
    assert model_configs(tmp_path / "made_elsewhere.jsonl") == {}  # no sidecar: nothing claimed
