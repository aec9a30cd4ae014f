"""Meena's two SSA questions (Adiwardana et al. 2020), the protocol's definition in one place.

Sensibleness first; specificity is asked only of a reply that makes sense (a reply that does
not is not specific). The live pages (SSA labelling, per-turn in SSA mode) word their questions
from here, with a long help line (labelling page) or a short hint (per-turn's card).
"""
from __future__ import annotations

__all__ = ["SENSIBLE", "SENSIBLE_HELP", "SENSIBLE_HINT", "SPECIFIC", "SPECIFIC_HELP", "SPECIFIC_HINT"]

SENSIBLE = "Does the response make sense?"
SENSIBLE_HELP = ("Use your common sense: is the response logical and consistent with the context? "
                 "Is it something a person could say here?")
SENSIBLE_HINT = "common sense, logic, consistent with the conversation"
SPECIFIC = "Is the response specific?"
SPECIFIC_HELP = ("Is it specific to this context, rather than a reply that would fit almost any context "
                 "(like \"I don't know\", \"ok\" or \"That's nice\")?")
SPECIFIC_HINT = "to the conversation, not a reply that would fit almost anything, like \"I don't know\" or \"ok\""
