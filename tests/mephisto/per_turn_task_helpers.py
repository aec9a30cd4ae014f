"""Helpers for the per-turn task tests: model strings, scripted policies, reading back a run."""
from __future__ import annotations

from parlai_acute.mephisto_tasks.live import setup
from parlai_acute.mephisto_tasks.per_turn import store
from parlai_acute.per_turn import onboarding
from parlai_acute.mephisto_tasks.per_turn.simulated_workers import Choice

SMOL = "-m parlai_acute.agents.llama_cpp:LlamaCppAgent --max-new-tokens 16"
GREEDY = f"smol_greedy={SMOL} --inference greedy"
SAMPLED = f"smol_sampled={SMOL} --inference sample --temperature 1.0"
GENERIC = "generic_bot=parlai_acute.agents.generic_bot:GenericBotAgent"
SHORT = ("mephisto.blueprint.min_turns=2", "mephisto.blueprint.max_turns=3")
WRONG = {item["replies"][item["wrong"]] for item in onboarding.ITEMS}


def careful(view) -> Choice:
    """Onboarding: never the plainly wrong reply (SM: the one reply appropriate exactly when it is not)."""
    replies = view["onboarding"]["replies"]
    good = [r["position"] for r in replies if r["text"] not in WRONG]
    if view["protocol"] == "sm":
        return Choice(picked=good, none=not good, sensible=bool(good), specific=True)
    if view["protocol"] == "soba":
        return Choice(picked=good[:1])
    return Choice(picked=good)


def write(view) -> str:
    return f"Turn {view['turns_done'] + 1}: I love hiking in the mountains. Do you?"


def stored(data_dir, task_name: str = "per_turn_test"):
    db = setup.open_db(data_dir)
    units = store.unit_data_for_task(db, task_name)
    return db, units, store.turns_records(units)
