#!/usr/bin/env python3
"""The fair subset of GPT-3 175B layouts on 64 GPUs, global batch 64, compared in both tools."""
import json, os
N, B, L, H = 64, 64, 96, 96
def factors(n): return [i for i in range(1, n + 1) if n % i == 0]
lays = []
def add(t, p, d, mbs, ppint, rec, sp, sh):
    i = f"t{t}_p{p}_d{d}_mbs{mbs}_v{ppint}_{rec}_sp{int(sp)}_zo{int(sh)}"
    if any(x['id'] == i for x in lays): return
    lays.append(dict(id=i, t=t, p=p, d=d, mbs=mbs, ppint=ppint, recompute=rec, sp=bool(sp), sharding=bool(sh), batch=B))
for t in [1, 2, 4, 8, 16, 32]:
    for p in factors(N // t):
        if L % p: continue
        d = N // (t * p)
        if B % d: continue
        sp = t > 1; sh = d > 1
        if t > 8:   # placesim refuses tensor groups larger than a machine: a few rows only
            add(t, p, d, 1, 1, 'full', sp, sh); continue
        mbss = [m for m in [1, 2, 4] if (B // d) % m == 0]
        v2 = 2 if (L // p) % 2 == 0 else 3
        ppints = [1] if p == 1 else [1, v2]
        for mbs in mbss:
            for rec in ['full', 'attn_only', 'none']:
                for v in ppints:
                    add(t, p, d, mbs, v, rec, sp, sh)
        if t > 1:
            for mbs in mbss: add(t, p, d, mbs, 1, 'full', False, sh)   # sequence parallel off
        if d > 1:
            add(t, p, d, 1, 1, 'full', sp, False)                       # optimizer sharding off
base = {"model": {"zoo": "gpt", "parameters": {"layers": 96, "hidden": 12288, "heads": 96, "sequence": 2048, "vocabulary": 51200}},
        "cluster": {"template": "dgx_a100_80gb", "nodes": 8, "fabric": {"link": "ib_hdr"}},
        "run": {"mode": "training", "batch_size": 64, "steps": 1, "precision": "fp16", "optimizer": "adam", "recompute": True}}
ROOT = os.path.abspath(os.environ.get('COMPARISON_DIR', '.'))
os.makedirs(os.path.join(ROOT, 'gen'), exist_ok=True)
json.dump({"base": base, "layouts": lays}, open(os.path.join(ROOT, 'gen', 'main_layouts.json'), 'w'), indent=1)
print(len(lays))
