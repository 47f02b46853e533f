"""SPA vs vanilla RL pilot on the compact FrozenLake format: policy gradient on the decision token, from a product checkpoint.

What it models (and what it does not): the product's tiny character-level model (its torch decoder, loaded from a product
checkout's resources/torch-worker/worker.py) plays FrozenLake 4x4 (random start and goal, solvable, 10 one-action turns,
slip: the intended move with --slip, else one of its two perpendicular sides). At each turn it sees ONLY the current turn
(no multi-turn history) and writes, teacher-forced, the product's reply up to the action:
  plain (vanilla RL):   <|system|><|im_end|><|user|>RULES Write your move.\\nGRID\\n<|im_end|><|assistant|><think>I will try
  wm (SPA's format):    ... Write the state, your move, the next state.\\nGRID\\n<|im_end|><|assistant|><think><observation>\\n
                        GRID\\n</observation>\\nI will try
and samples only the action's first character (L/D/R/U, renormalised over the four). The prediction and the answer are not
written (answer = plan), format errors are not modelled. The update: REINFORCE on that token, advantage = per-decision
return minus the mean return of its puzzle group's decisions (GRPO-like, no std), AdamW, grad clip 1, one update per step.

Rewards: sparse = 1 on reaching G (the product's task reward); shaped = sparse + beta * (phi(s') - phi(s)) per turn with
phi = -(BFS distance to G over ice), a hole counted as distance 7 (potential-based progress shaping).

  python3 spa_rl_pilot.py --repo PRODUCT_CHECKOUT --init CKPT_DIR --format plain|wm --reward sparse|shaped ...
  python3 spa_rl_pilot.py --repo R --init CKPT --format wm --check 6          # greedy replies on 6 puzzles (sanity)
  python3 spa_rl_pilot.py --repo R --init CKPT --format wm --lookahead        # diagnostic: act on the model's own predictions

Prints one JSON line per evaluation (128 fixed puzzles x --eval-samples; chance = a uniform policy on the same puzzles).
"""
import argparse, json, os, random, sys, time
from collections import deque
import torch
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument('--repo', required=True, help='a checkout of the product (for resources/torch-worker/worker.py)')
ap.add_argument('--init', default=None, help='checkpoint folder (default: the repo\'s resources/bases/frozenlake-compact)')
ap.add_argument('--format', choices=['plain', 'wm', 'wm-planfirst'], default='plain',
                help='wm-planfirst: the world-model prompt, the decision written right after <think> (before the observation)')
ap.add_argument('--reward', choices=['sparse', 'shaped'], default='sparse')
ap.add_argument('--beta', type=float, default=0.2, help='shaping weight per unit of BFS distance')
ap.add_argument('--gamma', type=float, default=1.0, help='per-turn discount of the return')
ap.add_argument('--lr', type=float, default=3e-4)
ap.add_argument('--steps', type=int, default=30)
ap.add_argument('--groups', type=int, default=4)
ap.add_argument('--group-size', type=int, default=8)
ap.add_argument('--slip', type=float, default=0.8, help='probability a move goes the intended way (1 = deterministic)')
ap.add_argument('--seed', type=int, default=0)
ap.add_argument('--eval-every', type=int, default=10)
ap.add_argument('--eval-puzzles', type=int, default=128)
ap.add_argument('--eval-samples', type=int, default=2)
ap.add_argument('--check', type=int, default=0, help='> 0: print greedy replies on this many eval puzzles and exit')
ap.add_argument('--lookahead', action='store_true', help='diagnostic: evaluate one-step lookahead on the model\'s own predictions, then exit')
ap.add_argument('--lookahead-puzzles', type=int, default=64)
ap.add_argument('--bc-warmup', type=int, default=0, help='before RL: this many behaviour-cloning steps (64 random states each, lr 2e-3, label = a shortest-path move) on the arm\'s own prompt')
ap.add_argument('--bc-lr', type=float, default=2e-3)
ap.add_argument('--wm-mix', type=int, default=0, help='> 0: each behaviour-cloning step also trains the world model on this many one-action drills (loss on the predicted grid)')
ap.add_argument('--wm-check', type=int, default=0, help='> 0: at the start and the end, greedy prediction exact for all 4 actions on this many eval first turns')
ap.add_argument('--out', default=None)
ap.add_argument('--full-vocab', action='store_true',
                help='the update\'s log-probability over the whole vocabulary (as the product\'s losses), not renormalised over the 4 moves')
