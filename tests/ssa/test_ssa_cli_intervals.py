"""`ssa analyze` prints an interval that can be true: the exact one where the bootstrap gives none."""
from parlai_acute.scripts.main import main
from parlai_acute.ssa.labels import labels_table, write_labels


def test_a_rate_of_zero_prints_its_exact_interval_not_n_a(tmp_path, capsys):
    rows = [{"item": f"i{k}", "model": "bad", "worker": "w1", "sensible": False, "specific": False} for k in range(10)]
    rows += [{"item": f"j{k}", "model": "good", "worker": "w2", "sensible": k % 3 > 0, "specific": k % 2 == 0}
             for k in range(10)]
    path = tmp_path / "labels.csv"
    write_labels(path, labels_table(rows))
    assert main(["ssa", "analyze", "--labels", str(path), "--outdir", str(tmp_path / "o"), "--bootstrap", "100",
                 "--no-report"]) == 0
    out = capsys.readouterr().out
    bad = next(line for line in out.splitlines() if line.strip().startswith("bad"))
    # 0 of 10 items sensible, one worker: the cluster bootstrap cannot vary; Clopper-Pearson [0, 30.85] exists,
    # shown rounded outward
    assert " 0.0 [0.0, 30.9]+" in bad and "n/a" not in bad
    assert "+: 95% exact Clopper-Pearson (items independent)" in out
    assert "alpha nan" not in out
