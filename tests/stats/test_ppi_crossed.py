"""Seeded A/A studies of PPI where people's items carry several workers' answers and the workers
repeat across items (issue 23): the crossed PPI interval (items and workers both sampled) holds its
level where the independent-items interval fires far above it, and keeps it where only one facet
varies."""
import numpy as np
import pandas as pd
import pytest

from parlai_acute.stats.ppi import ppi_bradley_terry, ppi_mean, ppi_mean_crossed


def _study(rng, items=60, workers=20, per_item=3, worker_sd=0.8, item_sd=1.0, judge_items=600, effect=0.0):
    """ACUTE-like: logit P(B wins) = effect + the pair's effect + the worker's taste for B; each pair
    judged by ``per_item`` distinct workers of a pool; the judge sees the pair's effect plus noise."""
    pair = rng.normal(0, item_sd, items + judge_items)
    taste = rng.normal(0, worker_sd, workers)
    worker = np.argsort(rng.random((items, workers)), axis=1)[:, :per_item].ravel()
    label_item = np.repeat(np.arange(items), per_item)
    eta = effect + pair[label_item] + taste[worker]
    vote = (rng.random(len(label_item)) < 1 / (1 + np.exp(-eta))).astype(float)
    y = np.bincount(label_item, weights=vote, minlength=items) / per_item
    judge = ((pair + effect + rng.normal(0, 0.7, len(pair))) > 0).astype(float)
    return y, judge[:items], judge[items:], label_item, worker, vote


def _truth(effect, worker_sd=0.8, item_sd=1.0, draws=400_000):
    eta = effect + np.random.default_rng(7).normal(0, np.hypot(worker_sd, item_sd), draws)
    return float(np.mean(1 / (1 + np.exp(-eta))))


def _rates(runs, seed, truth, **design):
    rng = np.random.default_rng(seed)
    crossed = independent = 0
    for _ in range(runs):
        y, f, fu, label_item, worker, vote = _study(rng, **design)
        res = ppi_mean_crossed(y, f, fu, np.arange(len(y)), label_item, worker, vote)
        crossed += not res["lower"] <= truth <= res["upper"]
        old = ppi_mean(y, f, fu)
        independent += not old["lower"] <= truth <= old["upper"]
    return crossed / runs, independent / runs


def test_crossed_ppi_holds_its_level_where_independent_items_fire_above():
    null, old = _rates(1500, seed=1, truth=0.5)
    assert 0.03 <= null <= 0.07, null
    assert old > 0.10, old  # the old treatment of items as independent: well above 5 %


def test_crossed_ppi_covers_the_true_rate_at_an_effect():
    truth = _truth(0.5)
    miss, _ = _rates(1500, seed=2, truth=truth, effect=0.5)
    assert 0.93 <= 1 - miss <= 0.97, 1 - miss


@pytest.mark.parametrize("worker_sd,item_sd", [(0.0, 1.0), (0.8, 0.0)])
def test_crossed_ppi_keeps_its_level_when_only_one_facet_varies(worker_sd, item_sd):
    null, _ = _rates(1000, seed=3, truth=0.5, worker_sd=worker_sd, item_sd=item_sd)
    assert 0.03 <= null <= 0.07, null


def test_too_few_workers_give_no_interval_and_say_why():
    y, f, fu, label_item, worker, vote = _study(np.random.default_rng(4), items=30, workers=4)
    res = ppi_mean_crossed(y, f, fu, np.arange(len(y)), label_item, worker, vote)
    assert np.isnan(res["lower"]) and np.isnan(res["upper"])
    assert res["why"].startswith("only 4 workers") and "at least 6" in res["why"]


