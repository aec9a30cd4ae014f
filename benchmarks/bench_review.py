"""``parlai-acute review`` speed, the table from what a run stored (issue 25's ``review_seconds``):
the evidence and the per-worker plan (pay, proposals under a few rules) for

* ACUTE-Eval: 200 workers x 20 units of 5 comparisons (20,000 judgments, 4,000 units, one
  onboarding comparison per unit), read by ``acute.review.evidence`` from unit data as the store
  returns it;
* per-turn PM-SOBA: 200 dialogues of 10 judged turns (one practice each).

Timed from the stored units (what the command does after reading the agents' files; reading the
files is measured apart: 0.75 s per 400 agents, from a database built with Mephisto's API).
``value`` is the slower of the two, best of three; target < 10 s.
"""
import random
from benchmarks.bench_status import _best  # best of three, as every timed bench reports it

TARGET_S = 10.0
RULES = [{"when": "gold_accuracy < 0.5", "action": "reject"}, {"when": "position_p < 0.001", "action": "block"},
         {"when": "messages_flagged > 50", "action": "soft_reject"}]


def acute_units(workers=200, units=20, per_unit=5, seed=0):
    rng = random.Random(seed)
    out = []
    for w in range(workers):
        for u in range(units):
            comps = [{"pairing": {"pair_id": "gold", "dialogue_ids": ["g0", "g1"], "speakers_to_eval": ["a", "b"],
                                  "is_onboarding": True, "correct_answer": "a"},
                      "left": 0, "choice": "a" if rng.random() < 0.9 else "b", "reason": "it answers me",
                      "question_key": "engaging", "start_time": 0.0, "end_time": 20.0}]
            for i in range(per_unit):
                pair = rng.randrange(400)
                comps.append({"pairing": {"pair_id": f"p{pair}", "dialogue_ids": [f"x{pair}", f"y{pair}"],
                                          "speakers_to_eval": ["a", "b"], "is_onboarding": False},
                              "left": rng.randrange(2), "choice": rng.choice("ab"),
                              "reason": rng.choice(["more engaging", "asks questions", "ok", "less repetitive"]),
                              "question_key": "engaging", "start_time": 0.0, "end_time": rng.uniform(10, 60)})
            out.append({"worker_name": f"w{w}", "worker_id": str(w), "unit_id": f"{w}-{u}", "task_run_id": "1",
                        "data": {"comparisons": comps}})
    return out


def per_turn_units(dialogues=200, turns=10, seed=0):
    rng = random.Random(seed)
    out = []
    for d in range(dialogues):
        ts = []
        for k in range(turns):
            picked = rng.randrange(2)
            ts.append({"turn": k, "worker_message": rng.choice(["hi", "What do you do on weekends?", "ok cool"]),
                       "candidates": [{"model": m, "position": p, "picked": p == picked, "continued": p == picked}
                                      for p, m in enumerate(rng.sample(["a", "b"], 2))],
                       "fallback": "picked", "user_reply": "", "justification": "",
                       "shown_at": 10.0 * k, "decided_at": 10.0 * k + rng.uniform(1, 9)})
        out.append({"worker_name": f"w{d % 100}", "worker_id": str(d % 100), "unit_id": str(d), "task_run_id": "1",
                    "data": {"dialogue_id": f"d{d}", "protocol": "soba", "status": "complete", "turns": ts,
                             "onboarding": {"item": 0, "picked": [0], "passed": rng.random() < 0.9}}})
    return out


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.acute.review import evidence as acute_evidence
    from parlai_acute.per_turn.review import evidence as per_turn_evidence
    from parlai_acute.review.plan import TABLE_COLUMNS, make_plan
    from parlai_acute.review.rules import Policy

    policy = Policy.read(None, TABLE_COLUMNS, rules=RULES, min_hourly_wage=12.0)

    def review(units, evidence, **settings):
        work = [{"worker": u["worker_name"], "unit_id": u["unit_id"], "seconds": 300.0, "pay": 0.5} for u in units]
        return make_plan("bench", "bench", evidence(units, **settings), work, policy)

    acute, turns = acute_units(), per_turn_units()
    review(acute[:100], acute_evidence, per_worker_cap=100)  # warm up imports
    acute_s, acute_plan = _best(lambda: review(acute, acute_evidence, per_worker_cap=100))
    turns_s, turns_plan = _best(lambda: review(turns, per_turn_evidence))
    assert len(acute_plan.table) == 200 and int(acute_plan.table["judgments"].sum()) == 20_000
    assert len(turns_plan.table) == 100 and int(turns_plan.table["judgments"].sum()) == 2_000
    value = max(acute_s, turns_s)
    yield {"name": "review_seconds", "value": round(value, 3), "unit": "s", "target": TARGET_S,
           "ratio": round(value / TARGET_S, 3), "acute_seconds": round(acute_s, 3),
           "perturn_seconds": round(turns_s, 3), "acute_units": len(acute), "perturn_dialogues": len(turns)}
