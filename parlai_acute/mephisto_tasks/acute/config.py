"""Hydra config of the ACUTE-Eval launch: ``hydra_configs/conf/default.yaml`` plus user overrides."""
import parlai_acute.mephisto_tasks.acute.blueprint  # noqa: F401  (registers mephisto/blueprint=parlai_acute_eval)
from parlai_acute.mephisto_tasks.live.task_config import task_config

CONFIG_DIR, CONFIG_NAME = task_config(__file__, "acute_eval_launch")
