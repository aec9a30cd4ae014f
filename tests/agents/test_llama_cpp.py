"""LlamaCppAgent on the real SmolLM2 GGUF through llama.cpp (xllamacpp), inside real ParlAI."""
from __future__ import annotations

import json
import os

import pytest
from parlai.core.agents import create_agent_from_shared
from parlai.core.params import ParlaiParser

from parlai_acute.agents import llama_cpp
from parlai_acute.agents.llama_cpp import LlamaCppAgent
from parlai_acute.errors import UserError
from parlai_acute.tasks.sources import persona_context

SHORT = ["--max-new-tokens", "12"]


@pytest.fixture(scope="module")
def make(tmp_path_factory):
    """make(*args) -> a LlamaCppAgent parsed from command-line style arguments."""
    datapath = str(tmp_path_factory.mktemp("parlai_data"))
    keep = []  # keep agents (and so their engines) alive for the module: one model load per setting

    def build(*args):
        parser = ParlaiParser(True, True)
        LlamaCppAgent.add_cmdline_args(parser)
        opt = parser.parse_args(["--datapath", datapath, *SHORT, *args])
        agent = LlamaCppAgent(opt)
        keep.append(agent)
        return agent

    return build


def say(agent, text, done=False):
    agent.observe({"id": "partner", "text": text, "episode_done": done})
    return agent.act()


def test_agent_replies_and_records_its_candidate(make):
    agent = make()
    reply = say(agent, "Hi! What do you like to do on weekends?")
    assert reply["id"] == "LlamaCpp" and isinstance(reply["text"], str) and reply["text"].strip()
    (cand,) = reply["candidates"]
    assert cand["text"] == reply["text"] and cand["chosen"] and 0 < cand["num_tokens"] <= 12
    assert cand["score"] < 0  # a real sum of token log-probs
    assert reply["decoding"]["inference"] == "sample" and reply["decoding"]["model"].endswith(".gguf")
    # the reply is remembered: the next prompt holds both turns, in order, after the system prompt
    say(agent, "That sounds fun.")
    roles = [m["role"] for m in agent.messages()]
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    assert agent.messages()[2]["content"] == reply["text"]


def test_same_seed_same_reply_other_seed_other_reply(make):
    def reply(seed):
        agent = make("--seed", str(seed), "--temperature", "1.0", "--topp", "1")
        return say(agent, "Tell me something about your family.")["text"]

    first = reply(11)
    assert reply(11) == first
    assert reply(12) != first


def test_greedy_ignores_the_seed_and_sampling_does_not(make):
    def replies(*args):
        return {say(make(*args, "--seed", str(seed)), "What is your favourite food?")["text"] for seed in (1, 2, 3)}

    assert len(replies("--inference", "greedy")) == 1
    assert len(replies("--inference", "sample", "--temperature", "1.0", "--topp", "1")) > 1


def test_sample_and_rank_picks_the_most_probable_candidate_and_records_all(make):
    agent = make("--inference", "sample_rank", "--num-samples", "5", "--temperature", "0.88", "--topp", "1",
                 "--repetition-filter", "off")
    reply = say(agent, "Do you have any pets?")
    cands = reply["candidates"]
    assert len(cands) == 5 and len({c["text"] for c in cands}) > 1
    best = max(cands, key=lambda c: c["score"])
    assert reply["text"] == best["text"] and best["chosen"] and sum(c["chosen"] for c in cands) == 1
    assert reply["decoding"]["num_samples"] == 5 and reply["decoding"]["chosen"] == cands.index(best)
    assert all(c["num_tokens"] > 0 and c["score"] < 0 for c in cands)


def _replay(agent, turns):
    for m in turns:
        if m["role"] == "user":
            agent.observe({"text": m["content"], "episode_done": False})
        else:
            agent.self_observe({"text": m["content"]})


