"""Hydra config of the SSA labelling launch: ``hydra_configs/conf/default.yaml`` plus user overrides."""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List

from hydra.core.config_store import ConfigStore
from mephisto.operations.hydra_config import TaskConfig

import parlai_acute.mephisto_tasks.ssa_label.blueprint  # noqa: F401  (registers mephisto/blueprint=parlai_acute_ssa_label)

CONFIG_DIR = Path(__file__).parent / "hydra_configs"
CONFIG_NAME = "ssa_label_launch"


@dataclass
class SsaLabelTaskConfig(TaskConfig):
    """Mephisto's TaskConfig with our defaults, minus Mephisto's logging override (absent from its wheel)."""

    defaults: List[Any] = field(default_factory=lambda: ["_self_", {"conf": "default"}])


ConfigStore.instance().store(name=CONFIG_NAME, node=SsaLabelTaskConfig)
