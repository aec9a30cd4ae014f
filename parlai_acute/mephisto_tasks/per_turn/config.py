"""Hydra config of the per-turn launch: ``hydra_configs/conf/default.yaml`` plus user overrides."""
import parlai_acute.mephisto_tasks.per_turn.blueprint  # noqa: F401  (registers mephisto/blueprint=parlai_acute_per_turn)
from parlai_acute.mephisto_tasks.live.task_config import task_config

CONFIG_DIR, CONFIG_NAME = task_config(__file__, "per_turn_launch")
