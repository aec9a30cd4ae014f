"""Open a stored Mephisto database to read a run back, for every task's analysis.

The one way the analysis commands (``acute analyze``, ``per-turn analyze``, the demos) reach
the Mephisto database: it lives on the Mephisto side, so the tidy tables and statistics
they feed never import Mephisto.
"""
from __future__ import annotations

import os
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.live import setup


def open_mephisto_db(database_path: str | os.PathLike | None = None):
    """A LocalMephistoDB to read: Mephisto's configured one (as ``acute launch`` chose it),
    or the ``database.db`` at ``database_path``.

    Mephisto keeps each unit's saved data in its data directory, beside ``database.db``,
    so an explicit database also makes its directory Mephisto's data directory for this
    process. Reading creates nothing: no ``~/.mephisto/config.yml``, no empty database
    (a missing one is a UserError, where Mephisto would prompt or create it).
    """
    if database_path is None:
        return setup.open_db(None, create=False)
    path = Path(database_path)
    if not path.is_file():
        raise UserError(f"Mephisto database {path} does not exist; pass the database.db in Mephisto's data "
                        f"directory (the one the task was launched with)")
    with setup.no_mephisto_config_written():
        import mephisto.utils.dirs as dirs
        from mephisto.abstractions.databases.local_database import LocalMephistoDB
    dirs.loaded_data_dir = str(path.resolve().parent)
    return LocalMephistoDB(database_path=str(path))
