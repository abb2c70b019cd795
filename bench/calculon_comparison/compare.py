#!/usr/bin/env python3
"""Join Calculon's per-layout best (calc_sweep.py) with placesim's runs (placesim_runner.py) and
compare the rankings. Writes out/joined_main.csv and out/compare_main.md."""
import csv, json, math, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import placesim_runner

ROOT = os.path.abspath(os.environ.get('COMPARISON_DIR', '.'))  # where gen/, out/, placesim/, published/ go
calc = list(csv.DictReader(open(f'{ROOT}/out/calculon_gpt3_175B_64gpu_b64_layouts.csv')))
pairs = {(int(r['tensor_par']), int(r['pipeline_par'])): r for r in csv.DictReader(open(f'{ROOT}/out/calculon_gpt3_175B_64gpu_b64_tp_pairs.csv'))}
ps = list(csv.DictReader(open(f'{ROOT}/out/placesim_main.csv')))


def tb(x):
  return x in (True, 'True', 'true', '1')


def key_c(r):
  return (int(r['tensor_par']), int(r['pipeline_par']), int(r['data_par']), int(r['microbatch_size']),
          int(r['pipeline_interleaving']), r['activation_recompute'], tb(r['seq_par']), tb(r['optimizer_sharding']))


def key_p(r):
  return (int(r['t']), int(r['p']), int(r['d']), int(r['mbs']), int(r['ppint']), r['recompute'], tb(r['sp']), tb(r['sharding']))


cmap = {key_c(r): r for r in calc}
rows = []
for r in ps:
  k = key_p(r)
  c = cmap.get(k)
  j = dict(id=r['id'], t=k[0], p=k[1], d=k[2], mbs=k[3], v=k[4], recompute=k[5], sp=k[6], zero1=k[7],
           ps_status=r['ps_status'], ps_reason=r['ps_reason'], ps_step_s=r.get('ps_step_s', ''),
           ps_tflops=r.get('ps_model_tflops_per_gpu', ''), ps_mem_GiB=r.get('ps_peak_mem_GiB', ''),
           ps_compute_s=r.get('ps_compute_s', ''), ps_rest_s=r.get('ps_rest_s', ''),
           ps_fwd_slot_s=r.get('ps_fwd_slot_s', ''), ps_bwd_slot_s=r.get('ps_bwd_slot_s', ''))
  if c is None:
    pr = pairs.get((k[0], k[1]))
    if pr is not None and pr['frugal_feasible'] in ('False', False):
      j.update(calc_status='infeasible', calc_reason='(t,p) pruned: its most frugal layout ' + pr['reason'])
    else:
      # the (t,p) pair was searched, but Calculon's micro-batch loop stopped (its --mbs-break rule) at a
      # smaller micro-batch that was already over memory: infeasible by Calculon's own rule
      j.update(calc_status='infeasible (mbs-break)', calc_reason='a smaller micro-batch of this layout is already over memory (Calculon --mbs-break rule)')
  else:
    j.update(calc_status=c['status'], calc_reason=c['reason'], calc_step_s=c['total_time'],
             calc_nooverlap_step_s=c.get('nooverlap_total_time', ''),
             calc_mem_GiB=(float(c['proc_mem_tier1_cap_req']) / 2**30) if c['proc_mem_tier1_cap_req'] else '',
             calc_ctype=c['tensor_par_comm_type'], calc_tpov=c['tensor_par_overlap'], calc_dpov=c['data_par_overlap'],
             calc_nets=f"{c['tensor_par_net']}{c['pipeline_par_net']}{c['data_par_net']}" if c['tensor_par_net'] else '',
             calc_fw=c['fw_time'], calc_bw=c['bw_time'], calc_recompute=c['recompute_time'],
             calc_bubble=c['bubble_time'], calc_tp_exp=c['tp_comm_exposed_time'], calc_pp_exp=c['pp_comm_exposed_time'],
             calc_dp_exp=c['dp_comm_exposed_time'], calc_recomm_exp=c['recomm_exposed_time'], calc_optim=c['optim_step_time'],
             calc_tp_link=c['tp_comm_link_time'])
  rows.append(j)


def rank(vals):
  idx = sorted(range(len(vals)), key=lambda i: vals[i])
  r = [0.0] * len(vals)
  i = 0
  while i < len(idx):
    j = i
    while j + 1 < len(idx) and vals[idx[j + 1]] == vals[idx[i]]:
      j += 1
    for k in range(i, j + 1):
      r[idx[k]] = (i + j) / 2 + 1
    i = j + 1
  return r


