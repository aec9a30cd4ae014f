"""ACUTE-Eval in one command, the way ParlAI's fast-acute is used.

Model configurations -> self-chat logs (reused when present) -> pairings -> the Mephisto
task -> analysis. Each step calls the library functions behind the ``parlai-acute``
subcommand a user would run by hand (``self-chat``, ``acute pairings``, ``acute launch``,
``acute analyze``), so there is one way to do each thing and the steps can be rerun
separately from the files left in the work directory::

    WORKDIR/logs/NAME.jsonl      one self-chat log per model (kept and reused)
    WORKDIR/pairings.jsonl       the comparisons (+ .metadata.json)
    WORKDIR/mephisto/            the Mephisto data directory (database.db, unit data)
    WORKDIR/results/             tables, report.html, run.json

The launcher runs as a child process: a person judges in a browser at the printed address,
or ``simulated_workers`` scripted Chromium workers (clearly labelled) do it.
"""
from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from parlai_acute.errors import UserError


@dataclass
class FastConfig:
    workdir: Path
    models: dict[str, str] = field(default_factory=dict)  # name -> model string for self-chat
    logs: dict[str, str] = field(default_factory=dict)  # name -> existing log PATH[:SPEAKER]
    num_self_chats: int = 10
    max_turns: int = 6
    task: str = "chitchat"
    batchsize: int = 1
    seed: int = 0
    comparisons_per_pair: int = 10
    question: str = "engaging"
    run_name: str = "acute_fast"
    port: int = 3000
    simulated_workers: int = 0
    max_per_worker: int | None = None  # None: the paper's cap (one judgment per model pair)
    overrides: list[str] = field(default_factory=list)
    bootstrap: int = 1000
    # where each step writes, inside workdir
    logs_dir: Path = field(init=False)
    pairings: Path = field(init=False)
    data_dir: Path = field(init=False)
    results: Path = field(init=False)

    def __post_init__(self):
        self.workdir = Path(self.workdir)
        self.logs_dir, self.pairings = self.workdir / "logs", self.workdir / "pairings.jsonl"
        self.data_dir, self.results = self.workdir / "mephisto", self.workdir / "results"


def _local_architect(cfg: FastConfig) -> bool:
    """True unless a Hydra override picks another architect (Heroku for MTurk, ...)."""
    chosen = [o.split("=", 1)[1] for o in cfg.overrides if o.startswith("mephisto/architect=")]
    return not chosen or chosen[-1] == "local"


def check_config(cfg: FastConfig) -> None:
    """Every argument and the port, before any slow work (self-chats take minutes)."""
    from parlai_acute.mephisto_tasks.live.setup import check_port_free

    if len(cfg.models) + len(cfg.logs) < 2:
        raise UserError("ACUTE-Eval compares at least two systems; give two or more in models (NAME=MODEL) or "
                        "logs (NAME=PATH)", param=("models", "logs"))
    if overlap := set(cfg.models) & set(cfg.logs):
        raise UserError(f"model name {sorted(overlap)[0]!r} is in both models and logs; use one",
                        param=("models", "logs"))
    for name in ("num_self_chats", "max_turns", "comparisons_per_pair", "batchsize"):
        if getattr(cfg, name) < 1:
            raise UserError(f"{name} must be at least 1, got {getattr(cfg, name)}", param=name)
    if cfg.max_per_worker is not None and cfg.max_per_worker < 1:
        raise UserError(f"max_per_worker must be at least 1, got {cfg.max_per_worker}", param="max_per_worker")
    if cfg.simulated_workers < 0:
        raise UserError(f"simulated_workers must be 0 or more, got {cfg.simulated_workers}", param="simulated_workers")
    if cfg.bootstrap < 0:
        raise UserError(f"bootstrap must be 0 or more, got {cfg.bootstrap}", param="bootstrap")
    if not _local_architect(cfg):
        return
    if not 1 <= cfg.port <= 65535:
        raise UserError(f"port {cfg.port} is outside the TCP range; give a number from 1 to 65535 (e.g. port=3000)",
                        param="port")
    try:
        check_port_free("localhost", cfg.port)
    except UserError as exc:
        raise UserError(f"{str(exc).split(';')[0]}; choose another with port (or stop what is using it)",
                        param="port") from None


