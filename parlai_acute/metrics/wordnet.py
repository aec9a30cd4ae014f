"""WordNet for METEOR from Debian's packages, read by nltk without any download.

Debian's ``wordnet-base`` puts the WordNet 3.0 database in ``/usr/share/wordnet``
(``wordnet-sense-index`` adds ``index.sense``); ``make test`` installs both. nltk's
``WordNetCorpusReader`` reads that directory once it is on ``nltk.data.path`` (nltk
refuses corpus paths outside its data path), with two gaps filled here:

* Debian ships no ``lexnames`` file; the same table (lexicographer file numbers and
  names) is in the package's own manual page ``lexnames(5WN)``, which we parse;
* nltk maps every non-default WordNet onto its downloaded "wordnet" corpus (for the
  multilingual data); this *is* WordNet 3.0, so no mapping is needed.

``PARLAI_ACUTE_WORDNET`` may name another directory in the same format.
"""
from __future__ import annotations

import functools
import gzip
import io
import os
import re
from pathlib import Path

from parlai_acute.errors import UserError

DEBIAN_DIR = "/usr/share/wordnet"
LEXNAMES_MAN = "/usr/share/man/man5/lexnames.5WN.gz"
INSTALL_HINT = "install Debian's wordnet-base and wordnet-sense-index (make test does)"
_CATEGORIES = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def wordnet_dir() -> Path:
    return Path(os.environ.get("PARLAI_ACUTE_WORDNET") or DEBIAN_DIR)


def lexnames_text(root: Path) -> str:
    """The ``lexnames`` file: the directory's own, else the table of ``lexnames(5WN)``."""
    own = root / "lexnames"
    if own.is_file():
        return own.read_text(encoding="utf-8")
    try:
        with gzip.open(LEXNAMES_MAN, "rt", encoding="utf-8", errors="replace") as fh:
            manual = fh.read()
    except OSError:
        raise UserError(f"WordNet: {root} has no lexnames file and {LEXNAMES_MAN} is missing; {INSTALL_HINT}") from None
    rows = []
    for number, name in re.findall(r"^(\d\d)\t\s*([a-z]+\.[A-Za-z]+)\s*\t", manual, flags=re.M):
        rows.append(f"{number}\t{name}\t{_CATEGORIES[name.split('.')[0]]}\n")
    if len(rows) != 45 or [int(r.split()[0]) for r in rows] != list(range(45)):
        raise UserError(f"WordNet: cannot read the 45 lexicographer files from {LEXNAMES_MAN}; {INSTALL_HINT}")
    return "".join(rows)


@functools.lru_cache(maxsize=2)
def load_wordnet(root: str | None = None):
    """An nltk WordNet reader over ``root`` (default: Debian's), loaded once per process."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    path = Path(root) if root else wordnet_dir()
    missing = [f for f in ("data.noun", "index.noun", "index.sense") if not (path / f).is_file()]
    if missing:
        raise UserError(f"WordNet files {', '.join(missing)} are missing from {path}; {INSTALL_HINT}")
    lexnames = lexnames_text(path)
    resolved = str(path.resolve())
    if resolved not in [str(p) for p in nltk.data.path]:
        nltk.data.path.append(resolved)

    class LocalWordNet(WordNetCorpusReader):
        def open(self, fileid):
            if fileid == "lexnames":
                return io.StringIO(lexnames)
            return super().open(fileid)

        def map_wn(self, version="wordnet"):
            return None  # this is WordNet 3.0 itself: nothing to map

        @functools.lru_cache(maxsize=200_000)
        def synsets(self, lemma, pos=None, lang="eng", check_exceptions=True):
            # METEOR asks for the same words again and again; synsets are immutable
            return tuple(super().synsets(lemma, pos, lang, check_exceptions))

    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return LocalWordNet(resolved, None)


def wordnet_version(reader) -> str:
    return str(reader.get_version() or "unknown")
