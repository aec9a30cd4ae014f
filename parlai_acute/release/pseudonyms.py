"""Stable salted pseudonyms for worker ids.

A pseudonym is ``worker_`` + the first 16 hex digits of HMAC-SHA256(salt, worker id): the same
worker gets the same pseudonym in every file and every later bundle made with the same salt, and
without the salt nobody can go from an MTurk id to its pseudonym by hashing guesses. The salt is
kept out of the bundle (a file the researcher keeps; generated once when absent).
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.files import atomic_write

PREFIX = "worker_"


def load_salt(path: str | Path, bundle: str | Path) -> tuple[bytes, bool]:
    """(salt, created): the salt in ``path``, or a new random one written there (readable only by
    its owner). A salt inside the ``bundle`` directory would publish it: a UserError."""
    path, bundle = Path(path).resolve(), Path(bundle).resolve()
    if path == bundle or bundle in path.parents:
        raise UserError(f"salt file {path} is inside the bundle {bundle}, which would publish it; pass a "
                        f"salt_file outside the bundle", param="salt_file")
    if path.is_file():
        salt = path.read_text(encoding="utf-8").strip()
        if len(salt) < 32:
            raise UserError(f"salt file {path} holds fewer than 32 characters; delete it to generate a new salt "
                            f"(pseudonyms will change) or pass the salt file of earlier bundles")
        return salt.encode("utf-8"), False
    salt = secrets.token_hex(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as out:
        out.write(salt + "\n")
    path.chmod(0o600)
    return salt.encode("utf-8"), True


def pseudonym(salt: bytes, worker: str) -> str:
    return PREFIX + hmac.new(salt, str(worker).encode("utf-8"), hashlib.sha256).hexdigest()[:16]


class Pseudonymizer:
    """Replaces every occurrence of every known worker id in text (longest ids first, so an id that
    contains another is replaced whole): table cells, log fields and free text alike."""

    def __init__(self, salt: bytes, workers):
        self.names = {str(w): pseudonym(salt, w) for w in workers if str(w)}
        ordered = sorted(self.names, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(n) for n in ordered)) if ordered else None

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda m: self.names[m.group(0)], text)

    def found(self, data: bytes) -> list[str]:
        """The original ids that occur in ``data`` (any byte): what a bundle must never contain."""
        return sorted(n for n in self.names if n.encode("utf-8") in data)
