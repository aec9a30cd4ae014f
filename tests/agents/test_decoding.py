"""The shared decoding strategies as pure functions: options, repetition filter, sample-and-rank."""
import pytest
from parlai.core.message import Message
from parlai.core.params import ParlaiParser

from parlai_acute.agents import decoding
from parlai_acute.agents.decoding import Candidate, DecodingConfig
from parlai_acute.errors import UserError


def parse(*args):
    parser = ParlaiParser(False, False)
    decoding.add_decoding_args(parser)
    return parser.parse_args(list(args))


def test_options_parse_into_config_with_meena_settings():
    cfg = DecodingConfig.from_opt(parse("--inference", "sample_rank", "--num-samples", "20", "--temperature", "0.88",
                                        "--topp", "1", "--topk", "0", "--rank-by", "mean_logprob",
                                        "--repetition-filter", "off", "--seed", "7"))
    assert (cfg.inference, cfg.num_samples, cfg.temperature, cfg.topp, cfg.topk) == ("sample_rank", 20, 0.88, 1.0, 0)
    assert cfg.rank_by == "mean_logprob" and cfg.repetition_filter is False and cfg.seed == 7
    assert cfg.n_candidates == 20 and not cfg.greedy


def test_single_sample_modes_need_one_candidate():
    assert DecodingConfig.from_opt(parse("--inference", "sample", "--num-samples", "9")).n_candidates == 1
    greedy = DecodingConfig.from_opt(parse("--inference", "greedy"))
    assert greedy.n_candidates == 1 and greedy.greedy


def test_adding_options_twice_is_harmless():
    parser = ParlaiParser(False, False)
    decoding.add_decoding_args(parser)
    decoding.add_decoding_args(parser)
    assert parser.parse_args(["--topk", "5"])["topk"] == 5


@pytest.mark.parametrize("key,value", [
    ("temperature", -0.1), ("topp", 0.0), ("topp", 1.5), ("topk", -1), ("num_samples", 0), ("max_new_tokens", 0),
    ("repetition_threshold", 0.0), ("repetition_min_words", 0), ("inference", "beam"), ("rank_by", "length"),
    ("repetition_filter", "maybe"),
])
def test_bad_option_values_are_one_line_user_errors_naming_the_option(key, value):
    with pytest.raises(UserError) as err:
        DecodingConfig.from_opt({key: value})
    message = str(err.value)
    assert message.startswith(f"{key} ") and err.value.params == (key,)  # the opt key; the CLI says --{key}
    assert "\n" not in message and ("use" in message)


def test_words_ignore_case_and_punctuation():
    assert decoding.words("Hello, World! It's me.") == ["hello", "world", "it's", "me"]


@pytest.mark.parametrize("a,b,n", [
    ("a b c d", "a x b y d", 3), ("", "a b", 0), ("a b c", "c b a", 1), ("x y", "x y", 2),
])
def test_lcs_length(a, b, n):
    assert decoding.lcs_length(a.split(), b.split()) == n
    assert decoding.lcs_length(b.split(), a.split()) == n


def test_repetition_filter_drops_an_echo_of_an_earlier_turn():
    history = ["I walked my little dog in the park this morning.", "Oh nice, what breed is it?"]
    cands = [Candidate("I walked my little dog in the park this morning!", -1.0, 10),
             Candidate("It is a beagle and he loves squirrels.", -9.0, 9)]
    decoding.mark_repetitions(cands, history, threshold=0.8, min_words=4)
    assert cands[0].filtered and cands[0].overlap == 1.0 and "10 words" in cands[0].reason
    assert not cands[1].filtered and cands[1].overlap < 0.8


def test_short_replies_and_scattered_common_words_are_not_repeats():
    history = ["I think that it is a good idea to go to the beach and I like it a lot"]
    cands = [Candidate("ok", -1, 1), Candidate("I like it", -1, 3), Candidate("Is it a good book to read?", -1, 7)]
    decoding.mark_repetitions(cands, history, threshold=0.8, min_words=4)
    assert [c.filtered for c in cands] == [False, False, False]


