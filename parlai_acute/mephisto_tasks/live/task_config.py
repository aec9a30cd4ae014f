"""The Hydra config every task's launch composes: Mephisto's TaskConfig with our defaults."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List

from hydra.core.config_store import ConfigStore
from mephisto.operations.hydra_config import TaskConfig


@dataclass
class LaunchConfig(TaskConfig):
    """Mephisto's TaskConfig with our defaults (``conf/default.yaml`` of the task folder), minus
    Mephisto's logging override (absent from its wheel)."""

    defaults: List[Any] = field(default_factory=lambda: ["_self_", {"conf": "default"}])


def task_config(config_file: str, name: str) -> tuple[Path, str]:
    """(config directory, config name) of the task whose ``config.py`` is ``config_file``; stores the
    config under ``name`` for Hydra's compose."""
    ConfigStore.instance().store(name=name, node=LaunchConfig)
    return Path(config_file).parent / "hydra_configs", name
