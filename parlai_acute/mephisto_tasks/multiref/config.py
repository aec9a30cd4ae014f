"""Hydra config of the multi-reference launch: ``hydra_configs/conf/default.yaml`` plus user overrides."""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List

from hydra.core.config_store import ConfigStore
from mephisto.operations.hydra_config import TaskConfig

import parlai_acute.mephisto_tasks.multiref.blueprint  # noqa: F401  (registers mephisto/blueprint=parlai_acute_multiref)

CONFIG_DIR = Path(__file__).parent / "hydra_configs"
CONFIG_NAME = "multiref_launch"


@dataclass
class MultirefTaskConfig(TaskConfig):
    """Mephisto's TaskConfig with our defaults, minus Mephisto's logging override (absent from its wheel)."""

    defaults: List[Any] = field(default_factory=lambda: ["_self_", {"conf": "default"}])


ConfigStore.instance().store(name=CONFIG_NAME, node=MultirefTaskConfig)
