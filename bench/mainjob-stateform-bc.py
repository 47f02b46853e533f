#!/usr/bin/env python3
"""Behaviour cloning of the main job's decision on held-out boards, by state form (issue 34 item 5, session 8).

The main job's move stayed state-blind in every SFT design tried (docs/results/mainjob-v3): does the 2 x 64 base learn the
lookahead rule's move (frozen-lake.ts lookaheadChoice: goal > nearer ice > ice > edge > hole) so that it *generalises* to
boards it never saw, and does the state form decide it? Input: boards dumped by bench/mainjob-stateform-dump.ts (the
product's own prompt ids). The last --test boards are held out (and every training board whose prompt is among them
dropped). Each step trains the cross-entropy (full vocabulary) of one of the board's best moves (drawn uniformly among the
tied ones) at the position after prompt + lead ("I will try ", or the world-model reply's true observation then "I will try ")
on --batch training boards, AdamW (betas 0.9/0.999, weight decay 0.01), grad clip 1. Every --eval-every steps it scores the
held-out boards teacher-forced, p(move | state) renormalised over the 4 moves' first tokens: pBest (= Pass@1-style mean
probability that the move is one the rule ranks first; a state-blind policy's is the mean share of best moves, printed as
pBestUniform), accuracy (argmax among the best), the share of argmax moves by landing class (goal, nearer ice, other ice,
edge, hole) and I(move; state) in nats. One JSON line per eval.
Usage: SPA_TORCH_THREADS=1 /usr/bin/python3 bench/mainjob-stateform-bc.py --data /tmp/s8/tiny-compact-plain.jsonl
       [--init resources/bases/frozenlake-compact] [--steps 600] [--batch 32] [--lr 1e-3] [--test 1024] [--out FILE.jsonl]
"""
import argparse
import json
import os
import random
import time

import torch
from transformers import Qwen2ForCausalLM


def batchify(rows):
    seqs = [r['ids'] + r['lead'] for r in rows]
    width = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), width, dtype=torch.long)
    mask = torch.zeros(len(seqs), width, dtype=torch.long)
    for i, s in enumerate(seqs):  # left padding: the decision position is the last one of every row
        ids[i, width - len(s):] = torch.tensor(s)
        mask[i, width - len(s):] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids, mask, pos


def move_probs(model, rows):
    ids, mask, pos = batchify(rows)
    logits = model(input_ids=ids, attention_mask=mask, position_ids=pos).logits[:, -1, :]
    return logits


def klass(cell, closer):
    return 'goal' if cell == 'G' else ('nearer' if closer else 'ice') if cell == '_' else 'edge' if cell == '#' else 'hole'


def evaluate(model, boards, chunk=256):
    model.eval()
    ps = []
    with torch.no_grad():
        for i in range(0, len(boards), chunk):
            part = boards[i:i + chunk]
            logits = move_probs(model, part)
            ps.append(torch.softmax(logits[:, torch.tensor(part[0]['moves'])], -1))
    model.train()
    p = torch.cat(ps)
    best = torch.zeros_like(p)
    for i, b in enumerate(boards):
        best[i, b['best']] = 1
    marginal = p.mean(0)
    mi = (p * (p.clamp_min(1e-12).log() - marginal.log())).sum(-1).mean().item()
    arg = p.argmax(-1).tolist()
    classes = {}
    for b, a in zip(boards, arg):
        k = klass(b['cells'][a], b['closer'][a])
        classes[k] = classes.get(k, 0) + 1
    return {
        'pBest': round((p * best).sum(-1).mean().item(), 4),
        'accuracy': round(sum(best[i, a].item() for i, a in enumerate(arg)) / len(boards), 4),
        'argmaxClasses': {k: round(v / len(boards), 4) for k, v in sorted(classes.items())},
        'marginal': [round(x, 4) for x in marginal.tolist()],
        'miNats': round(mi, 4),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--data', required=True)
    ap.add_argument('--init', default=os.path.join(os.path.dirname(__file__), '..', 'resources', 'bases', 'frozenlake-compact'))
    ap.add_argument('--steps', type=int, default=600)
    ap.add_argument('--batch', type=int, default=32)
    ap.add_argument('--lr', type=float, default=1e-3)
    ap.add_argument('--test', type=int, default=1024)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--eval-every', type=int, default=50)
    ap.add_argument('--out', default='')
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get('SPA_TORCH_THREADS', '1')))
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    rows = [json.loads(line) for line in open(args.data)]
    test = rows[-args.test:]
    held = {r['prompt'] for r in test}
    train = [r for r in rows[:-args.test] if r['prompt'] not in held]
    model = Qwen2ForCausalLM.from_pretrained(args.init, torch_dtype=torch.float32).float()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), weight_decay=0.01)

    def emit(obj):
        line = json.dumps(obj)
        print(line, flush=True)
        if args.out:
            with open(args.out, 'a') as f:
                f.write(line + '\n')

    emit({'kind': 'settings', 'data': args.data, 'template': rows[0]['template'], 'init': args.init, 'train': len(train),
          'test': len(test), 'steps': args.steps, 'batch': args.batch, 'lr': args.lr, 'seed': args.seed,
          'pBestUniform': round(sum(len(r['best']) for r in test) / 4 / len(test), 4)})
    t0 = time.time()
    emit({'kind': 'eval', 'step': 0, 'labels': 0, **evaluate(model, test)})
    order = list(range(len(train)))
    rng.shuffle(order)
    for step in range(1, args.steps + 1):
        idx = [order[(k + (step - 1) * args.batch) % len(order)] for k in range(args.batch)]
        batch = [train[i] for i in idx]
        logits = move_probs(model, batch)
        target = torch.tensor([b['moves'][rng.choice(b['best'])] for b in batch])
        loss = torch.nn.functional.cross_entropy(logits, target)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % args.eval_every == 0 or step == args.steps:
            emit({'kind': 'eval', 'step': step, 'labels': step * args.batch, 'loss': round(loss.item(), 4),
                  'seconds': round(time.time() - t0, 1), **evaluate(model, test)})


if __name__ == '__main__':
    main()
