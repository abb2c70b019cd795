#include "sim/auto_placement/pipedream_partitioner.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>

#include "sim/auto_placement/placement_problem.h"
#include "sim/plan/collective_schedule.h"
#include "sim/plan/nccl_cost_model.h"
#include "sim/planner/framework_transports.h"
#include "sim/spec/spec_error.h"

namespace placesim {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
/// Stages tried when the scenario leaves their number to the partitioner.
constexpr int64_t kMostStagesTried = 8;
/// The search's size bound (states x transitions, see below): about a second on one core.
constexpr double kMostSearchSteps = 3e8;
/// Positions past which the partitioner considers a cut: every one in a graph of up to this many
/// ops; in a larger one those where the activations crossing come from one op (a chain's links,
/// e.g. between transformer blocks), evenly thinned to this many.
constexpr size_t kMostCutPlaces = 96;

/// An all-reduce's alpha-beta estimate is affine in its bytes for one algorithm (latency per
/// step, then bytes over the bottleneck): each replica range's coefficients, read from two large
/// sizes (one algorithm, the one a stage's gradients of megabytes get), so the search calls the
/// estimate twice per range instead of once per state.
class AllReduceTable {
 public:
  AllReduceTable(const PartitionChain& chain, int64_t replicas)
      : replicas_(replicas), fixed_(static_cast<size_t>(replicas * (replicas + 1)), 0),
        per_byte_(fixed_.size(), 0) {
    constexpr double kProbeBytes = 1 << 30;
    for (int64_t first = 0; first < replicas; ++first) {
      for (int64_t count = 2; first + count <= replicas; ++count) {
        const double one = chain.all_reduce_seconds(kProbeBytes, first, count);
        const double two = chain.all_reduce_seconds(2 * kProbeBytes, first, count);
        per_byte_[index(first, count)] = (two - one) / kProbeBytes;
        fixed_[index(first, count)] = std::max(0.0, one - per_byte_[index(first, count)] * kProbeBytes);
      }
    }
  }
  double seconds(double bytes, int64_t first, int64_t count) const {
    if (count < 2 || bytes <= 0) return 0;
    return fixed_[index(first, count)] + per_byte_[index(first, count)] * bytes;
  }

 private:
  size_t index(int64_t first, int64_t count) const { return static_cast<size_t>(first * (replicas_ + 1) + count); }
  int64_t replicas_;
  std::vector<double> fixed_, per_byte_;
};

/// One state of the dynamic program: the best partition of the positions up to a stage end over
/// a number of replicas into a number of stages, its last stage of a given width, and how it got
/// there. The last stage's time lacks its transfers to the next stage, added when there is one.
struct Best {
  double finished_seconds = 0;       ///< the slowest stage before the last, all its transfers included
  double last_seconds = kInfinity;   ///< the last stage: compute, all-reduce and its incoming transfers
  size_t previous_end = 0;           ///< index into the stage ends
  bool previous_has_widest = false;  ///< whether the stages before the last had one of the widest
  size_t previous_width = 0;         ///< index into the widths: the stage before the last
  double seconds() const { return std::max(finished_seconds, last_seconds); }
};

/// How the search times a partition of a chain over a number of replicas: a stage of positions
/// [from, to] on `width` replicas from `first`, max(compute, micro_batches x all-reduce) / width
/// (infinite without weights when the chain asks for them); a boundary, its busiest replicas'
/// transfers each side; a whole partition, each stage with its transfers to and from the stages
/// beside it, and the slowest.
class PartitionTimer {
 public:
  PartitionTimer(const PartitionChain& chain, int64_t replicas) : chain_(chain), all_reduce_(chain, replicas) {
    const size_t n = chain.compute_seconds.size();
    compute_.assign(n + 1, 0);
    gradients_.assign(n + 1, 0);
    for (size_t p = 0; p < n; ++p) {
      compute_[p + 1] = compute_[p] + chain.compute_seconds[p];
      gradients_[p + 1] = gradients_[p] + (p < chain.gradient_bytes.size() ? chain.gradient_bytes[p] : 0.0);
    }
  }
  double stage(size_t from, size_t to, int64_t width, int64_t first) const {
    if (chain_.every_stage_holds_weights && !(gradients_[to + 1] - gradients_[from] > 0)) return kInfinity;
    const double reduce = static_cast<double>(chain_.micro_batches) *
                          all_reduce_.seconds(gradients_[to + 1] - gradients_[from], first, width);
    return std::max(compute_[to + 1] - compute_[from], reduce) / static_cast<double>(width);
  }
  std::pair<double, double> boundary(size_t after, int64_t left_first, int64_t left_width, int64_t right_width,
                                     int64_t streams) const {
    return chain_.boundary_seconds(after, left_first, left_width, left_first + left_width, right_width, streams);
  }
  /// The stages' widths and first positions, timed; `streams` the widest width.
  PipeDreamPartition partition(std::vector<int64_t> widths, std::vector<size_t> first) const {
    PipeDreamPartition partition;
    const int64_t streams = *std::max_element(widths.begin(), widths.end());
    int64_t first_replica = 0;
    for (size_t s = 0; s < widths.size(); ++s) {
      const size_t last = s + 1 < first.size() ? first[s + 1] - 1 : compute_.size() - 2;
      partition.stage_seconds.push_back(stage(first[s], last, widths[s], first_replica));
      if (s > 0) {
        const auto [left, right] = boundary(first[s] - 1, first_replica - widths[s - 1], widths[s - 1], widths[s], streams);
        partition.stage_seconds[s - 1] += left;
        partition.stage_seconds[s] += right;
      }
      first_replica += widths[s];
    }
    partition.seconds = *std::max_element(partition.stage_seconds.begin(), partition.stage_seconds.end());
    partition.widths = std::move(widths);
    partition.first = std::move(first);
    return partition;
  }

