#!/usr/bin/env python3
"""Behaviour cloning of curve (a)'s decision in a given state form (issue 34 item 3, session 4).

Can the tiny model learn the 4-armed contextual bandit's decision (FrozenLake 4x4, no holes, the goal next to the start,
one move; 48 distinct boards, chance 25%) *by supervision*, and does the state form (the grid vs the SPA coordinate line)
decide it? Input: puzzles dumped by bench/rl-curves-stateform-dump.ts (the product's own prompt ids, character tokenizer).
Each step trains the cross-entropy (full vocabulary, as the product's trainer) of the rewarded move's first token after
prompt + "I will try " on --batch puzzles (labels = the dump's rows in order, cycling), AdamW (betas 0.9/0.999, weight decay
0.01, as the product's defaults), grad clip 1. Every --eval-every steps it scores all distinct boards in the dump,
teacher-forced: p(move | state) renormalised over the 4 moves' first tokens; prints accuracy (argmax = rewarded move),
mean p(correct), the move marginal, I(move; state) in nats and, with a dump that has `replies`, formatNll: the mean NLL of
the correct reply's tokens other than the move letter (what keeps generation well formed; the base's is the reference) (uniform weight per distinct board). One JSON line per eval.

The model: --init DIR (a product checkpoint folder, e.g. resources/bases/frozenlake-compact; weights in F16 loaded as F32),
or --scratch LxH (a fresh Qwen2 of L layers, hidden H, 4 heads, intermediate 2.75H, the shipped base's vocabulary and
tokenizer; torch's default init as transformers' with initializer_range 0.02).
--mode grpo | sil: the same harness as a decision-only RL check (as the science review's pilot: the move sampled from
p(move | state) renormalised over the 4 moves, reward 1 when it is the rewarded move). Each step plays --groups boards x
--group-size samples. grpo: the policy gradient -A log p(move) with A = r - the group's mean (divided by its std unless
--no-std), --epochs passes over the batch. sil (self-imitation: behaviour cloning on the agent's own wins, replayed; Oh et al.
2018 "Self-Imitation Learning", ICML; in a deterministic bandit a win is a correct label): every win goes into a buffer, then
--sil-steps cross-entropy steps on --batch (state, move) pairs drawn from it (with --sil-pg, the grpo step too; with
--sil-dedupe the buffer keeps each distinct winning (board, move) once, so replay is uniform over the wins found).
--reply (bc, sil): the cross-entropy on the whole plain reply, token mean, instead of the move token alone (needs a dump with
`replies`). --episodes
caps the episodes played; Pass@1 at temperature 1 = the mean p(correct) over the 48 boards ('pCorrect').
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


def reply_loss(model, pairs, move_weight=1.0, per_token=False):
    """--reply: the cross-entropy of the whole plain reply ("I will try X.</think><answer>X</answer>", the dump's `replies`),
    token mean over the batch's reply tokens; pairs = [(board row, move index)]. move_weight: the plan's move letter (the
    token after "I will try ") weighs that much (the mean is over the weights); per_token: also return the per-token
    losses [rows, width] and the move token's mask."""
    seqs = [b['ids'] + b['replies'][a] for b, a in pairs]
    width = max(len(x) for x in seqs)
    ids = torch.zeros(len(seqs), width, dtype=torch.long)
    mask = torch.zeros(len(seqs), width, dtype=torch.long)
    target = torch.full((len(seqs), width), -100, dtype=torch.long)
    is_move = torch.zeros(len(seqs), width, dtype=torch.bool)
    for i, ((b, a), x) in enumerate(zip(pairs, seqs)):
        off = width - len(x)
        ids[i, off:] = torch.tensor(x)
        mask[i, off:] = 1
        start = off + len(b['ids'])
        target[i, start - 1:width - 1] = torch.tensor(b['replies'][a])  # position t predicts token t + 1
        is_move[i, start - 1 + len(b['lead'])] = True
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(input_ids=ids, attention_mask=mask, position_ids=pos).logits
    ce = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=-100, reduction='none')
    ce = ce.reshape(len(seqs), width)
    if per_token:
        return ce, target != -100, is_move
    w = (target != -100).float() + (move_weight - 1.0) * is_move.float()
    return (ce * w).sum() / w.sum()


