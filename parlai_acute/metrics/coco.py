"""The coco-caption metrics as nlg-eval computes them: BLEU-1..4, ROUGE-L, CIDEr-D, METEOR 1.5.

Published dialogue-metric tables (USR, Yeh et al. 2021, most papers before sacrebleu) were
made with nlg-eval, whose scorers are coco-caption's (``pycocoevalcap``). They differ from
the defaults here (sacrebleu, rouge-score, nltk) on purpose-relevant points, so a table is
reproduced only with them:

* BLEU: no smoothing; every precision is ``(correct + 1e-15) / (total + 1e-9)``, so a reply
  with no matching 4-gram keeps a tiny, still ordered, score where sacrebleu gives 0 (that
  changes Spearman's rho); the brevity penalty uses the reference length closest to the
  reply's (the shorter on ties), summed over items at corpus level; several references
  are used together (n-gram counts clipped by their maximum over references).
* ROUGE-L: F with beta 1.2 (recall weighted), from the best precision and the best recall
  over references (possibly of different references); tokens split on single spaces.
* CIDEr-D: tf-idf n-gram (1..4) cosine with clipping and a Gaussian length penalty
  (sigma 6, lengths counted in bigrams as coco does), times 10, averaged over references;
  document frequencies come from the references of the corpus scored, so a score depends
  on the other items (``df:corpus`` in the signature).
* METEOR 1.5: Denkowski and Lavie's jar with exact, stem, synonym and paraphrase matching
  and its ``-norm`` normalisation, run from the jar that ships inside pycocoevalcap.

The texts are split on whitespace (nlg-eval does no tokenisation), lowercased unless
``lowercase=False`` (nlg-eval keeps case; the signature's ``case`` says which); the BLEU and
ROUGE-L tokenisations can be chosen (``tok``). Implemented here from
coco's definitions (vectorised where it pays); the tests compare with hand-worked counts
and with pycocoevalcap's scorers and the jar called directly.
"""
from __future__ import annotations

import atexit
import functools
import math
import os
import shutil
import subprocess
import tempfile
import threading
from collections import Counter
from typing import Sequence

import numpy as np

from parlai_acute.errors import UserError
from parlai_acute.metrics.base import CorpusMetric, ItemMetric
from parlai_acute.metrics.normalise import rouge_tokenizer
from parlai_acute.metrics.signature import Signature, library_version

ORDERS = (1, 2, 3, 4)
TINY, SMALL = 1e-15, 1e-9  # coco's constants: a zero count keeps a tiny score, a zero total no division by 0
ROUGE_BETA = 1.2
CIDER_SIGMA = 6.0


def _grams(tokens: Sequence[str], n_max: int = 4) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for n in range(1, n_max + 1) for i in range(len(tokens) - n + 1))


# --- BLEU ---------------------------------------------------------------------------------------

def bleu_stats(hyp: Sequence[str], refs: Sequence[Sequence[str]]) -> list[float]:
    """One item's coco BLEU statistics: [reply length, closest reference length, correct n-grams
    x4, reply n-grams x4] (the layout of sacrebleu's, so the corpus code is shared)."""
    counts = _grams(hyp)
    clip: Counter = Counter()
    for ref in refs:
        clip |= _grams(ref)  # maximum count over references
    correct = [0] * 4
    for gram, count in counts.items():
        correct[len(gram) - 1] += min(count, clip[gram])
    length = len(hyp)
    closest = min((abs(len(r) - length), len(r)) for r in refs)[1] if refs else 0
    return [length, closest, *correct, *[max(0, length - n + 1) for n in ORDERS]]


def bleu_from_stats(stats) -> np.ndarray:
    """BLEU-1..4 from (summed) statistics, coco's formula: the geometric mean of the smoothed-by-
    constants precisions up to each order, times exp(1 - r/c) when the reply is shorter.
    ``stats`` is one row or a (k, 10) matrix; returns (4,) or (k, 4)."""
    s = np.atleast_2d(np.asarray(stats, dtype=float))
    precision = (s[:, 2:6] + TINY) / (s[:, 6:10] + SMALL)
    out = np.exp(np.cumsum(np.log(precision), axis=1) / np.array(ORDERS, dtype=float))
    ratio = (s[:, 0] + TINY) / (s[:, 1] + SMALL)
    with np.errstate(divide="ignore", over="ignore"):
        penalty = np.where(ratio < 1, np.exp(1 - 1 / ratio), 1.0)
    out = out * penalty[:, None]
    return out[0] if np.ndim(stats) == 1 else out


