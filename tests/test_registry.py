"""The registry resolves: every reference of every protocol entry names what it should (a typed
registry checked here, not when a user's path first runs it)."""
from __future__ import annotations

import dataclasses
import inspect

import pytest

from parlai_acute.errors import UserError
from parlai_acute.registry import ALIASES, PROTOCOLS, protocol, resolve
from parlai_acute.stats.estimand import Estimand, Monitor

PACKAGES = {"acute": "acute", "per-turn": "per_turn", "ssa": "ssa", "convai2": "convai2", "multiref": "multiref"}


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_every_reference_of_every_entry_resolves_to_what_it_should(name):
    p = PROTOCOLS[name]
    # one spelling: the package is the CLI name with "-" as "_", and its live task has the same name
    assert p.package == f"parlai_acute.{PACKAGES[name]}"
    columns, required = p.get("columns"), p.get("required")
    assert isinstance(columns, dict) and columns and set(required) <= set(columns)
    for what in ("from_records", "read", "write", "analyze", "write_outputs"):
        assert callable(p.get(what)), what
    assert dataclasses.is_dataclass(p.get("config"))
    assert "config" in inspect.signature(p.get("analyze")).parameters
    if p.judge:  # a judge's agreement with people, measured by the protocol's own judge module
        assert list(inspect.signature(p.get("agreement")).parameters)[:2] == ["human", "judge"]
    module = p.estimands_module()
    assert module.ESTIMANDS and all(isinstance(e, Estimand) and e.low < e.high for e in module.ESTIMANDS.values())
    assert all(key == e.measure for key, e in module.ESTIMANDS.items())
    assert callable(module.headline)
    monitor = getattr(module, "MONITOR", None)
    if monitor is not None:  # what status and the stop rule watch is among what the protocol measures
        assert isinstance(monitor, Monitor) and set(monitor.watch) <= set(module.ESTIMANDS)
        assert monitor.signature in columns and set(monitor.row_key) <= set(columns)
        assert callable(module.observe) and callable(module.estimates)
    for ref in p.task_records:
        assert ref.startswith(f"parlai_acute.mephisto_tasks.") and callable(resolve(ref))


def test_aliases_and_unknown_names():
    for alias, name in ALIASES.items():
        assert protocol(alias).name == name
    from parlai_acute.errors import UserError

    with pytest.raises(UserError, match="unknown protocol 'nosuch'; choose one of acute"):
        protocol("nosuch")


def test_a_broken_reference_fails_here_not_for_a_user():
    broken = dataclasses.replace(PROTOCOLS["ssa"], table="no_such_table")
    with pytest.raises(ModuleNotFoundError):
        broken.get("columns")


def test_a_protocol_without_a_judge_has_no_judge_agreement():
    from parlai_acute.judges.agreement import measure

    assert measure("acute") is PROTOCOLS["acute"].get("agreement")
    with pytest.raises(UserError, match="convai2 protocol has no judge.*acute, per-turn, ssa"):
        measure("convai2")