def test_repetition_filter_drops_echoes_of_earlier_turns_on_the_real_model(make):
    # SmolLM2 asked the same question three times repeats itself; greedy has no way out
    greedy = make("--inference", "greedy", "--max-new-tokens", "16")
    replies = [say(greedy, "What is your favourite food?") for _ in range(3)]
    last = replies[-1]
    assert last["candidates"][0]["filtered"] and last["decoding"]["fallback"]  # kept: the only candidate
    assert last["text"] == last["candidates"][0]["text"]
    # sample-and-rank in the same conversation drops the echoes and keeps the best non-echo
    ranker = make("--inference", "sample_rank", "--num-samples", "6", "--temperature", "0.5",
                  "--max-new-tokens", "16")
    _replay(ranker, greedy.turns[:-1])
    reply = ranker.act()
    cands = reply["candidates"]
    filtered = [c for c in cands if c["filtered"]]
    kept = [c for c in cands if not c["filtered"]]
    assert filtered and all(c["overlap"] >= 0.8 and "repeats" in c["reason"] for c in filtered)
    assert kept and not reply["decoding"]["fallback"]
    assert reply["text"] == max(kept, key=lambda c: c["score"])["text"]
    assert reply["decoding"]["num_filtered"] == len(filtered)


def test_batch_act_decodes_independent_conversations_on_one_shared_model(make, monkeypatch):
    built = []

    class CountingEngine(llama_cpp.LlamaEngine):
        def __init__(self, *args, **kwargs):
            built.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(llama_cpp, "LlamaEngine", CountingEngine)
    root = make("--batchsize", "4", "--context-length", "768", "--inference", "greedy")
    assert root.engine.slots == 8  # two per conversation
    copies = [create_agent_from_shared(root.share()) for _ in range(4)]
    again = make("--batchsize", "4", "--context-length", "768", "--inference", "greedy")  # same settings
    assert len(built) == 1 and all(c.engine is root.engine for c in copies) and again.engine is root.engine

    topics = ["my dog", "my job as a nurse", "the city of Paris", "chocolate cake"]
    observations = [c.observe({"text": f"Tell me about {t}.", "episode_done": False}) for c, t in zip(copies, topics)]
    replies = root.batch_act(observations)
    assert len(replies) == 4 and all(r["text"].strip() for r in replies)
    for copy, topic, reply in zip(copies, topics, replies):
        copy.self_observe(reply)
        assert [m["content"] for m in copy.turns] == [f"Tell me about {topic}.", reply["text"]]
    # batching does not change what a conversation gets (greedy): the same as one at a time
    alone = make("--context-length", "768", "--inference", "greedy")
    assert say(alone, "Tell me about chocolate cake.")["text"] == replies[3]["text"]


def test_episode_done_starts_a_new_conversation(make):
    agent = make("--inference", "greedy")
    say(agent, "My name is Ada.", done=True)
    assert agent.turns == [] or agent._reset_after_reply
    say(agent, "Hello again.")
    assert [m["content"] for m in agent.turns][0] == "Hello again."


def test_persona_context_goes_into_the_system_prompt(make):
    agent = make("--inference", "greedy", "--persona", "I am a retired pilot.")
    context = persona_context(["I have two cats.", "I live by the sea."])
    agent.observe({"id": "context", "text": context, "episode_done": False})
    system = agent.messages()[0]["content"]
    assert "I am a retired pilot. I have two cats. I live by the sea." in system
    assert agent.turns == []  # nothing of the persona is said aloud
    reply = agent.act()  # speaks first
    assert reply["text"].strip()
    # a first message mixing persona lines and words: persona to the system prompt, words as a turn
    other = make("--inference", "greedy")
    other.observe({"text": "your persona: I love jazz.\npartner's persona: I am a chef.\nHi there!"})
    assert "I love jazz." in other.messages()[0]["content"] and "I am a chef." in other.messages()[0]["content"]
    assert other.turns == [{"role": "user", "content": "Hi there!"}]


def test_long_conversations_drop_their_oldest_turns(make):
    agent = make("--inference", "greedy", "--context-length", "128", "--max-new-tokens", "8")
    for i in range(6):
        say(agent, f"Here is a fairly long message number {i} about gardening, tomatoes, weather and soil.")
    assert len(agent.turns) == 12 and agent.act  # still answering with a 128-token window


