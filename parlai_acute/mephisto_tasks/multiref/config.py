"""Hydra config of the multi-reference launch: ``hydra_configs/conf/default.yaml`` plus user overrides."""
import parlai_acute.mephisto_tasks.multiref.blueprint  # noqa: F401  (registers mephisto/blueprint=parlai_acute_multiref)
from parlai_acute.mephisto_tasks.live.task_config import task_config

CONFIG_DIR, CONFIG_NAME = task_config(__file__, "multiref_launch")