class _Tokens:
    """Whitespace tokens after an optional sacrebleu tokeniser and lowercasing (``none``: the text
    as given, split on whitespace, which is what nlg-eval scores)."""

    def __init__(self, tokenize: str, lowercase: bool):
        self.tokenize, self.lowercase = tokenize, lowercase
        if tokenize == "none":
            self._pre = (lambda t: t.lower()) if lowercase else (lambda t: t)
        else:
            from parlai_acute.metrics.reference import _bleu

            self._pre = _bleu(1, "none", None, tokenize, lowercase, False)._preprocess_segment
        self.split = functools.lru_cache(maxsize=None)(self._split)

    def _split(self, text: str) -> tuple[str, ...]:
        return tuple(self._pre(text or "").split())


class CocoBleu(ItemMetric):
    """Sentence BLEU-1..4 as coco-caption / nlg-eval (``variant:coco``)."""

    columns = tuple(f"coco_bleu{n}" for n in ORDERS)

    def __init__(self, tokenize: str = "none", lowercase: bool = True):
        self.tokens = _Tokens(tokenize, lowercase)

    def _signature(self, name: str) -> Signature:
        return Signature(name, {"variant": "coco", "tok": self.tokens.tokenize,
                                "case": "lc" if self.tokens.lowercase else "mixed", "smooth": "none",
                                "eps": f"{TINY:g}/{SMALL:g}", "bp": "closest", "orders": "1-4",
                                "impl": "parlai_acute (= pycocoevalcap Bleu)",
                                "pycocoevalcap": library_version("pycocoevalcap")})

    def signature(self) -> Signature:
        return self._signature("coco_bleu")

    def stats(self, replies, references) -> np.ndarray:
        split = self.tokens.split
        rows = [bleu_stats(split(h), [split(r) for r in refs]) for h, refs in zip(replies, references)]
        return np.array(rows, dtype=float).reshape(len(rows), 10)

    def item_scores(self, replies, references):
        scores = bleu_from_stats(self.stats(replies, references)) if len(replies) else np.zeros((0, 4))
        return {c: scores[:, k] for k, c in enumerate(self.columns)}


class CorpusCocoBleu(CorpusMetric):
    """Corpus BLEU-1..4 as coco-caption: statistics (closest reference lengths included) summed
    over items, each item against all its references together."""

    columns = tuple(f"corpus_coco_bleu{n}" for n in ORDERS)

    def __init__(self, tokenize: str = "none", lowercase: bool = True):
        self.sentence = CocoBleu(tokenize, lowercase)

    def signature(self) -> Signature:
        return self.sentence._signature("corpus_coco_bleu")

    def stats(self, replies, references):
        return self.sentence.stats(replies, references)

    def from_stats(self, summed):
        return dict(zip(self.columns, (float(v) for v in bleu_from_stats(summed))))


# --- ROUGE-L ------------------------------------------------------------------------------------

def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (dynamic programming over one row)."""
    if len(a) < len(b):
        a, b = b, a
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0  # row[j - 1] of the previous line
        for j, y in enumerate(b, start=1):
            cur = row[j]
            row[j] = prev + 1 if x == y else (row[j] if row[j] > row[j - 1] else row[j - 1])
            prev = cur
    return row[-1]


def rouge_l_coco(hyp: Sequence[str], refs: Sequence[Sequence[str]], beta: float = ROUGE_BETA) -> float:
    """coco's ROUGE-L: F_beta of the best precision and the best recall over references."""
    if not hyp or not refs:
        return 0.0
    lcs = [lcs_length(r, hyp) for r in refs]
    precision = max(l / len(hyp) for l in lcs)
    recall = max(l / len(r) for l, r in zip(lcs, refs) if r) if any(refs) else 0.0
    if precision == 0 or recall == 0:
        return 0.0
    return (1 + beta ** 2) * precision * recall / (recall + beta ** 2 * precision)


