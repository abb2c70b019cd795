#!/usr/bin/env python3
"""Published A100 layout comparisons (Narayanan et al. SC'21; Korthikanti et al. 2022) through
both Calculon (best Calculon-only options per layout, calc_sweep.eval_layout) and placesim
(closed-form tier, placesim_runner.one).

Usage: PYTHONPATH=src /usr/bin/python3 published.py  -> out/published.csv, out/published.json
"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calc_sweep
import placesim_runner

ROOT = os.path.abspath(os.environ.get('COMPARISON_DIR', '.'))  # where gen/, out/, placesim/, published/ go
MODELS = {
  # name: (layers, hidden, heads, seq)                                source
  'gpt_161B': (32, 20480, 128, 2048),   # Narayanan Fig 13 (run_figure_13.sh: NLS=32 HS=20480 NAH=128)
  'gpt_5p9B': (32, 3840, 32, 2048),     # Fig 14/15 (NLS=32 HS=3840 NAH=32)
  'gpt_91B': (32, 15360, 128, 2048),    # Fig 16 (NLS=32 HS=15360 NAH=128)
  'gpt_145B': (80, 12288, 96, 2048),    # Fig 17 (NLS=80 HS=12288 NAH=96)
  'gpt3_175B': (96, 12288, 96, 2048),   # Fig 12, Table 2; Korthikanti Table 5
}


def calc_model_file(name):
  l, h, a, s = MODELS[name]
  path = f'{ROOT}/published/calculon_models/{name}.json'
  os.makedirs(os.path.dirname(path), exist_ok=True)
  json.dump({'hidden': h, 'feedforward': 4 * h, 'seq_size': s, 'attn_heads': a,
             'attn_size': h // a, 'num_blocks': l}, open(path, 'w'), indent=1)
  return path


def narayanan_flops(B, l, h, s, V=51200):
  """Narayanan et al. eq. (3): FLOPs per iteration with activation recomputation."""
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))


CASES = []


def case(name, model, n, batch, layouts, claim):
  CASES.append(dict(name=name, model=model, n=n, batch=batch, layouts=layouts, claim=claim))


def L(t, p, mbs=1, ppint=1, rec='full', sp=False, sh=False, tag=''):
  return dict(t=t, p=p, mbs=mbs, ppint=ppint, recompute=rec, sp=sp, sharding=sh, tag=tag)


# Fig 13: 161B (32 layers), 64 GPUs, (p,t) in (2,32),(4,16),(8,8),(16,4),(32,2), batch 32 and 128, mbs 1, recompute
for B in [32, 128]:
  case(f'fig13_b{B}', 'gpt_161B', 64, B, [L(64 // p, p, tag=f'(p,t)=({p},{64 // p})') for p in [2, 4, 8, 16, 32]],
       'peak at t=8 = GPUs per node, i.e. (p,t)=(8,8), for both batch sizes (text of 5.4.1; numbers only in a bar chart)')
# Fig 14: 5.9B, t=1, (p,d) with p in 2..32, mbs 1, recompute; batch sizes per script: 32, 512 (caption: three sizes)
for B in [32, 128, 512]:
  case(f'fig14_b{B}', 'gpt_5p9B', 64, B, [L(1, p, tag=f'(p,d)=({p},{64 // p})') for p in [2, 4, 8, 16, 32]],
       'throughput decreases as the pipeline-parallel size increases, for each batch size (5.4.2)')
# Fig 15: 5.9B, p=1, (t,d) with t in 2..32, mbs 1, recompute, batch 32, 128, 512
for B in [32, 128, 512]:
  case(f'fig15_b{B}', 'gpt_5p9B', 64, B, [L(t, 1, tag=f'(t,d)=({t},{64 // t})') for t in [2, 4, 8, 16, 32]],
       'throughput decreases as the tensor-parallel size increases, most across nodes (5.4.3)')
# Fig 16: 91B, (t,p)=(8,8), mbs 1,2,4,8, batch 128 and 512
for B in [128, 512]:
  case(f'fig16_b{B}', 'gpt_91B', 64, B, [L(8, 8, mbs=m, tag=f'mbs={m}') for m in [1, 2, 4, 8]],
       'best micro-batch size is 2 (5.5)')
# Fig 17: 145B, 128 GPUs, (8,16), mbs 1, batch 1..256, recompute yes/no (sequences/s)
fig17 = []
for B in [1, 2, 4, 8, 16, 32, 64, 128, 256]:
  for rec in ['full', 'none']:
    fig17.append((B, rec))
# Fig 12: 175B, 96 GPUs, (8,12), mbs 1, batch 12..60, interleaved (2 layers per virtual stage -> V=4) or not
for B in [12, 24, 36, 48, 60]:
  case(f'fig12_b{B}', 'gpt3_175B', 96, B, [L(8, 12, ppint=1, tag='non-interleaved'), L(8, 12, ppint=4, tag='interleaved V=4')],
       'interleaved (with scatter/gather) faster than non-interleaved at every batch shown; gap closes as batch grows (5.3.2)')
# Korthikanti et al. 2022 Table 5: 175B, 64 GPUs, t8 p8, batch 64, mbs 1, interleaving 3 (Calculon's validation files)
case('korthikanti_tab5', 'gpt3_175B', 64, 64,
     [L(8, 8, ppint=3, rec='full', sp=False, tag='full recompute (18.13 s)'),
      L(8, 8, ppint=3, rec='attn_only', sp=True, tag='seq-par + selective (13.75 s)')],
     'iteration time 18.13 s (full recompute) vs 13.75 s (sequence parallel + selective recompute)')
# Narayanan Table 2: 174.6B PTD-P, batch 1536, mbs 1, model-parallel size 96 (t8 x p12)
for n, tf in [(384, 153), (768, 149), (1536, 141)]:
  case(f'table2_{n}gpus', 'gpt3_175B', n, 1536, [L(8, 12, tag=f'{tf} TFLOP/s per GPU published')],
       f'{tf} teraFLOP/s per GPU (Table 2, PTD-P)')


def run_layout(cs, lay, calc_cache):
  l, h, a, s = MODELS[cs['model']]
  n, B = cs['n'], cs['batch']
  t, p = lay['t'], lay['p']
  d = n // (t * p)
  mfile = calc_model_file(cs['model'])
  key = (cs['model'], n, B)
  if calc_cache.get('key') != key:
    calc_sweep.init(mfile, f'{ROOT}/src/systems/a100_80g.json', n, B)
    calc_cache['key'] = key
  row = dict(case=cs['name'], model=cs['model'], gpus=n, batch=B, tag=lay['tag'], t=t, p=p, d=d,
             mbs=lay['mbs'], ppint=lay['ppint'], recompute=lay['recompute'], sp=lay['sp'], sharding=lay['sharding'])
  if B % (d * lay['mbs']):
    row['calc_status'] = 'n/a'
  else:
    best, nev, mem_err, errs, feas = calc_sweep.eval_layout(t, p, d, lay['mbs'], lay['ppint'], lay['recompute'], lay['sp'], lay['sharding'] and d > 1)
    if best:
      row.update(calc_status='ok', calc_step_s=best['total_time'], calc_ctype=best['tensor_par_comm_type'],
                 calc_tpov=best['tensor_par_overlap'], calc_mem_GiB=best['proc_mem_tier1_cap_req'] / 2**30,
                 calc_bubble_s=best['bubble_time'], calc_tp_exposed_s=best['tp_comm_exposed_time'],
                 calc_pp_exposed_s=best['pp_comm_exposed_time'], calc_dp_exposed_s=best['dp_comm_exposed_time'])
      # Calculon without its overlap options (tensor_par_overlap none, data_par_overlap False): what
      # Megatron-LM of 2021/2022 ran (no TP comm overlap; DDP=local reduces gradients after backward)
      no = [f for f in feas if f['tensor_par_overlap'] == 'none' and not f['data_par_overlap']]
      if no:
        b2 = max(no, key=lambda f: f['sample_rate'])
        row.update(calcno_step_s=b2['total_time'], calcno_ctype=b2['tensor_par_comm_type'],
                   calcno_tp_exposed_s=b2['tp_comm_exposed_time'], calcno_bubble_s=b2['bubble_time'])
    else:
      row.update(calc_status='infeasible', calc_reason=mem_err or '; '.join(sorted(errs)))
  nodes = max(1, n // 8)
  base = {'model': {'zoo': 'gpt', 'parameters': {'layers': l, 'hidden': h, 'heads': a, 'sequence': s, 'vocabulary': 51200}},
          'cluster': {'template': 'dgx_a100_80gb', 'nodes': nodes, 'fabric': {'link': 'ib_hdr'}},
          'run': {'mode': 'training', 'batch_size': B, 'steps': 1, 'precision': 'fp16', 'optimizer': 'adam', 'recompute': True}}
  pl = dict(id=f"{cs['name']}_t{t}_p{p}_d{d}_mbs{lay['mbs']}_v{lay['ppint']}_{lay['recompute']}_sp{int(lay['sp'])}",
            t=t, p=p, d=d, mbs=lay['mbs'], ppint=lay['ppint'], recompute=lay['recompute'], sp=lay['sp'],
            sharding=lay['sharding'], batch=B)
  r = placesim_runner.one((base, pl, f'{ROOT}/published/placesim_scenarios'))
  for k in ['ps_status', 'ps_reason', 'ps_step_s', 'ps_model_tflops_per_gpu', 'ps_peak_mem_GiB', 'ps_compute_s', 'ps_rest_s']:
    row[k] = r.get(k, '')
  row['scenario'] = f"published/placesim_scenarios/{pl['id']}.json"
  F = narayanan_flops(B, l, h, s)
  for tool in ['calc', 'calcno', 'ps']:
    st = row.get(f'{tool}_step_s')
    row[f'{tool}_narayanan_tflops_per_gpu'] = (F / st / n / 1e12) if st not in (None, '') else ''
    row[f'{tool}_seq_per_s'] = (B / st) if st not in (None, '') else ''
  return row


def main():
  os.makedirs(f'{ROOT}/published/placesim_scenarios', exist_ok=True)
  rows = []
  cache = {}
  runs = [(cs, lay) for cs in CASES for lay in cs['layouts']]
  for B, rec in fig17:
    cs = dict(name=f'fig17_b{B}', model='gpt_145B', n=128, batch=B, claim='recompute up to 33% slower at small batch; with recompute up to 2x the best no-recompute throughput at large batch (5.6)')
    runs.append((cs, L(8, 16, rec=rec, tag=f'recompute={rec}')))
  for cs, lay in runs:
    rows.append(run_layout(cs, lay, cache))
    rows[-1]['claim'] = cs['claim']
    print(rows[-1]['case'], rows[-1]['tag'], rows[-1].get('calc_step_s', rows[-1].get('calc_status')),
          rows[-1].get('ps_step_s') or rows[-1].get('ps_status'), flush=True)
  placesim_runner.write_rows(f'{ROOT}/out/published.csv', rows)


if __name__ == '__main__':
  main()
