"""ACUTE-Eval pairings: selection rules, speaker choice, the ParlAI format both ways, the CLI."""
from __future__ import annotations

import itertools
import json
import queue
import random
from collections import Counter

import pytest

import parlai_acute
from parlai_acute.acute import pairings as P
from parlai_acute.errors import UserError
from parlai_acute.files import write_jsonl
from parlai_acute.scripts.main import main


def conversation(ids, n_turns=6, tag="c", context=None):
    """A Conversations-log line: turns in pairs, speaker ids cycling through ``ids``."""
    turns = [{"id": ids[i % len(ids)], "text": f"{tag} turn {i}", "episode_done": False} for i in range(n_turns)]
    dialog = [turns[i:i + 2] for i in range(0, n_turns, 2)]
    if context:
        dialog.insert(0, [{"id": "context", "text": context}, {"id": "context", "text": context}])
    return {"dialog": dialog, "context": [], "metadata_path": None}


def write_log(path, n, ids, tag="c"):
    write_jsonl(path, [conversation(ids, tag=f"{tag}{k}") for k in range(n)])
    return str(path)


# ----------------------------------------------------------------------------- selection rules

CASES = [(10, 10, 10), (12, 30, 9), (3, 5, 15), (4, 6, 13), (7, 3, 20), (1, 5, 5), (6, 4, 24), (9, 6, 40)]


@pytest.mark.parametrize("n_a,n_b,n", CASES)
def test_plan_pair_follows_paper_rules(n_a, n_b, n):
    plan = P.plan_pair(n_a, n_b, n, random.Random(3))
    assert len(plan) == n
    assert len(set(plan)) == n, "a specific pair of conversations is shown twice"
    assert all(0 <= a < n_a and 0 <= b < n_b for a, b in plan)
    uses_a = Counter(a for a, _ in plan)
    uses_b = Counter(b for _, b in plan)
    if n <= min(n_a, n_b):
        assert max(uses_a.values()) == 1 and max(uses_b.values()) == 1
    # diversity: every conversation used, uses differ by at most one
    for uses, total in ((uses_a, n_a), (uses_b, n_b)):
        counts = [uses.get(i, 0) for i in range(total)]
        assert max(counts) - min(counts) <= 1


def test_plan_pair_reproducible_by_seed():
    assert P.plan_pair(8, 9, 30, random.Random(5)) == P.plan_pair(8, 9, 30, random.Random(5))
    assert P.plan_pair(8, 9, 30, random.Random(5)) != P.plan_pair(8, 9, 30, random.Random(6))


def dialogues_for(counts):
    return {name: [P.Dialogue(uid=f"{name}:{i}", model=name, source=f"{name}:{i}",
                              turns=[{"id": P.OTHER_SPEAKER, "text": "hi"}, {"id": name, "text": f"{name} {i}"}])
                   for i in range(n)] for name, n in counts.items()}


def test_build_pairings_covers_every_model_pair_with_requested_count():
    dialogues = dialogues_for({"a": 5, "b": 7, "c": 3, "d": 4})
    lines = P.build_pairings(dialogues, 6, seed=1)
    per_pair = Counter(tuple(line["speakers_to_eval"]) for line in lines)
    assert per_pair == {pair: 6 for pair in itertools.combinations("abcd", 2)}
    seen = Counter(tuple(line["dialogue_ids"]) for line in lines)
    assert max(seen.values()) == 1
    for line in lines:
        P.validate_pairing(line)


def test_build_pairings_spreads_use_across_model_pairs():
    # a has 10 conversations, 5 comparisons with b and 5 with c: no conversation of a twice.
    dialogues = dialogues_for({"a": 10, "b": 5, "c": 5})
    lines = P.build_pairings(dialogues, 5, seed=2)
    uses = Counter(line["dialogue_ids"][0] for line in lines if line["speakers_to_eval"][0] == "a")
    assert len(uses) == 10 and set(uses.values()) == {1}


def test_build_pairings_refuses_too_few_conversations():
    with pytest.raises(UserError, match=r"'a' \(2 conversations\) and 'b' \(3\).*comparisons_per_pair 7"):
        P.build_pairings(dialogues_for({"a": 2, "b": 3}), 7)


