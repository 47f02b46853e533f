"""What one-step decision rules are worth on the main job's lake (issue 34, docs/results/mainjob-v3): FrozenLake 4x4, p 0.8,
random start and goal with a path, success rate 0.8 (else a perpendicular slip, 0.1 each side), 10 one-action turns; 3,000
random maps (seed 0). Policies read the TRUE map: uniform; avoid holes; a random plan revised only when it would enter a hole;
take an adjacent goal else avoid holes; the lookahead rule of selfplay.lookahead (goal > nearer ice > ice > edge > hole).
  python3 bench/lookahead-rule-value.py
"""
import random
DR=[0,1,0,-1]; DC=[-1,0,1,0]
def gen(rng):
    while True:
        cells=[['F' if rng.random()<0.8 else 'H' for _ in range(4)] for _ in range(4)]
        s=rng.randrange(16); g=rng.randrange(15); g+= g>=s
        cells[s//4][s%4]='S'; cells[g//4][g%4]='G'
        # path
        seen={s}; st=[s]; ok=False
        while st:
            i=st.pop(); r,c=divmod(i,4)
            if cells[r][c]=='G': ok=True; break
            for d in range(4):
                rr,cc=r+DR[d],c+DC[d]
                if 0<=rr<4 and 0<=cc<4 and cells[rr][cc]!='H' and rr*4+cc not in seen: seen.add(rr*4+cc); st.append(rr*4+cc)
        if ok: return cells,s,g
def move(p,d):
    r,c=divmod(p,4); rr,cc=r+DR[d],c+DC[d]
    if 0<=rr<4 and 0<=cc<4: return rr*4+cc
    return p
def play(pol,rng,cells,s,g):
    p=s
    for t in range(10):
        d=pol(cells,p,g,rng)
        u=rng.random(); dd=d if u<0.8 else ((d+3)%4 if u<0.9 else (d+1)%4)
        p=move(p,dd); r,c=divmod(p,4)
        if cells[r][c]=='H': return 0
        if cells[r][c]=='G': return 1
    return 0
def uniform(cells,p,g,rng): return rng.randrange(4)
def avoid_holes(cells,p,g,rng):
    ok=[d for d in range(4) if cells[move(p,d)//4][move(p,d)%4]!='H']
    return rng.choice(ok) if ok else rng.randrange(4)
def plan_revise(cells,p,g,rng):
    d=rng.randrange(4); n=move(p,d)
    if cells[n//4][n%4]=='H':
        return avoid_holes(cells,p,g,rng)
    return d
def goal_then_avoid(cells,p,g,rng):
    for d in range(4):
        if move(p,d)==g: return d
    return avoid_holes(cells,p,g,rng)
def rule(cells,p,g,rng):
    dist=lambda q: abs(q//4-g//4)+abs(q%4-g%4)
    best=[];br=9
    for d in range(4):
        n=move(p,d); ch=cells[n//4][n%4]
        r=0 if n==g else 4 if ch=='H' else 3 if n==p else (1 if dist(n)<dist(p) else 2)
        if r<br: br=r; best=[d]
        elif r==br: best.append(d)
    return rng.choice(best)
rng=random.Random(0)
games=[gen(rng) for _ in range(3000)]
for name,pol in [('uniform',uniform),('avoid holes',avoid_holes),('plan+revise on hole',plan_revise),('goal then avoid',goal_then_avoid),('rule',rule)]:
    print(name, sum(play(pol,rng,*gm) for gm in games)/len(games))
