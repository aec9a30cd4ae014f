"""``parlai-acute per-turn launch``: serve the per-turn evaluation task with live models.

A worker chats; after each of their messages the models of the dialogue's set reply (at the
same time), the worker judges the replies (SOBA: the best one; SATA: all acceptable ones; SM:
appropriate or not), and the server continues the conversation as the protocol says. Every
turn is stored the moment it is judged; SIGTERM or Ctrl-C stops the task (and its router)
without losing one, and launching again with the same task name continues the run. On stop,
all dialogues are also written as a ParlAI Conversations log in the data directory.

    parlai-acute per-turn launch --model greedy='-m parlai_acute.agents.llama_cpp:LlamaCppAgent --inference greedy' \\
        --model generic=parlai_acute.agents.generic_bot:GenericBotAgent mephisto.blueprint.protocol=soba
    parlai-acute per-turn launch --model a=... --model b=... --model c=... --model d=... \\
        mephisto.blueprint.setting=mm mephisto.blueprint.protocol=sata_user mephisto.blueprint.target=20
    parlai-acute per-turn launch ... mephisto/architect=heroku mephisto/provider=mturk_sandbox \\
        mephisto.provider.requester_name=my_sandbox_requester
"""
from __future__ import annotations

import argparse
import secrets
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.live import launcher

NEEDS = ("live", "models")  # the extras this command needs beyond the analysis core (main checks them first)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from parlai_acute.worlds.model_spec import MODEL_HELP

    launcher.add_launch_arguments(parser)
    parser.add_argument("--model", dest="models", action="append", default=[], metavar="NAME=MODEL",
                        help=f"a model to evaluate, with its name (repeat for each); MODEL is {MODEL_HELP}")


def parse_models(values: list[str]) -> dict[str, str]:
    models = {}
    for value in values:
        name, sep, spec = value.partition("=")
        name = name.strip()
        if not sep or not name or not spec.strip():
            raise UserError(f"--model {value!r}: write NAME=MODEL, e.g. --model generic=parlai_acute.agents."
                            "generic_bot:GenericBotAgent")
        if name in models:
            raise UserError(f"model name {name!r} is given twice; give each model its own name")
        models[name] = spec.strip()
    return models


def logs_path(data_dir: str, task_name: str) -> Path:
    """Where a launch writes the Conversations log of its task's dialogues."""
    return Path(data_dir) / "per_turn_logs" / f"{task_name}.jsonl"


def run(args) -> int:
    from parlai_acute.mephisto_tasks.per_turn.blueprint import PerTurnBlueprintArgs

    if args.help_blueprint:
        print(launcher.blueprint_help(PerTurnBlueprintArgs, "per-turn evaluation task"))
        return 0
    from parlai_acute.mephisto_tasks.per_turn.config import CONFIG_DIR, CONFIG_NAME

    cfg = launcher.compose(CONFIG_DIR, CONFIG_NAME, list(args.overrides))
    b = cfg.mephisto.blueprint
    models = dict(b.get("models") or {})
    models.update(parse_models(args.models))
    b.models = models
    if args.print_config:
        from omegaconf import OmegaConf

        print(OmegaConf.to_yaml(cfg))
        return 0

    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.per_turn import store
    from parlai_acute.mephisto_tasks.per_turn.live import LiveSetup, design_from_args
    from parlai_acute.mephisto_tasks.live.task_blueprint import LiveSharedState
    from parlai_acute.per_turn import onboarding

    if not models:
        raise UserError("no models; pass --model NAME=MODEL (two for pm, three or more for mm, one or more for sm)")
    design_from_args(b)  # bad settings fail here, before any port, database or model is touched
    onboarding.load_items(b.get("onboarding_file") or None)
    from parlai_acute.mephisto_tasks.per_turn.live import load_personas

    load_personas(b.get("persona_file") or "", design_from_args(b))
    launcher.check_architect(cfg)
    db = setup.open_db(args.data_dir)
    task_name = cfg.mephisto.task.task_name
    history = store.history(store.unit_data_for_task(db, task_name))
    live = LiveSetup(cfg.mephisto, history=history)  # loads every model once
    if live.scheduler.remaining() == 0:
        from parlai_acute.mephisto_tasks.per_turn.runner import PerTurnRunner
        from parlai_acute.monitoring.stopping import already_stopped

        if launcher.nothing_to_launch(db, task_name, PerTurnRunner, already_stopped(live.stop) or (
                "every model set has its dialogues; nothing to launch (raise mephisto.blueprint.target or use "
                "another mephisto.task.task_name)")):
            live.pool.close()
            return 0

    def started() -> None:
        sets = ", ".join("+".join(s) for s in live.design.model_sets)
        token = secrets.token_hex(3)  # a fresh assignment_id each launch: "1" would be an earlier run's attempt
        launcher.announce(f"Per-turn task {task_name!r} ({live.design.setting}, {live.design.protocol}): "
                          f"{live.scheduler.dialogues_needed()} dialogues to collect over model sets {sets}. The "
                          f"page shows the Mephisto assignment it was given, and this console prints it as each "
                          f"worker starts.", cfg,
                          how=f"any worker_id; a new assignment_id for each dialogue, e.g. {token}-2",
                          assignment=f"{token}-1")

    try:
        data_dir = launcher.run_task(cfg, LiveSharedState(live=live), data_dir=args.data_dir, db=db,
                                     on_started=started, verbose=args.verbose)
    finally:
        live.pool.close()
    written = store.write_conversations(store.unit_data_for_task(db, task_name), logs_path(data_dir, task_name))
    print(f"Per-turn task {task_name!r} stopped; turns are in {data_dir}"
          + (f", dialogues in {written}." if written else "."), flush=True)
    return 0