# ----------------------------------------------------------------------------- speakers


def test_self_chat_side_random_per_conversation_and_fixed(tmp_path):
    log = write_log(tmp_path / "self.jsonl", 40, ["GenericBot", "GenericBot"])
    sides = [d.turns[0]["id"] == "bot" for d in P.load_dialogues(P.ModelLog("bot", log), seed=4)]
    assert 5 < sum(sides) < 35  # both sides are evaluated
    again = [d.turns[0]["id"] == "bot" for d in P.load_dialogues(P.ModelLog("bot", log), seed=4)]
    assert sides == again
    second = P.load_dialogues(P.ModelLog("bot", log), self_chat_side="second")
    assert all(d.turns[0]["id"] == P.OTHER_SPEAKER and d.turns[1]["id"] == "bot" for d in second)
    first = P.load_dialogues(P.ModelLog("bot", log, "first"))
    assert all([t["id"] for t in d.turns][::2] == ["bot"] * 3 for d in first)


def test_human_model_log_auto_detects_the_model(tmp_path):
    rows = [conversation(["safeLocalHuman", "blender"], tag="x"), conversation(["blender", "safeLocalHuman"], tag="y")]
    write_jsonl(tmp_path / "hm.jsonl", rows)
    dialogues = P.load_dialogues(P.ModelLog("bb", str(tmp_path / "hm.jsonl")))
    assert [d.uid for d in dialogues] == ["bb:1", "bb:2"]
    assert [t["id"] for t in dialogues[0].turns][:2] == [P.OTHER_SPEAKER, "bb"]
    assert [t["id"] for t in dialogues[1].turns][:2] == ["bb", P.OTHER_SPEAKER]
    # text stays with its original speaker
    assert dialogues[1].turns[0]["text"] == "y turn 0"


def test_explicit_speaker_id_and_ambiguous_logs(tmp_path):
    log = write_log(tmp_path / "two_bots.jsonl", 3, ["alice", "bob"])
    with pytest.raises(UserError, match=r"cannot tell which of 'alice' and 'bob'.*:SPEAKER_ID"):
        P.load_dialogues(P.ModelLog("m", log))
    dialogues = P.load_dialogues(P.parse_model_spec(f"m={log}:bob"))
    assert all(d.turns[1]["id"] == "m" and d.turns[0]["id"] == P.OTHER_SPEAKER for d in dialogues)
    with pytest.raises(UserError, match=r"two_bots.jsonl:1: speaker 'carol'"):
        P.load_dialogues(P.parse_model_spec(f"m={log}:carol"))


def test_log_validation(tmp_path):
    write_jsonl(tmp_path / "bad.jsonl", [conversation(["a", "b"]), conversation(["a", "a", "b"])])
    with pytest.raises(UserError, match=r"bad.jsonl:2: speakers do not alternate"):
        P.load_dialogues(P.ModelLog("m", str(tmp_path / "bad.jsonl"), "a"))
    write_jsonl(tmp_path / "three.jsonl", [conversation(["a", "b", "c"])])
    with pytest.raises(UserError, match=r"three.jsonl:1: 3 speakers"):
        P.load_dialogues(P.ModelLog("m", str(tmp_path / "three.jsonl"), "a"))
    with pytest.raises(UserError, match="does not exist"):
        P.load_dialogues(P.ModelLog("m", str(tmp_path / "missing.jsonl")))
    with pytest.raises(UserError, match="not NAME=PATH"):
        P.parse_model_spec("lonely")
    with pytest.raises(UserError, match="reserved"):
        P.parse_model_spec(f"other_speaker={tmp_path / 'x.jsonl'}")


def test_context_turns_leave_the_dialogue(tmp_path):
    write_jsonl(tmp_path / "ctx.jsonl", [conversation(["human", "bot"], context="your persona: I like tea")])
    (d,) = P.load_dialogues(P.ModelLog("m", str(tmp_path / "ctx.jsonl")))
    assert all(t["id"] != "context" for t in d.turns) and len(d.turns) == 6
    assert d.as_dict()["context"][0]["text"] == "your persona: I like tea"


# ----------------------------------------------------------------------------- the format