 private:
  const PartitionChain& chain_;
  AllReduceTable all_reduce_;
  std::vector<double> compute_, gradients_;  ///< prefix sums by position
};

/// The positions after which a stage may end, ascending; the last is the chain's last.
std::vector<size_t> stage_ends(const PartitionChain& chain) {
  const size_t n = chain.compute_seconds.size();
  std::vector<size_t> ends;
  for (size_t p = 0; p + 1 < n; ++p) {
    if (p < chain.may_end_stage.size() && chain.may_end_stage[p]) ends.push_back(p);
  }
  ends.push_back(n - 1);
  return ends;
}

}  // namespace

std::vector<PipeDreamPartition> pipedream_partition_candidates(const PartitionChain& chain, int64_t replicas,
                                                               int64_t stages) {
  const size_t n = chain.compute_seconds.size();
  if (n == 0 || replicas < 2) throw std::invalid_argument("the partitioner needs ops and at least 2 replicas");
  std::vector<size_t> ends = stage_ends(chain);
  // The search visits about stages x places^2 x replicas x sum over widest widths of (their
  // divisors)^2 states: places thinned evenly (the last kept) until that stays under a bound, so
  // a large model on many replicas is searched in seconds rather than hours.
  double divisor_pairs = 0;
  for (int64_t widest = 1; widest <= replicas; ++widest) {
    double divisors = 0;
    for (int64_t w = 1; w <= widest; ++w) divisors += widest % w == 0 ? 1 : 0;
    divisor_pairs += divisors * divisors;
  }
  const double stage_count = static_cast<double>(stages > 0 ? stages : std::min<int64_t>(replicas, kMostStagesTried));
  while (ends.size() > 2 && stage_count * static_cast<double>(ends.size() * ends.size()) * static_cast<double>(replicas) *
                                    divisor_pairs > kMostSearchSteps) {
    std::vector<size_t> thinned;
    for (size_t i = 0; i + 1 < ends.size(); i += 2) thinned.push_back(ends[i]);
    thinned.push_back(n - 1);
    ends = std::move(thinned);
  }
  const int64_t most = stages > 0 ? stages : std::min<int64_t>({replicas, kMostStagesTried, static_cast<int64_t>(ends.size())});
  const int64_t least = stages > 0 ? stages : 2;
  if (least > replicas || least > static_cast<int64_t>(ends.size())) {
    throw std::invalid_argument(std::to_string(least) + " stages need " + std::to_string(least) + " replicas and " +
                                std::to_string(least) + " places to cut; there are " + std::to_string(replicas) +
                                " replicas and " + std::to_string(ends.size()) + " places");
  }
  const PartitionTimer timer(chain, replicas);
  std::map<std::tuple<size_t, int64_t, int64_t, int64_t, int64_t>, std::pair<double, double>> boundaries;
  int64_t streams = 1;  // the widest width of the partition being searched
  auto boundary_seconds = [&](size_t end, int64_t left_first, int64_t left_width, int64_t right_width) {
    auto [entry, inserted] =
        boundaries.emplace(std::make_tuple(end, left_first, left_width, right_width, streams), std::make_pair(0.0, 0.0));
    if (inserted) entry->second = timer.boundary(ends[end], left_first, left_width, right_width, streams);
    return entry->second;
  };

  std::vector<PipeDreamPartition> candidates;
  const size_t e_count = ends.size();
  const auto r_count = static_cast<size_t>(replicas + 1);
  for (int64_t widest = 1; widest <= replicas; ++widest) {
    streams = widest;
    std::vector<int64_t> widths;  // those dividing the widest
    for (int64_t w = 1; w <= widest; ++w) {
      if (widest % w == 0) widths.push_back(w);
    }
    const size_t w_count = widths.size();
    // best[k - 1][(end, used, has widest, last width)]: k stages.
    auto at = [&](size_t end, int64_t used, bool has_widest, size_t width) {
      return ((end * r_count + static_cast<size_t>(used)) * 2 + (has_widest ? 1 : 0)) * w_count + width;
    };
    std::vector<std::vector<Best>> best(static_cast<size_t>(most), std::vector<Best>(e_count * r_count * 2 * w_count));
    for (size_t e = 0; e < e_count; ++e) {
      for (size_t wi = 0; wi < w_count; ++wi) {
        best[0][at(e, widths[wi], widths[wi] == widest, wi)].last_seconds = timer.stage(0, ends[e], widths[wi], 0);
      }
    }
    for (int64_t k = 1; k < most; ++k) {
      const auto& before = best[static_cast<size_t>(k - 1)];
      auto& now = best[static_cast<size_t>(k)];
      for (size_t e0 = 0; e0 + 1 < e_count; ++e0) {
        for (int64_t used = 1; used < replicas; ++used) {
          for (bool has : {false, true}) {
            for (size_t pwi = 0; pwi < w_count; ++pwi) {
              const Best& previous = before[at(e0, used, has, pwi)];
              if (previous.last_seconds == kInfinity) continue;
              const int64_t previous_width = widths[pwi];
              for (size_t wi = 0; wi < w_count && used + widths[wi] <= replicas; ++wi) {
                const int64_t w = widths[wi];
                const auto [left, right] = boundary_seconds(e0, used - previous_width, previous_width, w);
                const double finished = std::max(previous.finished_seconds, previous.last_seconds + left);
                for (size_t e = e0 + 1; e < e_count; ++e) {
                  const Best candidate{finished, timer.stage(ends[e0] + 1, ends[e], w, used) + right, e0, has, pwi};
                  Best& state = now[at(e, used + w, has || w == widest, wi)];
                  if (candidate.seconds() < state.seconds()) state = candidate;
                }
              }
            }
          }
        }
      }
    }
    for (int64_t k = least; k <= most; ++k) {
      const auto& last = best[static_cast<size_t>(k - 1)];
      size_t final_width = 0;
      for (size_t wi = 1; wi < w_count; ++wi) {
        if (last[at(e_count - 1, replicas, true, wi)].seconds() <
            last[at(e_count - 1, replicas, true, final_width)].seconds()) {
          final_width = wi;
        }
      }
      const Best& final_state = last[at(e_count - 1, replicas, true, final_width)];
      if (!(final_state.seconds() < kInfinity)) continue;
      // Walk back: the last stage first.
      size_t end = e_count - 1, wi = final_width;
      int64_t used = replicas;
      bool has = true;
      std::vector<std::pair<size_t, int64_t>> stages_back;  // (end index, width)
      for (int64_t s = k - 1; s >= 0; --s) {
        const Best& state = best[static_cast<size_t>(s)][at(end, used, has, wi)];
        stages_back.emplace_back(end, widths[wi]);
        used -= widths[wi];
        end = state.previous_end;
        has = state.previous_has_widest;
        wi = state.previous_width;
      }
      std::reverse(stages_back.begin(), stages_back.end());
      std::vector<int64_t> stage_widths;
      std::vector<size_t> first_positions;
      size_t first_position = 0;
      for (const auto& [end_index, width] : stages_back) {
        stage_widths.push_back(width);
        first_positions.push_back(first_position);
        first_position = ends[end_index] + 1;
      }
      // Timed as the states were (the same sums in the same order): its slowest stage is the
      // final state's time.
      candidates.push_back(timer.partition(std::move(stage_widths), std::move(first_positions)));
    }
  }
  if (candidates.empty()) {
    throw std::invalid_argument(chain.every_stage_holds_weights
                                    ? "no partition into " + std::to_string(least) +
                                          (most > least ? " to " + std::to_string(most) : std::string()) +
                                          " stages gives every stage some of the model's weights"
                                    : std::string("no partition over the replicas"));
  }
  // Fastest first; ties to fewer stages, then the narrower widest (found first).
  std::stable_sort(candidates.begin(), candidates.end(), [](const PipeDreamPartition& a, const PipeDreamPartition& b) {
    if (a.seconds != b.seconds) return a.seconds < b.seconds;
    return a.widths.size() < b.widths.size();
  });
  return candidates;
}