def test_self_chat_inside_parlai_script(tmp_path):
    from parlai.scripts.self_chat import SelfChat

    out = tmp_path / "selfchat.jsonl"
    SelfChat.main(model="parlai_acute.agents.llama_cpp:LlamaCppAgent", task="parlai_acute.tasks.persona",
                  num_self_chats=2, selfchat_max_turns=4, outfile=str(out), datapath=str(tmp_path / "data"),
                  max_new_tokens=12, display_examples=False)
    episodes = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(episodes) == 2
    for episode in episodes:
        turns = [t for pair in episode["dialog"] for t in pair if t["id"] != "context"]
        assert {t["id"] for t in turns} == {"LlamaCpp_1", "LlamaCpp_2"}
        assert len(turns) == 6 and all(t["text"].strip() for t in turns)  # 1 context parley + 3 talking
        assert all(t["candidates"][0]["score"] < 0 and "decoding" in t for t in turns)
    texts = [[t["text"] for pair in e["dialog"] for t in pair] for e in episodes]
    assert texts[0] != texts[1]


def test_batched_self_chat_with_parlai_acute_worlds(tmp_path):
    from parlai.scripts.self_chat import setup_args

    from parlai_acute.logs import read_log
    from parlai_acute.worlds.runner import run_self_chats

    opt = setup_args().parse_args(["-m", "parlai_acute.agents.llama_cpp:LlamaCppAgent", "-t",
                                   "parlai_acute.tasks.persona", "--num-self-chats", "4", "--selfchat-max-turns", "3",
                                   "--batchsize", "2", "--outfile", str(tmp_path / "b.jsonl"), "--datapath",
                                   str(tmp_path / "data"), "--max-new-tokens", "10", "--display-examples", "false"])
    path = run_self_chats(opt, progress=False)
    episodes = read_log(path)
    assert len(episodes) == 4
    for episode in episodes:
        episode.check_alternating()
        model_turns = [t for t in episode.turns if "candidates" in t]
        assert model_turns and all(t["text"] == next(c["text"] for c in t["candidates"] if c["chosen"])
                                   for t in model_turns)


def test_interactive_script_chats_with_a_person(tmp_path, monkeypatch):
    from parlai.scripts.interactive import Interactive

    typed = iter(["Hi, I am Sam. I grow tomatoes.", "What do you grow?"])

    def person(prompt=""):
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", person)
    out = tmp_path / "chat.jsonl"
    Interactive.main(model="parlai_acute.agents.llama_cpp:LlamaCppAgent", datapath=str(tmp_path / "data"),
                     outfile=str(out), max_new_tokens=10, inference="greedy")
    (episode,) = [json.loads(line) for line in out.read_text().splitlines()]
    turns = [t for pair in episode["dialog"] for t in pair]
    assert [t["text"] for t in turns[::2]] == ["Hi, I am Sam. I grow tomatoes.", "What do you grow?"]
    assert all(t["id"] == "LlamaCpp" and t["text"].strip() and t["candidates"] for t in turns[1::2])


def test_eval_model_with_batches(tmp_path):
    from parlai.scripts.eval_model import EvalModel

    report = EvalModel.main(model="parlai_acute.agents.llama_cpp:LlamaCppAgent", task="integration_tests:nocandidate",
                            num_examples=4, batchsize=2, datapath=str(tmp_path), max_new_tokens=6,
                            display_examples=False, inference="greedy")
    assert report["exs"].value() == 4


@pytest.mark.parametrize("args,needle", [
    (["--gguf", "/nonexistent/model.gguf"], "does not exist"),
    (["--context-length", "16"], "context_length"),
    (["--llama-threads", "-1"], "llama_threads"),
    (["--llama-slots", "-1"], "llama_slots"),
    (["--llama-nice", "-30"], "llama_nice"),
    (["--max-new-tokens", "600"], "max_new_tokens"),
    (["--temperature", "-1"], "temperature"),
])
def test_bad_input_is_a_one_line_user_error(make, args, needle):
    """The agent's error names its option as ParlAI's opt does (the CLI prints it as --option-name)."""
    with pytest.raises(UserError) as err:
        make(*args)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_a_directory_or_a_non_gguf_file_is_refused(make, tmp_path):
    with pytest.raises(UserError, match="is a directory, not a model"):
        make("--gguf", str(tmp_path))
    fake = tmp_path / "notes.gguf"
    fake.write_text("not a model")
    with pytest.raises(UserError, match="not a GGUF model"):
        make("--gguf", str(fake))
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF\x03\x00\x00\x00" + b"truncated" * 4)
    with pytest.raises(UserError, match="llama.cpp could not load .*broken.gguf"):
        make("--gguf", str(broken))


