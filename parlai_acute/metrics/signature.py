"""Signatures: how a score was made, written beside every number.

As with sacrebleu's signatures, a score is reproducible only with its settings: the
library and its version, the tokenisation, the smoothing, the number of references.
``Signature.format()`` gives one line such as
``bleu|variant:sacrebleu|nrefs:1-5|tok:13a|case:lc|smooth:exp|eff:yes|sacrebleu:2.6.0``; the
variant (whose definition: sacrebleu's, coco-caption's, nltk's, ...) comes first, because two
variants of one metric can differ a lot on the same replies.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import metadata


@functools.lru_cache(maxsize=None)
def library_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


@dataclass
class Signature:
    metric: str
    fields: dict = field(default_factory=dict)

    def with_refs(self, counts) -> "Signature":
        """A copy recording the number of references (``a-b`` when it varies)."""
        counts = sorted(set(int(c) for c in counts))
        nrefs = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
        head = {"variant": self.fields["variant"]} if "variant" in self.fields else {}
        return Signature(self.metric, {**head, "nrefs": nrefs, **self.fields})

    def format(self) -> str:
        return "|".join([self.metric] + [f"{k}:{v}" for k, v in self.fields.items()])

    def as_dict(self) -> dict:
        return {"metric": self.metric, **self.fields, "signature": self.format()}