PipeDreamPartition partition_pipedream(const PartitionChain& chain, int64_t replicas, int64_t stages) {
  return pipedream_partition_candidates(chain, replicas, stages).front();
}

std::vector<PipeDreamPartition> neighbouring_pipedream_partitions(const PartitionChain& chain, int64_t replicas,
                                                                  const PipeDreamPartition& partition, size_t places) {
  const std::vector<size_t> ends = stage_ends(chain);
  const PartitionTimer timer(chain, replicas);
  const size_t n = chain.compute_seconds.size();
  std::vector<PipeDreamPartition> neighbours;
  for (size_t b = 1; b < partition.first.size(); ++b) {  // the boundary before stage b
    const size_t cut = partition.first[b] - 1;               // the last position of stage b - 1
    const size_t stage_end = b + 1 < partition.first.size() ? partition.first[b + 1] - 1 : n - 1;
    // The places before the cut (stage b - 1 keeping a position) and after it (stage b keeping
    // one), nearest first.
    std::vector<size_t> moved;
    const auto at = std::lower_bound(ends.begin(), ends.end(), cut);
    for (auto it = at; it != ends.begin() && moved.size() < places;) {
      --it;
      if (*it < partition.first[b - 1]) break;
      moved.push_back(*it);
    }
    const size_t before = moved.size();
    for (auto it = std::upper_bound(ends.begin(), ends.end(), cut); it != ends.end() && moved.size() - before < places; ++it) {
      if (*it >= stage_end) break;
      moved.push_back(*it);
    }
    for (size_t place : moved) {
      std::vector<size_t> first = partition.first;
      first[b] = place + 1;
      PipeDreamPartition neighbour = timer.partition(partition.widths, std::move(first));
      if (neighbour.seconds < kInfinity) neighbours.push_back(std::move(neighbour));
    }
  }
  std::stable_sort(neighbours.begin(), neighbours.end(),
                   [](const PipeDreamPartition& a, const PipeDreamPartition& b) { return a.seconds < b.seconds; });
  return neighbours;
}

