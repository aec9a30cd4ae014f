"""Every word the per-turn page shows a worker, rendered here from the task's configuration.

The page (``frontend/per_turn.js``) has no wording of its own: each view carries ``text``, a
dict of strings made by :func:`page_texts` from the design (setting, protocol, label mode,
turns, opening, survey) and the dialogue's state, so what a worker reads cannot disagree with
what the server enforces (how many replies, which question, when the chat ends). Pure
functions of plain values, no Mephisto: the tests render every setting x protocol x label mode.
"""
from __future__ import annotations

from parlai_acute.convai2.questions import SURVEY
from parlai_acute.mephisto_tasks.live.texts import count
from parlai_acute.per_turn.design import Design
from parlai_acute.ssa import questions

# Meena (Adiwardana et al. 2020): sensibleness first, specificity only of a reply that makes sense
SSA_SENSIBLE = f"{questions.SENSIBLE} ({questions.SENSIBLE_HINT})"
SSA_SPECIFIC = f"{questions.SPECIFIC} ({questions.SPECIFIC_HINT})"
SSA_MISSING = "Please answer whether the response makes sense and, if it does, whether it is specific."

QUESTIONS = {
    "soba": "Which reply is the best next turn of the conversation? Pick exactly one, even if none is good.",
    "sata_random": "Which replies are acceptable next turns of the conversation? Tick every one that is, "
                   "or \"none of these\".",
    "sata_user": "Which replies are acceptable next turns of the conversation? Tick every one that is, or "
                 "\"none of these\" and write a better reply yourself.",
    "sm": "Is this reply an appropriate next turn of the conversation?",
    "ssa": "Label the reply: does it make sense, and is it specific?",
}

SURVEY_INTRO = ("Last step: a few questions about your partner in the conversation you just had. "
                "Pick the answer that fits best; a reason is welcome but optional.")
PERSONA_QUESTION = "Which of these descriptions was your partner using?"
PERSONA_MISSING = "Please pick the description your partner was using."

EMPTY_MESSAGE = "Please write a message before sending."
JUDGE_FIRST = "Please judge the replies shown before writing your next message."
LAST_TURN = "The conversation is over: it has reached its last turn."
CHAT_OVER = "The conversation is over; thank you."
TOO_LONG = "Please keep your message under {limit} characters (yours has {length})."
MESSAGE_COUNT = "{length} of {limit} characters"
TURN_OVER = "That turn is over; please continue with the current one."
EXPLAIN = "Please explain your choice in a few words."
JUDGE_BEFORE_FINISH = "Please judge the replies shown first."
FAILED = ("Sorry, you chose a reply that does not fit the conversation, so you cannot take part in this task. "
          "Thank you for your time.")  # a failed practice turn


def replies(k: int) -> str:
    """``"2 replies"`` / ``"1 reply"``."""
    return f"{k} replies" if k != 1 else "1 reply"


def what_to_do(design: Design, k: int, practice: bool = False) -> str:
    """The action a worker takes on ``k`` replies, in the protocol's and label mode's words
    (the practice turn never asks for a reply of the worker's own)."""
    if design.label_mode == "ssa":
        return ("answer two questions about it: does it make sense? and, only if it does, is it specific to the "
                "conversation (not a reply that would fit almost anything)?")
    if design.protocol == "sm":
        return "say whether it is an appropriate next turn of the conversation"
    if design.protocol == "soba":
        return f"pick the best of the {k} (exactly one, even if none is good)"
    what = f"tick every one of the {k} that would be an acceptable next turn, or \"none of these\""
    if design.protocol == "sata_user" and not practice:
        what += " and then write a better reply yourself"
    return what


def continuation(design: Design) -> str:
    """How the conversation goes on after a judgment."""
    if design.protocol == "soba":
        return "The reply you pick continues the conversation."
    if design.protocol == "sm":
        return "That reply then continues the conversation, whatever you answered."
    if design.protocol == "sata_user":
        return ("One of the replies you ticked continues the conversation; if you tick none, the reply you write "
                "does.")
    return "One of the replies you ticked continues the conversation (with none ticked, one of all of them)."


