"""Write an ACUTE-Eval pairings file from Conversations logs, with its metadata beside it.

What ``parlai-acute acute pairings`` and ``acute fast`` both do: read each model's log,
build the comparisons (:func:`parlai_acute.acute.pairings.build_pairings`), validate every
line, and record configuration, seed and version in ``<name>.metadata.json``.
"""
from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import parlai_acute
from parlai_acute.acute import pairings as P
from parlai_acute.errors import UserError
from parlai_acute.files import write_json, write_jsonl


@dataclass
class PairingsFile:
    """What was written: the file, the models' conversations, the lines and any warning."""

    output: Path
    dialogues: dict[str, list[P.Dialogue]]
    lines: list[dict]
    onboarding: int
    warning: str | None
    reuse: str | None = None  # conversations reused by the comparisons (reuse_warning)

    def summary_lines(self) -> list[str]:
        """The summary the pairings command prints: comparisons per model pair, conversation use."""
        out = [f"wrote {self.output}: {self.onboarding} onboarding + {len(self.lines) - self.onboarding} comparisons"]
        pair_counts = Counter(tuple(ln["speakers_to_eval"]) for ln in self.lines if not ln["is_onboarding"])
        used = Counter(uid for ln in self.lines if not ln["is_onboarding"] for uid in ln["dialogue_ids"])
        out.append(f"{'model pair':<40} {'comparisons':>11}")
        for a, b in itertools.combinations(self.dialogues, 2):
            out.append(f"{a + ' vs ' + b:<40} {pair_counts[(a, b)]:>11}")
        out.append(f"{'model':<24} {'conversations':>13} {'used':>5} {'uses min-max':>13}")
        for name, convs in self.dialogues.items():
            uses = [used[d.uid] for d in convs]
            out.append(f"{name:<24} {len(convs):>13} {sum(u > 0 for u in uses):>5} "
                       f"{f'{min(uses)}-{max(uses)}':>13}")
        for name, convs in self.dialogues.items():
            cut = sum(d.cut > 0 for d in convs)
            if cut:
                out.append(f"{name}: {cut} conversation(s) cut before a turn a person wrote in the model's place "
                           "(a per-turn worker's own reply is never credited to a model)")
        return out


def metadata_path(output: Path) -> Path:
    return Path(output).with_name(Path(output).stem + ".metadata.json")


def reuse_warning(dialogues: dict[str, list[P.Dialogue]], comparisons_per_pair: int, alpha: float = 0.05) -> str | None:
    """None, or the warning a plan that reuses conversations needs: the paper shows each
    conversation at most once; where the comparisons outnumber a model's conversations they are
    reused, the analysis then treats conversations as sampled (its verdict rests on how many
    there are, not only on workers), and below :func:`~parlai_acute.stats.inference.min_clusters`
    conversations per model no comparison can carry a mark at all."""
    from parlai_acute.stats.inference import min_clusters

    need = min_clusters(alpha)
    per_model = comparisons_per_pair * (len(dialogues) - 1)
    reused = {name: len(convs) for name, convs in dialogues.items() if 0 < len(convs) < per_model}
    if not reused:
        return None
    few = [name for name, c in reused.items() if c < need]
    text = ("conversations are reused: " + ", ".join(f"{name} {c} for {per_model} comparisons (about "
                                                     f"{per_model / c:.1f} uses each)" for name, c in reused.items())
            + "; the analysis treats conversations as sampled, so its verdict rests on the conversations per model "
              "as well as on the workers (a power plan from a pilot says how many a verdict needs)")
    if few:
        text += (f"; {', '.join(few)} {'has' if len(few) == 1 else 'have'} fewer than {need} conversations: no "
                 f"comparison of {'it' if len(few) == 1 else 'them'} can carry a mark about the models; use or generate "
                 f"more conversations")
    return text


def write_pairings_file(output: str | Path, models: list[str], comparisons_per_pair: int = 20, seed: int = 0,
                        self_chat_side: str = P.DEFAULT_SELF_CHAT_SIDE, onboarding: str | Path | None = None,
                        no_onboarding: bool = False, normalize: bool = False, force: bool = False,
                        num_conversations: int | None = None) -> PairingsFile:
    """Build and write the pairings of ``models`` (``NAME=PATH[:SPEAKER]`` each) to ``output``.

    ``onboarding``: a gold-pairs file (default: the set shipped with parlai_acute), unless
    ``no_onboarding``. An existing ``output`` is a UserError unless ``force``.
    ``num_conversations``: use the first this many conversations of each model's log (all when
    None); the warning says when the comparisons reuse them (:func:`reuse_warning`).
    """
    output = Path(output)
    if output.exists() and not force:
        raise UserError(f"{output} already exists; pass force to overwrite it or choose another output",
                        param=("force", "output"))
    specs = [P.parse_model_spec(s) for s in models]
    counts = Counter(ml.name for ml in specs)
    if dup := [name for name, c in counts.items() if c > 1]:
        raise UserError(f"model name {dup[0]!r} is given twice; give each NAME=PATH a different name")
    dialogues = {ml.name: P.load_dialogues(ml, self_chat_side, seed, normalize) for ml in specs}
    if num_conversations is not None:
        if num_conversations < 1:
            raise UserError(f"num_conversations must be at least 1, got {num_conversations}", param="num_conversations")
        short = {name: len(d) for name, d in dialogues.items() if len(d) < num_conversations}
        if short:
            name, have = next(iter(short.items()))
            raise UserError(f"model {name!r} has {have} conversations, fewer than num_conversations "
                            f"{num_conversations}; lower it or generate more", param="num_conversations")
        dialogues = {name: d[:num_conversations] for name, d in dialogues.items()}
    warning = P.mixed_settings_warning(dialogues)
    gold = [] if no_onboarding else P.read_onboarding(onboarding or P.DEFAULT_ONBOARDING)
    lines = P.build_pairings(dialogues, comparisons_per_pair, seed, gold)
    for number, line in enumerate(lines, start=1):  # never write what our own reader would reject
        P.validate_pairing(line, f"{output}:{number}")
    write_jsonl(output, lines)
    write_json(metadata_path(output), {
        "parlai_acute_version": parlai_acute.__version__,
        "seed": seed,
        "comparisons_per_pair": comparisons_per_pair,
        "self_chat_side": self_chat_side,
        "normalize": normalize,
        "num_conversations": num_conversations,
        "onboarding": None if no_onboarding else str(onboarding or P.DEFAULT_ONBOARDING),
        "models": [{"name": ml.name, "log": ml.path, "speaker": ml.speaker,
                    "conversations": len(dialogues[ml.name])} for ml in specs],
        "lines": {"onboarding": len(gold), "comparisons": len(lines) - len(gold)},
    })
    return PairingsFile(output, dialogues, lines, len(gold), warning, reuse_warning(dialogues, comparisons_per_pair))