namespace {

/// What "auto" partitions, kept for the search around its answer: the placement problem, the
/// data edges crossing each place, each position's op name, and the chain whose costs read them.
struct AutomaticChain {
  PlacementProblem problem;
  std::vector<DeviceId> devices;
  std::vector<std::vector<std::tuple<OpId, OpId, double>>> crossing;  ///< by place: (producer, consumer, bytes)
  std::vector<std::string> names;                                     ///< by position
  /// By replica pair (from x replicas + to): the link efficiency of the framework's transport
  /// between the two (NCCL's send and receive across machines; 1 inside one).
  std::vector<double> transfer_efficiency;
  PartitionChain chain;
};

/// `partition` with each stage's ops by name.
AutomaticStages named(const AutomaticChain& chain, PipeDreamPartition partition) {
  AutomaticStages stages;
  const size_t n = chain.names.size();
  for (size_t s = 0; s < partition.widths.size(); ++s) {
    const size_t end = s + 1 < partition.first.size() ? partition.first[s + 1] : n;
    stages.stage_ops.emplace_back(chain.names.begin() + static_cast<std::ptrdiff_t>(partition.first[s]),
                                  chain.names.begin() + static_cast<std::ptrdiff_t>(end));
  }
  stages.partition = std::move(partition);
  return stages;
}

}  // namespace