# The template of ParlAI's acute_eval README and its task_config/onboarding.json (shortened).
PARLAI_LINE = {
    "is_onboarding": False,
    "speakers_to_eval": ["first_modelname", "second_modelname"],
    "dialogue_ids": [11, 12],
    "dialogue_dicts": [
        {"speakers": ["first_modelname", "other_speaker"],
         "dialogue": [{"id": "first_modelname", "text": "Hi"}, {"id": "other_speaker", "text": "Hi back"}]},
        {"speakers": ["other_speaker", "second_modelname"],
         "dialogue": [{"id": "other_speaker", "text": "Hi"}, {"id": "second_modelname", "text": "Hi back"}]},
    ],
}
PARLAI_ONBOARDING = {
    "is_onboarding": True,
    "speakers_to_eval": ["model_1", "model_2"],
    "correct_answer": "model_2",
    "tags": ["onboarding0000"],
    "dialogue_dicts": [
        {"speakers": ["model_1", "human_evaluator"],
         "dialogue": [{"id": "human_evaluator", "text": "(INCORRECT CHOICE) Lorem ipsum"},
                      {"id": "model_1", "text": "Ut enim ad minim veniam"}]},
        {"speakers": ["model_2", "human_evaluator"],
         "dialogue": [{"id": "model_2", "text": "(CORRECT CHOICE) Lorem ipsum"},
                      {"id": "human_evaluator", "text": "Ut enim ad minim veniam"}]},
    ],
}


def test_parlai_style_lines_are_accepted(tmp_path):
    path = tmp_path / "parlai_pairings.jsonl"
    path.write_text(json.dumps(PARLAI_ONBOARDING) + "\n" + json.dumps(PARLAI_LINE) + "\n")
    assert [p["is_onboarding"] for p in P.read_pairings(path)] == [True, False]


def _mutate(path_in_obj, value):
    obj = json.loads(json.dumps(PARLAI_LINE))
    target = obj
    for key in path_in_obj[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path_in_obj[-1]]
    else:
        target[path_in_obj[-1]] = value
    return obj


BAD = [
    (("is_onboarding",), KeyError, "is_onboarding"),
    (("speakers_to_eval",), ["only_one"], "speakers_to_eval"),
    (("speakers_to_eval",), ["second_modelname", "first_modelname"], "speakers_to_eval"),
    (("dialogue_ids",), KeyError, "dialogue_ids"),
    (("dialogue_ids",), [3, 3], "dialogue_ids"),
    (("dialogue_dicts",), [], "dialogue_dicts"),
    (("dialogue_dicts", 1, "speakers"), KeyError, "dialogue_dicts[1].speakers"),
    (("dialogue_dicts", 0, "dialogue", 1, "text"), 7, "dialogue_dicts[0].dialogue[1]"),
    (("dialogue_dicts", 0, "dialogue", 1, "id"), "first_modelname", "dialogue_dicts[0].dialogue[1].id"),
    (("dialogue_dicts", 1, "dialogue", 0, "id"), "stranger", "dialogue_dicts[1].dialogue[0].id"),
    (("is_onboarding",), True, "correct_answer"),
]


