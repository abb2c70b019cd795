#!/usr/bin/env python3
"""Calculon layout search over the layouts placesim can express.

Uses Calculon's own API exactly as its llm-all-executions / llm-optimal-execution
commands do (Llm(app).compile(syst, Execution).run(syst)), but
  * no offload (placesim has no host-memory offload): weight/activations/optimizer_offload False
  * fused_activation True (Calculon's search default)
  * for every "layout" (t, p, d, mbs, interleaving, recompute, sequence-parallel on/off,
    optimizer sharding) it tries every Calculon-only option (tensor_par_comm_type within the
    SP class, tensor_par_overlap, seq_par_ag_redo, data_par_overlap, network assignment
    tn/pn/dn) and keeps the best (highest sample_rate) = Calculon's best setting for that layout.
  * micro-batch sizes are tried in increasing order and the loop stops at the first size at
    which every variant is infeasible because of memory (Calculon's own -m/--mbs-break rule).
  * a (t, p) pair is skipped when its most memory-frugal layout (mbs 1, full recompute,
    sequence parallel, optimizer sharding, interleaving 1) is already over memory.

Usage: PYTHONPATH=src python3 calc_sweep.py MODEL SYSTEM NPROCS BATCH OUTPREFIX [CPUS]
"""
import csv, itertools, json, logging, multiprocessing as mp, sys, time

import calculon
from calculon.llm import Llm
from calculon.system import System

LAYOUT_KEYS = ['tensor_par', 'pipeline_par', 'data_par', 'microbatch_size',
               'pipeline_interleaving', 'activation_recompute', 'seq_par',
               'optimizer_sharding']
STAT_KEYS = ['total_time', 'sample_rate', 'fw_time', 'bw_time', 'recompute_time',
             'recomm_exposed_time', 'bubble_time', 'tp_comm_exposed_time',
             'pp_comm_exposed_time', 'dp_comm_exposed_time', 'optim_step_time',
             'tp_comm_link_time', 'pp_comm_link_time', 'dp_comm_link_time',
             'proc_mem_tier1_cap_req', 'weight_space', 'act_space',
             'weight_grad_space', 'optimizer_space', 'act_grad_space']
NOOV_KEYS = ['total_time', 'tensor_par_comm_type', 'tp_comm_exposed_time', 'dp_comm_exposed_time',
             'bubble_time', 'pp_comm_exposed_time']
EXE_KEYS = ['tensor_par_comm_type', 'tensor_par_overlap', 'seq_par_ag_redo',
            'data_par_overlap', 'tensor_par_net', 'pipeline_par_net', 'data_par_net']

G = {}


def init(model, system, nprocs, batch):
  G['app'] = Llm.Application(calculon.io.read_json_file(model))
  G['syst'] = System(calculon.io.read_json_file(system))
  G['nprocs'] = nprocs
  G['batch'] = batch


def exe_json(t, p, d, mbs, ppint, rec, sharding, ctype, tpov, redo, dpov, tn, pn, dn):
  return {
    'num_procs': G['nprocs'], 'tensor_par': t, 'pipeline_par': p, 'data_par': d,
    'tensor_par_net': tn, 'pipeline_par_net': pn, 'data_par_net': dn,
    'batch_size': G['batch'], 'microbatch_size': mbs, 'datatype': 'float16',
    'fused_activation': True, 'attention_type': 'multihead',
    'activation_recompute': rec, 'pipeline_interleaving': ppint,
    'optimizer_sharding': sharding, 'tensor_par_comm_type': ctype,
    'tensor_par_overlap': tpov, 'seq_par_ag_redo': redo,
    'data_par_overlap': dpov, 'weight_offload': False,
    'activations_offload': False, 'optimizer_offload': False, 'training': True}


def evaluate(ej):
  model = Llm(G['app'], logging.Logger('sub'))
  model.compile(G['syst'], Llm.Execution.from_json(ej))
  model.run(G['syst'])
  return model.get_stats_json(False)


def variants(t, p, d, rec, sp):
  nn = G['syst'].num_networks
  # Calculon: 'rs_ag' = Megatron sequence parallelism (+ scatter/gather between stages);
  # 'p2p_rs_ag' = no sequence parallelism, TP all-reduce as RS+AG, scatter/gather between stages;
  # 'ar' = plain all-reduce. placesim's sequence_parallel false (with its default scatter_gather
  # true) is Calculon's 'ar' or 'p2p_rs_ag'; sequence_parallel true is 'rs_ag'.
  ctypes = ['rs_ag'] if sp else (['ar', 'p2p_rs_ag'] if t > 1 else ['ar'])
  for ctype in ctypes:
    for redo in ([True, False] if Llm.can_redo_ag(ctype, rec) else [False]):
      for dpov in ([True, False] if d > 1 else [False]):
        for tpov in (['none', 'ring', 'pipe'] if t > 1 else ['none']):
          # TP on the NVLink tier (net 0) when it fits in it (t <= 8), else on InfiniBand (net 1):
          # TP over InfiniBand for t <= 8 is never faster and is skipped to save time
          for tn in (([0] if t <= G['syst'].get_network(0).size else [1]) if t > 1 else [0]):
            for pn in (range(nn) if p > 1 else [0]):
              for dn in (range(nn) if d > 1 else [0]):
                yield ctype, tpov, redo, dpov, tn, pn, dn


