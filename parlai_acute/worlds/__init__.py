"""Worlds and runners for model-model and human-model conversations.

``self_chat`` (seeded self-chat world and the shared parley), ``batch`` (batched
self-chat), ``interactive`` (human chat), ``runner`` (self-chat loop with a partner opt
and a progress bar), ``chat`` (terminal chat loop), ``conversations_log`` (atomic
Conversations logs), ``model_spec`` (``--model`` strings to ParlAI agents).
"""