@pytest.mark.parametrize("where,value,field_name", BAD)
def test_bad_lines_name_line_and_field(tmp_path, where, value, field_name):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(PARLAI_LINE) + "\n\n" + json.dumps(_mutate(where, value)) + "\n")
    with pytest.raises(UserError) as info:
        P.read_pairings(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: field '{field_name}'"), message


def test_unreadable_pairings_files(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        P.read_pairings(tmp_path / "none.jsonl")
    (tmp_path / "junk.jsonl").write_text("{not json\n")
    with pytest.raises(UserError, match=r"junk.jsonl:1: not valid JSON"):
        P.read_pairings(tmp_path / "junk.jsonl")


def test_default_onboarding_set():
    gold = P.read_onboarding()
    assert len(gold) >= 4
    assert {p["speakers_to_eval"].index(p["correct_answer"]) for p in gold} == {0, 1}
    for pair in gold:
        weak = pair["dialogue_dicts"][1 - pair["speakers_to_eval"].index(pair["correct_answer"])]
        strong = pair["dialogue_dicts"][pair["speakers_to_eval"].index(pair["correct_answer"])]
        weak_words = {w for t in weak["dialogue"] if t["id"] != P.OTHER_SPEAKER for w in t["text"].lower().split()}
        strong_words = {w for t in strong["dialogue"] if t["id"] != P.OTHER_SPEAKER for w in t["text"].lower().split()}
        assert len(strong_words) > 3 * len(weak_words)  # generic or repetitive vs. engaging


def _parlai_runner(pairings_path):
    """ParlAI's own AcuteEvalRunner with its real blueprint arguments, minus Mephisto's TaskRun."""
    from omegaconf import OmegaConf
    from parlai.crowdsourcing.tasks.acute_eval.acute_eval_blueprint import AcuteEvalBlueprintArgs
    from parlai.crowdsourcing.tasks.acute_eval.acute_eval_runner import AcuteEvalRunner

    runner = object.__new__(AcuteEvalRunner)  # __init__ needs a live Mephisto TaskRun
    runner.args = OmegaConf.create({"blueprint": OmegaConf.structured(
        AcuteEvalBlueprintArgs(pairings_filepath=str(pairings_path), subtasks_per_unit=4))})
    runner.onboarding_tasks, runner.desired_tasks, runner.worker_data = [], [], {}
    runner.task_queue = queue.Queue()
    random.seed(runner.args.blueprint.random_seed)  # as AcuteEvalRunner.__init__ does
    runner._load_conversation_data()
    runner._setup_task_queue()
    return runner


def test_our_file_loads_in_parlai_acute_eval_runner(tmp_path):
    assert parlai_acute.__version__  # compat installed before the mephisto import
    a = write_log(tmp_path / "a.jsonl", 6, ["A", "A"], "a")
    b = write_log(tmp_path / "b.jsonl", 5, ["human", "B"], "b")
    out = tmp_path / "pairings.jsonl"
    assert main(["acute", "pairings", f"A={a}", f"B={b}", "-o", str(out), "-n", "8"]) == 0
    runner = _parlai_runner(out)
    assert len(runner.onboarding_tasks) == len(P.read_onboarding())
    assert len(runner.desired_tasks) == 8
    for task in runner.desired_tasks:
        spec, pair = task["task_specs"], task["pairing_dict"]
        shown = {spec["model_left"]["name"]: spec["model_left"]["dialogue"],
                 spec["model_right"]["name"]: spec["model_right"]["dialogue"]}
        assert shown == {"A": pair["dialogue_dicts"][0]["dialogue"], "B": pair["dialogue_dicts"][1]["dialogue"]}
    # ParlAI hands a worker tasks without repeating a conversation
    tasks = runner._poll_task_queue("worker-1", [])
    ids = [d for t in tasks for d in t["pairing_dict"]["dialogue_ids"]]
    assert tasks and len(ids) == len(set(ids))


def test_parlai_runner_and_our_validator_reject_the_same_order_error(tmp_path):
    swapped = dict(PARLAI_LINE, speakers_to_eval=["second_modelname", "first_modelname"])
    path = tmp_path / "swapped.jsonl"
    path.write_text(json.dumps(swapped) + "\n")
    with pytest.raises(AssertionError):
        _parlai_runner(path)
    with pytest.raises(UserError, match="speakers_to_eval"):
        P.read_pairings(path)


# ----------------------------------------------------------------------------- CLI


def test_cli_end_to_end(tmp_path, capsys):
    a = write_log(tmp_path / "a.jsonl", 6, ["GenericBot", "GenericBot"], "a")
    b = write_log(tmp_path / "b.jsonl", 4, ["safeLocalHuman", "smol"], "b")
    h = write_log(tmp_path / "h.jsonl", 5, ["human_1", "human_2"], "h")
    out = tmp_path / "out" / "pairings.jsonl"
    argv = ["acute", "pairings", f"generic={a}", f"smol={b}", f"human={h}", "-o", str(out), "-n", "8", "--seed", "3"]
    assert main(argv) == 0
    assert "5 onboarding + 24 comparisons" in capsys.readouterr().out
    lines = P.read_pairings(out)
    assert Counter(tuple(p["speakers_to_eval"]) for p in lines if not p["is_onboarding"]) == {
        ("generic", "smol"): 8, ("generic", "human"): 8, ("smol", "human"): 8}
    for p in lines[5:]:  # ids are "<model>:<line of its log>", the same whatever the seed or model set
        for name, uid, dd in zip(p["speakers_to_eval"], p["dialogue_ids"], p["dialogue_dicts"]):
            line = int(uid.split(":")[1])
            assert uid == dd["id"] == f"{name}:{line}" and dd["source"].endswith(f".jsonl:{line}")
    meta = json.loads((tmp_path / "out" / "pairings.metadata.json").read_text())
    assert meta["seed"] == 3 and meta["parlai_acute_version"] == parlai_acute.__version__
    assert [m["conversations"] for m in meta["models"]] == [6, 4, 5]
    first = out.read_bytes()
    # never overwrite without --force; the same seed gives the same file
    assert main(argv) == 2
    assert "--force" in capsys.readouterr().err and out.read_bytes() == first
    assert main(argv + ["--force"]) == 0 and out.read_bytes() == first
    assert main(argv[:-1] + ["4", "--force"]) == 0 and out.read_bytes() != first


def test_cli_onboarding_options(tmp_path):
    a = write_log(tmp_path / "a.jsonl", 3, ["x", "x"])
    b = write_log(tmp_path / "b.jsonl", 3, ["y", "y"])
    parlai_onboarding = tmp_path / "onboarding.json"
    parlai_onboarding.write_text(json.dumps(PARLAI_ONBOARDING, indent=4))  # ParlAI's file is one indented object
    out = tmp_path / "p.jsonl"
    assert main(["acute", "pairings", f"a={a}", f"b={b}", "-o", str(out), "-n", "3",
                 "--onboarding", str(parlai_onboarding)]) == 0
    lines = P.read_pairings(out)
    assert lines[0]["correct_answer"] == "model_2" and len(lines) == 4
    assert main(["acute", "pairings", f"a={a}", f"b={b}", "-o", str(out), "-n", "3", "--no-onboarding", "--force"]) == 0
    assert not any(p["is_onboarding"] for p in P.read_pairings(out))


@pytest.mark.parametrize("args,message", [
    (["a={dir}/a.jsonl", "b={dir}/missing.jsonl"], "missing.jsonl does not exist"),
    (["a={dir}/a.jsonl", "b="], "not NAME=PATH"),
    (["a={dir}/a.jsonl"], "at least two models"),
    (["a={dir}/a.jsonl", "a={dir}/a.jsonl"], "given twice"),
    (["a={dir}/a.jsonl", "b={dir}/a.jsonl", "-n", "10"], "fewer than --comparisons-per-pair 10"),
    (["a={dir}/a.jsonl", "b={dir}/bad.jsonl"], "bad.jsonl:1: speakers do not alternate"),
])
def test_cli_user_errors(tmp_path, capsys, args, message):
    write_log(tmp_path / "a.jsonl", 3, ["x", "x"])
    write_jsonl(tmp_path / "bad.jsonl", [conversation(["h", "h", "m"])])
    argv = ["acute", "pairings"] + [s.format(dir=tmp_path) for s in args] + ["-o", str(tmp_path / "p.jsonl")]
    if "-n" not in args:
        argv += ["-n", "2"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "p.jsonl").exists()


# ----------------------------------------------------------------------------- real self-chat logs


@pytest.fixture(scope="module")
def real_self_chats(tmp_path_factory):
    """Logs written by our real `parlai-acute self-chat` (ParlAI worlds, GenericBot and ParlAI's repeat_query)."""
    root = tmp_path_factory.mktemp("selfchats")
    common = ["-n", "4", "--max-turns", "3", "--no-progress", "--datapath", str(root / "data")]
    bot = "parlai_acute.agents.generic_bot:GenericBotAgent"
    assert main(["self-chat", "-m", bot, "-o", str(root / "generic.jsonl")] + common) == 0
    assert main(["self-chat", "-m", bot, "-p", "repeat_query", "-o", str(root / "mixed.jsonl")] + common) == 0
    return root


def test_real_self_chat_logs(real_self_chats, tmp_path):
    generic, mixed = real_self_chats / "generic.jsonl", real_self_chats / "mixed.jsonl"
    assert P.log_metadata(generic)["self_chat"] is True
    # distinct ids (GenericBot_1/_2) but one model: the metadata makes it a self-chat
    sides = {d.turns[0]["id"] for seed in range(6)
             for d in P.load_dialogues(P.ModelLog("g", str(generic)), self_chat_side="random", seed=seed)}
    assert sides == {"g", P.OTHER_SPEAKER}
    # two different models in one self-chat: the user must say which side
    with pytest.raises(UserError, match="self-chat of two different models.*:first or :second"):
        P.load_dialogues(P.ModelLog("rq", str(mixed)))
    out = tmp_path / "p.jsonl"
    assert main(["acute", "pairings", f"generic={generic}", f"rq={mixed}:second", "-o", str(out), "-n", "4"]) == 0
    rq_dialogues = [p["dialogue_dicts"][1]["dialogue"] for p in P.read_pairings(out) if not p["is_onboarding"]]
    # RepeatQuery repeats its partner: every "rq" turn equals the turn before it
    assert all(d[i]["text"] == d[i - 1]["text"] for d in rq_dialogues for i, t in enumerate(d) if t["id"] == "rq")
    assert len(_parlai_runner(out).desired_tasks) == 4


def test_self_chat_with_one_id_needs_whole_turn_pairs(tmp_path):
    row = conversation(["bot", "bot"])
    row["dialog"][1] = row["dialog"][1][:1]  # a lone turn in the middle shifts every later side
    write_jsonl(tmp_path / "broken.jsonl", [conversation(["bot", "bot"]), row])
    with pytest.raises(UserError, match=r"broken.jsonl:2: a turn pair of this self-chat has not two turns"):
        P.load_dialogues(P.ModelLog("m", str(tmp_path / "broken.jsonl")))


def test_unseeded_side_skips_the_human_written_opening(real_self_chats, tmp_path):
    generic = str(real_self_chats / "generic.jsonl")
    raw = [json.loads(line) for line in open(generic, encoding="utf-8")]
    seeded_first = ["seed" in row["dialog"][0][0] for row in raw]
    assert all(seeded_first)  # our chitchat self-chats open with a dataset line
    for d in P.load_dialogues(P.ModelLog("g", generic), self_chat_side="unseeded"):
        assert d.turns[0]["id"] == P.OTHER_SPEAKER and d.turns[1]["id"] == "g"
    # without seeded turns it falls back to a random side per conversation
    plain = write_log(tmp_path / "plain.jsonl", 30, ["bot", "bot"])
    sides = {d.turns[0]["id"] for d in P.load_dialogues(P.ModelLog("b", plain, "unseeded"))}
    assert sides == {"b", P.OTHER_SPEAKER}


def test_normalize_cleans_tokenised_text_like_fast_eval(tmp_path):
    row = {"dialog": [[{"id": "human", "text": "hi there ! how are you ?"}, {"id": "bot", "text": "i am fine , thanks ."}]]}
    write_jsonl(tmp_path / "tok.jsonl", [row])
    (raw,) = P.load_dialogues(P.ModelLog("m", str(tmp_path / "tok.jsonl")))
    (clean,) = P.load_dialogues(P.ModelLog("m", str(tmp_path / "tok.jsonl")), normalize=True)
    assert raw.turns[1]["text"] == "i am fine , thanks ."
    assert clean.turns[1]["text"] == "I am fine, thanks."


def test_default_side_never_credits_a_model_with_the_seeded_opening(real_self_chats, tmp_path, capsys):
    """`acute pairings` with no --self-chat-side: the judged speaker is the one who did not speak the seed."""
    generic = real_self_chats / "generic.jsonl"
    raw = [json.loads(line) for line in open(generic, encoding="utf-8")]
    seed_texts = {turn["text"] for row in raw for pair in row["dialog"] for turn in pair if "seed" in turn}
    assert seed_texts
    out = tmp_path / "p.jsonl"
    assert main(["acute", "pairings", f"g={generic}", f"h={generic}", "-o", str(out), "-n", "4", "--no-onboarding"]) == 0
    assert capsys.readouterr().err == ""  # two self-chats: nothing to warn about
    for line in P.read_pairings(out):
        for name, dd in zip(line["speakers_to_eval"], line["dialogue_dicts"]):
            judged = [t["text"] for t in dd["dialogue"] if t["id"] == name]
            assert judged and not seed_texts & set(judged)
    assert json.loads((tmp_path / "p.metadata.json").read_text())["self_chat_side"] == "unseeded"


def test_unseeded_side_is_the_one_with_fewer_seed_turns(tmp_path):
    """Openings of 1-3 dataset turns: with 3, side one spoke two of them, so side two is judged."""
    rows = []
    for k in range(20):
        row = conversation(["bot", "bot"], tag=f"s{k}")
        for i in range(3):
            row["dialog"][i // 2][i % 2]["seed"] = True
        rows.append(row)
    write_jsonl(tmp_path / "three_seeds.jsonl", rows)
    for d in P.load_dialogues(P.ModelLog("b", str(tmp_path / "three_seeds.jsonl"))):
        assert [t["id"] for t in d.turns[:2]] == [P.OTHER_SPEAKER, "b"]


def test_warns_once_when_a_human_model_log_meets_self_chats(tmp_path, capsys):
    selfchat = write_log(tmp_path / "self.jsonl", 4, ["GenericBot", "GenericBot"], "a")
    human_model = write_log(tmp_path / "hm.jsonl", 4, ["safeLocalHuman", "smol"], "b")
    human_human = write_log(tmp_path / "hh.jsonl", 4, ["human_1", "human_2"], "h")
    out = tmp_path / "p.jsonl"
    assert main(["acute", "pairings", f"generic={selfchat}", f"smol={human_model}", f"human={human_human}",
                 "-o", str(out), "-n", "3"]) == 0
    err = capsys.readouterr().err.strip()
    # 4 conversations for 6 comparisons each: the reuse warning is a line of its own
    err = "\n".join(line for line in err.splitlines() if "conversations are reused" not in line)
    assert len(err.splitlines()) == 1
    assert err.startswith("parlai-acute: warning: smol talked to people") and "generic" in err
    assert "human," not in err and "human " not in err.split("but")[1]  # human-human logs are not self-chats
    # like with like: no warning
    assert main(["acute", "pairings", f"generic={selfchat}", f"human={human_human}", "-o", str(out), "-n", "3",
                 "--force"]) == 0
    assert capsys.readouterr().err == ""


def test_pairings_take_conversations_per_model_and_warn_when_they_are_reused(tmp_path, capsys):
    from parlai_acute.scripts.main import main

    a = write_log(tmp_path / "a.jsonl", 30, ["bot_a", "human"], tag="a")
    b = write_log(tmp_path / "b.jsonl", 30, ["bot_b", "human"], tag="b")
    args = ["acute", "pairings", f"a={a}:bot_a", f"b={b}:bot_b", "-n", "20", "--no-onboarding"]
    assert main(args + ["-o", str(tmp_path / "all.jsonl")]) == 0
    assert "reused" not in capsys.readouterr().err  # 30 conversations for 20 comparisons: each used once
    assert main(args + ["-o", str(tmp_path / "ten.jsonl"), "--num-conversations", "10"]) == 0
    captured = capsys.readouterr()
    assert "conversations are reused: a 10 for 20 comparisons (about 2.0 uses each)" in captured.err
    lines = [json.loads(x) for x in (tmp_path / "ten.jsonl").read_text().splitlines()]
    assert len({ln["dialogue_ids"][0] for ln in lines}) == 10
    twelve = ["acute", "pairings", f"a={a}:bot_a", f"b={b}:bot_b", "-n", "12", "--no-onboarding"]
    assert main(twelve + ["-o", str(tmp_path / "four.jsonl"), "--num-conversations", "4"]) == 0
    assert "fewer than 6 conversations: no comparison of them can carry a mark" in capsys.readouterr().err
    assert main(args + ["-o", str(tmp_path / "many.jsonl"), "--num-conversations", "40"]) == 2
    assert "fewer than --num-conversations 40" in capsys.readouterr().err
