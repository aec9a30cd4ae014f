"""`ssa generate` with real agents (SmolLM2 GGUF, GenericBot), items from logs, and Meena's
sanity check: GenericBot labelled as people label it comes out sensible but not specific."""
import json

import pytest

from parlai_acute.agents.generic_bot import QUESTION_REPLY, STATEMENT_REPLY
from parlai_acute.errors import UserError
from parlai_acute.scripts.main import main
from parlai_acute.ssa.analysis import SSAConfig, analyze
from parlai_acute.ssa.items import context_id, items_from_log, read_contexts, read_items
from parlai_acute.ssa.labels import labels_table

GENERIC = "generic=parlai_acute.agents.generic_bot:GenericBotAgent"


def test_smollm2_generic_and_human_items_record_their_decoding(tmp_path, gguf_path, capsys):
    out = tmp_path / "items.jsonl"
    smol = f"smol=parlai_acute.agents.llama_cpp:LlamaCppAgent -mf {gguf_path} --max-new-tokens 8"
    assert main(["ssa", "generate", "--model", smol, "--model", GENERIC, "--human", "--num-contexts", "3",
                 "--datapath", str(tmp_path / "data"), "-o", str(out)]) == 0
    items = read_items(out)
    assert [i.model for i in items].count("smol") == 3 and len(items) == 9
    contexts = {context_id(i) for i in items}
    assert len(contexts) == 3
    for item in items:
        assert item.context and all(isinstance(t, str) and t for t in item.context)
        assert item.reply.strip()
    smol_items = [i for i in items if i.model == "smol"]
    assert all(i.extra["decoding"]["max_new_tokens"] == 8 and i.extra["decoding"]["engine"] == "llama.cpp"
               for i in smol_items)
    assert smol_items[0].extra["model_config"]["agent"] == "LlamaCppAgent"
    generic = [i for i in items if i.model == "generic"]
    assert {i.reply for i in generic} <= {QUESTION_REPLY, STATEMENT_REPLY}
    assert "wrote 9 items" in capsys.readouterr().out


def test_sanity_check_generic_bot_is_sensible_but_not_specific(tmp_path):
    """Meena sec. 2.1: people find "I don't know"/"ok" sensible but never specific."""
    out = tmp_path / "items.jsonl"
    assert main(["ssa", "generate", "--model", GENERIC, "--human", "--num-contexts", "40", "-o", str(out),
                 "--datapath", str(tmp_path / "data")]) == 0
    rows = []
    for item in read_items(out):
        for k, worker in enumerate(["w1", "w2", "w3", "w4", "w5"]):
            generic = item.reply in (QUESTION_REPLY, STATEMENT_REPLY)
            # a rule that mimics people: a generic reply makes sense (one worker in five disagrees)
            # but fits any context; a real next turn makes sense and is specific (one in five disagrees)
            sensible = k != (len(item.reply) % 5) if generic else True
            specific = False if generic else k != 0
            rows.append({"item": item.item_id, "model": item.model, "worker": worker, "sensible": sensible,
                         "specific": specific, "context_id": context_id(item), "reply": item.reply})
    result = analyze(labels_table(rows), SSAConfig(bootstrap=300))
    by = result.models.set_index("model")
    assert by.at["generic", "specificity"] < 0.1
    assert by.at["generic", "sensibleness"] - by.at["generic", "specificity"] > 0.5
    assert by.at["human", "ssa"] > by.at["generic", "ssa"]
    pair = result.pairs[(result.pairs["measure"] == "ssa")].iloc[0]
    # the same five workers label every context: about these workers the difference is clear (the test over
    # contexts), but five workers are too few for a verdict about workers in general, so no mark
    assert pair["context_pvalue"] < 0.05 and pair["mark"] == "" and pair["unit"] == "worker x context"
    assert "at least 6 workers are needed for a verdict about the models" in pair["cluster_note"]


def test_items_from_a_log_use_the_turns_before_each_reply(tmp_path):
    log = tmp_path / "chats.jsonl"
    episodes = [
        {"dialog": [[{"id": "human", "text": "Hi!"}, {"id": "bot", "text": "Hello there."}],
                    [{"id": "human", "text": "What do you do?"}, {"id": "bot", "text": "I bake bread."}]]},
        {"dialog": [[{"id": "bot", "text": "Opening line", "seed": True}, {"id": "human", "text": "Oh?"}],
                    [{"id": "bot", "text": "Yes."}, {"id": "human", "text": "Bye"}]]},
    ]
    log.write_text("".join(json.dumps(e) + "\n" for e in episodes))
    items = items_from_log(log, "bot")
    assert [i["reply"] for i in items] == ["Hello there.", "I bake bread.", "Yes."]
    assert items[1]["context"] == ["Hi!", "Hello there.", "What do you do?"]
    assert items[2]["context"] == ["Opening line", "Oh?"] and items[2]["conversation"] == "chats:2"
    assert {i["source"] for i in items} == {"log"}
    with pytest.raises(UserError, match="speaker 'robot' does not appear"):
        items_from_log(log, "robot")
    out = tmp_path / "items.jsonl"
    assert main(["ssa", "generate", "--from-log", str(log), "--speaker", "bot", "--model-name", "baker",
                 "-o", str(out)]) == 0
    assert {i.model for i in read_items(out)} == {"baker"}


def test_bad_contexts_are_one_line_errors_exit_2(tmp_path, capsys):
    bad = tmp_path / "contexts.jsonl"
    bad.write_text(json.dumps({"id": "a", "context": ["Hi"]}) + "\n" + json.dumps({"id": "b", "context": []}) + "\n")
    assert main(["ssa", "generate", "--contexts", str(bad), "--model", GENERIC, "-o", str(tmp_path / "i.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert "contexts.jsonl:2: the context is empty" in err and "\n" not in err
    assert not (tmp_path / "i.jsonl").exists()
    csv_file = tmp_path / "contexts.csv"
    csv_file.write_text("id,context,reference\nx,\"Hi __eou__ How are you?\",Fine\ny,\" \",no\n")
    with pytest.raises(UserError, match=r"contexts.csv:3: the context is empty"):
        read_contexts(csv_file)
    csv_file.write_text("id,context,reference\nx,\"Hi __eou__ How are you?\",Fine\n")
    assert read_contexts(csv_file)[0]["context"] == ["Hi", "How are you?"]
    assert main(["ssa", "generate", "--contexts", str(csv_file), "-o", str(tmp_path / "i.jsonl")]) == 2
    assert "nothing to generate" in capsys.readouterr().err