def test_majority_items_use_the_label_split():
    """SSA-like items (majority of 5 labels) nested in contexts, workers crossed with contexts:
    the interval runs over contexts and workers, with the majority's slope per label."""
    from parlai_acute.stats.inference import pivotal

    rng = np.random.default_rng(5)
    contexts, workers, k, items = 30, 20, 5, 60
    context = np.repeat(np.arange(contexts), 2)
    worker = np.argsort(rng.random((items, workers)), axis=1)[:, :k].ravel()
    label_item = np.repeat(np.arange(items), k)
    eta = rng.normal(0, 1, contexts)[context][label_item] + rng.normal(0, 0.8, workers)[worker]
    vote = (rng.random(len(label_item)) < 1 / (1 + np.exp(-eta))).astype(float)
    yes = np.bincount(label_item, weights=vote)
    y = (2 * yes > k).astype(float)
    slope = np.full(len(vote), pivotal(yes[label_item] - vote, k).mean())
    f = np.clip(y + (rng.random(items) < 0.2), 0, 1)
    fu = (rng.random(400) < 0.6).astype(float)
    res = ppi_mean_crossed(y, f, fu, context, label_item, worker, vote, slope)
    assert (res["contexts"], res["workers"], res["df"]) == (30, 20, 19)
    assert res["lower"] < res["estimate"] < res["upper"] and res["why"] == ""


def test_all_majorities_alike_get_an_honest_width_not_a_sliver():
    """Every labelled reply has a yes majority (8 contexts): the people's term has no spread, and the
    judge's alone gave an interval too narrow to hold the true share; its variance is floored at the
    Agresti-Coull binomial variance over the contexts."""
    from scipy import stats as sps

    from parlai_acute.stats.inference import pivotal

    rng = np.random.default_rng(3)
    contexts, workers, k = 8, 8, 5
    context = np.arange(contexts)
    worker = np.argsort(rng.random((contexts, workers)), axis=1)[:, :k].ravel()
    label_item = np.repeat(np.arange(contexts), k)
    vote = np.ones(len(label_item))
    vote[np.arange(6) * k] = 0  # a no label on six replies: every majority still yes
    yes = np.bincount(label_item, weights=vote)
    y = (2 * yes > k).astype(float)
    assert y.all()
    slope = np.full(len(vote), pivotal(yes[label_item] - vote, k).mean())
    f = (rng.random(contexts) < 0.8).astype(float)
    fu = (rng.random(200) < 0.8).astype(float)
    res = ppi_mean_crossed(y, f, fu, context, label_item, worker, vote, slope)
    rate = (contexts + 2) / (contexts + 4)
    floor = sps.t.ppf(0.975, res["df"]) * np.sqrt(rate * (1 - rate) / contexts)
    assert res["upper"] - res["lower"] >= 2 * floor - 1e-12
    assert res["lower"] < 0.75


def test_majority_lambda_is_tuned_on_the_other_fold_of_contexts():
    """On SSA majorities each fold of contexts is weighed by the lambda tuned on the other fold
    (cross-fitting: no rectifier's weight is tuned on that rectifier), each fold's judge-only mean
    by its share of the labelled items; a fixed lambda is used as given, as in :func:`ppi_mean`."""
    from parlai_acute.stats.inference import pivotal
    from parlai_acute.stats.ppi import tuned_lambda

    rng = np.random.default_rng(6)
    contexts, workers, k = 24, 12, 5
    worker = np.argsort(rng.random((contexts, workers)), axis=1)[:, :k].ravel()
    label_item = np.repeat(np.arange(contexts), k)
    quality = rng.normal(0, 1, contexts + 120)
    eta = quality[:contexts][label_item] + rng.normal(0, 0.8, workers)[worker]
    vote = (rng.random(len(label_item)) < 1 / (1 + np.exp(-eta))).astype(float)
    yes = np.bincount(label_item, weights=vote)
    y = (2 * yes > k).astype(float)
    slope = np.full(len(vote), pivotal(yes[label_item] - vote, k).mean())
    judge = (quality + rng.normal(0, 0.7, len(quality)) > 0).astype(float)
    f, fu = judge[:contexts], judge[contexts:]
    res = ppi_mean_crossed(y, f, fu, np.arange(contexts), label_item, worker, vote, slope)
    fold, fold_u = np.arange(contexts) % 2, np.arange(len(fu)) % 2
    lam = [float(tuned_lambda(y[fold != j], f[fold != j], fu[fold_u != j])) for j in (0, 1)]
    assert lam[0] != lam[1]  # the folds' weights differ: each comes from the other fold's items
    expected = np.mean(y - np.array(lam)[fold] * f) + sum(0.5 * lam[j] * fu[fold_u == j].mean() for j in (0, 1))
    assert res["estimate"] == pytest.approx(expected)
    assert res["lambda"] == pytest.approx(np.mean(lam))
    assert res["lower"] < res["estimate"] < res["upper"]
    fixed = ppi_mean_crossed(y, f, fu, np.arange(contexts), label_item, worker, vote, slope, lam=0.5)
    assert fixed["estimate"] == pytest.approx(ppi_mean(y, f, fu, lam=0.5)["estimate"])


