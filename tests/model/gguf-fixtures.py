# Writes the GGUF fixtures of tests/model/gguf-import.test.ts with the PyPI `gguf` package (llama.cpp's own
# writer and quantisers) and the transformers Llama model they come from, then (mode "check") compares an
# imported folder with that model. Usage: gguf-fixtures.py write DIR | check DIR
import json, sys
import numpy as np

mode, root = sys.argv[1], sys.argv[2]

def permute(w, n_head):
    # convert_hf_to_gguf.py LlamaModel.permute
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)

def unpermute(w, n_head):
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)

SMOL_TEMPLATE = ("{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a helpful AI "
                 "assistant named SmolLM, trained by Hugging Face<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + "
                 "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")

def byte_chars():
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + n); n += 1
    return [chr(c) for c in cs]

SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>']
MERGES = ['Ġ t', 'h e', 'Ġt he', 'Ġthe m']
TOKENS = SPECIALS + byte_chars() + ['Ġt', 'he', 'Ġthe', 'Ġthem']
TYPES = [3, 3, 3] + [1] * (len(TOKENS) - 3)
H, I, L, NH, NKV = 64, 128, 2, 4, 2

def hf_model(tied):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0 if tied else 1)
    cfg = LlamaConfig(vocab_size=len(TOKENS), hidden_size=H, intermediate_size=I, num_hidden_layers=L, num_attention_heads=NH,
                      num_key_value_heads=NKV, max_position_embeddings=256, rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=tied)
    m = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():
        for n, p in m.named_parameters():
            if 'norm' in n: p.copy_(1 + 0.1 * torch.randn_like(p))
    return m

def gguf_names(tied):
    names = {'model.embed_tokens.weight': 'token_embd.weight', 'model.norm.weight': 'output_norm.weight'}
    if not tied: names['lm_head.weight'] = 'output.weight'
    for l in range(L):
        p = f'model.layers.{l}.'
        for hf, g in [('input_layernorm', 'attn_norm'), ('self_attn.q_proj', 'attn_q'), ('self_attn.k_proj', 'attn_k'), ('self_attn.v_proj', 'attn_v'),
                      ('self_attn.o_proj', 'attn_output'), ('post_attention_layernorm', 'ffn_norm'), ('mlp.gate_proj', 'ffn_gate'),
                      ('mlp.up_proj', 'ffn_up'), ('mlp.down_proj', 'ffn_down')]:
            names[p + hf + '.weight'] = f'blk.{l}.{g}.weight'
    return names

def base_writer(path, arch='llama', tok_model='gpt2'):
    import gguf
    w = gguf.GGUFWriter(path, arch)
    w.add_block_count(L); w.add_context_length(256); w.add_embedding_length(H); w.add_feed_forward_length(I)
    w.add_head_count(NH); w.add_head_count_kv(NKV); w.add_rope_freq_base(10000.0); w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(H // NH)
    w.add_tokenizer_model(tok_model); w.add_tokenizer_pre('smollm')
    w.add_token_list(TOKENS); w.add_token_types(TYPES); w.add_token_merges(MERGES)
    w.add_bos_token_id(1); w.add_eos_token_id(2); w.add_pad_token_id(2); w.add_chat_template(SMOL_TEMPLATE)
    return w

def finish(w):
    w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()

def write():
    import gguf, torch
    from gguf import GGMLQuantizationType as Q, quants
    from safetensors.numpy import save_file
    out = {}
    for tname in ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_1']:
        qt = getattr(Q, tname)
        tied = tname != 'F32'
        m = hf_model(tied)
        if tname == 'F32': m.save_pretrained(f'{root}/hf-original', safe_serialization=True)
        sd = {k: v.detach().numpy().astype(np.float32) for k, v in m.state_dict().items()}
        names = gguf_names(tied)
        w = base_writer(f'{root}/{tname}.gguf')
        expected = {}
        for hf, g in names.items():
            data = sd[hf]
            heads = NH if 'q_proj' in hf else NKV if 'k_proj' in hf else None
            stored = permute(data, heads) if heads else data
            if data.ndim == 1 or tname == 'F32':
                w.add_tensor(g, stored); back = stored
            elif tname == 'F16':
                w.add_tensor(g, stored.astype(np.float16)); back = stored.astype(np.float16).astype(np.float32)
            else:
                q = quants.quantize(stored, qt)
                w.add_tensor(g, q, raw_dtype=qt); back = quants.dequantize(q, qt).astype(np.float32)
            expected[hf] = np.ascontiguousarray(unpermute(back, heads) if heads else back)
        finish(w)
        save_file(expected, f'{root}/{tname}.expected.safetensors')
    # unsupported: a Q4_K tensor (raw bytes); another architecture; a SentencePiece vocabulary
    w = base_writer(f'{root}/bad-q4k.gguf')
    w.add_tensor('token_embd.weight', np.zeros((1, 144), dtype=np.uint8), raw_dtype=Q.Q4_K)
    finish(w)
    w = base_writer(f'{root}/bad-arch.gguf', arch='gemma'); w.add_tensor('token_embd.weight', np.zeros((len(TOKENS), H), np.float32)); finish(w)
    w = base_writer(f'{root}/bad-spm.gguf', tok_model='llama'); w.add_tensor('token_embd.weight', np.zeros((len(TOKENS), H), np.float32)); finish(w)
    print(json.dumps({'ok': True}))

def check():
    import torch
    from transformers import AutoTokenizer, LlamaForCausalLM
    ids = torch.tensor([[1, 40, 200, 7, 260, 2]])
    ref = LlamaForCausalLM.from_pretrained(f'{root}/hf-original', torch_dtype=torch.float32).eval()
    got = LlamaForCausalLM.from_pretrained(f'{root}/out-F32', torch_dtype=torch.float32).eval()
    with torch.no_grad():
        diff = (ref(ids).logits - got(ids).logits).abs().max().item()
    tok = AutoTokenizer.from_pretrained(f'{root}/out-Q4_1')
    text = 'the them 1234 <|im_end|>'
    print(json.dumps({'maxLogitDiff': diff, 'ids': tok.encode(text, add_special_tokens=False), 'tokens': tok.tokenize(text),
                      'chat': tok.apply_chat_template([{'role': 'user', 'content': 'hi'}], tokenize=False, add_generation_prompt=True)}))

try:
    import gguf, torch, transformers, safetensors  # noqa: F401
except Exception as e:
    print(json.dumps({'skip': 'the Python reference cannot be imported (%s)' % e})); sys.exit(0)
write() if mode == 'write' else check()