def test_model_file_flag_names_the_gguf(make, gguf_path):
    agent = make("-mf", gguf_path)
    assert agent.engine.model_path == gguf_path


def test_a_reply_cut_by_the_token_budget_ends_at_a_sentence_end(make):
    """SmolLM2 stopped by --max-new-tokens: the unfinished last sentence goes, and the act says so."""
    agent = make("--inference", "sample_rank", "--num-samples", "6", "--max-new-tokens", "20",
                 "--temperature", "0.9", "--topp", "1", "--seed", "3")
    reply = say(agent, "Hi! I paint a lot. Tell me about yourself and ask me something.")
    cut = [c for c in reply["candidates"] if c["finish_reason"] == "length"]
    assert cut and all(c["truncated"] for c in cut)
    trimmed = [c for c in cut if c["trimmed"]]
    assert trimmed, [c["text"] for c in cut]
    for cand in trimmed:
        assert cand["untrimmed"].startswith(cand["text"]) and len(cand["text"]) < len(cand["untrimmed"])
        assert cand["text"].rstrip("\"')]\u2019\u201d")[-1] in ".!?\u2026"
    for cand in reply["candidates"]:
        if cand["finish_reason"] != "length":
            assert not cand["truncated"] and not cand["trimmed"] and "untrimmed" not in cand
    chosen = next(c for c in reply["candidates"] if c["chosen"])
    assert reply["text"] == chosen["text"] and reply["decoding"]["trimmed"] == chosen["trimmed"]
    assert reply["decoding"]["max_new_tokens"] == 20


def test_default_budget_is_large_enough_for_whole_replies(make):
    from parlai_acute.agents.decoding import DEFAULT_MAX_NEW_TOKENS

    parser = ParlaiParser(True, True)
    LlamaCppAgent.add_cmdline_args(parser)
    assert parser.parse_args([])["max_new_tokens"] == DEFAULT_MAX_NEW_TOKENS == 64


def test_configurations_of_one_gguf_are_spread_over_one_thread_engines_one_per_core(tmp_path, monkeypatch):
    """per-turn's decoding configurations use every core, each engine on its own thread (engines never
    wait for one another, as the threads of one engine do at every layer)."""
    from parlai_acute.agents import decoding, llama_cpp
    from parlai_acute.agents.llama_cpp import engine_key, engine_settings, share_engines
    from parlai_acute.worlds.model_spec import model_opt

    smol = "-m parlai_acute.agents.llama_cpp:LlamaCppAgent"

    def opts(*specs):
        return [model_opt(spec, str(tmp_path)) for spec in specs]

    greedy, rank, sampled, persona, generic, short, pinned = plan = opts(
        f"{smol} --inference greedy", f"{smol} --inference sample_rank --num-samples 4",
        f"{smol} --inference sample", f"{smol} --inference greedy --persona 'I am a nurse.'",
        "parlai_acute.agents.generic_bot:GenericBotAgent", f"{smol} --context-length 512",
        f"{smol} --llama-threads 1 --llama-slots 3")
    monkeypatch.setattr(llama_cpp, "cores", lambda: 3)
    assert engine_settings(greedy, decoding.DecodingConfig.from_opt(greedy))[3] == 3  # default: every core
    share_engines(plan)
    # the four configurations of 1024 tokens: three engines (min(4, cores)), the heaviest alone
    engines = {}
    for name, opt in zip(("greedy", "rank", "sampled", "persona", "short"), (greedy, rank, sampled, persona, short)):
        engines.setdefault(engine_key(opt), []).append(name)
    assert sorted(map(sorted, engines.values())) == [["greedy", "persona"], ["rank"], ["sampled"], ["short"]]
    assert rank["llama_slots"] == 8 and greedy["llama_slots"] == persona["llama_slots"] == 4
    # five engines in all (the pinned one included): the 3 cores are shared, one thread each
    assert {o["llama_threads"] for o in (greedy, rank, sampled, persona, short)} == {1}
    assert pinned["llama_threads"] == 1 and pinned["llama_slots"] == 3 and "llama_replica" not in pinned
    assert not generic.get("llama_threads")
    monkeypatch.setattr(llama_cpp, "cores", lambda: 2)
    two = opts(*[f"{smol} --inference {i}" for i in ("greedy", "sample", "greedy --persona 'A nurse.'",
                                                      "sample_rank --num-samples 4")])
    share_engines(two)
    assert len({engine_key(o) for o in two}) == 2 and {o["llama_threads"] for o in two} == {1}
    assert all(o["llama_process"] for o in two)  # engines of one process would take turns: a process each
    alone = opts(f"{smol} --inference greedy")
    share_engines(alone)
    # one engine on every core, in a process (and session) of its own so its raised priority (the default
    # llama_nice) counts against other sessions' work and raises nothing else of the task
    assert alone[0]["llama_threads"] == 2 and alone[0]["llama_process"]
    plain = opts(f"{smol} --inference greedy --llama-nice 0")
    share_engines(plain)
    assert plain[0]["llama_threads"] == 2 and not plain[0]["llama_process"]  # no priority asked: in-process


