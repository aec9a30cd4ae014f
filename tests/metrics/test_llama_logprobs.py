"""llama.cpp's batched log-probabilities give the Hugging Face wrapper's numbers on the same GGUF.

The model is the embedded SmolLM2 GGUF cut to its first layers and written in float32 (with the
gguf package, here): both engines then compute in float32, so any difference beyond rounding
is a wrong token, position, shared prefix or softmax. (On the 4-bit file itself llama.cpp also
quantises activations, an engine difference of about 0.05 nats per token, not tested here.)
"""
from __future__ import annotations

import numpy as np
import pytest

CONTEXTS = [
    ["Hi! I love hiking in the mountains with my dog.", "That sounds fun. Where do you usually go?",
     "Mostly the Alps in summer. Do you have pets?"],
    ["Hi! I love hiking in the mountains with my dog."],  # a prefix of the first: cells kept, the rest dropped
    ["What did you cook for dinner yesterday?"],
]
REPLIES = ["Yes, I have two cats.", "No, but I would like a parrot someday!", "I live in the city.", "ok", ""]
LAYERS = 4


def _float32_gguf(source: str, target: str, layers: int) -> None:
    """``source`` with only its first ``layers`` blocks, every tensor dequantised to float32."""
    import gguf

    reader = gguf.GGUFReader(source)
    arch = reader.fields["general.architecture"]
    arch_name = bytes(arch.parts[arch.data[0]]).decode()
    writer = gguf.GGUFWriter(target, arch=arch_name)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        kind = field.types[0]
        if name == f"{arch_name}.block_count":
            writer.add_key_value(name, layers, kind)
        elif kind == gguf.GGUFValueType.ARRAY:
            sub = field.types[-1]
            values = [bytes(field.parts[i]) if sub == gguf.GGUFValueType.STRING else field.parts[i].tolist()[0]
                      for i in field.data]
            writer.add_key_value(name, values, kind, sub_type=sub)
        elif kind == gguf.GGUFValueType.STRING:
            writer.add_key_value(name, bytes(field.parts[field.data[0]]), kind)
        else:
            writer.add_key_value(name, field.parts[field.data[0]].tolist()[0], kind)
    for tensor in reader.tensors:
        if tensor.name.startswith("blk.") and int(tensor.name.split(".")[1]) >= layers:
            continue
        writer.add_tensor(tensor.name, gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.fixture(scope="module")
def small_gguf(tmp_path_factory, gguf_path):
    path = tmp_path_factory.mktemp("smollm2_f32") / f"smollm2-{LAYERS}-layers-f32.gguf"
    _float32_gguf(gguf_path, str(path), LAYERS)
    return str(path)


def test_llama_cpp_gives_the_hugging_face_numbers_on_the_same_gguf(small_gguf):
    from parlai_acute.agents.hf_transformers import HfModel
    from parlai_acute.agents.llama_logprobs import LlamaScorer

    torch_model, llama = HfModel(small_gguf), LlamaScorer(small_gguf)
    assert llama._end_ids == torch_model._end_ids and llama.chat_template == torch_model.chat_template
    for context in CONTEXTS:
        assert llama.prompt(context).ids == torch_model.prompt(context).ids
        expected = torch_model.score_replies(context, REPLIES, "", with_end=True)
        got = llama.score_replies(context, REPLIES, "", with_end=True)
        for (want, want_sum), (have, have_sum) in zip(expected, got):
            assert len(have) == len(want) >= 1
            assert abs(have_sum - want_sum) / len(want) < 1e-3  # nats per token
            assert np.max(np.abs(np.array(have) - np.array(want))) < 1e-3
        # without the end token: the same numbers less the last one
        plain = llama.score_replies(context, REPLIES[:1], "", with_end=False)[0][0]
        assert plain == pytest.approx(got[0][0][:-1], abs=1e-4)


def test_the_gguf_agent_ranks_through_llama_cpp_without_torch_weights(small_gguf):
    from parlai.core.params import ParlaiParser

    from parlai_acute.agents.hf_transformers import HfTransformersAgent, _Once
    from parlai_acute.metrics.inputs import Item
    from parlai_acute.metrics.ranking import RankConfig, rank, scorer_of

    parser = ParlaiParser(False, False)
    HfTransformersAgent.add_cmdline_args(parser)
    agent = HfTransformersAgent(parser.parse_args(["--hf-model", small_gguf]))
    items = [Item(str(k), c, [r]) for k, (c, r) in enumerate(zip(CONTEXTS, REPLIES))]
    score_fn, described = scorer_of(agent, with_end=True)
    table, summary = rank(items, score_fn, RankConfig(candidates=3, bootstrap=50))
    assert described["engine"] == "llama.cpp" and described["vocab"] > 40000
    assert isinstance(agent._hf, _Once) and agent._hf._value is None  # no torch weights were loaded
    gold = [agent.score_reply(item.context, item.reference, with_end=True) for item in items]
    assert table["gold_logprob"].tolist() == pytest.approx([s for _, s in gold], abs=1e-6)
    assert table["gold_tokens"].tolist() == [len(lp) for lp, _ in gold]
    assert summary["contexts"] == 3


def test_hf_scorer_llama_cpp_needs_a_gguf_file(tiny_gpt2):
    from parlai.core.params import ParlaiParser

    from parlai_acute.agents.hf_transformers import HfTransformersAgent
    from parlai_acute.errors import UserError

    parser = ParlaiParser(False, False)
    HfTransformersAgent.add_cmdline_args(parser)
    with pytest.raises(UserError, match="hf_scorer llama.cpp needs a .gguf file"):
        HfTransformersAgent(parser.parse_args(["--hf-model", tiny_gpt2, "--hf-scorer", "llama.cpp"]))


def test_a_gguf_judge_reads_label_probabilities_through_llama_cpp(small_gguf):
    """A transformers judge on a GGUF file answers from label log-probabilities through
    llama.cpp: the torch weights are never loaded (asking for the judge's backend used to load
    them), and the numbers are torch's on the same weights within 1e-3 nats per token."""
    from parlai_acute.agents.hf_transformers import HfModel, _Once
    from parlai_acute.agents.turn_agent import USER
    from parlai_acute.judges.model import PREFILL, JudgeModel, Request

    judge = JudgeModel(f"-m parlai_acute.agents.hf_transformers:HfTransformersAgent --hf-model {small_gguf}")
    assert judge.backend == "transformers" and judge.config["weights"] == small_gguf
    request = Request(system="You compare two conversations.", user="Which speaker is more engaging, 1 or 2?",
                      key="k")
    reply = judge._label_logprobs(request, ["1", "2"])
    assert isinstance(judge.agent._hf, _Once) and judge.agent._hf._value is None  # torch never loaded
    expected = HfModel(small_gguf).score_replies([(USER, request.user)], [f"{PREFILL} 1", f"{PREFILL} 2"],
                                                 request.system)
    for label, (tokens, total) in zip(["1", "2"], expected):
        assert abs(reply.label_logprobs[label] - total) / len(tokens) < 1e-3
    assert reply.label_logprobs["1"] != reply.label_logprobs["2"]


def test_a_reply_longer_than_the_first_cache_is_scored_as_torch_scores_it(small_gguf):
    """A candidate of more tokens than the cache first holds (a real 34,641-character turn of the
    static contexts is 7,144 tokens) made llama_decode fail, and the prompt was cut to one token to
    make room for it. The cache grows instead, the context is kept, and the numbers are torch's."""
    from parlai_acute.agents.hf_transformers import HfModel
    from parlai_acute.agents.llama_logprobs import CONTEXT_CELLS, LlamaScorer

    llama, torch_model = LlamaScorer(small_gguf), HfModel(small_gguf)
    words = "we walked along the river and talked about the game , the weather and our plans".split()
    long_reply = " ".join(words[k % len(words)] for k in range(CONTEXT_CELLS + 300))
    replies = [REPLIES[0], long_reply]
    assert len(llama.targets([long_reply], True)[0]) > CONTEXT_CELLS
    context = CONTEXTS[0]
    got = llama.score_replies(context, replies, "", with_end=True)
    expected = torch_model.score_replies(context, replies, "", with_end=True)
    for (want, want_sum), (have, have_sum) in zip(expected, got):
        assert len(have) == len(want)
        assert abs(have_sum - want_sum) / len(want) < 1e-3
    alone = llama.score_replies(context, replies[:1], "", with_end=True)[0]
    assert got[0][1] == pytest.approx(alone[1], abs=1e-4)  # the short reply kept its whole context
    assert llama.cells > CONTEXT_CELLS


def test_a_reply_longer_than_the_model_context_is_one_line(small_gguf):
    from parlai_acute.agents.llama_logprobs import LlamaScorer
    from parlai_acute.errors import UserError

    llama = LlamaScorer(small_gguf)
    with pytest.raises(UserError, match="does not fit .* context of .* tokens; leave that reply out"):
        llama.logprobs([1, 2, 3], [list(range(5, 5 + llama.max_positions))])
