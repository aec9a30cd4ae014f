"""ACUTE-Eval's evidence for the review table (:mod:`parlai_acute.review`): one row per judgment of
the stored units, with the analysis's own exclusions (failed onboarding, no reason, same model,
over the per-worker cap the run was launched with) -- the rows the stop rule and ``analyze`` drop."""
from __future__ import annotations

from parlai_acute.acute.analysis import AnalysisConfig, apply_exclusions
from parlai_acute.acute.judgments import judgments_from_unit_data


def evidence(units: list[dict], per_worker_cap=None) -> list[dict]:
    """Evidence rows (:data:`parlai_acute.review.evidence.ROW`) of ``units`` (stored ACUTE units, as
    ``mephisto_tasks.acute.store.unit_data_for_task`` reads them)."""
    df = judgments_from_unit_data(units)
    if df.empty:
        return []
    cap = per_worker_cap[0] if isinstance(per_worker_cap, tuple) else per_worker_cap
    df = df.assign(_row=range(len(df)))
    _, excluded, _ = apply_exclusions(df, AnalysisConfig(max_per_worker=cap, bootstrap=0))
    because = dict(zip(excluded["_row"], excluded["excluded_because"]))
    rows = []
    for r in df.to_dict(orient="records"):
        same = r["model_left"] == r["model_right"]
        rows.append({"worker": r["worker"], "unit_id": r["unit_id"], "item": r["pair_id"],
                     "question": r["question_key"], "answer": r["winner_side"] if same else r["winner"],
                     "seconds": r["duration"], "first": r["winner_side"] == "left", "options": 2,
                     "gold": bool(r["onboarding_correct"]) if r["is_onboarding"] else None,
                     "reason": r["reason"], "message": r["reason"] if r["reason"].strip() else None,
                     "straight": False, "excluded": because.get(r["_row"], "")})
    return rows
