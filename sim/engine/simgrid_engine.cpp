#include "sim/engine/simgrid_engine.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "sim/cluster/collective_profile.h"
#include "sim/core/fd_io.h"
#include "sim/cost/collective_overlap.h"
#include "sim/cost/cost_model.h"
#include "sim/plan/collective_schedule.h"
#include "sim/plan/nccl_cost_model.h"
#include "sim/plan/ready_tasks.h"

namespace sg4 = simgrid::s4u;

namespace placesim {
namespace {

// Host speed in "work units" per second: a compute task of t seconds is an Exec of t x this.
// 1e9 gives nanosecond resolution against SimGrid's default work-amount precision.
constexpr double kHostSpeed = 1e9;

class Simulation {
 public:
  Simulation(const ExecutionPlan& plan, const Cluster& cluster) : plan_(plan), cluster_(cluster) {}

  Timeline run() {
    xbt_log_control_set("root.thres:critical");
    int argc = 1;
    char name[] = "placesim";
    char* argv[] = {name, nullptr};
    sg4::Engine engine(&argc, argv);
    // CM02: plain max-min sharing with latency + size/bandwidth per flow, no TCP corrections.
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/crosstraffic:0");
    sg4::Engine::set_config("network/TCP-gamma:0");
    build_platform();
    sg4::Activity::on_completion_cb([this](sg4::Activity const& activity) { on_complete(activity); });

    timeline_.source = "simgrid";
    timeline_.tasks.assign(plan_.tasks.size(), TaskInterval{});
    for (TaskId id : ready_.initially_ready()) make_ready(id, 0);
    drain_instant();
    engine.run();
    if (ready_.completed() != plan_.tasks.size()) {
      throw std::runtime_error("simulation ended with " + std::to_string(plan_.tasks.size() - ready_.completed()) +
                               " tasks not run");
    }
    return std::move(timeline_);
  }