def test_sample_and_rank_keeps_the_most_probable_unfiltered_candidate():
    cfg = DecodingConfig(inference="sample_rank", num_samples=4)
    history = ["what do you like to do on weekends"]
    cands = [Candidate("I like hiking in the hills", -6.0, 6),
             Candidate("what do you like to do on weekends", -0.5, 8),  # most probable, but an echo
             Candidate("Mostly reading novels", -4.0, 3),
             Candidate("I go fishing with my dad and brother every single week", -5.0, 11)]
    choice = decoding.choose(cands, history, cfg)
    assert choice.index == 2 and not choice.fallback
    assert [c.filtered for c in cands] == [False, True, False, False]
    # ranking by mean log-prob prefers the long fluent candidate instead
    mean = decoding.choose(cands, history, DecodingConfig(inference="sample_rank", rank_by="mean_logprob"))
    assert mean.index == 3


def test_without_the_filter_the_echo_wins():
    cands = [Candidate("what do you like to do on weekends", -0.5, 8), Candidate("Mostly reading", -4.0, 2)]
    choice = decoding.choose(cands, ["what do you like to do on weekends"], DecodingConfig(repetition_filter=False))
    assert choice.index == 0 and not cands[0].filtered and cands[0].overlap == 1.0


def test_fallback_when_every_candidate_is_filtered():
    history = ["my cat likes to sleep on the warm windowsill all day"]
    cands = [Candidate("my cat likes to sleep on the warm windowsill all day", -1.0, 11),
             Candidate("my cat likes to sleep on the windowsill", -3.0, 8),
             Candidate("", -0.1, 1)]
    choice = decoding.choose(cands, history, DecodingConfig(inference="sample_rank"))
    assert all(c.filtered for c in cands) and cands[2].reason == "empty"
    assert choice.fallback and choice.index in (0, 1) and choice.chosen.text  # never the empty one
    # equal overlaps (both 1.0): the better score wins
    assert choice.index == 0


def test_empty_candidates_are_never_chosen_over_text():
    choice = decoding.choose([Candidate("", -0.1, 1), Candidate("hi there", -5.0, 2)], [], DecodingConfig())
    assert choice.index == 1 and not choice.fallback


def test_choose_rejects_no_candidates():
    with pytest.raises(ValueError):
        decoding.choose([], [], DecodingConfig())


def test_package_records_every_candidate_and_the_choice():
    cfg = DecodingConfig(inference="sample_rank", num_samples=2, seed=3)
    cands = [Candidate("hello there", -2.0, 2, extra={"finish_reason": "stop"}), Candidate("hi", -1.0, 1)]
    choice = decoding.choose(cands, [], cfg)
    act = Message({"id": "bot", "text": "old", "episode_done": False})
    decoding.package(act, choice, cfg, extra={"model": "m.gguf"})
    assert act["text"] == "hi"
    assert [c["text"] for c in act["candidates"]] == ["hello there", "hi"]
    assert [c["chosen"] for c in act["candidates"]] == [False, True]
    assert act["candidates"][0]["score"] == -2.0 and act["candidates"][0]["finish_reason"] == "stop"
    assert act["candidates"][0]["mean_logprob"] == -1.0
    rec = act["decoding"]
    assert rec["inference"] == "sample_rank" and rec["seed"] == 3 and rec["chosen"] == 1
    assert rec["fallback"] is False and rec["num_filtered"] == 0 and rec["model"] == "m.gguf"
    assert rec["repetition_filter"] == "on"


def test_decode_asks_the_model_for_n_candidates():
    asked = []

    def generate(n):
        asked.append(n)
        return [Candidate(f"reply {i}", -float(i), 2) for i in range(n)]

    choice = decoding.decode(generate, [], DecodingConfig(inference="sample_rank", num_samples=5))
    assert asked == [5] and choice.chosen.text == "reply 0"


