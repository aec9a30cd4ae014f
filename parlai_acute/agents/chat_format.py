"""How a conversation becomes the token ids a causal or seq2seq model conditions on, and which
ids close a reply: one implementation for every engine that scores or generates from a local
model (the Hugging Face wrapper, llama.cpp's log-probabilities), so that two engines given the
same model file see the same tokens and their numbers can be compared.

The tokenizer's chat template is used when it has one (otherwise plain ``User:``/``Bot:``
turns, or newline-joined turns for seq2seq). A subclass gives the tokenizer
(:meth:`ChatFormat._tokenize`), the end-of-sequence id and the template's special tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from parlai_acute.agents.turn_agent import BOT, USER
from parlai_acute.errors import UserError

FORMATS = ("auto", "chat_template", "plain")
PLAIN_LABELS = {USER: "User:", BOT: "Bot:"}


def render_chat_template(template: str, messages: list, add_generation_prompt: bool, special: dict) -> str:
    """Render a tokenizer chat template.

    transformers' own ``apply_chat_template`` needs Jinja2 >= 3.1, but mephisto pins
    Jinja2 2.11, so we render with the same sandboxed environment settings ourselves.
    """
    from jinja2.exceptions import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template).render(messages=messages, add_generation_prompt=add_generation_prompt,
                                            **special)


@dataclass
class Prompt:
    """Token ids the model conditions on, plus the text (the key of the per-reply seed)."""

    text: str
    ids: list


def as_turns(context: Sequence) -> list:
    """Normalise a context to [(role, text)]: strings alternate and the last one is the user's."""
    turns = []
    n = len(context)
    for i, item in enumerate(context):
        if isinstance(item, (tuple, list)):
            role, text = item
        elif isinstance(item, dict):
            role, text = item["role"], item["content"]
        else:
            role, text = (USER if (n - 1 - i) % 2 == 0 else BOT), item
        turns.append((role, str(text)))
    return turns


def first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


class ChatFormat:
    """Prompt formatting over a subclass's tokenizer.

    The subclass sets ``path``, ``seq2seq``, ``chat_template`` (None for plain turns),
    ``max_positions`` and ``eos_id``, implements :meth:`_tokenize` and :meth:`_special`, and
    calls :meth:`_end_of_turn` once its tokenizer is ready (a bad template fails there).
    """

    path: str
    seq2seq: bool = False
    chat_template: str | None = None
    max_positions: int = 2048
    eos_id: int | None = None

    def _tokenize(self, text: str, add_special: bool) -> list:
        raise NotImplementedError

    def _special(self) -> dict:
        raise NotImplementedError

    def _choose_template(self, template: str | None, fmt: str) -> str | None:
        if fmt not in FORMATS:
            raise UserError(f"hf_format {fmt!r} is not supported; use one of {', '.join(FORMATS)}", param="hf_format")
        if fmt == "plain" or self.seq2seq:
            return None
        if fmt == "chat_template" and not template:
            raise UserError(f"{self.path}: the tokenizer has no chat template; use hf_format=plain", param="hf_format")
        return template or None

    def _render_template(self, messages: list, add_generation_prompt: bool) -> str:
        from jinja2.exceptions import TemplateError

        try:
            return render_chat_template(self.chat_template, messages, add_generation_prompt, self._special())
        except TemplateError as exc:
            raise UserError(f"{self.path}: the tokenizer's chat template failed ({first_line(exc)}); "
                            "use hf_format=plain, or drop system_prompt if it refuses system messages",
                            param=("hf_format", "system_prompt")) from None

    def _end_of_turn(self):
        """Token ids that close a bot turn, and the text generation is cut at (plain format).

        For a chat template the end is read off the template itself (the text it puts after
        an assistant message), because GGUF tokenizers do not always name it as eos.
        """
        eos = [self.eos_id] if self.eos_id is not None else []
        if self.seq2seq:
            return eos, None
        if self.chat_template:
            marker = "\u2063REPLY\u2063"
            probe = [{"role": USER, "content": "hi"}]
            head = self._render_template(probe, True)
            full = self._render_template(probe + [{"role": BOT, "content": marker}], False)
            if full.startswith(head) and marker in full:
                tail = full[full.index(marker) + len(marker):]
                ids = self._tokenize(tail, False)[:1] if tail else []
                return (ids or eos), None
            return eos, None
        newline = self._tokenize("\n", False)
        return (newline if len(newline) == 1 else eos), "\n"

    def _render(self, turns: list, system: str) -> str:
        if self.chat_template:
            messages = ([{"role": "system", "content": system}] if system else [])
            messages += [{"role": r, "content": t} for r, t in turns]
            return self._render_template(messages, True)
        if self.seq2seq:
            return "\n".join(([system] if system else []) + [t for _, t in turns])
        lines = ([system] if system else []) + [f"{PLAIN_LABELS[r]} {t}" for r, t in turns]
        return "\n".join(lines + [PLAIN_LABELS[BOT]])

    def prompt(self, context: Sequence, system: str = "", room: int = 0) -> Prompt:
        """Format the conversation; oldest turns are dropped until ``room`` tokens still fit after it."""
        turns = as_turns(context)
        budget = max(1, self.max_positions - room)
        while True:
            text = self._render(turns, system)
            ids = self._encode_prompt(text)
            if len(ids) <= budget or len(turns) <= 1:
                return Prompt(text, ids[-budget:])
            turns = turns[1:]

    def _encode_prompt(self, text: str) -> list:
        # chat templates already contain their special tokens
        return self._tokenize(text, not self.chat_template)

    def _reply_ids(self, reply: str) -> list:
        text = reply if (self.chat_template or self.seq2seq) else " " + reply
        return self._tokenize(text, False) if reply else []

    def targets(self, replies: Sequence[str], with_end: bool) -> list:
        """The token ids scored for each reply (with the end-of-turn token when ``with_end``)."""
        return [self._reply_ids(r) + (list(self._end_ids) if with_end else []) for r in replies]
