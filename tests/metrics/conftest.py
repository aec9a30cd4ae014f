"""Fixtures for the metrics: small test sets written here (never third-party data) and a
tiny randomly initialised GPT-2 saved locally (real transformers, no hub)."""
from __future__ import annotations

import json

import pytest

from metric_samples import DIALOGUES


@pytest.fixture()
def dailydialog_file(tmp_path):
    path = tmp_path / "dd.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DIALOGUES), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory) -> str:
    """A 2-layer GPT-2 with a word-level tokenizer trained here, saved with save_pretrained."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    torch.manual_seed(0)
    words = ("hello how are you today i am fine thank and what do like to on weekends read books walk my dog "
             "have any pets at home yes a cat User: Bot:").split()
    raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.train_from_iterator([" ".join(words)], trainers.WordLevelTrainer(special_tokens=["<pad>", "<unk>", "<s>", "</s>"]))
    raw.decoder = decoders.WordPiece(prefix="##")
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<pad>", unk_token="<unk>", bos_token="<s>",
                                  eos_token="</s>")
    tok.add_tokens(["\n"])
    config = GPT2Config(vocab_size=len(tok), n_positions=256, n_embd=16, n_layer=2, n_head=2,
                        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    path = tmp_path_factory.mktemp("tiny_gpt2")
    GPT2LMHeadModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)