def test_an_engine_runs_at_the_asked_priority_and_says_so_when_it_may_not(tmp_path, capfd):
    """llama.cpp's compute threads at the raised niceness, the rest of the process untouched; without the
    permission one note and the engine runs anyway (run as root here, as CI is: the refusal is made real
    by first raising this thread's niceness, which an unprivileged process cannot lower again)."""
    import threading

    from parlai_acute.agents.llama_engine import LlamaEngine, cpu_seconds, raised_priority
    from parlai_acute.paths import default_gguf

    tid = threading.get_native_id()
    before = os.getpriority(os.PRIO_PROCESS, tid)
    engine = LlamaEngine(str(default_gguf()), 256, 1, 1, nice=-7)
    assert os.getpriority(os.PRIO_PROCESS, tid) == before  # the caller's niceness is given back
    assert {os.getpriority(os.PRIO_PROCESS, int(t)) for t in engine._engine_tids} == {-7}
    spent = engine.progress()
    engine.chat({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4})
    assert engine.progress() > spent and cpu_seconds("self") >= engine.progress()
    if os.geteuid() == 0:  # drop the capability in a child: lowering niceness is then refused
        import subprocess
        import sys

        code = ("import os\nfrom parlai_acute.agents.llama_engine import raised_priority\n"
                "os.setpriority(os.PRIO_PROCESS, 0, 5); os.setgid(65534); os.setuid(65534)\n"
                "with raised_priority(-10): print('ran', os.getpriority(os.PRIO_PROCESS, 0))\n"
                "with raised_priority(-10): pass")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "ran 5"  # it ran, at the niceness it had
        notes = [line for line in out.stderr.splitlines() if line.startswith("note: llama.cpp engine left")]
        assert len(notes) == 1 and "needs root or CAP_SYS_NICE" in notes[0]  # one line, once
    with raised_priority(0):
        assert os.getpriority(os.PRIO_PROCESS, tid) == before


def test_a_dropped_in_process_engine_lets_the_process_exit():
    """Issue 25: xllamacpp's Server destructor joins its HTTP listener, blocked in accept() for good, so a
    process that dropped an in-process engine (a relaunch that found nothing to launch) never exited."""
    import subprocess
    import sys

    code = ("import gc\n"
            "from parlai_acute.paths import default_gguf\n"
            "from parlai_acute.agents.llama_engine import LlamaEngine\n"
            "engine = LlamaEngine(str(default_gguf()))\n"
            "engine.close()\n"
            "del engine\n"
            "gc.collect()\n"
            "print('dropped', flush=True)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and "dropped" in done.stdout, done.stderr[-2000:]
