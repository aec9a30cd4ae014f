"""The design of a per-turn evaluation: which models share a dialogue, what the worker does, and how
the conversation continues. Pure logic, shared by the live task, its tests and the analysis.

Settings and protocols (Liu et al.):

* ``pm`` shows two models per turn, ``mm`` three or more, ``sm`` one;
* ``soba``: exactly one reply picked, it continues; ``sata_random``: 0..k acceptable replies,
  one picked continues, several -> one of them at random, none -> one of all at random;
  ``sata_user``: as sata_random, but with none picked the worker writes the reply that
  continues; ``sm``: the one reply is judged appropriate or not and continues either way.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field

from parlai_acute.errors import UserError
from parlai_acute.per_turn.turns import PROTOCOLS, SETTINGS

OPENINGS = ("worker", "hi", "chitchat", "persona", "topic")
JUSTIFICATION = ("off", "optional", "required")
LABEL_MODES = ("appropriate", "ssa")
SURVEYS = ("none", "convai2")


def parse_model_sets(text: str) -> list[tuple[str, ...]]:
    """``"a+b, a+c"`` -> ``[("a", "b"), ("a", "c")]`` (empty: none given)."""
    sets = []
    for chunk in (text or "").replace(";", ",").split(","):
        names = tuple(n.strip() for n in chunk.split("+") if n.strip())
        if names:
            sets.append(names)
    return sets


@dataclass
class Design:
    models: list[str]
    setting: str = "pm"
    protocol: str = "soba"
    model_sets: list[tuple[str, ...]] = field(default_factory=list)
    baseline: str = ""
    min_turns: int = 10
    max_turns: int = 15
    opening: str = "worker"
    justification: str = "off"
    label_mode: str = "appropriate"  # sm only: one question, or Meena's sensible-then-specific pair
    survey: str = "none"  # end-of-chat questions: none, or ConvAI2's ratings and persona detection

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        if self.setting not in SETTINGS:
            raise UserError(f"setting {self.setting!r} is not one of {', '.join(SETTINGS)}; use pm (two models per "
                            "turn), mm (three or more) or sm (one)")
        if self.protocol not in PROTOCOLS:
            raise UserError(f"protocol {self.protocol!r} is not one of {', '.join(PROTOCOLS)}")
        if (self.setting == "sm") != (self.protocol == "sm"):
            raise UserError(f"setting {self.setting} cannot use protocol {self.protocol}: the single-model setting "
                            "uses protocol sm, the others soba, sata_random or sata_user")
        if self.opening not in OPENINGS:
            raise UserError(f"opening {self.opening!r} is not one of {', '.join(OPENINGS)}")
        if self.label_mode not in LABEL_MODES:
            raise UserError(f"label_mode {self.label_mode!r} is not one of {', '.join(LABEL_MODES)}")
        if self.label_mode == "ssa" and self.setting != "sm":
            raise UserError("label_mode ssa (sensibleness and specificity) labels one reply per turn: use it with "
                            "setting sm and protocol sm")
        if self.survey not in SURVEYS:
            raise UserError(f"survey {self.survey!r} is not one of {', '.join(SURVEYS)}")
        if self.survey == "convai2" and self.opening != "persona":
            raise UserError("survey convai2 asks the worker to detect the model's persona: use it with opening persona")
        if self.justification not in JUSTIFICATION:
            raise UserError(f"justification {self.justification!r} is not one of {', '.join(JUSTIFICATION)}")
        if self.min_turns < 1 or self.max_turns < self.min_turns:
            raise UserError(f"min_turns {self.min_turns} and max_turns {self.max_turns}: need 1 <= min_turns <= "
                            "max_turns; raise max_turns or lower min_turns")
        if self.baseline and self.baseline not in self.models:
            raise UserError(f"baseline {self.baseline!r} is not one of the models ({', '.join(self.models)})")
        if not self.model_sets:
            self.model_sets = self.default_sets()
        if not self.model_sets:
            need = {"pm": "two", "mm": "three or more", "sm": "one"}[self.setting]
            raise UserError(f"setting {self.setting} shows {need} model(s) per turn but only {len(self.models)} "
                            f"model(s) are given ({', '.join(self.models) or 'none'}); add more to models (NAME=MODEL)",
                            param="models")
        for names in self.model_sets:
            unknown = [n for n in names if n not in self.models]
            if unknown:
                raise UserError(f"model set {'+'.join(names)} names unknown model {unknown[0]!r}; the models are "
                                f"{', '.join(self.models)}")
            if len(set(names)) != len(names):
                raise UserError(f"model set {'+'.join(names)} names a model twice; each model once per set")
            k = len(names)
            if self.setting == "pm" and k != 2:
                raise UserError(f"setting pm (pairwise) needs two models per set, got {k} in {'+'.join(names)}; "
                                "use setting mm for three or more, sm for one")
            if self.setting == "mm" and k < 3:
                raise UserError(f"setting mm (multi-model) needs three or more models per set, got {k} in "
                                f"{'+'.join(names)}; use setting pm for two")
            if self.setting == "sm" and k != 1:
                raise UserError(f"setting sm (single model) shows one model per dialogue, got {k} in {'+'.join(names)}")

    def default_sets(self) -> list[tuple[str, ...]]:
        """PM: the baseline against each other model (the paper's design) or every pair;
        MM: all models at once; SM: each model alone."""
        if self.setting == "sm":
            return [(m,) for m in self.models]
        if self.setting == "mm":
            return [tuple(self.models)]
        if self.baseline:
            return [(self.baseline, m) for m in self.models if m != self.baseline]
        return list(itertools.combinations(self.models, 2))

    @property
    def replies_per_turn(self) -> int:
        """How many replies a worker judges at a turn (the largest model set)."""
        return max(len(names) for names in self.model_sets)

    @staticmethod
    def set_key(names) -> str:
        return "|".join(sorted(names))

    @property
    def sata(self) -> bool:
        return self.protocol in ("sata_random", "sata_user")


@dataclass
class Decision:
    """What the server makes of a worker's choice at one turn."""

    picked: list[int]  # positions the worker selected (validated)
    continued: int | None  # position whose text continues; None: the worker's reply (or nothing)
    fallback: str  # picked | random_picked | random_all | user | none
    user_reply: str = ""


def decide(protocol: str, shown: int, picked, user_reply: str, rng: random.Random, none: bool = False) -> Decision:
    """Validate the worker's positions against the protocol and choose the continuation.

    ``shown``: how many candidates were on the page (positions 0..shown-1); ``none``: the
    worker said explicitly that no reply is acceptable (SATA's "none of these", SM's "not
    appropriate"), so an empty choice is never a missed click. Raises ValueError with a
    message for the worker when the choice breaks the protocol.
    """
    if not isinstance(picked, list) or not all(isinstance(p, int) and not isinstance(p, bool) for p in picked):
        raise ValueError("Please choose using the buttons on the page.")
    positions = sorted(set(picked))
    if any(p < 0 or p >= shown for p in positions) or len(positions) != len(picked):
        raise ValueError("That choice does not match the replies shown; please choose again.")
    user_reply = (user_reply or "").strip()
    if shown == 0:
        return Decision([], None, "none")
    if protocol == "soba":
        if len(positions) != 1:
            raise ValueError("Please pick exactly one reply: the best one, even if none is good.")
        return Decision(positions, positions[0], "picked")
    if positions and none:
        raise ValueError("You chose replies and also \"none of these\"; please choose again.")
    if not positions and not none:
        raise ValueError("Please tick the acceptable replies, or \"none of these\"." if protocol != "sm"
                         else "Please say whether the reply is appropriate.")
    if protocol == "sm":
        if len(positions) > 1:
            raise ValueError("Please say whether the reply is appropriate.")
        return Decision(positions, 0, "picked")
    if len(positions) == 1:
        return Decision(positions, positions[0], "picked")
    if positions:
        return Decision(positions, rng.choice(positions), "random_picked")
    if protocol == "sata_user":
        if not user_reply:
            raise ValueError("None of the replies is acceptable: please write a better reply.")
        return Decision([], None, "user", user_reply)
    return Decision([], rng.randrange(shown), "random_all")
