"""RL-learns pilot (issue 23 item 4): policy gradient on the decision token of the compact plain format, from the shipped base.

The compact plain reply is `<think>I will try A.</think><answer>A</answer>`: every token but the action's first character is
(near-)deterministic in the shipped base (entropy < 0.05 nats), so this pilot samples only that character (L/D/R/U, the
base's distribution renormalised over the four) and writes the rest of the reply as the product would, with the whole
multi-turn history in the context (the product's layout: `<|system|><|im_end|><|user|>rules\\ngrid\\n<|im_end|><|assistant|>
<think>I will try A.</think><answer>A</answer><|im_end|><|user|>\\ngrid\\n<|im_end|>...`). Format errors are not modelled.
FrozenLake 4x4 as core/envs/frozen-lake.ts (p 0.8, random start and goal, solvable, 10 one-action turns; slip: intended
with successRate, else a perpendicular side). The update: REINFORCE with a per-puzzle-group mean baseline (GRPO-style,
optionally / std), loss -A * log pi(a | context) averaged over decisions, AdamW, one update per step.

  /usr/bin/python3 bench/rl-learns-pilot.py --lr 2e-4 --steps 60 --groups 4 --group-size 8 --seed 0 [--slip 0.8] --out f.jsonl

Prints one JSON line per eval: Pass@1 (greedy? no: one sample per puzzle, 128 fixed puzzles x --eval-samples), the
uniform-policy chance on the same puzzles, the toward-goal rate and the decision-token entropy.
"""
import argparse, json, math, os, random, sys, time
from collections import deque
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'resources', 'torch-worker'))
import worker  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument('--base', default=os.path.join(ROOT, 'resources', 'bases', 'frozenlake-compact'))
ap.add_argument('--lr', type=float, default=2e-4)
ap.add_argument('--steps', type=int, default=60)
ap.add_argument('--groups', type=int, default=4)
ap.add_argument('--group-size', type=int, default=8)
ap.add_argument('--slip', type=float, default=1.0, help='probability a move goes the intended way (1 = deterministic lake)')
ap.add_argument('--seed', type=int, default=0)
ap.add_argument('--eval-every', type=int, default=10)
ap.add_argument('--eval-puzzles', type=int, default=128)
ap.add_argument('--eval-samples', type=int, default=2)
ap.add_argument('--std', action='store_true', help='divide the group-relative advantage by the group std (GRPO); default: mean only')
ap.add_argument('--gamma', type=float, default=1.0, help='per-turn discount of the success reward (1 = every decision of an episode gets its return)')
ap.add_argument('--history', type=int, default=1, help='1 = the product multi-turn context; 0 = only the current turn')
ap.add_argument('--bc', type=int, default=0, help='> 0: behaviour cloning instead of RL, this many random states per step, label = the shortest-path move (positive control)')
ap.add_argument('--freeze-embeddings', action='store_true', help='keep the (tied) token embeddings / readout fixed during the update')
ap.add_argument('--bc-warmup', type=int, default=0, help='RL after this many behaviour-cloning steps (64 states, lr 2e-3): RL from a base whose action reads the state')
ap.add_argument('--out', default=None)
args = ap.parse_args()
torch.manual_seed(args.seed)
torch.set_num_threads(int(os.environ.get('SPA_TORCH_THREADS', '1')))

# ---- tokenizer (character level, tags as single tokens; the shipped tokenizer.json) ----
tok = json.load(open(os.path.join(args.base, 'tokenizer.json')))
vocab = dict(tok['model']['vocab'])
specials = {a['content']: a['id'] for a in tok['added_tokens']}
vocab.update(specials)
def encode(text):
    out, i = [], 0
    while i < len(text):
        for s, sid in specials.items():
            if text.startswith(s, i):
                out.append(sid); i += len(s); break
        else:
            out.append(vocab[text[i]]); i += 1
    return out
ACTIONS = ['Left', 'Down', 'Right', 'Up']
ACTION_IDS = [vocab[a[0]] for a in ACTIONS]
MOVES = [(0, -1), (1, 0), (0, 1), (-1, 0)]

