"""The self-chat memory benchmark measures its own child, whatever ran before it or how big this process is."""
import subprocess
import sys

from benchmarks.bench_selfchat import child_peak_rss_mb

ALLOCATE = "import sys\nb = bytearray(int(sys.argv[1]) * 2**20)\nb[::4096] = b'x' * len(b[::4096])\n"


def test_peak_rss_is_that_of_the_measured_child_only(tmp_path, monkeypatch):
    (tmp_path / "allocate_mb.py").write_text(ALLOCATE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    ballast = bytearray(300 * 2**20)  # this process is big, as the benchmark process is after loading models
    ballast[::4096] = b"x" * len(ballast[::4096])
    subprocess.run([sys.executable, str(tmp_path / "allocate_mb.py"), "400"], check=True)  # a bigger earlier child
    small = child_peak_rss_mb("allocate_mb", ["40"], str(tmp_path))
    assert 40 <= small < 150
    assert child_peak_rss_mb("allocate_mb", ["200"], str(tmp_path)) > 200
    del ballast
