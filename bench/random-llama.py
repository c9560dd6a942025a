#!/usr/bin/env python3
"""random-llama.py: a llama-architecture GGUF model with random F16
weights, for benchmarks that need a real engine but no real model.

    random-llama.py OUT EMBD FF LAYERS HEADS VOCAB [VOCAB_GGUF]

Without VOCAB_GGUF the model has no tokenizer (llama-bench feeds random
token ids).  With it (a vocab-only GGUF such as a llama.cpp checkout's
models/ggml-vocab-llama-spm.gguf) the tokenizer is copied from it and
VOCAB is its size, so that a server can tokenize text prompts.  Needs
numpy and the checkout's gguf-py on PYTHONPATH.
"""
import sys

import numpy as np
import gguf

path = sys.argv[1]
embd, ff, layers, heads, vocab = (int(a) for a in sys.argv[2:7])
vocab_gguf = sys.argv[7] if len(sys.argv) > 7 else None
rng = np.random.default_rng(20250220)


def field(reader, key):
    """A GGUF field's value: a str, a number, or a list of either."""
    f = reader.fields[key]
    types = [t.name for t in f.types]
    vals = []
    for i in f.data:
        part = f.parts[i]
        vals.append(bytes(part).decode("utf-8") if "STRING" in types
                    else part.tolist()[0])
    return vals if types[0] == "ARRAY" else vals[0]


tok = None
if vocab_gguf:
    r = gguf.GGUFReader(vocab_gguf)
    tok = {k: field(r, "tokenizer.ggml." + k) for k in
           ("model", "tokens", "scores", "token_type", "bos_token_id",
            "eos_token_id", "unknown_token_id", "add_bos_token",
            "add_eos_token")}
    pre = r.fields.get("tokenizer.ggml.pre")
    tok["pre"] = field(r, "tokenizer.ggml.pre") if pre else None
    vocab = len(tok["tokens"])


def weight(*shape):
    # numpy's row-major shape is ggml's ne reversed: (rows, columns)
    scale = 1.0 / np.sqrt(shape[-1])
    return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float16)


def norm():
    return np.ones(embd, dtype=np.float32)


w = gguf.GGUFWriter(path, "llama")
w.add_name("random llama for bisectd")
w.add_context_length(4096)
w.add_embedding_length(embd)
w.add_feed_forward_length(ff)
w.add_block_count(layers)
w.add_head_count(heads)
w.add_head_count_kv(heads)
w.add_rope_dimension_count(embd // heads)
w.add_layer_norm_rms_eps(1e-5)
w.add_vocab_size(vocab)
if tok is None:
    w.add_tokenizer_model("none")
else:
    w.add_tokenizer_model(tok["model"])
    if tok["pre"]:
        w.add_tokenizer_pre(tok["pre"])
    w.add_token_list(tok["tokens"])
    w.add_token_scores(tok["scores"])
    w.add_token_types(tok["token_type"])
    w.add_bos_token_id(tok["bos_token_id"])
    w.add_eos_token_id(tok["eos_token_id"])
    w.add_unk_token_id(tok["unknown_token_id"])
    w.add_add_bos_token(bool(tok["add_bos_token"]))
    w.add_add_eos_token(bool(tok["add_eos_token"]))
w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
w.add_tensor("token_embd.weight", weight(vocab, embd))
for i in range(layers):
    b = f"blk.{i}."
    w.add_tensor(b + "attn_norm.weight", norm())
    for t in ("attn_q", "attn_k", "attn_v", "attn_output"):
        w.add_tensor(b + t + ".weight", weight(embd, embd))
    w.add_tensor(b + "ffn_norm.weight", norm())
    w.add_tensor(b + "ffn_gate.weight", weight(ff, embd))
    w.add_tensor(b + "ffn_up.weight", weight(ff, embd))
    w.add_tensor(b + "ffn_down.weight", weight(embd, ff))
w.add_tensor("output_norm.weight", norm())
w.add_tensor("output.weight", weight(vocab, embd))
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