def _bt_study(rng, models=3, items=60, workers=20, per_item=3, worker_sd=0.8, item_sd=1.0, judge_items=600):
    pairs = np.array([(a, b) for a in range(models) for b in range(a + 1, models)])
    which = rng.integers(0, len(pairs), items + judge_items)
    first, second = pairs[which, 1], pairs[which, 0]
    pair = rng.normal(0, item_sd, items + judge_items)
    taste = rng.normal(0, worker_sd, (workers, models))  # each worker's taste for each model
    worker = np.argsort(rng.random((items, workers)), axis=1)[:, :per_item].ravel()
    label_item = np.repeat(np.arange(items), per_item)
    eta = pair[label_item] + taste[worker, first[label_item]] - taste[worker, second[label_item]]
    vote = (rng.random(len(label_item)) < 1 / (1 + np.exp(-eta))).astype(float)
    y = np.bincount(label_item, weights=vote) / per_item
    judge = ((pair + rng.normal(0, 0.7, len(pair))) > 0).astype(float)
    n = items
    return (first[:n], second[:n], y, judge[:n], first[n:], second[n:], judge[n:], models), \
        {"item": label_item, "value": vote, "worker": worker}


def _misses(study, runs: int, seed: int) -> tuple[float, float, dict]:
    """Share of ``runs`` studies whose first strength's interval misses its true 0: with the answers
    (every sampled facet random), and with the rows treated as independent; and the last result."""
    rng = np.random.default_rng(seed)
    crossed = independent = 0
    for _ in range(runs):
        args, answers = study(rng)
        res = ppi_bradley_terry(*args, answers=answers)
        crossed += not res["lower"][0] <= 0 <= res["upper"][0]
        old = ppi_bradley_terry(*args)
        independent += not old["lower"][0] <= 0 <= old["upper"][0]
    return crossed / runs, independent / runs, res


def test_crossed_ppi_ranking_holds_its_level_where_independent_rows_fire_above():
    crossed, independent, res = _misses(_bt_study, 600, seed=20)
    assert 0.02 <= crossed <= 0.07, crossed
    assert independent > 0.10, independent
    assert res["levels"] == [60, 20] and res["df"] == 19