def intro(design: Design, k: int) -> str:
    shown = "a possible reply" if k == 1 else f"{k} possible replies"
    turns = (f"exactly {count(design.min_turns, 'turn')}" if design.min_turns == design.max_turns
             else f"at least {count(design.min_turns, 'turn')} (at most {design.max_turns})")
    minutes = max(5, round(design.min_turns * 1.5))
    return (f"Chat with a partner as you would with a new acquaintance. After each of your messages you will see "
            f"{shown}: {what_to_do(design, k)}. {continuation(design)} Please do {turns}; the chat ends by itself "
            f"after turn {design.max_turns}. It takes about {minutes} minutes.")


def question(design: Design, custom: str | None = None, practice: bool = False) -> str:
    if custom and not practice:
        return custom
    if design.label_mode == "ssa":
        return QUESTIONS["ssa"]
    return QUESTIONS["sata_random" if practice and design.protocol == "sata_user" else design.protocol]


def practice_intro(design: Design, n: int) -> str:
    """The practice turn, said to be a check, with its consequence."""
    shown = "one possible reply" if n == 1 else f"{n} possible replies"
    what = what_to_do(design, n, practice=True)
    return (f"Practice turn (a check before the real chat): below is the start of a conversation and {shown}. "
            f"Please {what}. This checks that you read the replies: a worker who accepts a reply that plainly does "
            f"not fit cannot take part in this task. You will be told the outcome.")


def practice_passed(design: Design) -> str:
    first = ("your first message is \"Hi!\": send it" if design.opening == "hi"
             else "write your first message below")
    return f"You passed the practice check. Now the real conversation starts: {first}."


def progress(design: Design, status: str, turns_done: int, pending: bool) -> str:
    """The header: where the worker is."""
    if status == "onboarding":
        return "Practice turn"
    if status == "survey":
        return f"Conversation finished ({turns(turns_done)}) - last step"
    if status in ("complete", "blocked", "unavailable", "partial"):
        return f"Done: {turns(turns_done)}" if turns_done else ""
    # the turn in hand: the one being judged (pending, not yet in turns_done) or the next one to write --
    # once a turn is judged the header moves on at once
    current = min(turns_done + 1, design.max_turns)
    if design.min_turns == design.max_turns:
        return f"Turn {current} of {design.max_turns}"
    return f"Turn {current} of at most {design.max_turns} (you may finish after turn {design.min_turns})"


def turns(n: int) -> str:
    return f"{n} turn{'s' if n != 1 else ''}"


def too_early(design: Design, turns_done: int) -> str:
    """Finishing before ``min_turns``: refused, with how many there are."""
    return f"Please chat for at least {turns(design.min_turns)} ({turns_done} so far)."


def finish_button(design: Design, turns_done: int) -> str:
    if turns_done >= design.min_turns:
        return "Finish the conversation"
    return f"Finish (possible after {turns(design.min_turns)}; {turns_done} done)"


def waiting(k: int, ready: int, retrying: int = 0, attempt: int = 0, attempts: int = 0) -> str:
    """The wait for the models' replies, with progress, and -- when a model failed or gave no reply in
    time and is asked again -- that it is, so a long wait is explained. Which model it is stays off the
    page (the replies are blind); the researcher's console names it."""
    if k == 1:
        wait = "Your partner is writing a reply..."
        who = "The reply"
    else:
        wait = f"Waiting for {replies(k)}: {ready} of {k} ready..."
        who = "One reply" if retrying == 1 else f"{retrying} replies"
    if not retrying:
        return wait
    verb = "is" if who in ("The reply", "One reply") else "are"
    return (f"{wait} {who} {verb} taking longer than expected and {verb} being asked for again (attempt "
            f"{attempt} of {attempts}). Thank you for waiting.")


