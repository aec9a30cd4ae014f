"""Peak memory of this process over a stretch of code (Linux ``VmHWM``, reset first)."""


def reset_peak() -> bool:
    """Reset this process's peak RSS to its current RSS (Linux >= 4.0); False where it cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float:
    """This process's peak resident memory since start or the last :func:`reset_peak`, in MB."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")