def self_chat_logs(cfg: FastConfig) -> dict[str, str]:
    """Every model's log: given, reused from WORKDIR/logs, or made now by self-chat."""
    from parlai_acute.logs import read_log

    specs = dict(cfg.logs)
    for name, model in cfg.models.items():
        log = cfg.logs_dir / f"{name}.jsonl"
        if log.exists():
            read_log(log)  # an unreadable log stops here with its own message
            print(f"[fast] {name}: reusing {log}", flush=True)
        else:
            print(f"[fast] {name}: {cfg.num_self_chats} self-chats of {model!r}", flush=True)
            _self_chat(cfg, model, log)
        specs[name] = str(log)
    return specs


def _self_chat(cfg: FastConfig, model: str, log: Path) -> None:
    """What ``parlai-acute self-chat --model=MODEL -o LOG`` with the run's settings does."""
    from parlai_acute.worlds.runner import run_self_chats
    from parlai_acute.worlds.self_chat_opt import check_outfile, self_chat_opt

    check_outfile(str(log))
    opt = self_chat_opt(model, log, task=cfg.task, num_self_chats=cfg.num_self_chats, max_turns=cfg.max_turns,
                        seed=cfg.seed, batchsize=cfg.batchsize)
    path = run_self_chats(opt, progress=sys.stderr.isatty(),  # a bar on a terminal, not in logs
                          extra={"model_spec": model or "default", "partner_model_spec": None})
    print(f"wrote {cfg.num_self_chats} conversations to {path}", flush=True)


def make_pairings(cfg: FastConfig, logs: dict[str, str]) -> Path:
    from parlai_acute.acute.pairings_file import write_pairings_file

    # "unseeded": our self-chats open with a human-written line; never credit a model with it.
    made = write_pairings_file(cfg.pairings, [f"{name}={path}" for name, path in logs.items()],
                               cfg.comparisons_per_pair, cfg.seed, self_chat_side="unseeded", force=True)
    for warning in (made.warning, made.reuse):
        if warning:
            print(f"parlai-acute: warning: {warning}", file=sys.stderr, flush=True)
    print("\n".join(made.summary_lines()), flush=True)
    return cfg.pairings


def analyze_run(cfg: FastConfig) -> Path:
    """What ``acute analyze --task-name RUN --mephisto-db WORKDIR/mephisto/database.db`` does:
    the stored judgments, analysed with the run's own per-worker cap unless one is given."""
    from parlai_acute import api
    from parlai_acute.acute.analysis import AnalysisConfig, write_outputs
    from parlai_acute.acute.summary import summary_lines
    from parlai_acute.files import check_outdir

    config = AnalysisConfig(bootstrap=cfg.bootstrap, seed=cfg.seed, max_per_worker=cfg.max_per_worker)
    check_outdir(cfg.results)
    table = api.load_table("acute", task_name=cfg.run_name, mephisto_db=cfg.data_dir / "database.db")
    result = api.analyze("acute", table, config, warn=False)
    paths = write_outputs(result, cfg.results)
    print("\n".join(summary_lines(result)))
    print(f"report: {paths['report.html']}", flush=True)
    return cfg.results


class Launcher:
    """``parlai-acute acute launch`` as a child process (:class:`LocalRun`), its log echoed here."""

    def __init__(self, cfg: FastConfig):
        from parlai_acute.mephisto_tasks.live.local_run import LocalRun

        cfg.data_dir.mkdir(parents=True, exist_ok=True)
        overrides = [f"mephisto.blueprint.question={cfg.question}", f"mephisto.blueprint.seed={cfg.seed}",
                     *([f"mephisto.blueprint.max_judgments_per_worker={cfg.max_per_worker}"]
                       if cfg.max_per_worker else []), *cfg.overrides]
        self.run = LocalRun.acute(cfg.data_dir, cfg.pairings, cfg.port, cfg.workdir / "launch.log", *overrides,
                            task_name=cfg.run_name)
        self._echo = threading.Thread(target=self._tail, daemon=True)
        self._echo.start()

    def _tail(self) -> None:
        """Echo the launcher's own lines (addresses, progress), not Mephisto's logging."""
        with open(self.run.log_path, encoding="utf-8", errors="replace") as fh:
            while True:
                line = fh.readline()
                if line:
                    if line.startswith(("ACUTE-Eval", "Open this address", "http://", "parlai-acute", "task ")):
                        print(f"[launch] {line}", end="", flush=True)
                elif not self.running():
                    return
                else:
                    time.sleep(0.2)

    @property
    def url(self) -> str:
        return self.run.url

    def wait_ready(self) -> str | None:
        """The task's address once it serves; None if the launcher had nothing to launch."""
        try:
            self.run.wait_ready()
        except AssertionError:
            if self.run.proc.poll() == 0:
                return None
            self.stop()
            raise UserError(f"the ACUTE-Eval task did not start; see {self.run.log_path}, check port and the "
                            "pairings, then rerun", param="port") from None
        return self.url

    def running(self) -> bool:
        return self.run.proc.poll() is None

    def finishing(self, grace: float) -> bool:
        """Whether the task is still running ``grace`` seconds on: a task that has collected its
        last judgment closes its server before its process exits, so a page refused in that
        window met the end of the run, not a failure."""
        deadline = time.monotonic() + grace
        while self.running() and time.monotonic() < deadline:
            time.sleep(0.2)
        return self.running()

    def wait(self) -> int:
        code = self.run.wait_exit(timeout=None)
        self._echo.join(timeout=5)
        return code

    def stop(self) -> int:
        """SIGTERM: the launcher keeps every judgment and stops its router."""
        try:
            return self.run.terminate(timeout=60)
        except subprocess.TimeoutExpired:
            self.run.kill_all()
            return self.run.proc.wait()