def evaluate(model, boards):
    model.eval()
    with torch.no_grad():
        logits = move_logits(model, boards)
        moves = torch.tensor(boards[0]['moves'])
        p = torch.softmax(logits[:, moves], -1)
        fmt = None
        if 'replies' in boards[0]:  # the correct reply's tokens other than the move letter: what keeps the format
            ce, valid, is_move = reply_loss(model, [(b, b['correct']) for b in boards], per_token=True)
            keep = valid & ~is_move
            fmt = round((ce * keep).sum().item() / keep.sum().item(), 4)
    model.train()
    correct = torch.tensor([b['correct'] for b in boards])
    marginal = p.mean(0)
    mi = (p * (p.clamp_min(1e-12).log() - marginal.log())).sum(-1).mean().item()
    return {
        'accuracy': round((p.argmax(-1) == correct).float().mean().item(), 4),
        'pCorrect': round(p[torch.arange(len(boards)), correct].mean().item(), 4),
        'marginal': [round(x, 4) for x in marginal.tolist()],
        'miNats': round(mi, 4),
        **({'formatNll': fmt} if fmt is not None else {}),
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
    ap.add_argument('--mode', choices=['bc', 'grpo', 'sil'], default='bc')
    ap.add_argument('--groups', type=int, default=16)
    ap.add_argument('--group-size', type=int, default=4)
    ap.add_argument('--episodes', type=int, default=2048)
    ap.add_argument('--epochs', type=int, default=1)
    ap.add_argument('--no-std', action='store_true')
    ap.add_argument('--sil-steps', type=int, default=1)
    ap.add_argument('--sil-pg', action='store_true')
    ap.add_argument('--reply', action='store_true', help='bc / sil: the loss on the whole plain reply (token mean), not the move token')
    ap.add_argument('--move-weight', type=float, default=1.0, help='--reply: the plan\'s move letter weighs this much')
    ap.add_argument('--sil-dedupe', action='store_true', help='sil: the buffer keeps each distinct (board, move) win once')
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

    if args.mode != 'bc':
        return rl(args, model, opt, rows, boards, params, emit)
    emit({'kind': 'settings', 'data': args.data, 'template': rows[0]['template'], 'init': args.init or None,
          'scratch': args.scratch or None, 'parameters': params, 'boards': len(boards), 'steps': args.steps,
          'batch': args.batch, 'lr': args.lr, 'seed': args.seed, 'reply': args.reply, 'moveWeight': args.move_weight})
    t0 = time.time()
    emit({'kind': 'eval', 'step': 0, 'labels': 0, **evaluate(model, boards)})
    for step in range(1, args.steps + 1):
        start = ((step - 1) * args.batch) % len(rows)
        batch = (rows + rows)[start:start + args.batch]
        if args.reply:
            loss = reply_loss(model, [(b, b['correct']) for b in batch], args.move_weight)
        else:
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


def rl(args, model, opt, rows, boards, params, emit):
    """Decision-only RL on the dumped boards: grpo or sil (see the module docstring)."""
    gen = torch.Generator().manual_seed(args.seed)
    emit({'kind': 'settings', 'mode': args.mode, 'data': args.data, 'template': rows[0]['template'], 'init': args.init or None,
          'scratch': args.scratch or None, 'parameters': params, 'boards': len(boards), 'groups': args.groups,
          'groupSize': args.group_size, 'episodes': args.episodes, 'epochs': args.epochs, 'std': not args.no_std,
          'silSteps': args.sil_steps, 'silPg': args.sil_pg, 'silDedupe': args.sil_dedupe, 'reply': args.reply, 'moveWeight': args.move_weight, 'batch': args.batch, 'lr': args.lr, 'seed': args.seed})
    t0 = time.time()
    emit({'kind': 'eval', 'step': 0, 'episodes': 0, **evaluate(model, boards)})
    buffer = []
    played = wins = step = 0
    moves_ids = torch.tensor(rows[0]['moves'])
    while played < args.episodes:
        batch = [rows[(step * args.groups + g) % len(rows)] for g in range(args.groups)]
        with torch.no_grad():
            model.eval()
            p = torch.softmax(move_logits(model, batch)[:, moves_ids], -1)
            model.train()
        picks = torch.multinomial(p, args.group_size, replacement=True, generator=gen)  # [groups, groupSize]
        correct = torch.tensor([b['correct'] for b in batch])
        reward = (picks == correct[:, None]).float()
        played += reward.numel()
        wins += int(reward.sum().item())
        for g, b in enumerate(batch):
            for k in range(args.group_size):
                if reward[g, k] > 0 and not (args.sil_dedupe and any(x is b or x['prompt'] == b['prompt'] for x in buffer)):
                    buffer.append(b)
        if args.mode == 'grpo' or args.sil_pg:
            adv = reward - reward.mean(1, keepdim=True)
            if not args.no_std:
                adv = adv / (reward.std(1, keepdim=True) + 1e-6)
            flat = [b for b in batch for _ in range(args.group_size)]
            target = moves_ids[picks.reshape(-1)]
            for _ in range(args.epochs):
                logp = torch.log_softmax(move_logits(model, flat), -1)
                loss = -(adv.reshape(-1) * logp[torch.arange(len(flat)), target]).mean()
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
        if args.mode == 'sil' and buffer:
            for _ in range(args.sil_steps):
                pick = torch.randint(len(buffer), (min(args.batch, len(buffer)),), generator=gen).tolist()
                replay = [buffer[i] for i in pick]
                if args.reply:
                    loss = reply_loss(model, [(b, b['correct']) for b in replay], args.move_weight)
                else:
                    logits = move_logits(model, replay)
                    loss = torch.nn.functional.cross_entropy(logits, torch.tensor([b['moves'][b['correct']] for b in replay]))
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
        step += 1
        if step % args.eval_every == 0 or played >= args.episodes:
            emit({'kind': 'eval', 'step': step, 'episodes': played, 'trainSuccess': round(wins / played, 4), 'buffer': len(buffer),
                  'seconds': round(time.time() - t0, 1), **evaluate(model, boards)})


if __name__ == '__main__':
    main()