def done(status: str, turns_done: int, design: Design, message: str = "") -> str:
    """The last page."""
    if status == "complete":
        ended = " (the last turn of this conversation)" if turns_done >= design.max_turns else ""
        return (f"Thank you! You judged {turns(turns_done)}{ended}; your conversation and choices are saved. "
                "You can close this page.")
    return message


def role(worker_context: str, opening: str) -> str:
    """The worker's own persona or topic, as an instruction to play it."""
    if not worker_context:
        return ""
    lines = [line.strip().removeprefix("your persona:").strip() for line in worker_context.splitlines() if line.strip()]
    if opening == "persona":
        return ("Play this character: chat as this person would, in the first person, and bring these facts up "
                "naturally (do not copy them word for word). Your partner has a character of its own.\n"
                + "\n".join(lines))
    return "Talk about this topic with your partner:\n" + "\n".join(lines)


def survey_questions(keys: list[str]) -> list[dict]:
    """ConvAI2's questions as the page shows them: text and a labelled 1-4 scale."""
    return [{"key": k, "text": SURVEY[k][0], "scale": [{"value": i + 1, "label": label}
                                                         for i, label in enumerate(SURVEY[k][1])]}
            for k in keys]


def page_texts(design: Design, *, status: str, k: int, turns_done: int, pending: bool, ready: int = 0,
               retrying: int = 0, retry_attempt: int = 0, attempts: int = 0,
               practice_replies: int = 0, passed_practice: bool = False, worker_context: str = "",
               custom_question: str | None = None, message: str = "", assignment: str = "") -> dict:
    """Every string of one view of the page."""
    onboarding = status == "onboarding"
    shown = practice_replies if onboarding else k
    texts = {
        "intro": practice_intro(design, practice_replies) if onboarding else intro(design, k),
        "question": question(design, custom_question, practice=onboarding),
        "progress": progress(design, status, turns_done, pending),
        "waiting": waiting(k, ready, retrying, retry_attempt, attempts),
        "finish": finish_button(design, turns_done),
        "notice": (practice_passed(design) if passed_practice and status == "chatting" and not turns_done
                   and not pending else ""),
        "role": role(worker_context, design.opening),
        "empty_message": EMPTY_MESSAGE,
        # beside the message box (the view's max_message_chars is the server's limit): what the box holds,
        # and, over the limit, the refusal before anything is sent -- the text stays in the box
        "message_count": MESSAGE_COUNT, "too_long": TOO_LONG,
        "done": done(status, turns_done, design, message),
        "reply_label": "Reply" if shown == 1 else "Reply {n}",
        "none": "None of these",
        "user_reply": "Write a better reply (it will continue the conversation):",
        "justification": "Why? (required)" if design.justification == "required" else "Why? (optional)",
        "ssa_sensible": SSA_SENSIBLE, "ssa_specific": SSA_SPECIFIC, "ssa_missing": SSA_MISSING,
        "appropriate_yes": "Appropriate", "appropriate_no": "Not appropriate", "yes": "Yes", "no": "No",
        "you": "You", "partner": "Partner", "opening": "Opening (from a real conversation)",
        "reason_optional": "Why? (optional)", "intro_heading": "What to do", "message_label": "Your message",
        "message_placeholder": "Write your message\u2026", "send": "Send", "submit": "Submit",
        "survey_heading": "About your partner",
        "pick_one": "Please pick exactly one reply.",
        "pick_some": "Please tick the acceptable replies, or \"none of these\".",
        "say_appropriate": "Please say whether the reply is appropriate.",
        "survey_intro": SURVEY_INTRO, "survey_missing": "Please answer: {q}",
        "persona_question": PERSONA_QUESTION, "persona_missing": PERSONA_MISSING,
        "assignment": f"Your assignment: {assignment}" if assignment else "",
    }
    return texts