def simulated_judge(view: dict) -> tuple[str, str]:
    """A scripted worker's choice: the side whose evaluated speaker uses more distinct words.

    A crude stand-in for a person, for demos only (it passes the default onboarding pairs,
    where the gold answer is the human who says more than "ok").
    """
    counts = []
    for side in view["comparison"]["sides"]:
        words = {w.lower().strip(".,!?") for t in side["turns"] if t["evaluated"] for w in t["text"].split()}
        counts.append(len(words))
    side = "left" if counts[0] >= counts[1] else "right"
    return side, (f"Simulated worker: the {side} speaker uses more varied words "
                  f"({max(counts)} distinct vs {min(counts)}).")


def run_simulated_workers(launcher: Launcher, url: str, n: int, timeout: float = 3600) -> int:
    """Round-robin units among ``n`` scripted workers until the run ends or none can take more."""
    from parlai_acute.mephisto_tasks.acute import simulated_workers as sw

    made, deadline, judged_by = 0, time.monotonic() + timeout, set()
    with sw.browser() as chromium:
        idle = 0
        for unit in itertools.count(1):
            if not launcher.running() or time.monotonic() > deadline:
                break
            worker = f"worker{(unit - 1) % n + 1}"
            try:
                run = sw.run_worker(chromium, url, worker, f"{worker}-unit{unit}", simulated_judge)
            except Exception as exc:  # the run finished while a page was open, etc.
                if not launcher.finishing(grace=15):
                    break
                raise UserError(f"simulated worker {worker} failed: {' '.join(str(exc).split())[:200]}") from None
            made += len(run.made)
            if run.made:
                judged_by.add(worker)
            idle = 0 if run.made else idle + 1
            if idle >= n:  # every worker was turned away: nothing left they may do
                break
    print(f"[fast] {len(judged_by)} of {n} simulated workers made {made} judgments", flush=True)
    return made


def run_fast(cfg: FastConfig, logs: dict[str, str] | None = None) -> Path:
    """The whole loop (``logs``: already made by :func:`self_chat_logs`); returns the results directory."""
    check_config(cfg)
    cfg.workdir.mkdir(parents=True, exist_ok=True)
    logs = logs if logs is not None else self_chat_logs(cfg)
    make_pairings(cfg, logs)
    launcher = Launcher(cfg)
    try:
        url = launcher.wait_ready() if cfg.simulated_workers else None
        if url:
            print(f"[fast] {cfg.simulated_workers} SIMULATED workers (scripted Chromium) judge at {url}", flush=True)
            run_simulated_workers(launcher, url, cfg.simulated_workers)
            if launcher.running():
                print("[fast] simulated workers are done; stopping the task", flush=True)
                launcher.stop()
        elif not cfg.simulated_workers:
            print("[fast] waiting for the judgments (Ctrl-C stops the task; judgments are kept)", flush=True)
        code = launcher.wait()
    except KeyboardInterrupt:
        code = launcher.stop()
    if code not in (0, None):
        raise UserError(f"the ACUTE-Eval task stopped with exit status {code} (message above, full log in "
                        f"{launcher.run.log_path}); fix it and rerun: logs and pairings are reused")
    return analyze_run(cfg)
