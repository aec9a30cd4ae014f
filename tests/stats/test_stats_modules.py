"""The stats layer states its public names: every module has ``__all__`` and every name in it exists."""
from __future__ import annotations

import importlib
import pkgutil

import parlai_acute.stats as stats


def test_every_stats_module_declares_what_it_offers():
    modules = [m.name for m in pkgutil.iter_modules(stats.__path__)]
    assert len(modules) >= 15
    for name in modules:
        module = importlib.import_module(f"parlai_acute.stats.{name}")
        public = getattr(module, "__all__", None)
        assert public, f"parlai_acute.stats.{name} has no __all__"
        assert all(hasattr(module, n) for n in public), name