ap.add_argument('--product-rules', action='store_true', help='the product\'s rules line ("Reach G, avoid O. Actions: ...")')
ap.add_argument('--bc-trace', action='store_true', help='print the loss, grad norm, move marginal and I(move; state) after each BC step')
ap.add_argument('--entropy', type=float, default=0.0, help='entropy bonus coefficient at the decision (full-vocabulary entropy)')
ap.add_argument('--task', choices=['lake', 'bandit'], default='lake',
                help='bandit: issue 34 curve (a): no holes, the goal next to a random start, one move (chance 0.25)')
args = ap.parse_args()
torch.manual_seed(args.seed)
torch.set_num_threads(int(os.environ.get('SPA_TORCH_THREADS', '1')))
sys.path.insert(0, os.path.join(args.repo, 'resources', 'torch-worker'))
import worker  # noqa: E402

INIT = args.init or os.path.join(args.repo, 'resources', 'bases', 'frozenlake-compact')
tok = json.load(open(os.path.join(INIT, 'tokenizer.json')))
vocab = dict(tok['model']['vocab'])
specials = {a['content']: a['id'] for a in tok['added_tokens']}
vocab.update(specials)
inv_vocab = {v: k for k, v in vocab.items()}
SPECIALS_BY_LEN = sorted(specials.items(), key=lambda kv: -len(kv[0]))


def encode(text):
    out, i = [], 0
    while i < len(text):
        for s, sid in SPECIALS_BY_LEN:
            if text.startswith(s, i):
                out.append(sid); i += len(s); break
        else:
            out.append(vocab[text[i]]); i += 1
    return out


ACTIONS = ['Left', 'Down', 'Right', 'Up']
ACTION_IDS = [vocab[a[0]] for a in ACTIONS]
MOVES = [(0, -1), (1, 0), (0, 1), (-1, 0)]

cfg = json.load(open(os.path.join(INIT, 'config.json')))
model = worker.Decoder(cfg, torch.device('cpu'), False)
tensors, _ = worker.read_safetensors(os.path.join(INIT, 'model.safetensors'))
for name, _shape in worker.param_specs(cfg):
    if name.startswith('value_head'):
        continue
    model.w[name] = tensors[name].float().clone().requires_grad_(True)
params = list(model.w.values())
opt = torch.optim.AdamW(params, lr=args.lr, betas=(0.9, 0.999), weight_decay=0.0)


