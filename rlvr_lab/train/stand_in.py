"""A locally saved stand-in for a pretrained model: real architecture, random weights (17.10).

The path a Colab student takes, ``rlvr-lab train --model Qwen/Qwen2.5-Coder-0.5B-Instruct``, loads a hub
model through ``from_pretrained``. Where no hub is reachable (tests, CI, the GPU check) :func:`save_stand_in`
writes a folder that the same ``from_pretrained`` path loads: a small model of a real pretrained family
(``gpt2`` or ``qwen2``, built from its transformers config with the family's usual dropout where the config
has one) and an ordinary byte-level BPE tokenizer trained on the given text, with a ChatML chat template
and ``<|im_end|>`` as end of turn for ``chat=True`` (as the Qwen2.5 instruct models have). Random weights:
it tests the plumbing (dropout, dtype, LoRA, chat template, stop strings, replay), not the learning.
"""

from __future__ import annotations

from collections.abc import Iterable

#: ChatML, the template of the Qwen2.5 instruct models (a system turn is added when the messages have none).
CHATML = (
    "{% if messages[0]['role'] != 'system' %}<|im_start|>system\nYou are a helpful coding assistant."
    "<|im_end|>\n{% endif %}{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: Families :func:`save_stand_in` builds.
FAMILIES = ("gpt2", "qwen2")


def stand_in_tokenizer(corpus: Iterable[str], vocab_size: int = 400, chat: bool = False):
    """A byte-level BPE trained on ``corpus`` as a ``PreTrainedTokenizerFast``, GPT-2 style (one
    ``<|endoftext|>`` token as bos, eos and pad) or, with ``chat``, Qwen style (ChatML specials, eos
    ``<|im_end|>``, pad ``<|endoftext|>``, no bos, the :data:`CHATML` template)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>"] + (["<|im_start|>", "<|im_end|>"] if chat else [])
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tk.train_from_iterator(list(corpus), trainer=trainer)
    if chat:
        return PreTrainedTokenizerFast(
            tokenizer_object=tk,
            eos_token="<|im_end|>",
            pad_token="<|endoftext|>",
            additional_special_tokens=["<|im_start|>", "<|im_end|>"],
            chat_template=CHATML,
            clean_up_tokenization_spaces=False,
        )
    return PreTrainedTokenizerFast(
        tokenizer_object=tk, bos_token="<|endoftext|>", eos_token="<|endoftext|>", clean_up_tokenization_spaces=False
    )


def save_stand_in(
    path: str,
    corpus: Iterable[str],
    family: str = "qwen2",
    chat: bool = True,
    dropout: float = 0.1,
    hidden: int = 64,
    layers: int = 2,
    vocab_size: int = 400,
    seed: int = 0,
) -> str:
    """Build and ``save_pretrained`` a random-weight model of ``family`` with its tokenizer into ``path``.

    ``dropout`` goes wherever the family's config has a dropout (gpt2: residual, embedding and attention;
    qwen2: attention). Returns ``path``.
    """
    import torch
    from transformers import GenerationConfig, GPT2Config, GPT2LMHeadModel, Qwen2Config, Qwen2ForCausalLM

    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    if not 0 <= dropout < 1:
        raise ValueError(f"dropout must be in [0, 1), got {dropout}")
    tok = stand_in_tokenizer(corpus, vocab_size, chat)
    ids = dict(
        vocab_size=len(tok), bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id
    )
    torch.manual_seed(seed)
    if family == "gpt2":
        model = GPT2LMHeadModel(
            GPT2Config(
                n_embd=hidden,
                n_layer=layers,
                n_head=4,
                n_positions=1024,
                resid_pdrop=dropout,
                embd_pdrop=dropout,
                attn_pdrop=dropout,
                **ids,
            )
        )
    else:
        model = Qwen2ForCausalLM(
            Qwen2Config(
                hidden_size=hidden,
                intermediate_size=3 * hidden,
                num_hidden_layers=layers,
                num_attention_heads=4,
                num_key_value_heads=2,
                max_position_embeddings=1024,
                attention_dropout=dropout,
                tie_word_embeddings=True,
                **ids,
            )
        )
    if chat:  # instruct models stop at the end of their turn or at the end of text
        model.generation_config = GenerationConfig(
            eos_token_id=[tok.eos_token_id, tok.convert_tokens_to_ids("<|endoftext|>")], pad_token_id=tok.pad_token_id
        )
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
