"""HfTransformersAgent on tiny local checkpoints (GPT-2, BART) and the real SmolLM2 GGUF via transformers."""
from __future__ import annotations

import pytest
import torch
from parlai.core.params import ParlaiParser

from parlai_acute.agents.decoding import DecodingConfig
from parlai_acute.agents.hf_transformers import HfTransformersAgent, load_model
from parlai_acute.errors import UserError


def make_opt(model, *args):
    parser = ParlaiParser(False, False)
    HfTransformersAgent.add_cmdline_args(parser)
    return parser.parse_args(["--hf-model", model, *args])


def manual_causal_logprobs(model_dir, prompt_text, reply_text, add_special_tokens=True):
    """log p(reply | prompt) token by token, straight from the model's logits."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True).eval()
    p = tok(prompt_text, add_special_tokens=add_special_tokens)["input_ids"]
    r = tok(reply_text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(torch.tensor([p + r])).logits[0]
    logp = torch.log_softmax(logits, -1)
    return [logp[len(p) - 1 + i, t].item() for i, t in enumerate(r)]


# --------------------------------------------------------------------------- tiny GPT-2

def test_score_reply_matches_logits_causal(tiny_gpt2_dir):
    agent = HfTransformersAgent(make_opt(tiny_gpt2_dir))
    context = ["hello how are you", "i am fine thank you", "what do you like to do"]
    logprobs, total = agent.score_reply(context, "i like to read books")
    expected = manual_causal_logprobs(
        tiny_gpt2_dir, "User: hello how are you\nBot: i am fine thank you\nUser: what do you like to do\nBot:",
        " i like to read books")
    assert logprobs == pytest.approx(expected, abs=1e-4)
    assert total == pytest.approx(sum(expected), abs=1e-4)
    # the end-of-turn newline is one more scored token
    with_end, total_end = agent.score_reply(context, "i like to read books", with_end=True)
    assert len(with_end) == len(expected) + 1 and total_end < total


def test_batched_scores_match_logits(tiny_gpt2_dir):
    """Replies of different lengths scored together (shared context cache, padding) match the logits."""
    model = load_model(tiny_gpt2_dir)
    context = ["hello how are you", "i am fine"]  # alternating, the last one is the user's
    replies = ["yes", "i like to read books and walk my dog", "", "do you have any pets"]
    together = model.score_replies(context, replies)
    prompt = "Bot: hello how are you\nUser: i am fine\nBot:"
    for reply, (lp, total) in zip(replies, together):
        expected = manual_causal_logprobs(tiny_gpt2_dir, prompt, " " + reply) if reply else []
        assert lp == pytest.approx(expected, abs=1e-4) and total == pytest.approx(sum(expected), abs=1e-4)
    with_end = model.score_replies(context, replies, with_end=True)
    for (lp, _), (lp_end, _) in zip(together, with_end):
        assert lp_end[:-1] == pytest.approx(lp, abs=1e-4) and len(lp_end) == len(lp) + 1


def test_system_prompt_and_persona_lines_are_part_of_the_context(tiny_gpt2_dir):
    plain = HfTransformersAgent(make_opt(tiny_gpt2_dir))
    persona = HfTransformersAgent(make_opt(tiny_gpt2_dir, "--system-prompt", "system :"))
    # ParlAI's convention: 'your persona:' lines of the first message describe this agent
    obs = persona.observe({"text": "your persona: i have a dog\ndo you have any pets", "episode_done": False})
    assert persona.turns == [("user", "do you have any pets")]
    assert obs["context_system"] == "system :\nYour persona: i have a dog"
    lp, _ = persona.score_reply(persona.turns, "yes a dog")
    expected = manual_causal_logprobs(tiny_gpt2_dir, "system :\nYour persona: i have a dog\nUser: do you have any pets\nBot:",
                                      " yes a dog")
    assert lp == pytest.approx(expected, abs=1e-4)
    assert plain.score_reply(["do you have any pets"], "yes a dog")[0] != pytest.approx(lp, abs=1e-4)


def test_episode_history_and_reset(tiny_gpt2_dir):
    agent = HfTransformersAgent(make_opt(tiny_gpt2_dir, "--inference", "greedy", "--max-new-tokens", "5"))
    agent.observe({"text": "hello how are you", "episode_done": False})
    first = agent.act()
    agent.observe({"text": "do you have any pets", "episode_done": True})
    second = agent.act()
    assert first["text"] and second["text"]
    # replying to episode_done ends the episode: the next one starts from nothing
    assert agent.turns == []
    agent.observe({"text": "hello how are you", "episode_done": False})
    assert agent.act()["text"] == first["text"]  # greedy, same context -> same reply
    assert agent.turns == [("user", "hello how are you"), ("assistant", first["text"])]


def test_same_opening_in_a_new_conversation_gets_new_samples(tiny_gpt2_dir):
    agent = HfTransformersAgent(make_opt(tiny_gpt2_dir, "--inference", "sample", "--temperature", "1.0",
                                         "--topp", "1", "--max-new-tokens", "8"))
    replies = []
    for _ in range(3):
        agent.observe({"text": "hello how are you", "episode_done": True})
        replies.append(agent.act()["text"])
    assert len(set(replies)) > 1  # the seed follows the conversation number, not only the text


def test_sample_and_rank_packages_candidates(tiny_gpt2_dir):
    agent = HfTransformersAgent(make_opt(tiny_gpt2_dir, "--inference", "sample_rank", "--num-samples", "4",
                                         "--temperature", "1.0", "--topp", "1", "--max-new-tokens", "6"))
    agent.observe({"text": "what do you like to do on weekends", "episode_done": False})
    act = agent.act()
    cands = act["candidates"]
    assert len(cands) == 4 and sum(c["chosen"] for c in cands) == 1
    chosen = next(c for c in cands if c["chosen"])
    assert act["text"] == chosen["text"]
    assert chosen["score"] == max(c["score"] for c in cands if not c["filtered"])
    assert act["decoding"]["inference"] == "sample_rank" and act["decoding"]["num_samples"] == 4
    # each candidate's score is its log-likelihood including the end of turn (when it ended)
    for c in cands:
        lp, total = agent.score_reply(["what do you like to do on weekends"], c["text"], with_end=True)
        assert total == pytest.approx(c["score"], abs=1e-3)
    assert len({c["text"] for c in cands}) > 1  # N independent samples, not N copies


def test_batch_act_with_shared_copies_matches_single(tiny_gpt2_dir):
    opt = make_opt(tiny_gpt2_dir, "--inference", "sample", "--temperature", "1.0", "--max-new-tokens", "6", "--seed", "7")
    parent = HfTransformersAgent(opt)
    copies = [HfTransformersAgent(opt, parent.share()) for _ in range(2)]
    assert all(c.hf is parent.hf for c in copies)
    texts = ["hello how are you", "do you have any pets at home"]
    observed = [c.observe({"text": t, "episode_done": False}) for c, t in zip(copies, texts)]
    replies = copies[0].batch_act(observed)
    for copy, reply in zip(copies, replies):
        copy.self_observe(reply)
    for copy, text, reply in zip(copies, texts, replies):
        assert copy.turns == [("user", text), ("assistant", reply["text"])]
        alone = HfTransformersAgent(opt, parent.share())
        alone.observe({"text": text, "episode_done": False})
        assert alone.act()["text"] == reply["text"]  # seeds follow the conversation, not the batch


# --------------------------------------------------------------------------- tiny BART (seq2seq)

def test_seq2seq_generation_and_scores(tiny_bart_dir):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    agent = HfTransformersAgent(make_opt(tiny_bart_dir, "--inference", "sample_rank", "--num-samples", "3",
                                         "--max-new-tokens", "6"))
    assert agent.hf.seq2seq
    context = ["hello how are you", "i am fine thank you"]
    lp, total = agent.score_reply(context, "yes i have a cat")
    tok = AutoTokenizer.from_pretrained(tiny_bart_dir, local_files_only=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_bart_dir, local_files_only=True).eval()
    enc = tok("hello how are you\ni am fine thank you")["input_ids"]
    reply = tok("yes i have a cat", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([enc]),
                       decoder_input_ids=torch.tensor([[model.config.decoder_start_token_id] + reply])).logits[0]
    logp = torch.log_softmax(logits, -1)
    assert lp == pytest.approx([logp[i, t].item() for i, t in enumerate(reply)], abs=1e-4)
    agent.observe({"text": "hello how are you", "episode_done": False})
    act = agent.act()
    assert len(act["candidates"]) == 3 and all(c["text"] for c in act["candidates"])


# --------------------------------------------------------------------------- bad input

def test_bad_model_paths_are_user_errors(tmp_path, tiny_gpt2_dir):
    with pytest.raises(UserError, match="no such file or directory"):
        load_model(str(tmp_path / "missing"))
    with pytest.raises(UserError, match="no config.json"):
        load_model(str(tmp_path))
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(UserError, match="not a .gguf"):
        load_model(str(tmp_path / "weights.bin"))
    with pytest.raises(UserError, match="^hf_model is required"):
        HfTransformersAgent(make_opt(tiny_gpt2_dir, "--hf-model", ""))
    with pytest.raises(UserError, match="no chat template"):
        load_model(tiny_gpt2_dir, fmt="chat_template")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "gpt2"}')
    with pytest.raises(UserError, match="tokenizer|weights"):
        load_model(str(broken))


# --------------------------------------------------------------------------- real SmolLM2 (GGUF in transformers)

SMOL_PROMPT = ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
               "<|im_start|>user\nHi! What is your favourite food?<|im_end|>\n<|im_start|>assistant\n")


def test_smollm2_chat_template_and_logits(smollm2_hf):
    m = smollm2_hf
    assert m.chat_template and not m.seq2seq
    prompt = m.prompt(["Hi! What is your favourite food?"])
    assert prompt.text == SMOL_PROMPT
    # the end of a turn is read off the template: <|im_end|>, not the GGUF's eos name
    assert m.tokenizer.convert_ids_to_tokens(m._end_ids) == ["<|im_end|>"]
    reply = "I love pizza with mushrooms."
    lp, total = m.score_reply(["Hi! What is your favourite food?"], reply)
    p = m.tokenizer(SMOL_PROMPT, add_special_tokens=False)["input_ids"]
    r = m.tokenizer(reply, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = m.model(torch.tensor([p + r])).logits[0]
    logp = torch.log_softmax(logits.float(), -1)
    assert lp == pytest.approx([logp[len(p) - 1 + i, t].item() for i, t in enumerate(r)], abs=1e-3)
    # several replies at once (context cache shared) give the same numbers
    batched = m.score_replies(["Hi! What is your favourite food?"], ["Soup.", reply, "Pizza, I think."])
    assert batched[1][0] == pytest.approx(lp, abs=1e-3)


def test_smollm2_log_probs_rank_sensible_text_first(smollm2_hf):
    context = ["Hi! What is your favourite food?"]
    coherent = smollm2_hf.score_reply(context, "I love pizza, especially with mushrooms.")[1]
    shuffled = smollm2_hf.score_reply(context, "mushrooms. especially pizza, with love I")[1]
    unrelated = smollm2_hf.score_reply(context, "Purple train gravity seventeen spoon.")[1]
    assert coherent > shuffled and coherent > unrelated


def test_smollm2_sample_and_rank_generates(smollm2_hf, gguf_path):
    opt = make_opt(gguf_path, "--inference", "sample_rank", "--num-samples", "3", "--temperature", "0.88",
                   "--topp", "1", "--max-new-tokens", "24")
    agent = HfTransformersAgent(opt, {"hf_model": smollm2_hf, "opt": opt})
    agent.observe({"text": "Hi! What is your favourite food?", "episode_done": False})
    act = agent.act()
    assert act["text"] and "<|im_" not in act["text"]
    scores = [c["score"] for c in act["candidates"] if not c["filtered"]]
    assert next(c for c in act["candidates"] if c["chosen"])["score"] == max(scores)
    assert all(c["num_tokens"] > 0 and c["score"] < 0 for c in act["candidates"])


def test_smollm2_greedy_is_reproducible(smollm2_hf):
    config = DecodingConfig(inference="greedy", max_new_tokens=16)
    a = smollm2_hf.generate(["Tell me about your day."], config)
    b = smollm2_hf.generate(["Tell me about your day."], config)
    assert a[0].text == b[0].text and a[0].text


def test_chat_template_of_a_local_checkpoint(tiny_gpt2_dir, tmp_path):
    import json
    import shutil

    path = tmp_path / "with_template"
    shutil.copytree(tiny_gpt2_dir, path)
    config = json.loads((path / "tokenizer_config.json").read_text())
    config["chat_template"] = (
        "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        "{% for m in messages %}{{ m['role'] + ' : ' + m['content'] + eos_token }}{% endfor %}"
        "{% if add_generation_prompt %}{{ 'assistant :' }}{% endif %}")
    (path / "tokenizer_config.json").write_text(json.dumps(config))
    agent = HfTransformersAgent(make_opt(str(path), "--inference", "greedy", "--max-new-tokens", "4"))
    assert agent.hf.prompt(["hello", "hi", "how are you"]).text == (
        "user : hello</s>assistant : hi</s>user : how are you</s>assistant :")
    assert agent.hf._end_ids == [agent.hf.tokenizer.eos_token_id]  # read off the template
    agent.observe({"text": "hello how are you", "episode_done": False})
    assert agent.act()["text"]
    persona = HfTransformersAgent(make_opt(str(path), "--system-prompt", "be nice"))
    with pytest.raises(UserError, match="chat template failed .*System role not supported.*hf_format=plain"):
        persona.score_reply(["hello"], "hi")
    plain = HfTransformersAgent(make_opt(str(path), "--hf-format", "plain", "--system-prompt", "be nice"))
    assert plain.hf.prompt(["hello"], "be nice").text == "be nice\nUser: hello\nBot:"


def test_parlai_self_chat_script(tiny_gpt2_dir, tmp_path):
    """ParlAI's own self_chat script drives two copies (the first speaks with no observation)."""
    import json

    from parlai.scripts.self_chat import SelfChat

    out = tmp_path / "chats"
    SelfChat.main(model="parlai_acute.agents.hf_transformers:HfTransformersAgent", hf_model=tiny_gpt2_dir,
                  task="self_chat", num_self_chats=2, selfchat_max_turns=4, datapath=str(tmp_path),
                  outfile=str(out), inference="sample_rank", num_samples=2, max_new_tokens=5,
                  display_examples=False)
    dialogs = [json.loads(line)["dialog"] for line in (tmp_path / "chats.jsonl").read_text().splitlines()]
    assert len(dialogs) == 2
    for dialog in dialogs:
        turns = [msg for pair in dialog for msg in pair]
        assert len(turns) >= 4
        bot_turns = [t for t in turns if t.get("candidates")]
        assert bot_turns and all(len(t["candidates"]) == 2 for t in bot_turns)



def test_hf_threads_zero_is_the_machines_cores_and_below_zero_one_line():
    from parlai.core.params import ParlaiParser

    from parlai_acute.agents.hf_transformers import HfTransformersAgent
    from parlai_acute.errors import UserError
    from parlai_acute.parallel import cores, threads_of

    assert threads_of(0, "hf_threads") == cores() >= 1 and threads_of(None, "hf_threads") == 1
    parser = ParlaiParser(False, False)
    HfTransformersAgent.add_cmdline_args(parser)
    with pytest.raises(UserError, match=r"^hf_threads -1 is too small; use 1 or more, or 0 for the machine's cores$"):
        HfTransformersAgent(parser.parse_args(["--hf-model", "missing.gguf", "--hf-threads", "-1"]))