# ---------------------------------------------------------------- env
def gen_map(rng):
    if args.task == 'bandit':
        s = rng.randrange(16)
        near = [(s // 4 + dr, s % 4 + dc) for dr, dc in MOVES if 0 <= s // 4 + dr < 4 and 0 <= s % 4 + dc < 4]
        g = near[rng.randrange(len(near))]
        cells = [['F'] * 4 for _ in range(4)]
        cells[s // 4][s % 4] = 'S'; cells[g[0]][g[1]] = 'G'
        return cells, divmod(s, 4)
    while True:
        cells = [['F' if rng.random() < 0.8 else 'H' for _ in range(4)] for _ in range(4)]
        s = rng.randrange(16); g = rng.randrange(15); g += g >= s
        cells[s // 4][s % 4] = 'S'; cells[g // 4][g % 4] = 'G'
        if dist_map(cells).get(divmod(s, 4)) is not None:
            return cells, divmod(s, 4)


def dist_map(cells):
    g = next((r, c) for r in range(4) for c in range(4) if cells[r][c] == 'G')
    dist = {g: 0}; q = deque([g])
    while q:
        r, c = q.popleft()
        for dr, dc in MOVES:
            rr, cc = r + dr, c + dc
            if 0 <= rr < 4 and 0 <= cc < 4 and (rr, cc) not in dist and cells[rr][cc] != 'H':
                dist[(rr, cc)] = dist[(r, c)] + 1; q.append((rr, cc))
    return dist


def render(cells, p):
    rows = []
    for r in range(4):
        row = ''
        for c in range(4):
            v = cells[r][c]
            if (r, c) == p:
                row += {'H': 'X', 'G': '√'}.get(v, 'P')
            else:
                row += {'F': '_', 'S': '_', 'H': 'O', 'G': 'G'}[v]
        rows.append(row)
    return '\n'.join(rows)


RULES = 'Reach G, avoid O;' + (' moves may slip.' if args.slip < 1 else '') + ' Actions: Left, Down, Right, Up.'
if args.product_rules:   # the product's FrozenLake rules line (tiny-compact-plain, deterministic lake), as its rollouts show
    RULES = 'Reach G, avoid O.' + (' Moves may slip.' if args.slip < 1 else '') + ' Actions: Left, Down, Right, Up.'
ASK = {'plain': ' Write your move.', 'wm': ' Write the state, your move, the next state.',
       'wm-planfirst': ' Write the state, your move, the next state.'}


def prefix(cells, p, fmt=None):
    fmt = fmt or args.format
    grid = render(cells, p)
    text = '<|system|><|im_end|><|user|>' + RULES + ASK[fmt] + '\n' + grid + '\n<|im_end|><|assistant|><think>'
    if fmt == 'wm':
        text += '<observation>\n' + grid + '\n</observation>\n'
    return text + 'I will try '


def move(p, a):
    dr, dc = MOVES[a]
    return (min(3, max(0, p[0] + dr)), min(3, max(0, p[1] + dc)))


def step_env(cells, p, a, rng):
    if args.slip < 1:
        u = rng.random()
        if u >= args.slip:
            a = (a - 1) % 4 if u < args.slip + (1 - args.slip) / 2 else (a + 1) % 4
    q = move(p, a)
    v = cells[q[0]][q[1]]
    return q, (1.0 if v == 'G' else 0.0), v in 'GH'


def batch_ids(texts):
    ids = [encode(t) for t in texts]
    T = max(len(x) for x in ids)
    pad = torch.zeros(len(ids), T, dtype=torch.long); seg = torch.zeros(len(ids), T, dtype=torch.long)
    for i, x in enumerate(ids):
        pad[i, :len(x)] = torch.tensor(x); seg[i, :len(x)] = 1
    return ids, pad, seg


def action_logits(texts, full=False):
    ids, pad, seg = batch_ids(texts)
    hidden = model.trunk(pad, seg)
    h = hidden[torch.arange(len(ids)), torch.tensor([len(x) - 1 for x in ids])]
    return model.lm_head(h) if full else model.lm_head(h)[:, ACTION_IDS]


def action_logp(texts):
    """log p(move) of the 4 moves, for the update: renormalised over the 4 (the pilot) or over the whole vocabulary (--full-vocab)."""
    if args.full_vocab:
        return torch.log_softmax(action_logits(texts, True), -1)[:, ACTION_IDS]
    return torch.log_softmax(action_logits(texts), -1)


def play(puzzles, rng, policy='model'):
    """Episodes on (cells, start) puzzles. Returns per episode: success, decisions [(text, action, reward)], toward count, moves."""
    n = len(puzzles)
    pos = [pz[1] for pz in puzzles]; alive = [True] * n; succ = [0.0] * n
    dmaps = [dist_map(pz[0]) for pz in puzzles]
    decisions = [[] for _ in range(n)]; toward = moves = 0
    for turn in range(1 if args.task == 'bandit' else 10):
        idx = [i for i in range(n) if alive[i]]
        if not idx:
            break
        texts = [prefix(puzzles[i][0], pos[i]) for i in idx]
        if policy == 'model':
            with torch.no_grad():
                probs = torch.softmax(action_logits(texts), -1)
            acts = torch.multinomial(probs, 1).squeeze(1).tolist()
        elif policy == 'uniform':
            acts = [rng.randrange(4) for _ in idx]
        else:
            acts = [policy(puzzles[i][0], pos[i], rng) for i in idx]
        for k, i in enumerate(idx):
            a = acts[k]; cells = puzzles[i][0]; p = pos[i]; d = dmaps[i]
            q0 = move(p, a)
            moves += 1
            if cells[q0[0]][q0[1]] != 'H' and d.get(q0, 99) < d.get(p, 99):
                toward += 1
            q, r, done = step_env(cells, p, a, rng)
            phi0 = -d.get(p, 7); phi1 = -(7 if cells[q[0]][q[1]] == 'H' else d.get(q, 7))
            shaped = r + (args.beta * (phi1 - phi0) if args.reward == 'shaped' else 0.0)
            decisions[i].append((texts[k], a, shaped))
            pos[i] = q
            if done:
                alive[i] = False; succ[i] = r
    return succ, decisions, toward, moves


def shortest_move(cells, p):
    d = dist_map(cells)
    best = None
    for a in range(4):
        q = move(p, a)
        if q != p and q in d and (best is None or d[q] < d[best[1]]):
            best = (a, q)
    return None if best is None else best[0]


eval_rng = random.Random(3_000_000)
eval_puzzles = [gen_map(eval_rng) for _ in range(args.eval_puzzles)]


def evaluate(step):
    rng = random.Random(99)
    torch.manual_seed(1000 + step)
    res, tw, mv = [], 0, 0
    per_puzzle = [0] * len(eval_puzzles)
    for _ in range(args.eval_samples):
        s, _d, t, m = play(eval_puzzles, rng); res += s; tw += t; mv += m
        for i, x in enumerate(s):
            per_puzzle[i] += int(x)
    with torch.no_grad():
        probs = torch.softmax(action_logits([prefix(c, p) for c, p in eval_puzzles]), -1)
        ent = float(-(probs * probs.clamp_min(1e-12).log()).sum(-1).mean())
        mean = probs.mean(0, keepdim=True)
        dependence = float((probs * (probs.clamp_min(1e-12).log() - mean.log())).sum(-1).mean())
        best = [shortest_move(c, p) for c, p in eval_puzzles]
        pbest = float(sum(probs[i, a] for i, a in enumerate(best) if a is not None) / sum(a is not None for a in best))
    return {'step': step, 'passAt1': sum(res) / len(res), 'n': len(res), 'towardGoal': tw / max(1, mv),
            'pShortestMove': round(pbest, 3), 'stateDependence': round(dependence, 4), 'turn0Entropy': round(ent, 3),
            'marginal': [round(float(x), 3) for x in probs.mean(0)], 'perPuzzle': per_puzzle}


out = open(args.out, 'a') if args.out else None
META = {'task': args.task, 'fullVocab': args.full_vocab, 'init': os.path.basename(os.path.normpath(INIT)), 'bcWarmup': args.bc_warmup, 'format': args.format, 'reward': args.reward, 'beta': args.beta,
        'gamma': args.gamma, 'lr': args.lr, 'groups': args.groups, 'groupSize': args.group_size, 'slip': args.slip, 'seed': args.seed}


def emit(row):
    row.update(META)
    line = json.dumps(row); print(json.dumps({k: v for k, v in row.items() if k != 'perPuzzle'}), flush=True)
    if out:
        out.write(line + '\n'); out.flush()


# ---------------------------------------------------------------- sanity check: greedy replies
@torch.no_grad()
def greedy(texts, n_new, stop=None):
    """Greedy continuation of equal-or-unequal-length texts (batched with a KV cache per equal-length group)."""
    outs = [''] * len(texts)
    groups = {}
    for i, t in enumerate(texts):
        groups.setdefault(len(encode(t)), []).append(i)
    for L, idx in groups.items():
        ids = torch.tensor([encode(texts[i]) for i in idx])
        B = len(idx)
        cache = {'cap': L + n_new + 1}
        h = model.trunk(ids, torch.ones(B, L, dtype=torch.long), cache=cache, positions=torch.arange(L).expand(B, L))
        nxt = model.lm_head(h[:, -1]).argmax(-1)
        done = [False] * B
        for k in range(n_new):
            for b in range(B):
                if not done[b]:
                    piece = inv_vocab[int(nxt[b])]
                    outs[idx[b]] += piece
                    if stop and outs[idx[b]].endswith(stop):
                        done[b] = True
            if all(done):
                break
            h = model.trunk(nxt.view(B, 1), torch.ones(B, L + k + 1, dtype=torch.long), cache=cache,
                            positions=torch.full((B, 1), L + k, dtype=torch.long))
            nxt = model.lm_head(h[:, -1]).argmax(-1)
    return outs


if args.check:
    texts = ['<|system|><|im_end|><|user|>' + RULES + ASK[args.format] + '\n' + render(c, p) + '\n<|im_end|><|assistant|><think>'
             for c, p in eval_puzzles[:args.check]]
    for t, o in zip(texts, greedy(texts, 120, stop='</answer>')):
        print(repr(t[-40:]), '->', repr(o))
    sys.exit(0)

# ---------------------------------------------------------------- diagnostic: act on the model's own predictions
if args.lookahead:
    puzzles = eval_puzzles[:args.lookahead_puzzles]
    cache_pred = {}

    def predicted(cells, p):
        key = render(cells, p)
        if key not in cache_pred:
            texts = [prefix(cells, p, 'wm') + ACTIONS[a] + '.\n<prediction>\n' for a in range(4)]
            cache_pred[key] = [o[:19] for o in greedy(texts, 19)]
        return cache_pred[key]

    def classify_grid(grid, cur):
        if '√' in grid:
            return 'goal'
        if 'X' in grid:
            return 'hole'
        if grid == cur:
            return 'stay'
        return 'move'

    def lookahead_policy(source):
        def pol(cells, p, rng):
            cur = render(cells, p)
            if source == 'model':
                kinds = [classify_grid(g, cur) for g in predicted(cells, p)]
            else:
                kinds = [classify_grid(render(cells, move(p, a)), cur) for a in range(4)]
            for want in (['goal'], ['move'], ['move', 'stay'], ['move', 'stay', 'hole']):
                cand = [a for a in range(4) if kinds[a] in want]
                if cand:
                    return rng.choice(cand)
            return rng.randrange(4)
        return pol

    rows = {}
    for name, pol in [('uniform', 'uniform'), ('lookahead on the model\'s predictions', lookahead_policy('model')),
                      ('lookahead on the true dynamics', lookahead_policy('true'))]:
        rng = random.Random(5)
        res = []
        for _ in range(4):
            s, _d, _t, _m = play(puzzles, rng, pol); res += s
        rows[name] = sum(res) / len(res)
    # how often the model's greedy prediction equals the true intended outcome, on the visited first states
    exact = tot = 0
    for c, p in puzzles:
        preds = predicted(c, p)
        for a in range(4):
            tot += 1; exact += int(preds[a] == render(c, move(p, a)))
    emit({'row': 'lookahead', 'passAt1': rows, 'episodesPerRow': 4 * len(puzzles),
          'predictionExactFirstTurnsAll4Actions': exact / tot})
    sys.exit(0)

# ---------------------------------------------------------------- RL
def wm_check(k):
    exact = tot = 0
    for c, p in eval_puzzles[:k]:
        texts = [prefix(c, p, 'wm') + ACTIONS[a] + '.\n<prediction>\n' for a in range(4)]
        for a, o in enumerate(greedy(texts, 19)):
            tot += 1; exact += int(o[:19] == render(c, move(p, a)))
    return exact / tot


def bc_batch(rng, n):
    texts, acts = [], []
    while len(texts) < n:
        cells, _ = gen_map(rng)
        free = [(r, c) for r in range(4) for c in range(4) if cells[r][c] in 'FS']
        p = free[rng.randrange(len(free))]
        a = shortest_move(cells, p)
        if a is None:
            continue
        texts.append(prefix(cells, p)); acts.append(a)
    return texts, acts


def wm_loss(rng, n):
    """Teacher-forced loss on the predicted grid of n one-action drills (the world model's SFT target, intended outcome)."""
    heads, grids = [], []
    for _ in range(n):
        cells, _s = gen_map(rng)
        free = [(r, c) for r in range(4) for c in range(4) if cells[r][c] in 'FS']
        p = free[rng.randrange(len(free))]; a = rng.randrange(4)
        heads.append(prefix(cells, p, 'wm') + ACTIONS[a] + '.\n<prediction>\n'); grids.append(render(cells, move(p, a)) + '\n</prediction>')
    full = [h + g for h, g in zip(heads, grids)]
    ids, pad, seg = batch_ids(full)
    logits = model.lm_head(model.trunk(pad, seg))
    tgt_pos, tgt_ids = [], []
    for i, (h, g) in enumerate(zip(heads, grids)):
        start = len(encode(h))
        for t in range(start, len(ids[i])):
            tgt_pos.append((i, t - 1)); tgt_ids.append(ids[i][t])
    rows = torch.tensor([b for b, _ in tgt_pos]); cols = torch.tensor([t for _, t in tgt_pos])
    return F.cross_entropy(logits[rows, cols], torch.tensor(tgt_ids))


if args.wm_check:
    emit({'row': 'wmCheck', 'when': 'start', 'predictionExactAll4Actions': wm_check(args.wm_check), 'turns': 4 * args.wm_check})
if args.bc_warmup:
    brng = random.Random(5_000_000 + args.seed)
    warm = torch.optim.AdamW(params, lr=args.bc_lr, betas=(0.9, 0.999), weight_decay=0.0)
    bc_losses = []
    for _ in range(args.bc_warmup):
        texts, acts = bc_batch(brng, 64)
        loss = F.nll_loss(action_logp(texts), torch.tensor(acts))
        if args.wm_mix:
            loss = loss + wm_loss(brng, args.wm_mix)
        warm.zero_grad(); loss.backward(); gn = torch.nn.utils.clip_grad_norm_(params, 1.0); warm.step()
        bc_losses.append(round(float(loss), 3))
        if args.bc_trace:
            with torch.no_grad():
                pr = torch.softmax(action_logits([prefix(c, p) for c, p in eval_puzzles[:32]]), -1)
                mg = pr.mean(0, keepdim=True)
                mi = float((pr * (pr.clamp_min(1e-12).log() - mg.log())).sum(-1).mean())
            print(json.dumps({'bcStep': len(bc_losses) - 1, 'loss': round(float(loss), 4), 'gradNorm': round(float(gn), 4),
                              'marginal': [round(float(x), 4) for x in mg[0]], 'mi': round(mi, 4)}), flush=True)
    emit({'row': 'bc', 'losses': bc_losses, 'bcLr': args.bc_lr})
    if args.wm_check:
        emit({'row': 'wmCheck', 'when': 'after behaviour cloning', 'predictionExactAll4Actions': wm_check(args.wm_check), 'turns': 4 * args.wm_check})
crng = random.Random(7)
chance = [play(eval_puzzles, crng, 'uniform')[0] for _ in range(20)]
emit({'row': 'chance', 'passAt1': sum(map(sum, chance)) / (20 * len(eval_puzzles))})
train_rng = random.Random(2_000_000 + args.seed * 7919)
t0 = time.time(); cpu0 = time.process_time()
emit({'row': 'eval', **evaluate(0), 'episodes': 0, 'wall': 0, 'cpu': 0})
for step in range(1, args.steps + 1):
    puzzles = [gen_map(train_rng) for _ in range(args.groups)]
    batch = [pz for pz in puzzles for _ in range(args.group_size)]
    succ, decisions, _tw, _mv = play(batch, train_rng)
    texts, acts, weights = [], [], []
    for g in range(args.groups):
        members = list(range(g * args.group_size, (g + 1) * args.group_size))
        rets = {}
        for e in members:
            ds = decisions[e]; G = 0.0; r = []
            for t in reversed(range(len(ds))):
                G = ds[t][2] + args.gamma * G; r.append(G)
            rets[e] = list(reversed(r))
        if args.gamma == 1.0 and args.reward == 'sparse':   # every decision gets its episode's reward minus the group's mean
            m = sum(succ[e] for e in members) / len(members)
        else:
            flat = [x for e in members for x in rets[e]]; m = sum(flat) / max(1, len(flat))
        for e in members:
            for t, (text, a, _r) in enumerate(decisions[e]):
                texts.append(text); acts.append(a); weights.append(rets[e][t] - m)
    keep = [i for i, w in enumerate(weights) if w != 0]
    if keep:
        lp = action_logp([texts[i] for i in keep])[torch.arange(len(keep)), torch.tensor([acts[i] for i in keep])]
        loss = -(torch.tensor([weights[i] for i in keep]) * lp).sum() / len(texts)
    if keep and args.entropy > 0:   # entropy bonus at the decision, over every decision of the step (as the product's, per token)
        full = torch.log_softmax(action_logits(texts, True), -1)
        loss = loss - args.entropy * (-(full.exp() * full).sum(-1)).mean()
    if keep:
        opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(params, 1.0); opt.step()
    if step % args.eval_every == 0 or step == args.steps:
        emit({'row': 'eval', **evaluate(step), 'episodes': step * args.groups * args.group_size,
              'trainSuccess': sum(succ) / len(succ), 'wall': round(time.time() - t0, 1), 'cpu': round(time.process_time() - cpu0, 1)})
if args.wm_check:
    emit({'row': 'wmCheck', 'when': 'end', 'predictionExactAll4Actions': wm_check(args.wm_check), 'turns': 4 * args.wm_check})
