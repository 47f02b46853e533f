# transformers' greedy decoding (a loop over forward(): generate() breaks on Debian's torch 1.13 under Python 3.11)
# on a SmolLM2 folder, for tests/torch/smollm2-real-model.test.ts. Usage: smollm2_greedy.py DIR CASES.json MAX_NEW
import json, sys
try:
    import jinja2  # noqa: F401
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
except Exception as e:
    print(json.dumps({"skip": "transformers/torch/jinja2 cannot be imported (%s)" % e})); sys.exit(0)
d, cases, max_new = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
torch.set_num_threads(1)   # one thread under the test runner (vitest.config.ts: SPA_TORCH_THREADS=1)
tok = AutoTokenizer.from_pretrained(d)
model = AutoModelForCausalLM.from_pretrained(d, torch_dtype=torch.float32).eval()
eos = {tok.eos_token_id}
out = []
with torch.no_grad():
    for messages in cases:
        text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = tok.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
        seq = torch.tensor([ids])
        tokens, logprobs, past = [], [], None
        for _ in range(max_new):
            o = model(seq if past is None else seq[:, -1:], past_key_values=past, use_cache=True)
            past = o.past_key_values
            lp = torch.log_softmax(o.logits[0, -1].float(), -1)
            nxt = int(lp.argmax())
            tokens.append(nxt); logprobs.append(float(lp[nxt]))
            seq = torch.cat([seq, torch.tensor([[nxt]])], 1)
            if nxt in eos: break
        out.append({"text": text, "ids": ids, "tokens": tokens, "logprobs": logprobs, "reply": tok.decode(tokens, skip_special_tokens=True)})
print(json.dumps({"results": out}))