 private:
  void build_platform() {
    auto* zone = sg4::create_full_zone("cluster");
    shared_compute_.assign(cluster_.devices().size(), false);
    for (DeviceId d = 0; d < cluster_.devices().size(); ++d) {
      if (auto other = cluster_.device(d).shares_compute_with; other && *other != d) {
        shared_compute_[d] = true;
        shared_compute_[*other] = true;
      }
    }
    const PlanSymmetry& symmetry = plan_.symmetry;
    if (symmetry.active()) {
      orbit_links_.assign(symmetry.orbit_bandwidth_bytes_per_second.size(), nullptr);
    } else {
      for (const auto& link : cluster_.links()) {
        auto* simgrid_link = zone->create_split_duplex_link(link.name, link.spec.bandwidth_bytes_per_second);
        simgrid_link->set_latency(link.spec.latency_seconds)->seal();
        links_.push_back(simgrid_link);
      }
    }
    // Only the device pairs that exchange data get a route.
    std::vector<std::pair<DeviceId, DeviceId>> pairs;
    for (const Task& task : plan_.tasks) {
      if (task.kind == TaskKind::kTransfer && task.source != task.device) pairs.emplace_back(task.source, task.device);
      if (task.kind == TaskKind::kCollective) {
        CollectiveRun& run = collectives_[task.id];
        // A measured curve times the whole collective (it has no transfers of its own to share).
        if (auto seconds = measured_collective_seconds(task.collective, task.group, task.bytes, cluster_)) {
          run.measured_seconds = *seconds;
          continue;
        }
        run.steps = collective_schedule(task.collective, task.algorithm, task.group, task.bytes, cluster_,
                                        plan_.collective_fidelity);
        run.software_seconds = nccl_software_seconds(task);
        if (symmetry.active()) keep_representative_hops(task, &run.steps);
        for (const CollectiveStep& step : run.steps) pairs.emplace_back(step.from, step.to);
      }
    }
    // Only the devices that send, receive or share compute (an Exec) get a SimGrid host: a full
    // zone's routing table has a slot per pair of hosts, 20 GB for the 50,000 devices of a 3D
    // layout on 5,000 nodes whose representatives use a few hundred (2026-12-01).
    std::vector<bool> used = shared_compute_;
    for (auto [from, to] : pairs) used[from] = used[to] = true;
    hosts_.assign(cluster_.devices().size(), nullptr);
    for (DeviceId d = 0; d < cluster_.devices().size(); ++d) {
      if (used[d]) hosts_[d] = zone->create_host(cluster_.vertices()[cluster_.device(d).vertex].name, kHostSpeed)->seal();
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (auto [from, to] : pairs) {
      std::vector<sg4::LinkInRoute> route;
      for (const RouteHop& hop : cluster_.route(from, to)) {
        if (symmetry.active()) {
          route.emplace_back(orbit_link(hop, zone));
          continue;
        }
        route.emplace_back(links_[hop.link],
                           hop.a_to_b ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
      }
      zone->add_route(hosts_[from]->get_netpoint(), hosts_[to]->get_netpoint(), nullptr, nullptr, route, false);
    }
    zone->seal();
  }

  // Under symmetry the network is the quotient by the symmetry: one one-way link per orbit of
  // link directions, at PlanSymmetry::orbit_bandwidth_bytes_per_second.
  sg4::Link* orbit_link(const RouteHop& hop, sg4::NetZone* zone) {
    const PlanSymmetry& symmetry = plan_.symmetry;
    const size_t orbit = symmetry.direction_orbit.at(link_direction(hop));
    if (!orbit_links_[orbit]) {
      const ClusterLink& link = cluster_.links()[hop.link];
      orbit_links_[orbit] = zone->create_link("orbit" + std::to_string(orbit) + ":" + link.name,
                                              symmetry.orbit_bandwidth_bytes_per_second.at(orbit))
                                ->set_latency(link.spec.latency_seconds)
                                ->seal();
    }
    return orbit_links_[orbit];
  }

  // Under symmetry a per-phase ring (or a pairwise all-to-all) keeps only the hops leaving
  // simulated devices: the other hops are their mirrors and end at the same time.
  void keep_representative_hops(const Task& task, std::vector<CollectiveStep>* steps) const {
    const bool all_to_all = task.collective == CollectiveKind::kAllToAll && task.algorithm == CollectiveAlgorithm::kPairwise;
    if (!all_to_all &&
        (task.algorithm != CollectiveAlgorithm::kRing || plan_.collective_fidelity != CollectiveFidelity::kPerPhase)) {
      throw std::runtime_error("task \"" + task.name + "\": a symmetric plan needs per-phase ring all-reduces");
    }
    std::vector<CollectiveStep> kept;
    for (CollectiveStep& step : *steps) {
      if (plan_.symmetry.is_representative(step.from)) kept.push_back(std::move(step));
    }
    *steps = std::move(kept);
  }

  void make_ready(TaskId id, double now) {
    const Task& task = plan_.tasks[id];
    if (task.kind == TaskKind::kCollective) {
      start_collective(id, now);
      return;
    }
    if (task.kind == TaskKind::kTransfer) {
      if (task.source == task.device) {
        finish_instantly(id, now);
        return;
      }
      timeline_.tasks[id].start_seconds = now;
      sg4::CommPtr comm = make_flow(task.source, task.device, task, task.bytes);
      running_.emplace(comm.get(), Running{id, kNoStep, comm});
      comm->start();
      return;
    }
    ready_.queue_compute(id);
    try_start_compute(task.device, now);
  }

  void try_start_compute(DeviceId device, double now) {
    while (const std::optional<TaskId> next = ready_.next_compute(device)) {
      const TaskId id = *next;
      const Task& task = plan_.tasks[id];
      double seconds = compute_seconds(task, plan_.precision, plan_.memory_format, cluster_.device(device),
                                       plan_.lockstep_gemm_factor);
      seconds = overlap_.stretched(device, seconds);  // collectives in flight share its SMs
      if (seconds <= 0) {
        finish_instantly(id, now);
        continue;
      }
      ready_.set_busy(device, true);
      timeline_.tasks[id].start_seconds = now;
      if (!shared_compute_[device]) {
        schedule_timer(now + seconds, id, kNoStep);
        continue;
      }
      sg4::ExecPtr exec = sg4::Exec::init();
      exec->set_flops_amount(seconds * kHostSpeed);
      // Devices sharing one GPU's compute run on its host: SimGrid splits the speed between them.
      exec->set_host(hosts_[cluster_.device(device).shares_compute_with.value_or(device)]);
      running_.emplace(exec.get(), Running{id, kNoStep, exec});
      exec->start();
    }
  }

  // A collective runs its schedule's transfers as their own dependencies allow; it ends with the last.
  void start_collective(TaskId id, double now) {
    CollectiveRun& run = collectives_.at(id);
    timeline_.tasks[id].start_seconds = now;
    if (run.measured_seconds) {
      if (*run.measured_seconds <= 0) {
        finish_instantly(id, now);
      } else {
        overlap_.start(plan_.tasks[id]);
        schedule_timer(now + *run.measured_seconds, id, kWholeCollective);
      }
      return;
    }
    if (run.steps.empty()) {
      finish_instantly(id, now);
      return;
    }
    overlap_.start(plan_.tasks[id]);
    run.remaining = run.steps.size();
    run.pending.resize(run.steps.size());
    run.successors.assign(run.steps.size(), {});
    for (size_t s = 0; s < run.steps.size(); ++s) {
      run.pending[s] = run.steps[s].deps.size();
      for (size_t dep : run.steps[s].deps) run.successors[dep].push_back(s);
    }
    for (size_t s = 0; s < run.steps.size(); ++s) {
      if (run.pending[s] == 0) start_step(id, s);
    }
  }

  void start_step(TaskId id, size_t step_index) {
    const CollectiveStep& step = collectives_.at(id).steps[step_index];
    sg4::CommPtr comm = make_flow(step.from, step.to, plan_.tasks[id], step.bytes);
    running_.emplace(comm.get(), Running{id, step_index, comm});
    comm->start();
  }

  /// After a step's flow: the route latency of a per-phase step's remaining rounds, and the
  /// receiver's adds of what it reduces (reduction_seconds: CPUs only). Returns false when
  /// nothing is owed.
  bool start_latency_delay(TaskId id, size_t step_index, double now) {
    const CollectiveStep& step = collectives_.at(id).steps[step_index];
    double seconds = reduction_seconds(step.reduced_bytes, cluster_.device(step.to));
    if (step.latency_rounds > 1) {
      const double round_latency = step.round_latency_seconds >= 0 ? step.round_latency_seconds
                                                                   : cluster_.route_latency_seconds(step.from, step.to);
      seconds += static_cast<double>(step.latency_rounds - 1) * round_latency;
    }
    if (seconds <= 0) return false;
    schedule_timer(now + seconds, id, step_index);
    return true;
  }

  // Timers: compute tasks on devices of their own and the latency owed by per-phase steps need
  // no shared resource, only the clock. They wait in our own queue; one SimGrid kernel timer
  // (an "alarm", no activity, no share of any resource) rings at the earliest of them. SimGrid
  // then holds only the flows: each Exec completion in SimGrid 3.32 scans a list of every live
  // activity, which made 1,024 busy GPUs ten times slower per task, and an Exec per alarm cost
  // several allocations and a variable in the max-min solver.
  void schedule_timer(double at, TaskId id, size_t step) {
    timers_.push(Timer{at, timer_sequence_++, id, step});
    if (alarms_.empty() || at < alarms_.top()) start_alarm(at);
  }

  void start_alarm(double at) {
    alarms_.push(at);
    simgrid::kernel::timer::Timer::set(at, [this] {
      ring_alarm(sg4::Engine::get_clock());
      drain_instant();
    });
  }

  void ring_alarm(double now) {
    alarms_.pop();  // alarms ring in time order: this one is the earliest
    const double due = now + 1e-12 * std::max(1.0, now);
    while (!timers_.empty() && timers_.top().at <= due) {
      Timer timer = timers_.top();
      timers_.pop();
      if (timer.step == kCappedTransfer) {
        end_task(timer.task, now);
        continue;
      }
      if (timer.step == kWholeCollective) {
        collectives_.erase(timer.task);
        end_task(timer.task, now);
        continue;
      }
      if (timer.step != kNoStep) {
        if (finish_step(timer.task, timer.step)) end_task(timer.task, now);
        continue;
      }
      ready_.set_busy(plan_.tasks[timer.task].device, false);
      end_task(timer.task, now);
      try_start_compute(plan_.tasks[timer.task].device, now);
    }
    if (!timers_.empty() && (alarms_.empty() || timers_.top().at < alarms_.top())) start_alarm(timers_.top().at);
  }

  /// Returns true when the whole collective has ended; after its last transfer, a collective
  /// with software time owed (nccl_software_seconds) ends on a timer instead.
  bool finish_step(TaskId id, size_t step_index) {
    CollectiveRun& run = collectives_.at(id);
    for (size_t next : run.successors[step_index]) {
      if (--run.pending[next] == 0) start_step(id, next);
    }
    if (--run.remaining > 0) return false;
    const double software_seconds = run.software_seconds;
    run = CollectiveRun{};  // free the schedule
    if (software_seconds > 0) {
      schedule_timer(sg4::Engine::get_clock() + software_seconds, id, kWholeCollective);
      return false;
    }
    return true;
  }

  /// What NCCL's own model of a collective over one of its transports adds to the transfers the
  /// engine runs (nccl_collective_time): its latencies and protocol beyond the links' alpha-beta
  /// estimate (their latencies plus the bytes at the transport's link efficiency); 0 otherwise.
  double nccl_software_seconds(const Task& task) const {
    if (task.transport < 0) return 0;
    const Transport& transport = plan_.transports.at(static_cast<size_t>(task.transport));
    if (!is_nccl_transport(transport)) return 0;
    const double efficiency = transport.link_efficiency();
    const std::optional<NcclCollectiveTime> nccl =
        nccl_collective_time(task.collective, task.algorithm, task.group, task.bytes, cluster_, efficiency);
    if (!nccl || !std::isfinite(nccl->seconds)) return 0;
    return std::max(0.0, nccl->seconds - nccl->links_seconds);
  }

  // Zero-cost tasks complete at once; their successors are queued and handled iteratively.
  void finish_instantly(TaskId id, double now) {
    timeline_.tasks[id] = {now, now};
    instant_.push_back(id);
  }

  void drain_instant() {
    while (!instant_.empty()) {
      TaskId id = instant_.back();
      instant_.pop_back();
      release(id, timeline_.tasks[id].end_seconds);
    }
  }

  void release(TaskId id, double now) {
    ready_.complete(id, [&](TaskId next) { make_ready(next, now); });
  }

  void on_complete(sg4::Activity const& activity) {
    auto it = running_.find(&activity);
    if (it == running_.end()) return;
    const Running running = it->second;
    // SimGrid still uses the activity after this callback returns (it releases its successors),
    // so the last reference must not be dropped here: park it for a while.
    retire(std::move(it->second.activity));
    running_.erase(it);
    const double now = sg4::Engine::get_clock();
    if (running.step != kNoStep) {
      if (!start_latency_delay(running.task, running.step, now) && finish_step(running.task, running.step)) {
        end_task(running.task, now);
      }
    } else {
      const Task& task = plan_.tasks[running.task];
      if (task.kind == TaskKind::kCompute) ready_.set_busy(task.device, false);
      const double earliest_end = task.kind == TaskKind::kTransfer ? earliest_transfer_end(task) : 0;
      if (earliest_end > now) {
        schedule_timer(earliest_end, running.task, kCappedTransfer);
        drain_instant();
        return;
      }
      end_task(running.task, now);
      if (task.kind == TaskKind::kCompute) try_start_compute(task.device, now);
    }
    drain_instant();
  }

  /// A flow of `task` from `from` to `to` carrying `payload_bytes`: on the links payload / the
  /// transport's link efficiency (wire efficiency x the share of the links' rate it reaches).
  sg4::CommPtr make_flow(DeviceId from, DeviceId to, const Task& task, double payload_bytes) {
    const double efficiency =
        task.transport < 0 ? 1.0 : plan_.transports.at(static_cast<size_t>(task.transport)).link_efficiency();
    sg4::CommPtr comm = sg4::Comm::sendto_init(hosts_[from], hosts_[to]);
    comm->set_payload_size(static_cast<uint64_t>(payload_bytes / efficiency));
    return comm;
  }

  /// When a transfer capped by its transport's stream rate may end: start + bytes / rate. SimGrid
  /// 3.32 ignores Comm::set_rate for host-to-host flows, so the cap is a minimum duration: a
  /// capped flow that its link shares let finish sooner ends then (its share of the links is
  /// that of an uncapped flow, a little generous to the flows beside it).
  double earliest_transfer_end(const Task& task) const {
    if (task.transport < 0) return 0;
    const double rate = plan_.transports.at(static_cast<size_t>(task.transport)).stream_bytes_per_second;
    return rate > 0 ? timeline_.tasks[task.id].start_seconds + task.bytes / rate : 0;
  }

  void end_task(TaskId id, double now) {
    if (plan_.tasks[id].kind == TaskKind::kCollective) overlap_.end(plan_.tasks[id]);
    timeline_.tasks[id].end_seconds = now;
    release(id, now);
  }

  void retire(sg4::ActivityPtr activity) {
    constexpr size_t kGeneration = 256;
    retired_.push_back(std::move(activity));
    if (retired_.size() >= kGeneration) {
      retired_previous_ = std::move(retired_);  // frees the generation before, long completed
      retired_.clear();
    }
  }

  static constexpr size_t kNoStep = static_cast<size_t>(-1);
  static constexpr size_t kWholeCollective = static_cast<size_t>(-2);  ///< a timer ending a measured collective, or NCCL's software time after the transfers
  static constexpr size_t kCappedTransfer = static_cast<size_t>(-3);   ///< a timer ending a rate-capped transfer

  struct Timer {
    double at;
    uint64_t sequence;  ///< first scheduled, first fired among equal times
    TaskId task;
    size_t step;  ///< kNoStep: a compute task ends; kWholeCollective: a measured collective ends; else a
                  ///< per-phase step's latency has elapsed
    bool operator>(const Timer& other) const {
      return at != other.at ? at > other.at : sequence > other.sequence;
    }
  };

  struct CollectiveRun {
    std::vector<CollectiveStep> steps;
    std::vector<size_t> pending;
    std::vector<std::vector<size_t>> successors;
    size_t remaining = 0;
    std::optional<double> measured_seconds;  ///< from a measured curve: no steps, one timer
    double software_seconds = 0;  ///< owed after the last transfer (nccl_software_seconds)
  };

  struct Running {
    TaskId task;
    size_t step;  ///< index in the collective's schedule, or kNoStep
    sg4::ActivityPtr activity;  // keeps the activity alive until it completes
  };

  const ExecutionPlan& plan_;
  const Cluster& cluster_;
  Timeline timeline_;
  std::vector<sg4::Host*> hosts_;
  std::vector<sg4::Link*> links_;
  std::vector<sg4::Link*> orbit_links_;  ///< under symmetry, per orbit of link directions
  std::vector<bool> shared_compute_;  ///< devices whose compute SimGrid must share (Execs)
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  uint64_t timer_sequence_ = 0;
  std::priority_queue<double, std::vector<double>, std::greater<>> alarms_;  ///< times of the alarms set
  ReadyTasks ready_{plan_, cluster_.devices().size()};
  CollectiveOverlap overlap_{plan_, cluster_};
  std::unordered_map<const sg4::Activity*, Running> running_;
  std::vector<TaskId> instant_;
  std::unordered_map<TaskId, CollectiveRun> collectives_;
  std::vector<sg4::ActivityPtr> retired_;
  std::vector<sg4::ActivityPtr> retired_previous_;
};

// The child reports either the intervals or an error message: [ok byte][size][payload].
Timeline simulate_in_child(const ExecutionPlan& plan, const Cluster& cluster) {
  // Unflushed output would otherwise be written twice, once by the child.
  std::fflush(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (child == 0) {
    ::close(fds[0]);
    unsigned char ok = 1;
    std::string error;
    Timeline timeline;
    try {
      timeline = Simulation(plan, cluster).run();
    } catch (const std::exception& failure) {
      ok = 0;
      error = failure.what();
    }
    uint64_t size = ok ? timeline.tasks.size() * sizeof(TaskInterval) : error.size();
    if (!write_all(fds[1], &ok, 1) || !write_all(fds[1], &size, sizeof(size)) ||
        !write_all(fds[1], ok ? static_cast<const void*>(timeline.tasks.data()) : error.data(), size)) {
      _exit(3);
    }
    ::close(fds[1]);
    _exit(0);
  }
  ::close(fds[1]);
  unsigned char ok = 0;
  uint64_t size = 0;
  Timeline timeline;
  timeline.source = "simgrid";
  timeline.tasks.resize(plan.tasks.size());
  std::string error;
  bool complete = read_all(fds[0], &ok, 1) && read_all(fds[0], &size, sizeof(size));
  if (complete && ok) {
    complete = size == timeline.tasks.size() * sizeof(TaskInterval) && read_all(fds[0], timeline.tasks.data(), size);
  } else if (complete) {
    error.resize(size);
    complete = read_all(fds[0], error.data(), size);
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (complete && !ok) throw std::runtime_error(error);
  if (!complete || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("the simulation process died (wait status " + std::to_string(status) + ")");
  }
  return timeline;
}

// SimGrid keeps global state after its first engine (one engine per process, and a forked copy
// inherits it), so every simulation runs in a fresh child and the caller's process stays clean.
class SimGridEngine : public PlanEngine {
 public:
  Timeline simulate(const ExecutionPlan& plan, const Cluster& cluster) override {
    return simulate_in_child(plan, cluster);
  }
};

}  // namespace

std::unique_ptr<PlanEngine> make_simgrid_engine() { return std::make_unique<SimGridEngine>(); }

}  // namespace placesim

#ifdef PLACESIM_SIMGRID_MODULE
// The engine as a module the placesim program opens when it first simulates (cli/
// simgrid_engine_module.cpp): libsimgrid and the ns-3 libraries it needs cost every invocation
// ~25 ms and ~30 MB when linked (start-up, docs/performance.md). Built with hidden visibility:
// this is all the module exports.
extern "C" __attribute__((visibility("default"))) placesim::PlanEngine* placesim_simgrid_engine_create() {
  return placesim::make_simgrid_engine().release();
}
#endif