class CocoRougeL(ItemMetric):
    """ROUGE-L as coco-caption / nlg-eval (``variant:coco``, beta 1.2)."""

    columns = ("coco_rougeL",)

    def __init__(self, tokenize: str = "none", lowercase: bool = True):
        self.tokenize, self.lowercase = tokenize, lowercase or tokenize != "none"  # words, rouge-score lowercase
        split = rouge_tokenizer(tokenize)
        self.split = functools.lru_cache(maxsize=None)(
            lambda t: tuple(split(t.lower() if self.lowercase else t)))

    def signature(self):
        return Signature("coco_rougeL", {"variant": "coco", "tok": self.tokenize,
                                         "case": "lc" if self.lowercase else "mixed", "beta": ROUGE_BETA,
                                         "multi": "max-p,max-r", "impl": "parlai_acute (= pycocoevalcap Rouge)",
                                         "pycocoevalcap": library_version("pycocoevalcap")})

    def item_scores(self, replies, references):
        split = self.split
        return {"coco_rougeL": np.array([rouge_l_coco(split(h), [split(r) for r in refs])
                                         for h, refs in zip(replies, references)], dtype=float)}


# --- CIDEr-D ------------------------------------------------------------------------------------

class Cider(ItemMetric):
    """CIDEr-D as coco-caption computes it, document frequencies from the scored references."""

    columns = ("cider",)

    def __init__(self, lowercase: bool = True):
        self.tokens = _Tokens("none", lowercase)

    def signature(self):
        return Signature("cider", {"variant": "coco", "tok": "none", "case": "lc" if self.tokens.lowercase else "mixed",
                                   "n": 4, "sigma": CIDER_SIGMA, "df": "corpus", "scale": 10,
                                   "impl": "parlai_acute (= pycocoevalcap Cider)",
                                   "pycocoevalcap": library_version("pycocoevalcap")})

    def item_scores(self, replies, references):
        split = self.tokens.split
        hyps = [_grams(split(h)) for h in replies]
        refs = [[_grams(split(r)) for r in rs] for rs in references]
        df: Counter = Counter()
        for rs in refs:
            df.update(set().union(*rs) if rs else set())
        log_n = math.log(len(refs)) if refs else 0.0

        def vector(counts):
            vec = [dict() for _ in ORDERS]
            norm = [0.0] * 4
            for gram, tf in counts.items():
                n = len(gram) - 1
                weight = tf * (log_n - math.log(max(1.0, df[gram])))
                vec[n][gram] = weight
                norm[n] += weight * weight
            length = sum(tf for gram, tf in counts.items() if len(gram) == 2)  # coco counts bigrams
            return vec, [math.sqrt(x) for x in norm], length

        out = np.zeros(len(replies))
        for i, (hyp, rs) in enumerate(zip(hyps, refs)):
            if not rs:
                continue
            vh, nh, lh = vector(hyp)
            total = 0.0
            for ref in rs:
                vr, nr, lr = vector(ref)
                penalty = math.exp(-((lh - lr) ** 2) / (2 * CIDER_SIGMA ** 2))
                for n in range(4):
                    value = sum(min(w, vr[n].get(g, 0.0)) * vr[n].get(g, 0.0) for g, w in vh[n].items())
                    if nh[n] != 0 and nr[n] != 0:
                        value /= nh[n] * nr[n]
                    total += value * penalty
            out[i] = total / 4 / len(rs) * 10.0
        return {"cider": out}


# --- METEOR 1.5 ---------------------------------------------------------------------------------

def meteor_jar() -> str:
    """The METEOR 1.5 jar inside the installed pycocoevalcap (never downloaded)."""
    try:
        from importlib.resources import files

        jar = files("pycocoevalcap") / "meteor" / "meteor-1.5.jar"
    except ModuleNotFoundError:
        from parlai_acute.extras import needs

        raise needs("METEOR 1.5", ["metrics"]) from None
    if not jar.is_file():
        raise UserError(f"METEOR 1.5: {jar} is missing from the installed pycocoevalcap; reinstall it "
                        f"(pip install --force-reinstall pycocoevalcap)")
    return str(jar)


