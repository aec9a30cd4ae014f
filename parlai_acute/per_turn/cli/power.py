"""``parlai-acute per-turn power``: turns a per-turn design needs to detect a win-rate difference, and back.

Prints the answer with every assumption it rests on (parlai_acute/per_turn/power.py says
what each design assumes). PM-SOBA: the paper's closed form beside the exact binomial
answer; PM-SATA and SM: exact power of the analysis' exact McNemar / Fisher test; MM:
seeded simulation of the analysis' pairwise tests with Holm correction. ``--turns-per-dialogue``
and ``--icc`` turn independent turns into clustered ones (design effect); ``--pilot`` estimates
both from a pilot's turns table (the ICC of the outcome the analysis tests, within dialogues),
and plans at the estimate and at its interval's upper end. Where the pilot's workers did several
dialogues (the analysis then tests over workers), every design is also planned in workers and
dialogues per worker from the worker, dialogue and turn variance components: PM and MM with the
sign-flip test over workers (MM at alpha / pairs, Holm's first step), SM with the two-sample
test of whole workers (workers per model).

  parlai-acute per-turn power --design pm-soba --delta 0.1
  parlai-acute per-turn power --design mm-sata --models 4 --turns-per-dialogue 10 --icc 0.05
  parlai-acute per-turn power --design sm --budget 300
  parlai-acute per-turn power --design pm-soba --pilot pilot/turns.csv
"""
from __future__ import annotations

import argparse

from parlai_acute.per_turn.power import DESIGNS, Assumptions
from parlai_acute.scripts.cost_options import add_cost_options, finish
from parlai_acute.scripts.options import add_alpha