def test_ppi_table_names_contexts_and_workers_for_static_ssa():
    """End to end: static SSA replies labelled by 3 workers each of a pool, workers crossed with
    contexts: the row's note names the contexts and the workers; a pool of 4 gives no interval
    with the judge, said in words."""
    from parlai_acute.judges.ppi import ppi_table

    def tables(pool, seed):
        rng = np.random.default_rng(seed)
        lenient = rng.normal(0, 0.8, pool)
        people, judge = [], []
        for c in range(150):
            quality = rng.normal(0.4, 1.0)
            item = {"item": f"i{c}", "model": "m", "context_id": f"c{c}", "source": "static"}
            for w in (rng.permutation(pool)[:3] if c < 60 else []):
                yes = bool(rng.random() < 1 / (1 + np.exp(-quality - lenient[w])))
                people.append(item | {"worker": f"w{w}", "sensible": yes, "specific": yes and rng.random() < 0.5})
            verdict = bool(quality + rng.normal(0, 0.4) > 0)
            judge.append(item | {"worker": "judge", "sensible": verdict, "specific": verdict})
        return pd.DataFrame(people), pd.DataFrame(judge)

    people, judge = tables(12, 6)
    table = ppi_table(people, judge, "ssa", bootstrap=0)
    row = table[table["measure"] == "sensibleness"].iloc[0]
    assert "60 conversation or context units and 12 workers at once" in row["note"], row["note"]
    assert row["lower"] < row["estimate"] < row["upper"]
    people, judge = tables(4, 7)
    table = ppi_table(people, judge, "ssa", bootstrap=0)
    row = table[table["measure"] == "sensibleness"].iloc[0]
    assert pd.isna(row["lower"]) and "only 4 workers" in row["note"], row["note"]


def _reused_study(rng, models=3, items=80, workers=20, per_item=3, conversations=8, judge_items=600):
    """Each model's ``conversations`` (quality sd 1.0) serve every pair, people's and judge's;
    worker taste sd 0.5 per model; the judge sees the pair's quality plus noise."""
    pairs = np.array([(a, b) for a in range(models) for b in range(a + 1, models)])
    total = items + judge_items
    which = rng.integers(0, len(pairs), total)
    first, second = pairs[which, 1], pairs[which, 0]
    cf, cs = rng.integers(0, conversations, total), rng.integers(0, conversations, total)
    quality = rng.normal(0, 1.0, (models, conversations))
    taste = rng.normal(0, 0.5, (workers, models))
    worker = np.argsort(rng.random((items, workers)), axis=1)[:, :per_item].ravel()
    label_item = np.repeat(np.arange(items), per_item)
    q = quality[first, cf] - quality[second, cs]
    eta = q[label_item] + taste[worker, first[label_item]] - taste[worker, second[label_item]]
    vote = (rng.random(len(label_item)) < 1 / (1 + np.exp(-eta))).astype(float)
    y = np.bincount(label_item, weights=vote) / per_item
    judge = ((q + rng.normal(0, 0.7, total)) > 0).astype(float)
    conv_first, conv_second = first * 100 + cf, second * 100 + cs
    n = items
    answers = {"item": label_item, "value": vote, "worker": worker,
               "conversations": (conv_first[label_item], conv_second[label_item]),
               "judge_conversations": (conv_first[n:], conv_second[n:])}
    return (first[:n], second[:n], y, judge[:n], first[n:], second[n:], judge[n:], models), answers


def test_ppi_ranking_treats_reused_conversations_as_sampled_in_both_terms():
    """8 conversations per model reused by people's and judge's items: the multiway interval over
    items, workers and conversations (the judge's items in the same meat) holds its level; rows
    treated as independent fire far above it."""
    crossed, independent, res = _misses(_reused_study, 150, seed=8)
    assert crossed <= 0.08, crossed
    assert independent > 0.25, independent
    assert res["levels"] == [80, 20, 8] and res["df"] == 7  # t on the fewest conversations of a model - 1


