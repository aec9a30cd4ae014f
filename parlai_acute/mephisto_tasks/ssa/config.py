"""Hydra config of the SSA labelling launch: ``hydra_configs/conf/default.yaml`` plus user overrides."""
import parlai_acute.mephisto_tasks.ssa.blueprint  # noqa: F401  (registers mephisto/blueprint=parlai_acute_ssa_label)
from parlai_acute.mephisto_tasks.live.task_config import task_config

CONFIG_DIR, CONFIG_NAME = task_config(__file__, "ssa_label_launch")
