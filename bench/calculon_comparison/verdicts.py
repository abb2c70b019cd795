#!/usr/bin/env python3
"""Score each tool's ordering against the published claims (out/published.csv -> out/published_verdicts.md)."""
import csv
import os
from collections import defaultdict
ROOT = os.path.abspath(os.environ.get('COMPARISON_DIR', '.'))
rows = list(csv.DictReader(open(os.path.join(ROOT, 'out', 'published.csv'))))
cases = defaultdict(list)
for r in rows:
    cases[r['case']].append(r)
TOOLS = [('calc', 'Calculon (best options)'), ('calcno', 'Calculon (no overlap options)'), ('ps', 'placesim')]
def st(r, tool):
    if tool == 'ps' and r['ps_status'] != 'ok':
        return None
    v = r.get(f'{tool}_step_s', '')
    return float(v) if v not in ('', None) else None
out = ['| case | published claim | tool | step times (s), in the figure\'s order | verdict |', '|---|---|---|---|---|']
def fmt(r, tool):
    v = st(r, tool)
    if v is None:
        return f"{r['tag']}: " + ('refused' if tool == 'ps' and r['ps_status'] == 'refused' else ('OOM' if tool == 'ps' else 'n/a'))
    return f"{r['tag']}: {v:.2f}"
score = defaultdict(lambda: [0, 0])
for name, rs in cases.items():
    for tool, tname in TOOLS:
        vals = [(r, st(r, tool)) for r in rs]
        ok = [(r, v) for r, v in vals if v is not None]
        verdict = ''
        if name.startswith('fig13'):
            best = min(ok, key=lambda x: x[1])[0]['tag']
            verdict = 'agrees' if best == '(p,t)=(8,8)' else f'disagrees (fastest {best})'
            if tool == 'ps':
                verdict += ' (only t<=8 runnable)'
        elif name.startswith('fig14') or name.startswith('fig15'):
            seq = [v for _, v in ok]
            mono = all(a < b for a, b in zip(seq, seq[1:]))
            best = min(ok, key=lambda x: x[1])[0]['tag']
            verdict = 'agrees (step grows monotonically)' if mono else f'disagrees (fastest {best}; not monotone)'
            if tool == 'ps' and name.startswith('fig15'):
                verdict += ' (t=16,32 refused)'
        elif name.startswith('fig16'):
            best = min(ok, key=lambda x: x[1])[0]['tag']
            verdict = 'agrees' if best == 'mbs=2' else f'disagrees (fastest {best})'
        elif name.startswith('fig12'):
            a = [v for r, v in ok if r['tag'].startswith('non')][0]
            b = [v for r, v in ok if r['tag'].startswith('inter')][0]
            verdict = ('agrees' if b < a else 'disagrees') + f' (interleaved speed-up {a / b:.3f}x)'
        elif name.startswith('korthikanti'):
            a, b = ok[0][1], ok[1][1]
            verdict = f'ordering agrees; full {a:.2f} s ({(a / 18.13 - 1) * 100:+.1f}% vs 18.13), seq+sel {b:.2f} s ({(b / 13.75 - 1) * 100:+.1f}% vs 13.75); ratio {a / b:.3f} (published 1.319)'
        elif name.startswith('table2'):
            r, v = ok[0]
            tf = float(r[f'{tool}_narayanan_tflops_per_gpu'])
            pub = float(r['tag'].split()[0])
            verdict = f'{tf:.1f} TFLOP/s/GPU vs {pub:.0f} published ({(tf / pub - 1) * 100:+.1f}%)'
        elif name.startswith('fig17'):
            continue
        if verdict.startswith('agrees') or verdict.startswith('ordering agrees'):
            score[tool][0] += 1
        if not name.startswith('table2'):
            score[tool][1] += 1
        out.append(f"| {name} | {rs[0]['claim']} | {tname} | {'; '.join(fmt(r, tool) for r in rs)} | {verdict} |")
# fig 17
f17 = defaultdict(dict)
for name, rs in cases.items():
    if name.startswith('fig17'):
        for r in rs:
            f17[int(r['batch'])][r['recompute']] = r
out.append('\n**Figure 17 (145B, 128 GPUs, (t,p)=(8,16)): sequences/s with and without recomputation**\n')
out.append('| batch | Calculon best: full / none (loss from recompute) | Calculon no-overlap: full / none | placesim: full / none | placesim peak GiB (none) | Calculon GiB (none) |')
out.append('|---|---|---|---|---|---|')
for B in sorted(f17):
    cells = []
    for tool in ['calc', 'calcno', 'ps']:
        a = B / float(f17[B]['full'][f'{tool}_step_s']); b = B / float(f17[B]['none'][f'{tool}_step_s'])
        cells.append(f'{a:.3f} / {b:.3f} ({(1 - a / b) * 100:.0f}%)')
    out.append(f"| {B} | {' | '.join(cells)} | {float(f17[B]['none']['ps_peak_mem_GiB']):.1f} ({f17[B]['none']['ps_status']}) | {float(f17[B]['none']['calc_mem_GiB']):.1f} |")
out.append('\nOrdering claims scored (agrees / scored): ' + ', '.join(f"{t}: {score[k][0]}/{score[k][1]}" for k, t in TOOLS))
open(os.path.join(ROOT, 'out', 'published_verdicts.md'), 'w').write('\n'.join(out) + '\n')
print('\n'.join(out))