def spearman(a, b):
  ra, rb = rank(a), rank(b)
  n = len(a)
  ma, mb = sum(ra) / n, sum(rb) / n
  cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
  va = math.sqrt(sum((x - ma) ** 2 for x in ra))
  vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
  return cov / (va * vb)


def pearson(a, b):
  n = len(a)
  ma, mb = sum(a) / n, sum(b) / n
  return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))


shared = [r for r in rows if r['ps_status'] == 'ok' and r['calc_status'] == 'ok']
a = [float(r['calc_step_s']) for r in shared]
b = [float(r['ps_step_s']) for r in shared]
ra, rb = rank(a), rank(b)
for r, x, y in zip(shared, ra, rb):
  r['calc_rank'], r['ps_rank'], r['rank_diff'] = x, y, y - x
out = {}
out['n_total'] = len(rows)
out['n_shared_feasible'] = len(shared)
out['spearman_shared'] = spearman(a, b)
out['pearson_log_shared'] = pearson([math.log(x) for x in a], [math.log(y) for y in b])
out['median_ratio_ps_over_calc'] = sorted(y / x for x, y in zip(a, b))[len(a) // 2]
nob = [(float(r['calc_nooverlap_step_s']), float(r['ps_step_s'])) for r in shared if r.get('calc_nooverlap_step_s')]
out['spearman_shared_calc_nooverlap'] = spearman([x for x, _ in nob], [y for _, y in nob])
out['n_shared_calc_nooverlap'] = len(nob)
# wider set: placesim with --allow-oom times where Calculon fits
wide = [r for r in rows if r['ps_status'] in ('ok', 'oom') and r['calc_status'] == 'ok']
out['spearman_calc_feasible_incl_ps_oom'] = spearman([float(r['calc_step_s']) for r in wide], [float(r['ps_step_s']) for r in wide])
out['n_calc_feasible_incl_ps_oom'] = len(wide)
# verdict table
from collections import Counter
ver = Counter((r['calc_status'], r['ps_status']) for r in rows)
out['verdicts'] = {f'calc={k[0]} / placesim={k[1]}': v for k, v in sorted(ver.items())}
json.dump(out, open(f'{ROOT}/out/compare_main.json', 'w'), indent=1)
placesim_runner.write_rows(f'{ROOT}/out/joined_main.csv', rows)


def f3(x):
  return f'{float(x):.3f}' if x not in ('', None) else ''


md = []
md.append('| stat | value |\n|---|---|')
for k, v in out.items():
  if k != 'verdicts':
    md.append(f'| {k} | {v:.4f} |' if isinstance(v, float) else f'| {k} | {v} |')
md.append('\n| Calculon verdict / placesim verdict | configurations |\n|---|---|')
for k, v in out['verdicts'].items():
  md.append(f'| {k} | {v} |')


def table(title, lst):
  md.append(f'\n**{title}**\n')
  md.append('| layout | Calculon step s (rank) | placesim step s (rank) | placesim model TFLOP/s/GPU | Calculon mem GiB | placesim peak GiB | Calculon options chosen |')
  md.append('|---|---|---|---|---|---|---|')
  for r in lst:
    md.append(f"| {r['id']} | {f3(r['calc_step_s'])} ({r['calc_rank']:.0f}) | {f3(r['ps_step_s'])} ({r['ps_rank']:.0f}) | {float(r['ps_tflops']):.1f} | {float(r['calc_mem_GiB']):.1f} | {float(r['ps_mem_GiB']):.1f} | {r['calc_ctype']}, tp_overlap={r['calc_tpov']}, dp_overlap={r['calc_dpov']}, nets(t,p,d)={r['calc_nets']} |")


table('Calculon top 10 (shared feasible set)', sorted(shared, key=lambda r: r['calc_rank'])[:10])
table('placesim top 10 (shared feasible set)', sorted(shared, key=lambda r: r['ps_rank'])[:10])
table('largest rank disagreements (|placesim rank - Calculon rank|)', sorted(shared, key=lambda r: -abs(r['rank_diff']))[:12])
open(f'{ROOT}/out/compare_main.md', 'w').write('\n'.join(md) + '\n')
print('\n'.join(md))