AutomaticStagesSearch automatic_pipedream_stages(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                                 const ParallelismOptions& options) {
  const std::string where = "parallelism/stage_replicas";
  if (options.tensor != 1) {
    throw SpecError::strategy(where, "\"auto\" partitions over replicas of one device each (\"tensor\": 1); it is " +
                                         std::to_string(options.tensor));
  }
  auto state = std::make_shared<AutomaticChain>();
  AutomaticChain* self = state.get();  // the chain's costs read the state they live in
  self->devices = options.devices;
  const auto replicas = static_cast<int64_t>(self->devices.size());
  AutoPlacementOptions placement;
  placement.devices = self->devices;
  self->problem = make_placement_problem(graph, cluster, run, placement);
  const PlacementProblem& problem = self->problem;
  const size_t n = problem.order.size();
  for (size_t p = 0; p < n; ++p) {
    const std::string& name = graph.op(problem.order[p]).name;
    if (name.find_first_of("*?") != std::string::npos) {
      throw SpecError::strategy(where, "\"auto\" names each stage's ops, but op \"" + name +
                                           "\" has a glob character in its name; give \"stage_replicas\" and "
                                           "\"stage_ops\" by hand");
    }
    self->names.push_back(name);
  }

  self->transfer_efficiency.assign(self->devices.size() * self->devices.size(), 1.0);
  for (size_t i = 0; i < self->devices.size(); ++i) {
    for (size_t j = 0; j < self->devices.size(); ++j) {
      const DeviceId from = self->devices[i], to = self->devices[j];
      if (cluster.device(from).node == cluster.device(to).node) continue;
      if (const auto transport = collective_transport(options.communication, cluster, {from, to})) {
        self->transfer_efficiency[i * self->devices.size() + j] = transport->link_efficiency();
      }
    }
  }

  PartitionChain& chain = self->chain;
  chain.micro_batches = options.micro_batches;
  chain.every_stage_holds_weights = true;
  chain.compute_seconds.resize(n);
  chain.gradient_bytes.resize(n);
  for (size_t p = 0; p < n; ++p) {
    const OpId v = problem.order[p];
    chain.compute_seconds[p] = problem.compute_seconds[v][self->devices.front()];
    chain.gradient_bytes[p] = problem.needs_gradient[v] ? graph.op(v).parameter_bytes() : 0.0;
  }
  // The data edges crossing each place, and the ops with FLOPs or weights that send them (inputs
  // such as a model's labels, read at its end, cross every place and are not counted).
  self->crossing.resize(n);
  std::vector<std::vector<OpId>> senders(n);
  for (OpId v = 0; v < graph.size(); ++v) {
    for (const auto& input : graph.inputs(v)) {
      if (input.edge.control) continue;
      for (size_t p = problem.position[input.op]; p < problem.position[v]; ++p) {
        self->crossing[p].emplace_back(input.op, v, input.edge.bytes);
        const Op& sender = graph.op(input.op);
        const bool computes = sender.forward_flops + sender.backward_flops > 0 || sender.parameter_count > 0;
        if (computes && std::find(senders[p].begin(), senders[p].end(), input.op) == senders[p].end()) {
          senders[p].push_back(input.op);
        }
      }
    }
  }
  chain.may_end_stage.assign(n, true);
  if (n > kMostCutPlaces) {
    std::vector<size_t> narrow;
    for (size_t p = 0; p + 1 < n; ++p) {
      if (senders[p].size() == 1) narrow.push_back(p);
    }
    chain.may_end_stage.assign(n, false);
    const size_t keep = std::min(narrow.size(), kMostCutPlaces);
    for (size_t i = 0; i < keep; ++i) chain.may_end_stage[narrow[i * narrow.size() / keep]] = true;
  }
  // No stage of inputs alone: the first stage reaches the first op with FLOPs or weights.
  for (size_t p = 0; p < n; ++p) {
    const Op& op = graph.op(problem.order[p]);
    if (op.forward_flops + op.backward_flops > 0 || op.parameter_count > 0) break;
    chain.may_end_stage[p] = false;
  }
  chain.boundary_seconds = [self](size_t after, int64_t left_first, int64_t left_width, int64_t right_first,
                                  int64_t right_width, int64_t streams) {
    const std::vector<DeviceId>& devices = self->devices;
    std::vector<double> busy(devices.size(), 0);  // by replica: sending and receiving, one step
    for (int64_t d = 0; d < streams; ++d) {
      const int64_t from = left_first + d % left_width, to = right_first + d % right_width;
      double seconds = 0;
      for (const auto& [producer, consumer, bytes] : self->crossing[after]) {
        seconds += self->problem.edge_seconds(producer, consumer, bytes, devices[static_cast<size_t>(from)],
                                              devices[static_cast<size_t>(to)]);
      }
      // As the plan sends them (Parallel3dEmission::stage_transfer): over the transport across machines.
      seconds /= self->transfer_efficiency[static_cast<size_t>(from) * devices.size() + static_cast<size_t>(to)];
      busy[static_cast<size_t>(from)] += seconds;
      busy[static_cast<size_t>(to)] += seconds;
    }
    const auto begin = busy.begin();
    const double left = *std::max_element(begin + left_first, begin + left_first + left_width);
    const double right = *std::max_element(begin + right_first, begin + right_first + right_width);
    return std::make_pair(left / static_cast<double>(streams), right / static_cast<double>(streams));
  };
  chain.all_reduce_seconds = [self, cluster = &cluster, communication = options.communication](
                                 double bytes, int64_t first, int64_t count) {
    // The planner's own estimate on the stage's replicas: NCCL's algorithm for the size (a ring,
    // or across machines the hierarchical one whose rings use every NIC), over the framework's
    // transport's link efficiency as the engines charge it (NCCL over sockets: 0.53), with NCCL's
    // own latencies and protocol over one of its transports (nccl_cost_model.h).
    const std::vector<DeviceId> group(self->devices.begin() + first, self->devices.begin() + first + count);
    const CollectiveAlgorithm algorithm =
        choose_nccl_algorithm(CollectiveKind::kAllReduce, group, std::max(bytes, 1.0), *cluster, nullptr,
                              communication.nccl_version);
    const std::optional<Transport> transport = collective_transport(communication, *cluster, group);
    return collective_seconds_over(CollectiveKind::kAllReduce, algorithm, group, bytes, *cluster,
                                   transport ? &*transport : nullptr);
  };

  AutomaticStagesSearch search;
  try {
    for (PipeDreamPartition& partition :
         pipedream_partition_candidates(chain, replicas, options.automatic_stages.value_or(0))) {
      search.candidates.push_back(named(*self, std::move(partition)));
    }
  } catch (const std::invalid_argument& error) {
    throw SpecError::strategy(where, std::string("\"auto\": ") + error.what());
  }
  search.neighbours = [state, replicas](const AutomaticStages& from, size_t places) {
    std::vector<AutomaticStages> neighbours;
    for (PipeDreamPartition& partition :
         neighbouring_pipedream_partitions(state->chain, replicas, from.partition, places)) {
      neighbours.push_back(named(*state, std::move(partition)));
    }
    return neighbours;
  };
  return search;
}

}  // namespace placesim