DESCRIPTION = {
    "pm-soba": "two models per turn, the worker selects the best; exact two-sided binomial test against 1/2",
    "pm-sata": "two models per turn, the worker selects all good; exact McNemar test (exact power)",
    "mm-soba": "k models per turn, select the best; binomial on turns where one of a pair was picked, Holm over pairs",
    "mm-sata": "k models per turn, select all good; exact McNemar per pair, Holm over pairs",
    "sm": "one model per turn, appropriate or not; Fisher's exact test between two models' runs (exact power)",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--design", required=True, choices=DESIGNS, help="setting and protocol")
    parser.add_argument("--delta", type=float, default=0.1,
                        help="smallest win-rate difference worth detecting (paper: 0.1; PM-SOBA: win rate 0.5 + delta)")
    add_alpha(parser, "the planned two-sided test")
    parser.add_argument("--power", type=float, default=0.8, help="target power")
    parser.add_argument("--models", type=int, default=4, help="models per turn (multi-model designs)")
    parser.add_argument("--base-rate", type=float, default=0.5,
                        help="SATA/SM: pick (appropriateness) rate of the weaker model")
    parser.add_argument("--tie-win", type=float, default=None,
                        help="PM-SATA: share of turns where both are picked (default: picks independent)")
    parser.add_argument("--correlation", type=float, default=0.0,
                        help="MM-SATA: correlation of the picks of one turn (0: independent)")
    parser.add_argument("--turns-per-dialogue", type=int, default=None,
                        help="model turns per dialogue (clustering; default: the pilot's, else 1)")
    parser.add_argument("--icc", type=float, default=None,
                        help="intra-dialogue correlation of the outcome (default: estimated from --pilot, else 0)")
    parser.add_argument("--pilot", metavar="FILE", default=None,
                        help="a pilot's turns table (.csv/.jsonl): estimate the intra-dialogue correlation and the "
                             "turns per dialogue from it")
    parser.add_argument("--reps", type=int, default=2000, help="simulations per n (MM designs)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the simulations")
    parser.add_argument("--budget", type=int, default=None,
                        help="turns you can afford (SM: per model): print its power and smallest detectable delta")
    parser.add_argument("--json", metavar="FILE", help="also write the answer, assumptions and version as JSON")
    add_cost_options(parser)


def run(args) -> int:
    import parlai_acute
    from parlai_acute.per_turn.power import plan

    pilot = None
    if args.pilot:
        from parlai_acute.per_turn.power import pilot_outcomes
        from parlai_acute.per_turn.turns import read_turns
        from parlai_acute.stats.power import pilot_icc

        turns = read_turns(args.pilot)
        pilot = pilot_icc(*pilot_outcomes(turns), seed=args.seed)
        pilot["turns_per_dialogue"] = float(turns.groupby("dialogue")["turn"].nunique().mean())
        pilot["file"] = str(args.pilot)
    per_dialogue = args.turns_per_dialogue or (max(1, round(pilot["turns_per_dialogue"])) if pilot else 1)
    icc = args.icc if args.icc is not None else (pilot["icc"] if pilot and pilot["icc"] == pilot["icc"] else 0.0)
    a = Assumptions(design=args.design, delta=args.delta, alpha=args.alpha, power=args.power, models=args.models,
                    base_rate=args.base_rate, tie_win=args.tie_win, correlation=args.correlation,
                    turns_per_dialogue=per_dialogue, icc=icc, reps=args.reps, seed=args.seed)
    out = plan(a, args.budget)
    if pilot:
        from parlai_acute.report.tables import interval_text

        out["pilot"] = pilot
        print(f"pilot {pilot['file']}: {pilot['clusters']} dialogues, {pilot['turns_per_dialogue']:.1f} turns each; "
              f"intra-dialogue correlation {interval_text(pilot['icc'], pilot['icc_low'], pilot['icc_high'])} "
              f"(95% bootstrap of dialogues)" + (" -- used" if args.icc is None else f" -- not used: --icc {args.icc:g}"))
        if args.icc is None and args.budget is None and pilot["icc_high"] == pilot["icc_high"]:
            import dataclasses

            upper = plan(dataclasses.replace(a, icc=pilot["icc_high"]))
            out["at_icc_high"] = {k: upper[k] for k in ("turns", "dialogues", "design_effect")}
            print(f"at the interval's upper end ({pilot['icc_high']:.3f}): {upper['turns']} turns = "
                  f"{upper['dialogues']} dialogues (a pilot of {pilot['clusters']} dialogues pins the correlation "
                  f"down poorly: plan with this if you can)")
    per = " per model" if a.design == "sm" else ""
    print(f"design {a.design}: {DESCRIPTION[a.design]}")
    rates = ", ".join(f"{k}={v:.3g}" for k, v in out["rates"].items())
    extra = f", models={a.models}" if a.design.startswith("mm") else ""
    sim = f", simulated {a.reps} times per n, seed {a.seed}" if a.design.startswith("mm") else ""
    print(f"assumptions: delta={a.delta:g}, alpha={a.alpha:g}, power={a.power:g}{extra}; {rates}{sim}")
    if a.design == "pm-soba":
        cf = out["closed_form"]
        print(f"closed form (z_(1-alpha/2) + z_power)^2 / (2 delta)^2: rounded z 1.96 + 0.84 -> {cf['rounded_z']:.1f} turns "
              f"(the paper's 196 for delta 0.1); unrounded z -> {cf['exact_z']:.2f}")
    if args.budget is None:
        if a.design == "pm-soba":
            print(f"exact binomial test: {out['n']} turns (power stays >= {a.power:g} from there; first reached at "
                  f"{out['n_first']}), power {out['power_at_n']:.3f}")
        else:
            omni = (f"; omnibus ({'chi-squared' if a.design == 'mm-soba' else 'Cochran Q'}) power there "
                    f"{out['omnibus_power']:.3f}" if out.get("omnibus_power") is not None else "")
            se = f" +- {out['monte_carlo_se']:.3f} (Monte Carlo)" if out.get("monte_carlo_se") else ""
            print(f"needed: {out['n']} independent turns{per}, power {out['power_at_n']:.3f}{se}{omni}")
        if a.turns_per_dialogue > 1 or a.icc > 0:
            print(f"clustered: design effect 1 + ({a.turns_per_dialogue} - 1) x {a.icc:.3g} = {out['design_effect']:.3f} "
                  f"-> {out['turns']} turns{per} = {out['dialogues']} dialogues of {a.turns_per_dialogue} turns"
                  f" (at least {out['min_dialogues']}: fewer can never give a mark in the test over dialogues)")
        else:
            print("turns treated as independent; give --turns-per-dialogue and --icc for dialogues")
    else:
        print(f"budget {args.budget} turns{per} (effective {out['effective_turns']} after design effect "
              f"{out['design_effect']:.3f}): power {out['power']:.3f} for delta {a.delta:g}; smallest delta detectable "
              f"with power {a.power:g}: {out['detectable_delta']:.3f}")
    if pilot and args.budget is None:
        out["nested"] = _nested(turns, a)
    out.update(parlai_acute_version=parlai_acute.__version__, seed=a.seed)
    return finish(args, out, _needs(a, out, args.budget), lambda: _pilot_seconds(args.pilot), unit="turns")


def _needs(a, out: dict, budget: int | None) -> list[tuple[str, int]]:
    """(label, judged turns) to price: the turns the design needs (SM: per model, so two models' worth),
    or the budget. A judged turn is one judgment: the worker writes, waits and judges its replies."""
    per = 2 if a.design == "sm" else 1
    if budget is not None:
        return [(f"budget {budget} turns" + (" per model, two models" if per == 2 else ""), budget * per)]
    return [(f"delta {a.delta:g}" + (", two models" if per == 2 else ""), int(out["turns"]) * per)]


def _pilot_seconds(path: str):
    from parlai_acute.per_turn.turns import read_turns
    from parlai_acute.review.cost import SOURCES, per_turn_judgment_seconds

    return per_turn_judgment_seconds(read_turns(path)), SOURCES["per-turn"]


def _nested(turns, a) -> dict | None:
    """Workers and dialogues per worker the plan needs when the pilot's workers did several
    dialogues (dialogues nested in workers; the analysis then tests over workers), every design
    (:func:`parlai_acute.per_turn.power.nested_table`)."""
    from parlai_acute.per_turn.power import nested_table

    plan = nested_table(turns, a)
    if plan is None:
        print(f"no pilot worker did more than one {a.design.split('-')[0].upper()} dialogue: the pilot cannot tell a "
              f"worker's share of the variance from a dialogue's, so the plan over dialogues above is the plan (if "
              f"the study's workers will repeat, run a pilot in which they do)")
        return None
    comp, per = plan["components"], " per model" if plan["per"] == "model" else ""
    print(f"workers repeat across dialogues (the analysis tests over workers): variance of a turn's outcome "
          f"{comp['total']:.3f} = worker {comp['outer']:.3f} + dialogue {comp['inner']:.3f} + turn "
          f"{comp['residual']:.3f} ({comp['outers']} workers, {comp['inners']} dialogues, {comp['pairs']} pair(s) or "
          f"model(s))")
    print(f"  planned for the {plan['test']}; alpha {plan['alpha_planned']:.3g}, t on the plan's own df")
    print("  " + "; ".join(f"{r['dialogues_per_worker']} dialogue(s) per worker: {r['workers']} workers{per} "
                           f"({r['dialogues']} dialogues{per})" for r in plan["rows"]))
    return plan
