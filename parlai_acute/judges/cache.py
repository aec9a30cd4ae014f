"""On-disk cache of judge calls, keyed by (prompt, judge configuration, decoding).

A rerun, or a run resumed after a crash, costs nothing for calls already answered. The
store is one SQLite file: every write is a transaction (atomic; a killed run leaves
either the answer or nothing), and several processes may read and write it at once (WAL
journal, waiting on locks instead of failing). Failed calls (errors, timeouts) are never
cached, so a rerun tries them again; unparseable answers are cached like any answer,
since asking again with the same prompt and greedy decoding gives the same reply.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Optional

from parlai_acute.errors import UserError


def default_cache() -> str:
    """Where judge calls are cached unless a path is given: ``$PARLAI_ACUTE_JUDGE_CACHE``, else
    ``~/.cache/parlai_acute/judge_cache.sqlite`` (one cache for every run, so reruns cost nothing)."""
    return os.environ.get("PARLAI_ACUTE_JUDGE_CACHE",
                          str(Path.home() / ".cache" / "parlai_acute" / "judge_cache.sqlite"))


def cache_key(*parts) -> str:
    """A stable hash of JSON-serialisable parts (dict keys sorted)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class JudgeCache:
    """``get(key)`` / ``put(key, value)`` of JSON values; thread- and process-safe."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._local = threading.local()
            with self._conn() as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        except (OSError, sqlite3.Error) as exc:
            raise UserError(f"cannot open {self.path} to store judge calls: {exc}; pass a writable cache path",
                            param="cache") from None
        self.hits = self.misses = 0

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> Optional[dict]:
        row = self._conn().execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, value: dict) -> None:
        self._conn().execute("INSERT OR REPLACE INTO calls (key, value) VALUES (?, ?)",
                             (key, json.dumps(value, ensure_ascii=False)))

    def __len__(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM calls").fetchone()[0])


class NoCache:
    """The cache interface that remembers nothing (``--no-cache``)."""

    hits = misses = 0

    def get(self, key):
        self.misses += 1
        return None

    def put(self, key, value):
        pass