# ---- model: the product's torch decoder, f32 weights ----
cfg = json.load(open(os.path.join(args.base, 'config.json')))
model = worker.Decoder(cfg, torch.device('cpu'), False)
tensors, _ = worker.read_safetensors(os.path.join(args.base, 'model.safetensors'))
for name, _shape in worker.param_specs(cfg):
    if name.startswith('value_head'): continue
    model.w[name] = tensors[name].float().clone().requires_grad_(True)
params = [p for n, p in model.w.items() if not (args.freeze_embeddings and n == 'model.embed_tokens.weight')]
if args.freeze_embeddings: model.w['model.embed_tokens.weight'].requires_grad_(False)
opt = torch.optim.AdamW(params, lr=args.lr, betas=(0.9, 0.999), weight_decay=0.0)

# ---- env ----
def gen_map(rng):
    while True:
        cells = [['F' if rng.random() < 0.8 else 'H' for _ in range(4)] for _ in range(4)]
        s = rng.randrange(16); g = rng.randrange(15); g += g >= s
        cells[s // 4][s % 4] = 'S'; cells[g // 4][g % 4] = 'G'
        seen, q = {divmod(s, 4)}, deque([divmod(s, 4)])
        while q:
            r, c = q.popleft()
            if cells[r][c] == 'G': return cells, divmod(s, 4)
            for dr, dc in MOVES:
                rr, cc = r + dr, c + dc
                if 0 <= rr < 4 and 0 <= cc < 4 and (rr, cc) not in seen and cells[rr][cc] != 'H':
                    seen.add((rr, cc)); q.append((rr, cc))

def render(cells, p):
    rows = []
    for r in range(4):
        row = ''
        for c in range(4):
            v = cells[r][c]
            row += 'P' if (r, c) == p else {'F': '_', 'S': '_', 'H': 'O', 'G': 'G'}[v]
        rows.append(row)
    return '\n'.join(rows)

RULES = 'Reach G, avoid O; moves may slip. Actions: Left, Down, Right, Up. Write your move.'
def step_env(cells, p, a, rng):
    if args.slip < 1:
        u = rng.random()
        if u >= args.slip: a = (a - 1) % 4 if u < args.slip + (1 - args.slip) / 2 else (a + 1) % 4
    dr, dc = MOVES[a]
    q = (min(3, max(0, p[0] + dr)), min(3, max(0, p[1] + dc)))
    v = cells[q[0]][q[1]]
    return q, (1.0 if v == 'G' else 0.0), v in 'GH'

def prefix(history_text, cells, p, first):
    user = (RULES + '\n' if first else '\n') + render(cells, p) + '\n'
    text = ('<|system|><|im_end|>' if first else '') + '<|user|>' + user + '<|im_end|><|assistant|><think>I will try '
    return history_text + text if args.history else ('<|system|><|im_end|><|user|>' + RULES + '\n' + render(cells, p) + '\n<|im_end|><|assistant|><think>I will try ')

def action_logits(texts):
    ids = [encode(t) for t in texts]
    T = max(len(x) for x in ids)
    pad = torch.zeros(len(ids), T, dtype=torch.long); seg = torch.zeros(len(ids), T, dtype=torch.long)
    for i, x in enumerate(ids):
        pad[i, :len(x)] = torch.tensor(x); seg[i, :len(x)] = 1
    hidden = model.trunk(pad, seg)                                        # [B, T, D]
    last = torch.tensor([len(x) - 1 for x in ids])
    h = hidden[torch.arange(len(ids)), last]                              # [B, D]
    logits = model.lm_head(h)[:, ACTION_IDS]                              # [B, 4]: the four actions' first characters
    return logits

def play(puzzles, rng, policy='model'):
    """Episodes on (cells, start) puzzles; returns per episode: success, decisions [(text, action)], toward, moves."""
    n = len(puzzles)
    hist = [''] * n; pos = [pz[1] for pz in puzzles]; alive = [True] * n; succ = [0.0] * n
    decisions = [[] for _ in range(n)]; toward = moves = 0
    for turn in range(10):
        idx = [i for i in range(n) if alive[i]]
        if not idx: break
        texts = [prefix(hist[i], puzzles[i][0], pos[i], turn == 0) for i in idx]
        if policy == 'model':
            with torch.no_grad():
                probs = torch.softmax(action_logits(texts), -1)
            acts = torch.multinomial(probs, 1, generator=None).squeeze(1).tolist()
        else:
            acts = [rng.randrange(4) for _ in idx]
        for k, i in enumerate(idx):
            a = acts[k]; cells = puzzles[i][0]; p = pos[i]
            g = next((r, c) for r in range(4) for c in range(4) if cells[r][c] == 'G')
            dr, dc = MOVES[a]; q = (p[0] + dr, p[1] + dc)
            moves += 1
            if 0 <= q[0] < 4 and 0 <= q[1] < 4 and abs(q[0] - g[0]) + abs(q[1] - g[1]) < abs(p[0] - g[0]) + abs(p[1] - g[1]): toward += 1
            decisions[i].append((texts[k], a))
            hist[i] = texts[k] + ACTIONS[a] + '.</think><answer>' + ACTIONS[a] + '</answer><|im_end|>'
            pos[i], r, done = step_env(cells, p, a, rng)
            if done: alive[i] = False; succ[i] = r
    return succ, decisions, toward / max(1, moves)

def shortest_move(cells, p):
    """First move of a shortest path to G on the non-slippery map (BFS backwards from G), or None."""
    g = next((r, c) for r in range(4) for c in range(4) if cells[r][c] == 'G')
    dist = {g: 0}; q = deque([g])
    while q:
        r, c = q.popleft()
        for dr, dc in MOVES:
            rr, cc = r + dr, c + dc
            if 0 <= rr < 4 and 0 <= cc < 4 and (rr, cc) not in dist and cells[rr][cc] != 'H':
                dist[(rr, cc)] = dist[(r, c)] + 1; q.append((rr, cc))
    best = None
    for a, (dr, dc) in enumerate(MOVES):
        q2 = (p[0] + dr, p[1] + dc)
        if q2 in dist and (best is None or dist[q2] < dist[best[1]]): best = (a, q2)
    return None if best is None else best[0]

eval_rng = random.Random(3_000_000)
eval_puzzles = [gen_map(eval_rng) for _ in range(args.eval_puzzles)]
def evaluate(step):
    rng = random.Random(99)
    torch.manual_seed(1000 + step)
    res, tw, ents = [], [], []
    for _ in range(args.eval_samples):
        s, d, t = play(eval_puzzles, rng); res += s; tw.append(t)
    with torch.no_grad():
        probs = torch.softmax(action_logits([prefix('', c, p, True) for c, p in eval_puzzles]), -1)
        ent = float(-(probs * probs.clamp_min(1e-12).log()).sum(-1).mean())
        mean = probs.mean(0, keepdim=True)
        # how much the turn-0 action distribution depends on the state: mean KL(pi(.|s) || mean over s) = I(action; state), nats
        dependence = float((probs * (probs.clamp_min(1e-12).log() - mean.log())).sum(-1).mean())
        best = [shortest_move(c, p) for c, p in eval_puzzles]
        pbest = float(sum(probs[i, a] for i, a in enumerate(best) if a is not None) / sum(a is not None for a in best))
    return {'stateDependence': round(dependence, 4), 'pShortestMove': round(pbest, 3), 'step': step, 'passAt1': sum(res) / len(res), 'n': len(res), 'towardGoal': sum(tw) / len(tw), 'turn0Entropy': ent,
            'marginal': [round(float(x), 3) for x in probs.mean(0)]}

out = open(args.out, 'a') if args.out else None
def emit(row):
    row.update({'bcWarmup': args.bc_warmup, 'frozenEmbeddings': args.freeze_embeddings, 'gamma': args.gamma, 'bc': args.bc, 'lr': args.lr, 'groups': args.groups, 'groupSize': args.group_size, 'slip': args.slip, 'seed': args.seed,
                'std': args.std, 'history': args.history})
    line = json.dumps(row); print(line, flush=True)
    if out: out.write(line + '\n'); out.flush()

# chance on the same puzzles (uniform random action each turn)
crng = random.Random(7)
chance = [play(eval_puzzles, crng, 'random')[0] for _ in range(20)]
emit({'row': 'chance', 'passAt1': sum(map(sum, chance)) / (20 * len(eval_puzzles))})
train_rng = random.Random(2_000_000 + args.seed * 7919)
t0 = time.time()

def bc_batch(n):
    texts, acts = [], []
    while len(texts) < n:
        cells, _ = gen_map(train_rng)
        free = [(r, c) for r in range(4) for c in range(4) if cells[r][c] in 'FS']
        p = free[train_rng.randrange(len(free))]
        a = shortest_move(cells, p)
        if a is None: continue
        texts.append(prefix('', cells, p, True)); acts.append(a)
    return texts, acts

if args.bc_warmup:
    warm = torch.optim.AdamW(params, lr=2e-3, betas=(0.9, 0.999), weight_decay=0.0)
    for _ in range(args.bc_warmup):
        texts, acts = bc_batch(64)
        loss = F.cross_entropy(action_logits(texts), torch.tensor(acts))
        warm.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(params, 1.0); warm.step()
    train_rng = random.Random(2_000_000 + args.seed * 7919)   # RL sees the same puzzles as without the warm-up

if args.bc:
    for step in range(1, args.steps + 1):
        texts, acts = bc_batch(args.bc)
        loss = F.cross_entropy(action_logits(texts), torch.tensor(acts))
        opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(params, 1.0); opt.step()
        if step % args.eval_every == 0 or step == args.steps:
            emit({'row': 'bc', **evaluate(step), 'examples': step * args.bc, 'loss': float(loss), 'wall': round(time.time() - t0, 1)})
    sys.exit(0)
emit({'row': 'eval', **evaluate(0), 'wall': 0})
for step in range(1, args.steps + 1):
    puzzles = [gen_map(train_rng) for _ in range(args.groups)]
    batch = [pz for pz in puzzles for _ in range(args.group_size)]
    succ, decisions, tw = play(batch, train_rng)
    # return of decision t of an episode that ended after n decisions: gamma^(n-1-t) * success; baseline: the mean return over
    # the decisions of its puzzle group (gamma 1: the group mean of the episode rewards, as GRPO without the std)
    returns = [[succ[e] * args.gamma ** (len(ds) - 1 - t) for t in range(len(ds))] for e, ds in enumerate(decisions)]
    texts, acts, weights = [], [], []
    for g in range(args.groups):
        members = range(g * args.group_size, (g + 1) * args.group_size)
        if args.gamma == 1.0:   # per-episode baseline over episodes (each episode weighs the same)
            r = [succ[e] for e in members]; m = sum(r) / len(r); sd = (sum((x - m) ** 2 for x in r) / max(1, len(r) - 1)) ** 0.5
        else:
            flat = [x for e in members for x in returns[e]]; m = sum(flat) / max(1, len(flat)); sd = (sum((x - m) ** 2 for x in flat) / max(1, len(flat) - 1)) ** 0.5
        for e in members:
            for t, (text, a) in enumerate(decisions[e]):
                w = returns[e][t] - m
                texts.append(text); acts.append(a); weights.append(w / (sd + 1e-6) if args.std else w)
    keep = [i for i, w in enumerate(weights) if w != 0]
    if keep:
        logits = action_logits([texts[i] for i in keep])
        lp = torch.log_softmax(logits, -1)[torch.arange(len(keep)), torch.tensor([acts[i] for i in keep])]
        loss = -(torch.tensor([weights[i] for i in keep]) * lp).sum() / len(texts)
        opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(params, 1.0); opt.step()
    if step % args.eval_every == 0 or step == args.steps:
        emit({'row': 'eval', **evaluate(step), 'trainSuccess': sum(succ) / len(succ), 'wall': round(time.time() - t0, 1)})
