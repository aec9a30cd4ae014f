"""Hand-built per-turn rows for the tests."""


def turn(dialogue, t, models, picked, setting=None, protocol="sata_random", worker="w1", positions=None,
         continued=None, incomplete=(), message="tell me about your weekend plans", decision=10.0, **extra):
    """Rows of one turn: ``picked`` lists the picked models; positions default to the models' order."""
    models = list(models)
    setting = setting or {1: "sm", 2: "pm"}.get(len(models), "mm")
    shown = [m for m in models if m not in incomplete]
    positions = positions or {m: i for i, m in enumerate(shown)}
    if continued is None:
        pool = [m for m in shown if m in picked] or ([] if protocol == "sata_user" else shown)
        continued = pool[0] if pool else None
    rows = []
    for m in models:
        rows.append({"dialogue": dialogue, "worker": worker, "turn": t, "setting": setting, "protocol": protocol,
                     "model_set": "|".join(sorted(models)), "model": m, "position": positions.get(m),
                     "picked": m in picked, "continued": m == continued, "incomplete": m in incomplete,
                     "worker_message": message, "decision_seconds": decision, "timestamp": 1000.0 + t, **extra})
    return rows


def table_rows(spec, **common):
    """``spec``: list of (dialogue, picked models) per turn; turns numbered within each dialogue."""
    rows, counter = [], {}
    for dialogue, picked in spec:
        t = counter.get(dialogue, 0)
        counter[dialogue] = t + 1
        rows += turn(dialogue, t, picked=picked, **common)
    return rows
