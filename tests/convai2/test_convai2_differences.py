"""ConvAI2 differences between models are tested over workers, whose harshness they share."""
import numpy as np
import pandas as pd
import pytest

from parlai_acute.convai2.analysis import ConvAI2Config, analyze, differences
from parlai_acute.convai2.simulate import simulate_ratings
from parlai_acute.scripts.main import main
from parlai_acute.stats.inference import sign_flip_pvalues


def test_equal_models_are_marked_at_the_nominal_rate_despite_harsh_and_kind_workers():
    """A/A: 20 workers rate both models 3 times each; worker harshness sd 1 and worker-by-model taste sd 1.
    The mark is the sign-flip test of each worker's mean difference (checked equal to `differences` on
    the first study), run on 2000 seeded studies at once."""
    rng = np.random.default_rng(0)
    reps, workers = 2000, 20
    worker = np.repeat(np.arange(workers), 6)
    model = np.tile(["a", "a", "a", "b", "b", "b"], workers)
    harsh = rng.normal(0, 1.0, (workers, reps))[worker]
    taste = rng.normal(0, 1.0, (workers, reps))[worker] * (model == "b")[:, None]
    score = harsh + taste + rng.normal(0, 1, (len(worker), reps))
    means = pd.DataFrame(score).groupby([worker, model]).mean()
    diff = (means.xs("b", level=1) - means.xs("a", level=1)).to_numpy()  # (workers, reps)
    p = sign_flip_pvalues(diff, seed=1)
    first = differences(pd.DataFrame({"worker": worker, "model": model, "score": score[:, 0]}), ConvAI2Config(seed=1))
    assert first["pvalue"].iloc[0] == pytest.approx(p[0])
    assert 0.03 <= (p < 0.05).mean() <= 0.07, (p < 0.05).mean()
    power_diff = diff + 0.8  # a real difference of 0.8 points is found most of the time
    assert (sign_flip_pvalues(power_diff, seed=1) < 0.05).mean() > 0.5


def test_paired_workers_see_through_harshness_and_too_few_get_no_mark(tmp_path, capsys):
    df = simulate_ratings({"best": 3.0, "fair": 2.4, "poor": 2.0}, annotators=40, per_annotator=8, bias_sd=1.0,
                          harsh_on_best=True, seed=2, rounded=True).assign(question="engaging")
    result = analyze(df, ConvAI2Config(bootstrap=100, seed=0))
    row = result.differences.iloc[0]
    assert (row["model_a"], row["model_b"]) == ("best", "fair") and "sign-flip" in row["test"]
    assert row["ci_low"] < row["difference"] < row["ci_high"] < 0 and row["mark"] != ""
    few = differences(df[df["worker"].isin(sorted(df["worker"].unique())[:3])], ConvAI2Config())
    assert few["mark"].iloc[0] == "" and few["workers_needed"].iloc[0] > 0 and "only" in few["reason"].iloc[0]
    path = tmp_path / "ratings.csv"
    df.to_csv(path, index=False)
    assert main(["convai2", "analyze", "--ratings", str(path), "--outdir", str(tmp_path / "o"), "--bootstrap", "50",
                 "--alpha", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "engaging fair - best:" in out and "marks: * p < 0.01, ** p < 0.002" in out
    assert pd.read_csv(tmp_path / "o" / "pairs.csv").shape[0] == 3
    assert "Differences between models" in (tmp_path / "o" / "report.html").read_text()