def test_sample_seeds_are_reproducible_and_distinct():
    a = [decoding.sample_seed(0, "conversation", i) for i in range(20)]
    assert a == [decoding.sample_seed(0, "conversation", i) for i in range(20)]
    assert len(set(a)) == 20 and all(0 <= s < 2 ** 31 for s in a)
    assert decoding.sample_seed(1, "conversation", 0) != a[0]
    assert decoding.sample_seed(0, "other", 0) != a[0]


@pytest.mark.parametrize("text,expected", [
    ("I love painting. What kind of art are you interested", "I love painting."),
    ("Really? Tell me", "Really?"),
    ('He said "hi." And then', 'He said "hi."'),
    ("Hello there!", "Hello there!"),  # finished: unchanged
    ("no sentence end at all", "no sentence end at all"),  # nothing better to keep
    ("I met Dr. Smith yesterday and", "I met Dr. Smith yesterday and"),  # an abbreviation is no sentence end
])
def test_trim_unfinished(text, expected):
    from parlai_acute.agents.decoding import trim_unfinished

    assert trim_unfinished(text) == expected


def test_only_candidates_stopped_by_the_budget_are_trimmed():
    from parlai_acute.agents.decoding import Candidate, DecodingConfig, choose

    config = DecodingConfig(inference="sample_rank", num_samples=3, max_new_tokens=10)
    cut = Candidate("Nice. And what", score=-1.0, num_tokens=10)
    ended = Candidate("Nice. And what", score=-2.0, num_tokens=6)  # stopped by itself: left alone
    by_reason = Candidate("Sure. I", score=-3.0, num_tokens=3, extra={"finish_reason": "length"})
    choice = choose([cut, ended, by_reason], [], config)
    assert (cut.text, cut.truncated, cut.trimmed, cut.extra["untrimmed"]) == ("Nice.", True, True, "Nice. And what")
    assert (ended.text, ended.truncated, ended.trimmed) == ("Nice. And what", False, False)
    assert (by_reason.text, by_reason.trimmed) == ("Sure.", True)
    assert choice.chosen is cut


def test_no_trim_that_would_turn_a_reply_into_a_repeat():
    from parlai_acute.agents.decoding import Candidate, DecodingConfig, choose

    config = DecodingConfig(inference="greedy", max_new_tokens=8)
    history = ["A great start to a tale.", "Tell me more."]
    cand = Candidate("A great start to a tale. The life of a vampire is", num_tokens=8)
    choose([cand], history, config)
    assert cand.truncated and not cand.trimmed and cand.text.endswith("vampire is")
    assert cand.extra["untrimmed_reason"] == "trimming would leave only a repeat of an earlier turn"


def test_a_budget_cut_reply_is_trimmed_or_says_why_not():
    """Issue 25: budget-cut replies in a self-chat log ended mid-sentence with ``trimmed: false`` and no reason."""
    from parlai_acute.agents.decoding import Candidate, Choice, DecodingConfig, choose, package

    config = DecodingConfig(inference="sample_rank", num_samples=3, max_new_tokens=10)
    one = Candidate("My favourite is the clown (Laughing Gas Lola LaRosa) might", score=-1.0, num_tokens=10)
    done = Candidate("I like clowns a lot.", score=-2.0, num_tokens=10)  # the budget ran out at a sentence end
    cut = Candidate("I like clowns. They are", score=-3.0, num_tokens=10)
    choice = choose([one, done, cut], [], config)
    assert not one.trimmed and one.extra["untrimmed_reason"].startswith("no sentence ends before the cut")
    assert not done.trimmed and "untrimmed_reason" not in done.extra  # nothing unfinished to explain
    assert cut.trimmed and cut.text == "I like clowns." and "untrimmed_reason" not in cut.extra
    for c in (one, done, cut):  # every budget-cut reply: trimmed, ends a sentence, or says why not
        assert c.trimmed or c.text.rstrip().endswith(".") or c.to_dict()["untrimmed_reason"]
    act = package({}, Choice(choice.candidates, 0), config)
    assert act["decoding"]["trimmed"] is False and act["decoding"]["untrimmed_reason"] == one.extra["untrimmed_reason"]