@functools.lru_cache(maxsize=None)
def java_version() -> str:
    java = shutil.which("java")
    if java is None:
        return "absent"
    done = subprocess.run([java, "-version"], capture_output=True, text=True)
    first = (done.stderr or done.stdout).splitlines()[:1]
    return first[0].split('"')[1] if first and '"' in first[0] else "unknown"


class MeteorJar:
    """One running METEOR 1.5 process in its ``-stdio`` mode, with coco's arguments (``-l en
    -norm``, 2 GB heap): a SCORE line per segment returns its statistics; an EVAL line of
    statistics returns each segment's score, then the aggregate."""

    ARGS = ("-", "-", "-stdio", "-l", "en", "-norm")

    def __init__(self):
        java = shutil.which("java")
        if java is None:
            raise UserError("METEOR 1.5 needs Java, which is not installed: install Debian's default-jre-headless "
                            "(make java, or apt-get install default-jre-headless)")
        jar = meteor_jar()
        self._log = tempfile.TemporaryFile()
        # cwd: the jar finds its paraphrase table (data/paraphrase-en.gz) beside it, as pycocoevalcap runs it
        self.proc = subprocess.Popen([java, "-Xmx2G", "-jar", jar, *self.ARGS], cwd=os.path.dirname(jar),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log)
        self.lock = threading.Lock()

    def _ask(self, lines: Sequence[str], answers: int) -> list[str]:
        """Send ``lines`` at once, then read ``answers`` lines (a block of at most :data:`CHUNK`
        lines: the answers, about 100 bytes each, stay well inside the pipe's buffer)."""
        self.proc.stdin.write("".join(line + "\n" for line in lines).encode("utf-8"))
        self.proc.stdin.flush()
        out = []
        for _ in range(answers):
            got = self.proc.stdout.readline()
            if not got:
                self._log.seek(0)
                why = self._log.read().decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
                raise UserError(f"the METEOR 1.5 jar stopped (exit code {self.proc.poll()}): {why[0]}; check that "
                                f"Java runs (java -version) and that 2 GB of memory are free")
            out.append(got.decode("utf-8").strip())
        return out

    CHUNK = 200

    def scores(self, replies: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
        """METEOR 1.5 of each reply against its references (0 for an empty reply or no reference)."""
        out = np.zeros(len(replies))
        asked = [(i, _segment(h, coco_hyp=True), [_segment(r) for r in refs if r.strip()])
                 for i, (h, refs) in enumerate(zip(replies, references))]
        asked = [(i, h, refs) for i, h, refs in asked if h and refs]
        with self.lock:
            for start in range(0, len(asked), self.CHUNK):
                block = asked[start:start + self.CHUNK]
                stats = self._ask([" ||| ".join(["SCORE", *refs, h]) for _, h, refs in block], len(block))
                answers = self._ask([" ||| ".join(["EVAL", *stats])], len(block) + 1)
                for (i, _, _), value in zip(block, answers):
                    out[i] = float(value)
        return out

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.kill()
            self.proc.wait()
        self._log.close()


def _segment(text: str, coco_hyp: bool = False) -> str:
    """A text as one protocol field: no line breaks, no field separator (coco also folds the
    double spaces of a hypothesis)."""
    text = " ".join((text or "").splitlines()).replace("|||", "")
    return text.replace("  ", " ").strip() if coco_hyp else text.strip()


@functools.lru_cache(maxsize=1)
def running_jar() -> MeteorJar:
    """The process shared by every METEOR 1.5 scorer (its start, loading the paraphrase table,
    takes seconds); stopped at exit."""
    jar = MeteorJar()
    atexit.register(jar.close)
    return jar


class Meteor15(ItemMetric):
    """METEOR 1.5 with paraphrases, the jar of pycocoevalcap (``variant:1.5``)."""

    columns = ("meteor15",)

    def __init__(self):
        self.jar = running_jar()

    def signature(self):
        return Signature("meteor15", {"variant": "1.5", "lang": "en", "norm": "yes", "modules": "exact,stem,syn,para",
                                      "params": "0.85_0.2_0.6_0.75", "weights": "1.0_0.6_0.8_0.6",
                                      "jar": "pycocoevalcap", "pycocoevalcap": library_version("pycocoevalcap"),
                                      "java": java_version()})

    def item_scores(self, replies, references):
        return {"meteor15": self.jar.scores(replies, references)}
