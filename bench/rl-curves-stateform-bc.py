#!/usr/bin/env python3
"""Behaviour cloning of curve (a)'s decision in a given state form (issue 34 item 3, session 4).

Can the tiny model learn the 4-armed contextual bandit's decision (FrozenLake 4x4, no holes, the goal next to the start,
one move; 48 distinct boards, chance 25%) *by supervision*, and does the state form (the grid vs the SPA coordinate line)
decide it? Input: puzzles dumped by bench/rl-curves-stateform-dump.ts (the product's own prompt ids, character tokenizer).
Each step trains the cross-entropy (full vocabulary, as the product's trainer) of the rewarded move's first token after
prompt + "I will try " on --batch puzzles (labels = the dump's rows in order, cycling), AdamW (betas 0.9/0.999, weight decay
0.01, as the product's defaults), grad clip 1. Every --eval-every steps it scores all distinct boards in the dump,
teacher-forced: p(move | state) renormalised over the 4 moves' first tokens; prints accuracy (argmax = rewarded move),
mean p(correct), the move marginal and I(move; state) in nats (uniform weight per distinct board). One JSON line per eval.

The model: --init DIR (a product checkpoint folder, e.g. resources/bases/frozenlake-compact; weights in F16 loaded as F32),
or --scratch LxH (a fresh Qwen2 of L layers, hidden H, 4 heads, intermediate 2.75H, the shipped base's vocabulary and
tokenizer; torch's default init as transformers' with initializer_range 0.02).
Usage: SPA_TORCH_THREADS=1 /usr/bin/python3 bench/rl-curves-stateform-bc.py --data /tmp/h16/tiny-compact-plain.jsonl
       (--init resources/bases/frozenlake-compact | --scratch 2x64) [--steps 300] [--batch 64] [--lr 2e-3] [--seed 0]
       [--eval-every 10] [--out FILE.jsonl]
"""
import argparse
import json
import math
import os
import sys
import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM


def load(args):
    torch.manual_seed(args.seed)
    if args.init:
        model = Qwen2ForCausalLM.from_pretrained(args.init, torch_dtype=torch.float32)
    else:
        layers, hidden = (int(x) for x in args.scratch.lower().split('x'))
        base = json.load(open(os.path.join(args.base, 'config.json')))
        cfg = Qwen2Config(vocab_size=base['vocab_size'], hidden_size=hidden, intermediate_size=int(hidden * 2.75),
                          num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=4,
                          max_position_embeddings=2048, rope_theta=10000, rms_norm_eps=1e-6, tie_word_embeddings=True,
                          initializer_range=0.02, hidden_act='silu', pad_token_id=0, eos_token_id=3)
        model = Qwen2ForCausalLM(cfg)
    return model.float()


def batchify(rows):
    seqs = [r['ids'] + r['lead'] for r in rows]
    width = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), width, dtype=torch.long)
    mask = torch.zeros(len(seqs), width, dtype=torch.long)
    for i, s in enumerate(seqs):  # left padding, so the decision position is the last one for every row
        ids[i, width - len(s):] = torch.tensor(s)
        mask[i, width - len(s):] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids, mask, pos


def move_logits(model, rows):
    ids, mask, pos = batchify(rows)
    out = model(input_ids=ids, attention_mask=mask, position_ids=pos).logits[:, -1, :]
    return out


def evaluate(model, boards):
    model.eval()
    with torch.no_grad():
        logits = move_logits(model, boards)
        moves = torch.tensor(boards[0]['moves'])
        p = torch.softmax(logits[:, moves], -1)
    model.train()
    correct = torch.tensor([b['correct'] for b in boards])
    marginal = p.mean(0)
    mi = (p * (p.clamp_min(1e-12).log() - marginal.log())).sum(-1).mean().item()
    return {
        'accuracy': round((p.argmax(-1) == correct).float().mean().item(), 4),
        'pCorrect': round(p[torch.arange(len(boards)), correct].mean().item(), 4),
        'marginal': [round(x, 4) for x in marginal.tolist()],
        'miNats': round(mi, 4),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--data', required=True)
    ap.add_argument('--init', default='')
    ap.add_argument('--scratch', default='')
    ap.add_argument('--base', default=os.path.join(os.path.dirname(__file__), '..', 'resources', 'bases', 'frozenlake-compact'))
    ap.add_argument('--steps', type=int, default=300)
    ap.add_argument('--batch', type=int, default=64)
    ap.add_argument('--lr', type=float, default=2e-3)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--eval-every', type=int, default=10)
    ap.add_argument('--out', default='')
    args = ap.parse_args()
    if bool(args.init) == bool(args.scratch):
        sys.exit('expected exactly one of --init DIR or --scratch LxH')
    torch.set_num_threads(int(os.environ.get('SPA_TORCH_THREADS', '1')))
    rows = [json.loads(line) for line in open(args.data)]
    boards = list({r['prompt']: r for r in rows}.values())
    model = load(args)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), weight_decay=0.01)
    params = sum(p.numel() for p in model.parameters())

    def emit(obj):
        line = json.dumps(obj)
        print(line, flush=True)
        if args.out:
            with open(args.out, 'a') as f:
                f.write(line + '\n')

    emit({'kind': 'settings', 'data': args.data, 'template': rows[0]['template'], 'init': args.init or None,
          'scratch': args.scratch or None, 'parameters': params, 'boards': len(boards), 'steps': args.steps,
          'batch': args.batch, 'lr': args.lr, 'seed': args.seed})
    t0 = time.time()
    emit({'kind': 'eval', 'step': 0, 'labels': 0, **evaluate(model, boards)})
    for step in range(1, args.steps + 1):
        start = ((step - 1) * args.batch) % len(rows)
        batch = (rows + rows)[start:start + args.batch]
        logits = move_logits(model, batch)
        target = torch.tensor([b['moves'][b['correct']] for b in batch])
        loss = torch.nn.functional.cross_entropy(logits, target)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % args.eval_every == 0 or step == args.steps:
            emit({'kind': 'eval', 'step': step, 'labels': step * args.batch, 'loss': round(loss.item(), 4),
                  'seconds': round(time.time() - t0, 1), **evaluate(model, boards)})


if __name__ == '__main__':
    main()
