"""Launch the ACUTE-Eval task from its folder, as in Mephisto's and ParlAI's task folders:
``python -m parlai_acute.mephisto_tasks.acute.run conf=default mephisto.blueprint.pairings_file=pairings.jsonl
mephisto.provider.requester_name=NAME``. Its Hydra config is ``hydra_configs/conf/default.yaml``
beside this file; the code is ``parlai-acute acute launch``'s."""
from parlai_acute.scripts.main import launch_from_task_folder

if __name__ == "__main__":
    launch_from_task_folder("acute")