def test_rank_sets_with_reused_conversations_read_their_critical_value_on_the_t():
    """Equal models in the population, 8 conversations per model reused (t on 7 df): rank-sets from
    normal critical values declared some model ahead of another in about 10 % of 300 runs; read on the
    strengths' own t (Bonferroni's t, Scheffe's F) they stay near alpha. Too few conversations for an
    interval: no model ahead of another, every rank-set all ranks."""
    from parlai_acute.stats.ppi import bradley_terry_rank_sets
    from parlai_acute.stats.ranksets import pairwise_critical, simultaneous_ahead

    rng = np.random.default_rng(8)
    runs, normal, on_t = 300, 0, 0
    for _ in range(runs):
        args, answers = _reused_study(rng)
        res = ppi_bradley_terry(*args, answers=answers)
        normal += simultaneous_ahead(res["strength"], res["cov"], 0.05).any()
        ranks = bradley_terry_rank_sets(res, 0.05)
        on_t += (ranks["rank_lower"] > 1).any() or (ranks["rank_upper"] < 3).any()
    assert res["df"] == 7 and pairwise_critical(3, 0.05, 7)[0] > pairwise_critical(3, 0.05)[0]
    assert normal / runs > 0.07, normal / runs
    assert on_t / runs <= 0.06, on_t / runs
    args, answers = _reused_study(rng, conversations=3)  # below the fewest levels a verdict needs
    res = ppi_bradley_terry(*args, answers=answers)
    ranks = bradley_terry_rank_sets(res, 0.05)
    assert res["why"] and list(ranks["rank_lower"]) == [1, 1, 1] and list(ranks["rank_upper"]) == [3, 3, 3]


def test_ppi_ranking_names_the_units_end_to_end():
    from parlai_acute.acute.simulate import simulate_judgments
    from parlai_acute.judges.ppi import ppi_ranking

    people = simulate_judgments({"a": 0.5, "b": 0.0, "c": 0.2}, 900, seed=1, workers=30, dialogues_per_model=10,
                                worker_sd=0.5)
    judge = people.drop_duplicates("pair_id").assign(worker="judge")
    asked = judge["pair_id"].iloc[::4]
    ranking = ppi_ranking(people[people["pair_id"].isin(asked)], judge, "acute")
    note = ranking["note"].iloc[0]
    assert "workers and the conversations (at least" in note and "per model" in note, note


def _pairs_study(rng, items=100, workers=20, per_item=1, conversations=8, judge_items=500):
    """ACUTE pairs drawn from ``conversations`` per model (quality sd 1.0), people's and judge's;
    each pair judged by ``per_item`` workers (taste sd 0.5)."""
    total = items + judge_items
    conv_a, conv_b = rng.integers(0, conversations, total), rng.integers(0, conversations, total)
    quality = rng.normal(0, 1.0, (2, conversations))
    pair = quality[1, conv_b] - quality[0, conv_a]
    taste = rng.normal(0, 0.5, workers)
    worker = np.argsort(rng.random((items, workers)), axis=1)[:, :per_item].ravel()
    label_item = np.repeat(np.arange(items), per_item)
    vote = (rng.random(len(label_item)) < 1 / (1 + np.exp(-pair[label_item] - taste[worker]))).astype(float)
    y = np.bincount(label_item, weights=vote, minlength=items) / per_item
    judge = ((pair + rng.normal(0, 0.7, total)) > 0).astype(float)
    return (y, judge[:items], judge[items:], np.arange(items), label_item, worker, vote), (
        conv_a[label_item], conv_b[label_item], conv_a[items:], conv_b[items:])


@pytest.mark.parametrize("per_item", [1, 3])
def test_crossed_ppi_treats_reused_conversations_as_sampled(per_item):
    """8 conversations per model serve 100 people's and 500 judge's pairs: with the conversations
    (and the judge's items) in the multiway variance the interval holds its level; over items and
    workers alone it fires far above."""
    rng = np.random.default_rng(per_item)
    runs, crossed, workers_only = 600, 0, 0
    for _ in range(runs):
        args, conversations = _pairs_study(rng, per_item=per_item)
        res = ppi_mean_crossed(*args, conversations=conversations)
        crossed += not res["lower"] <= 0.5 <= res["upper"]
        alone = ppi_mean_crossed(*args)
        workers_only += not alone["lower"] <= 0.5 <= alone["upper"]
    assert 0.03 <= crossed / runs <= 0.07, crossed / runs
    assert workers_only / runs > 0.2, workers_only / runs
    assert res["conversations"] == 8 and res["df"] == 7