def eval_layout(t, p, d, mbs, ppint, rec, sp, sharding):
  """Returns (best stats+exe or None, n_evals, first memory error, other errors set, all_feasible)"""
  best = None
  n = 0
  mem_err = None
  errs = set()
  feas = []
  for ctype, tpov, redo, dpov, tn, pn, dn in variants(t, p, d, rec, sp):
    ej = exe_json(t, p, d, mbs, ppint, rec, sharding, ctype, tpov, redo, dpov, tn, pn, dn)
    n += 1
    try:
      st = evaluate(ej)
    except Llm.Error as ex:
      msg = str(ex)
      if msg.startswith('Mem tier1'):
        mem_err = mem_err or msg
      else:
        errs.add(msg)
      continue
    row = {k: ej[k] for k in EXE_KEYS}
    row.update({k: st[k] for k in STAT_KEYS})
    feas.append(row)
    if best is None or st['sample_rate'] > best['sample_rate']:
      best = row
  # best without Calculon's overlap options (tensor_par_overlap none, data_par_overlap False)
  no = [f for f in feas if f['tensor_par_overlap'] == 'none' and not f['data_par_overlap']]
  if best is not None and no:
    b2 = max(no, key=lambda f: f['sample_rate'])
    best = dict(best)
    best.update({'nooverlap_' + k: b2[k] for k in NOOV_KEYS})
  return best, n, mem_err, errs, feas


def task(args):
  t, p, d, ppint, rec, sp, sharding = args
  out = []
  nevals = 0
  t0 = time.time()
  for mbs in Llm.get_valid_microbatch_sizes(G['app'].seq_size, t, d, G['batch'], p):
    best, n, mem_err, errs, feas = eval_layout(t, p, d, mbs, ppint, rec, sp, sharding)
    nevals += n
    lay = dict(zip(LAYOUT_KEYS, [t, p, d, mbs, ppint, rec, sp, sharding]))
    if best is not None:
      lay.update(best)
      lay['status'] = 'ok'
      lay['variants_feasible'] = len(feas)
      lay['reason'] = ''
    else:
      lay['status'] = 'infeasible'
      lay['variants_feasible'] = 0
      lay['reason'] = mem_err or '; '.join(sorted(errs))
    out.append(lay)
    if best is None and mem_err is not None:
      break  # Calculon's --mbs-break rule: larger micro-batches need more memory
  return out, nevals, time.time() - t0


def main():
  model, system, nprocs, batch, prefix = sys.argv[1:6]
  cpus = int(sys.argv[6]) if len(sys.argv) > 6 else 2
  nprocs, batch = int(nprocs), int(batch)
  init(model, system, nprocs, batch)
  app = G['app']
  start = time.time()
  pairs = []
  pre = []
  nevals = 0
  for t in Llm.get_all_tensor_parallelisms(nprocs, app.hidden, app.attn_heads):
    for p in Llm.get_all_pipeline_parallelisms(nprocs, t, app.num_blocks):
      d = Llm.get_data_parallelism(nprocs, t, p)
      if batch % d:
        continue
      # memory pre-check with the most frugal layout
      best, n, mem_err, errs, _ = eval_layout(t, p, d, 1, 1, 'full', t > 1, d > 1)
      nevals += n
      pre.append({'tensor_par': t, 'pipeline_par': p, 'data_par': d,
                  'frugal_feasible': best is not None,
                  'frugal_mem_req_GiB': (best['proc_mem_tier1_cap_req'] / 2**30) if best else '',
                  'reason': '' if best else (mem_err or '; '.join(sorted(errs)))})
      if best is not None or mem_err is None:
        pairs.append((t, p, d))
  tasks = []
  for t, p, d in pairs:
    for ppint in Llm.get_valid_pipeline_interleavings(app.num_blocks, p):
      for rec in ['full', 'attn_only', 'none']:
        for sp in ([False, True] if t > 1 else [False]):
          for sharding in ([True, False] if d > 1 else [False]):
            tasks.append((t, p, d, ppint, rec, sp, sharding))
  rows = []
  with mp.Pool(cpus, initializer=init, initargs=(model, system, nprocs, batch)) as pool:
    for out, n, _ in pool.imap_unordered(task, tasks, chunksize=1):
      rows.extend(out)
      nevals += n
  wall = time.time() - start
  fields = LAYOUT_KEYS + ['status', 'reason', 'variants_feasible'] + EXE_KEYS + STAT_KEYS + ['nooverlap_' + k for k in NOOV_KEYS]
  rows.sort(key=lambda r: tuple(str(r[k]) for k in LAYOUT_KEYS))
  with open(prefix + '_layouts.csv', 'w', newline='') as f:
    w = csv.DictWriter(f, fieldnames=fields, restval='')
    w.writeheader()
    w.writerows(rows)
  with open(prefix + '_tp_pairs.csv', 'w', newline='') as f:
    w = csv.DictWriter(f, fieldnames=list(pre[0].keys()))
    w.writeheader()
    w.writerows(pre)
  meta = {'wall_seconds': wall, 'evaluations': nevals, 'evals_per_second': nevals / wall,
          'layouts': len(rows), 'feasible_layouts': sum(r['status'] == 'ok' for r in rows),
          'tp_pairs': len(pre), 'tp_pairs_searched': len(pairs), 'cpus': cpus,
          'model': model, 'system': system, 'num_procs': nprocs, 'batch': batch}
  json.dump(meta, open(prefix + '_meta.json', 'w'), indent=1)
  print(json.dumps(meta, indent=1))


if __name__ == '__main__':
  main()
