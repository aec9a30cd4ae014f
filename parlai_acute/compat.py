"""Compatibility fixes for frozen upstream packages (parlai 1.7.2, mephisto 1.1.1).

Every fix lives here, is as narrow as possible, and is installed by ``import parlai_acute``.
Installed packages are never edited on disk. Each fix has a test in
``tests/test_compat.py`` that fails without it.

Fixes:

``mephisto-dataclass-defaults``
    ``mephisto/operations/hydra_config.py`` gives dataclass fields instance defaults
    (``task: TaskRunArgs = TaskRunArgs()``). Python 3.11 rejects unhashable instance
    defaults with ``ValueError: mutable default ... use default_factory``, so
    ``import mephisto.operations.operator`` fails. We rewrite exactly those three lines to
    ``field(default_factory=...)`` while the module is loaded (an import hook that patches
    the module's source text, compiled under its real file name so tracebacks stay true).
    Hydra's structured configs treat both spellings the same.

``pkg_resources-warning``
    ``parlai.core.opt`` imports ``pkg_resources``, which setuptools 80 deprecates with a
    UserWarning printed on every ParlAI start. We silence only that warning.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings

# module name -> list of (exact upstream text, replacement)
SOURCE_PATCHES: dict[str, list[tuple[str, str]]] = {
    "mephisto.operations.hydra_config": [
        ("    task: TaskRunArgs = TaskRunArgs()\n",
         "    task: TaskRunArgs = field(default_factory=TaskRunArgs)\n"),
        ("    database: DatabaseArgs = DatabaseArgs()\n",
         "    database: DatabaseArgs = field(default_factory=DatabaseArgs)\n"),
        ("    mephisto: MephistoConfig = MephistoConfig()\n",
         "    mephisto: MephistoConfig = field(default_factory=MephistoConfig)\n"),
    ],
}


class CompatError(RuntimeError):
    """An upstream file no longer looks like the one a fix was written for."""


class _PatchedSourceLoader(importlib.machinery.SourceFileLoader):
    """Loads a module from its real file with exact text replacements applied."""

    def __init__(self, fullname: str, path: str, patches: list[tuple[str, str]]):
        super().__init__(fullname, path)
        self._patches = patches

    def get_data(self, path):  # noqa: D401 - importlib API
        data = super().get_data(path)
        if not path.endswith(".py"):
            # refuse cached bytecode of the unpatched source; compile from text
            raise OSError("parlai_acute.compat compiles patched modules from source")
        text = data.decode("utf-8")
        for old, new in self._patches:
            if old not in text:
                raise CompatError(
                    f"{self.name}: expected upstream text {old.strip()!r} not found; "
                    "the installed version differs from the pinned one (reinstall with `make install`)"
                )
            text = text.replace(old, new)
        return text.encode("utf-8")

    def set_data(self, *args, **kwargs):
        """Never write patched bytecode into site-packages."""


class _SourcePatchFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        patches = SOURCE_PATCHES.get(fullname)
        if patches is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        spec.loader = _PatchedSourceLoader(fullname, spec.origin, patches)
        spec.cached = None
        return spec


_FINDER = _SourcePatchFinder()


def install() -> None:
    """Install every fix (idempotent). Called by ``import parlai_acute``."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)


def uninstall() -> None:
    """Remove the import hook (tests use this to show the defect it fixes)."""
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
