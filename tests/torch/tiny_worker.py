"""A torch worker (resources/torch-worker/worker.py, imported as W) on a tiny GQA Qwen2 config with random weights, for the
worker checks in this folder (prefix cache, f32 copies in generation)."""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "resources", "torch-worker"))
import worker as W  # noqa: E402,F401

CFG = {"model_type": "qwen2", "vocab_size": 97, "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
       "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256, "rms_norm_eps": 1e-6,
       "tie_word_embeddings": True, "attention_bias": True, "rope_theta": 10000.0}


def tiny_worker(trainable=False, seed=1):
    """A Worker whose model is CFG with weights 0.5 * N(0, 1) from `seed` (f32)."""
    wk = W.Worker(1)
    g = torch.Generator().manual_seed(seed)
    m = W.Decoder(CFG, torch.device("cpu"), False)
    for n, shape in W.param_specs(CFG):
        m.w[n] = 0.5 * torch.randn(shape, generator=g)
    m.trainable = trainable
    wk.model = m
    return wk
