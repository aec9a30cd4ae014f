"""The self-chat memory benchmark measures its own child, whatever ran before it in the process."""
import subprocess
import sys

from benchmarks.bench_selfchat import child_peak_rss_mb


def allocate(mb: int) -> list[str]:
    return [sys.executable, "-c", f"b = bytearray({mb} * 2**20); b[::4096] = b'x' * len(b[::4096])"]


def test_peak_rss_is_that_of_the_measured_child_only():
    subprocess.run(allocate(400), check=True)  # a bigger child of this process, as another benchmark's
    small = child_peak_rss_mb(allocate(40))
    assert 40 <= small < 150
    assert child_peak_rss_mb(allocate(200)) > 200
