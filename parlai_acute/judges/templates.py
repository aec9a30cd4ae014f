"""Prompt templates of the judge: one per protocol and question, versioned.

A template id is ``NAME@VERSION``. The text of a published version never changes: a new
wording is a new version, so every output that records ``template`` says exactly which
words the judge read. The answer format (see :mod:`.parse`) is part of the template.
"""
from __future__ import annotations

from dataclasses import dataclass

from parlai_acute.errors import UserError
from parlai_acute.acute.questions import PRESETS as ACUTE_QUESTIONS

SYSTEM = ("You are a careful, impartial annotator of conversations. Judge only what you are asked, "
          "ignore the order in which things are shown, and answer in exactly the format requested.")


@dataclass(frozen=True)
class Template:
    """``body`` is a ``str.format`` string; ``answer``: one (a single label), any (a set of
    labels or none) or yes_no; ``reason_required``: the reply must carry a ``Reason:`` line;
    ``extra_labels``: answers beside the options' positions that pick no option (ACUTE's
    ``tie`` where the study allows ties), kept as themselves through every order."""

    name: str
    version: int
    body: str
    answer: str
    reason_required: bool
    system: str = SYSTEM
    extra_labels: tuple = ()

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"

    def render(self, **fields) -> str:
        return self.body.format(**fields)


_ACUTE_BODY = (
    "Below are two conversations. In each, judge only the lines of the highlighted speaker "
    "(Speaker 1 in conversation 1, Speaker 2 in conversation 2); the lines marked Partner are the other person.\n\n"
    "Conversation 1:\n{conversation_1}\n\nConversation 2:\n{conversation_2}\n\n"
    "Question: {question}\n"
    "Reply with exactly two lines:\n"
    "Answer: 1 or 2 (the number of the speaker you choose)\n"
    "Reason: one short sentence explaining why")

#: the same with a tie offered (a study with ``allow_tie``: "They are about the same" for people)
_ACUTE_TIE_BODY = (
    "Below are two conversations. In each, judge only the lines of the highlighted speaker "
    "(Speaker 1 in conversation 1, Speaker 2 in conversation 2); the lines marked Partner are the other person.\n\n"
    "Conversation 1:\n{conversation_1}\n\nConversation 2:\n{conversation_2}\n\n"
    "Question: {question}\n"
    "Reply with exactly two lines:\n"
    "Answer: 1 or 2 (the number of the speaker you choose), or tie if neither is better\n"
    "Reason: one short sentence explaining why")

_CONTEXT = ("Conversation so far:\n{history}\n\n")
_SOBA_BODY = (_CONTEXT + "Candidate replies for the Bot's next turn:\n{candidates}\n\n"
              "Question: which reply is the best next turn for the Bot (sensible, specific, engaging)?\n"
              "Reply with exactly two lines:\n"
              "Answer: the number of the best reply (one of {labels})\n"
              "Reason: one short sentence explaining why")
_SATA_BODY = (_CONTEXT + "Candidate replies for the Bot's next turn:\n{candidates}\n\n"
              "Question: which replies would be acceptable next turns for the Bot (sensible, specific, fitting)?\n"
              "Reply with exactly two lines:\n"
              "Answer: the numbers of all acceptable replies separated by commas (from {labels}), or none\n"
              "Reason: one short sentence explaining why")
_SM_BODY = (_CONTEXT + "The Bot's next turn:\n{candidates}\n\n"
            "Question: is this reply an appropriate next turn for the Bot (sensible, specific, fitting)?\n"
            "Reply with exactly two lines:\n"
            "Answer: yes or no\n"
            "Reason: one short sentence explaining why")

_SSA_INTRO = ("Conversation so far:\n{history}\n\nThe response to judge (the next turn, by {speaker}):\n{reply}\n\n")
_SSA_SENSIBLE_BODY = (_SSA_INTRO + "Question: Does the response make sense? Use common sense: is it logical, "
                      "consistent with the conversation and fitting as a reply to the last turn?\n"
                      "Reply with exactly two lines:\n"
                      "Answer: yes or no\n"
                      "Reason: one short sentence explaining why")
_SSA_SPECIFIC_BODY = (_SSA_INTRO + "Question: Is the response specific? A specific response relates clearly to "
                      "this conversation; a generic one (\"I don't know\", \"ok\", \"that's nice\") would fit "
                      "almost any conversation.\n"
                      "Reply with exactly two lines:\n"
                      "Answer: yes or no\n"
                      "Reason: one short sentence explaining why")

TEMPLATES: dict[str, Template] = {}
for _key in list(ACUTE_QUESTIONS) + ["custom"]:
    _t = Template(f"acute_{_key}", 1, _ACUTE_BODY, "one", reason_required=True)
    TEMPLATES[_t.id] = _t
    _t = Template(f"acute_{_key}_tie", 1, _ACUTE_TIE_BODY, "one", reason_required=True, extra_labels=("tie",))
    TEMPLATES[_t.id] = _t
for _t in (Template("perturn_soba", 1, _SOBA_BODY, "one", reason_required=False),
           Template("perturn_sata", 1, _SATA_BODY, "any", reason_required=False),
           Template("perturn_sm", 1, _SM_BODY, "yes_no", reason_required=False),
           Template("ssa_sensible", 1, _SSA_SENSIBLE_BODY, "yes_no", reason_required=False),
           Template("ssa_specific", 1, _SSA_SPECIFIC_BODY, "yes_no", reason_required=False)):
    TEMPLATES[_t.id] = _t
del _key, _t


def latest(name: str) -> Template:
    """The newest version of the template called ``name``."""
    versions = [t for t in TEMPLATES.values() if t.name == name]
    if not versions:
        raise UserError(f"no judge template named {name!r}; known: {', '.join(sorted({t.name for t in TEMPLATES.values()}))}")
    return max(versions, key=lambda t: t.version)


def get(template_id: str) -> Template:
    """A template by ``NAME@VERSION`` (or ``NAME`` for the newest version)."""
    if "@" not in template_id:
        return latest(template_id)
    if template_id not in TEMPLATES:
        raise UserError(f"no judge template {template_id!r}; known: {', '.join(sorted(TEMPLATES))}")
    return TEMPLATES[template_id]
