"""Each model's reply to each context, generated once, offline, with the decoding recorded.

Any agent a model string names (:mod:`parlai_acute.worlds.model_spec`) can answer. Every
context is a fresh conversation; the agent sees it the way ParlAI agents see history (the
turns joined by newlines, one observation) and this package's wrappers also get the turns
with their roles (the last one is the partner's), as the metrics' reply generation does.
The reply's ``decoding`` record (inference, temperature, samples, chosen candidate, ...)
is kept on the item, so a label can always be traced to how its reply was made.
"""
from __future__ import annotations

from parlai_acute.errors import UserError
from parlai_acute.metrics.inputs import Item
from parlai_acute.metrics.replies import _observation

__all__ = ["packaged_contexts", "model_config", "model_items"]

_OPTIONS = ("model", "model_file", "inference", "temperature", "topp", "topk", "num_samples", "beam_size",
            "max_new_tokens", "repetition_filter", "system_prompt", "seed", "openai_base_url", "openai_model",
            "hf_model")


def packaged_contexts(num_contexts: int, seed: int = 0, max_turns: int = 3, split: str = "test") -> list[dict]:
    """``num_contexts`` contexts from :mod:`parlai_acute.tasks.static_contexts` (with the real next turn)."""
    from parlai_acute.tasks.static_contexts import static_contexts

    if num_contexts < 1 or not 1 <= max_turns <= 3:
        raise UserError(f"num_contexts must be 1 or more and max_turns 1-3, got {num_contexts} and {max_turns}",
                        param=("num_contexts", "max_turns"))
    return [{"context_id": c["context_id"], "context": list(c["context_turns"]), "reference": c["reference"]}
            for c in static_contexts(seed, num_contexts, max_turns, split)]


def model_config(spec: str, agent) -> dict:
    """What an item records of its model: the string it was given, the agent class, the options that matter."""
    opt = getattr(agent, "opt", {}) or {}
    return {"spec": spec, "agent": type(agent).__name__,
            "options": {k: opt.get(k) for k in _OPTIONS if opt.get(k) not in (None, "")}}


def model_items(name: str, spec: str, agent, contexts: list[dict], batchsize: int = 1, progress=None) -> list[dict]:
    """One item per context: ``agent``'s reply, its decoding record and the model's configuration."""
    config = model_config(spec, agent)
    contexts = list(contexts)
    acts = []
    if hasattr(agent, "reply_batch"):
        for start in range(0, len(contexts), max(1, batchsize)):
            chunk = contexts[start:start + max(1, batchsize)]
            acts += agent.batch_act([_observation(agent, Item(c["context_id"], c["context"], []), start + k)
                                     for k, c in enumerate(chunk)])
            if progress:
                progress(len(chunk))
    else:
        for k, c in enumerate(contexts):
            agent.reset()
            agent.observe(_observation(agent, Item(c["context_id"], c["context"], []), k))
            acts.append(agent.act())
            if progress:
                progress(1)
    return [{"item": f"{name}:{c['context_id']}", "context_id": c["context_id"], "context": c["context"],
             "model": name, "reply": str((act or {}).get("text") or ""), "source": "static",
             "decoding": (act or {}).get("decoding"), "model_config": config} for c, act in zip(contexts, acts)]
