#include "sim/plan/plan_json.h"

#include "sim/cluster/transport_json.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <queue>

#include "sim/plan/collective_schedule.h"

#include "sim/cluster/cluster_json.h"
#include "sim/cluster/precision_support.h"
#include "sim/graph/kernel_shape_json.h"

namespace placesim {
namespace {

constexpr size_t kMaxTasks = 200'000'000;

constexpr std::pair<uint8_t, const char*> kKernelPassNames[] = {
    {kForwardPass, "forward"}, {kBackwardDataPass, "backward_data"}, {kBackwardFilterPass, "backward_filter"}};

constexpr Phase kPhases[] = {Phase::kForward, Phase::kTransfer, Phase::kBackward, Phase::kOptimizer,
                             Phase::kCollective, Phase::kPush, Phase::kPull, Phase::kApply};

Phase parse_phase(const JsonReader& where) {
  std::string text = where.as_string();
  std::string names;
  for (Phase phase : kPhases) {
    if (to_string(phase) == text) return phase;
    names += (names.empty() ? "\"" : ", \"") + to_string(phase) + "\"";
  }
  where.fail("expected one of " + names + ", got \"" + text + "\"");
}

DeviceId device_at(const Cluster& cluster, const JsonReader& where) {
  std::string name = where.as_string();
  auto parsed = DeviceName::parse(name, nullptr);
  std::vector<DeviceId> matches = parsed ? cluster.match(*parsed) : std::vector<DeviceId>{};
  if (matches.size() != 1) where.fail("unknown device \"" + name + "\" (not in the plan's cluster)");
  return matches.front();
}

void require_acyclic(const ExecutionPlan& plan, const JsonReader& tasks) {
  std::vector<size_t> pending(plan.tasks.size());
  auto successors = plan.successors();
  std::queue<TaskId> ready;
  for (const Task& task : plan.tasks) {
    pending[task.id] = task.deps.size();
    if (pending[task.id] == 0) ready.push(task.id);
  }
  size_t visited = 0;
  while (!ready.empty()) {
    TaskId id = ready.front();
    ready.pop();
    ++visited;
    for (TaskId next : successors[id]) {
      if (--pending[next] == 0) ready.push(next);
    }
  }
  if (visited != plan.tasks.size()) {
    for (const Task& task : plan.tasks) {
      if (pending[task.id] > 0) tasks.at_index(task.id).fail("task \"" + task.name + "\" is on a dependency cycle");
    }
  }
}

Json kernel_pass_names(uint8_t passes) {
  Json names = Json::array();
  for (const auto& [pass, name] : kKernelPassNames) {
    if (passes & pass) names.push_back(name);
  }
  return names;
}

/// A task's "kernel": the shape ({"gemm": ...} or {"conv2d": ...}) and the passes it runs.
void read_task_kernel(const JsonReader& kernel, Task* task) {
  JsonReader passes = kernel.at("passes");
  task->kernel_passes = 0;
  for (const auto& element : passes.elements()) {
    std::string name = element.as_string();
    bool known = false;
    for (const auto& [pass, pass_name] : kKernelPassNames) {
      if (name == pass_name) {
        task->kernel_passes |= pass;
        known = true;
      }
    }
    if (!known) element.fail("unknown kernel pass \"" + name + "\"; expected forward, backward_data or backward_filter");
  }
  if (task->kernel_passes == 0) passes.fail("a kernel runs at least one pass");
  Json shape = kernel.value();
  shape.erase("passes");
  JsonReader shape_reader(shape, kernel.file(), kernel.path());
  task->kernel = std::make_shared<const KernelShape>(read_kernel_shape(shape_reader));
  task->kernel_samples = 1.0;
}

}  // namespace

Json write_plan_json(const ExecutionPlan& plan, const Cluster& cluster) {
  Json tasks = Json::array();
  for (const Task& task : plan.tasks) {
    Json entry = {{"id", task.id},
                  {"name", task.name},
                  {"kind", to_string(task.kind)},
                  {"phase", to_string(task.phase)},
                  {"step", task.step},
                  {"deps", task.deps},
                  {"device", cluster.device(task.device).name.canonical()}};
    if (!task.op.empty()) entry["op"] = task.op;
    if (task.kind == TaskKind::kCompute) {
      entry["op_kind"] = to_string(task.op_kind);
      entry["flops"] = task.flops;
      entry["memory_bytes"] = task.memory_bytes;
      if (task.compute_scale != 1.0) entry["compute_scale"] = task.compute_scale;
      if (task.fixed_seconds != 0) entry["fixed_seconds"] = task.fixed_seconds;
      if (task.kernel && task.kernel_passes != 0) {
        Json kernel = write_kernel_shape(task.kernel->with_samples(task.kernel_samples));
        kernel["passes"] = kernel_pass_names(task.kernel_passes);
        entry["kernel"] = std::move(kernel);
      }
    } else if (task.kind == TaskKind::kTransfer) {
      entry["source"] = cluster.device(task.source).name.canonical();
      entry["bytes"] = task.bytes;
    } else {
      Json group = Json::array();
      for (DeviceId d : task.group) group.push_back(cluster.device(d).name.canonical());
      entry["group"] = group;
      entry["algorithm"] = to_string(task.algorithm);
      if (task.collective != CollectiveKind::kAllReduce) entry["collective"] = to_string(task.collective);
      entry["bytes"] = task.bytes;
    }
    if (task.transport >= 0 && task.kind != TaskKind::kCompute) entry["transport"] = task.transport;
    if (task.replica >= 0) entry["replica"] = task.replica;
    if (task.output_bytes != 0) entry["output_bytes"] = task.output_bytes;
    if (!task.keep_until.empty()) entry["keep_until"] = task.keep_until;
    if (!task.reads_dep_outputs) entry["reads_dep_outputs"] = false;
    tasks.push_back(std::move(entry));
  }
  Json transports = Json::array();
  for (const Transport& transport : plan.transports) transports.push_back(write_transport_json(transport));
  Json memory = Json::array();
  for (DeviceId id = 0; id < plan.static_memory.size(); ++id) {
    const StaticMemory& m = plan.static_memory[id];
    memory.push_back({{"device", cluster.device(id).name.canonical()},
                      {"parameter_bytes", m.parameter_bytes},
                      {"gradient_bytes", m.gradient_bytes},
                      {"optimizer_state_bytes", m.optimizer_state_bytes}});
  }
  Json document = {{"schema_version", ExecutionPlan::kSchemaVersion},
                   {"kind", "placesim-plan"},
                   {"name", plan.name},
                   {"steps", plan.steps},
                   {"samples_per_step", plan.samples_per_step},
                   {"precision", to_string(plan.precision)},
                   {"collective_fidelity", to_string(plan.collective_fidelity)},
                   {"cluster", write_cluster_json(cluster)},
                   {"static_memory", memory},
                   {"transports", transports},
                   {"tasks", tasks}};
  // Written only when it is not the default, so that plans of NCHW frameworks read as before.
  if (plan.memory_format != MemoryFormat::kNchw) document["memory_format"] = to_string(plan.memory_format);
  if (plan.lockstep_gemm_factor != 1.0) {
    document["lockstep_gemm_factor"] = plan.lockstep_gemm_factor;
    document["lockstep_gpus"] = plan.lockstep_gpus;
  }
  return document;
}

PlanFile read_plan_json(const JsonReader& document) {
  document.reject_unknown_keys({"schema_version", "kind", "name", "steps", "samples_per_step", "precision",
                                "memory_format", "cluster", "collective_fidelity", "static_memory", "transports",
                                "tasks", "lockstep_gemm_factor", "lockstep_gpus"});
  int64_t version = document.at("schema_version").as_integer(1);
  if (version != ExecutionPlan::kSchemaVersion && version != 1) {
    document.at("schema_version").fail("unsupported plan schema version " + std::to_string(version) +
                                       " (this placesim reads versions 1 and " +
                                       std::to_string(ExecutionPlan::kSchemaVersion) + ")");
  }
  if (document.has("kind") && document.string_at("kind") != "placesim-plan") {
    document.at("kind").fail("expected \"placesim-plan\", got " + brief(document.at("kind").value()));
  }
  PlanFile file{ExecutionPlan{}, read_cluster_json(document.at("cluster"))};
  ExecutionPlan& plan = file.plan;
  const Cluster& cluster = file.cluster;
  plan.name = document.string_or("name", "plan");
  plan.steps = document.integer_or("steps", 1, 1, 1000000);
  plan.samples_per_step = document.integer_or("samples_per_step", 1, 1, 1'000'000'000);
  plan.precision = *parse_precision(document.choice_or("precision", precision_names(), "fp32"));
  plan.memory_format = *parse_memory_format(document.choice_or("memory_format", memory_format_names(), "nchw"));
  if (const std::string reason = precision_unsupported_reason(cluster, plan.precision); !reason.empty()) {
    document.at("precision").fail(reason);
  }
  plan.collective_fidelity =
      *parse_collective_fidelity(document.choice_or("collective_fidelity", {"per-phase", "per-round"}, "per-phase"));
  if (auto factor = document.find("lockstep_gemm_factor")) {
    plan.lockstep_gemm_factor = factor->as_positive_number();
    if (plan.lockstep_gemm_factor < 1.0 || plan.lockstep_gemm_factor > 10.0) {
      factor->fail("the slowest GPU's GEMM factor is at least 1 and at most 10, got " + brief(factor->value()));
    }
  }
  plan.lockstep_gpus = document.integer_or("lockstep_gpus", 1, 1, 100'000'000);
  plan.static_memory.assign(cluster.devices().size(), StaticMemory{});
  if (auto memory = document.find("static_memory")) {
    for (const auto& entry : memory->elements()) {
      entry.reject_unknown_keys({"device", "parameter_bytes", "gradient_bytes", "optimizer_state_bytes"});
      StaticMemory& m = plan.static_memory[device_at(cluster, entry.at("device"))];
      // As strict as the model reader: one device's memory is at most kMaxPlausibleBytes.
      auto bytes = [&](const char* key) {
        auto value = entry.find(key);
        return value ? value->at_most(value->as_non_negative_number(), kMaxPlausibleBytes) : 0.0;
      };
      m.parameter_bytes = bytes("parameter_bytes");
      m.gradient_bytes = bytes("gradient_bytes");
      m.optimizer_state_bytes = bytes("optimizer_state_bytes");
    }
  }
  if (auto transports = document.find("transports")) {
    for (const auto& entry : transports->elements()) plan.transports.push_back(read_transport_json(entry));
    if (plan.transports.size() > 1000) transports->fail("too many transports (" + std::to_string(plan.transports.size()) + ")");
  }
  JsonReader tasks = document.at("tasks");
  std::vector<JsonReader> entries = tasks.elements();
  if (entries.size() > kMaxTasks) tasks.fail("too many tasks (" + std::to_string(entries.size()) + ")");
  plan.tasks.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const JsonReader& entry = entries[i];
    entry.reject_unknown_keys({"id", "name", "kind", "phase", "step", "deps", "device", "op", "op_kind", "flops",
                               "memory_bytes", "source", "bytes", "output_bytes", "keep_until", "compute_scale",
                               "group", "algorithm", "collective", "replica", "kernel", "transport", "fixed_seconds",
                               "reads_dep_outputs"});
    Task task;
    task.id = i;
    if (entry.has("id") && entry.at("id").as_integer(0) != static_cast<int64_t>(i)) {
      entry.at("id").fail("task ids must equal their position in the list (" + std::to_string(i) + "), got " +
                          brief(entry.at("id").value()));
    }
    task.name = entry.string_or("name", "task" + std::to_string(i));
    std::string kind = entry.choice_at("kind", {"compute", "transfer", "collective"});
    task.kind = kind == "compute" ? TaskKind::kCompute : kind == "transfer" ? TaskKind::kTransfer : TaskKind::kCollective;
    task.phase = entry.has("phase") ? parse_phase(entry.at("phase"))
                 : task.kind == TaskKind::kTransfer   ? Phase::kTransfer
                 : task.kind == TaskKind::kCollective ? Phase::kCollective
                                                      : Phase::kForward;
    task.replica = entry.integer_or("replica", -1, -1, 1'000'000);  // the scenario loader's replica limit
    task.step = entry.integer_or("step", 0, 0, 1'000'000);  // the steps limit
    task.op = entry.string_or("op", "");
    task.device = device_at(cluster, entry.at("device"));
    if (task.kind == TaskKind::kCompute) {
      std::string op_kind = entry.string_or("op_kind", "other");
      auto parsed = parse_op_kind(op_kind);
      if (!parsed) entry.at("op_kind").fail("unknown op kind \"" + op_kind + "\"");
      task.op_kind = *parsed;
      task.flops = entry.non_negative_or("flops", 0);
      task.memory_bytes = entry.non_negative_or("memory_bytes", 0);
      if (task.memory_bytes > kMaxPlausibleBytes) entry.at("memory_bytes").at_most(task.memory_bytes, kMaxPlausibleBytes);
      if (task.flops > kMaxPlausibleFlops) entry.at("flops").fail("implausibly large FLOP count " + brief(entry.at("flops").value()));
      task.compute_scale = entry.positive_or("compute_scale", 1.0);
      if (task.compute_scale > 1e6) entry.at("compute_scale").fail("implausible compute_scale " + brief(entry.at("compute_scale").value()));
      if (auto kernel = entry.find("kernel")) read_task_kernel(*kernel, &task);
      if (auto fixed = entry.find("fixed_seconds")) task.fixed_seconds = fixed->at_most(fixed->as_non_negative_number(), 1e6);
    } else if (task.kind == TaskKind::kCollective) {
      JsonReader group = entry.at("group");
      for (const auto& member : group.elements()) {
        DeviceId d = device_at(cluster, member);
        if (std::find(task.group.begin(), task.group.end(), d) != task.group.end()) member.fail("device listed twice");
        task.group.push_back(d);
      }
      if (task.group.empty()) group.fail("a collective needs at least one device");
      task.collective = *parse_collective_kind(entry.choice_or("collective", collective_kind_names(), "all_reduce"));
      // An all-to-all runs one way: pairwise exchanges, its default; the rest default to a ring.
      std::string algorithm = entry.string_or("algorithm", task.collective == CollectiveKind::kAllToAll ? "pairwise" : "ring");
      auto parsed = parse_collective_algorithm(algorithm);
      if (!parsed) {
        entry.at("algorithm").fail("unknown algorithm \"" + algorithm + "\" (expected ring, tree, halving_doubling, hierarchical or pairwise)");
      }
      task.algorithm = *parsed;
      std::string why;
      // Version 1 ran every collective task as an all-reduce, with any all-reduce algorithm; its
      // all-gathers and reduce-scatters now run as rings where that algorithm does not apply to them.
      if (version == 1 && task.collective != CollectiveKind::kAllReduce &&
          !collective_supported(task.collective, task.algorithm, nullptr)) {
        task.algorithm = CollectiveAlgorithm::kRing;
      }
      if (!collective_supported(task.collective, task.algorithm, &why)) {
        (entry.has("collective") ? entry.at("collective") : entry).fail(why);
      }
      if (!applicable(task.algorithm, task.group, cluster, &why)) {
        (entry.has("algorithm") ? entry.at("algorithm") : entry).fail(why);
      }
      for (size_t a = 0; a < task.group.size(); ++a) {
        for (size_t b : {(a + 1) % task.group.size()}) {
          if (!cluster.reachable(task.group[a], task.group[b])) group.fail("devices of the group are not connected");
        }
      }
      task.bytes = entry.at("bytes").as_non_negative_number();
      // Version 1 wrote an all-gather or reduce-scatter of S bytes as an all-reduce task of S / 2.
      if (version == 1 && task.collective != CollectiveKind::kAllReduce) task.bytes *= 2;
      if (task.bytes > kMaxPlausibleBytes) entry.at("bytes").fail("implausibly large collective " + brief(entry.at("bytes").value()));
    } else {
      task.source = device_at(cluster, entry.at("source"));
      task.bytes = entry.at("bytes").as_non_negative_number();
      if (task.bytes > kMaxPlausibleBytes) entry.at("bytes").fail("implausibly large transfer " + brief(entry.at("bytes").value()));
      if (!cluster.reachable(task.source, task.device)) {
        entry.at("source").fail("no route from " + cluster.device(task.source).name.canonical() + " to " +
                                cluster.device(task.device).name.canonical() + " in the plan's cluster");
      }
    }
    if (entry.has("transport")) {
      if (task.kind == TaskKind::kCompute) entry.at("transport").fail("only transfers and collectives have a transport");
      task.transport = static_cast<int>(entry.at("transport").as_integer(0, static_cast<int64_t>(plan.transports.size()) - 1));
    }
    task.output_bytes = entry.non_negative_or("output_bytes", 0);
    if (task.output_bytes > kMaxPlausibleBytes) entry.at("output_bytes").at_most(task.output_bytes, kMaxPlausibleBytes);
    task.reads_dep_outputs = entry.bool_or("reads_dep_outputs", true);
    for (const char* key : {"deps", "keep_until"}) {
      auto list = entry.find(key);
      if (!list) continue;
      for (const auto& reference : list->elements()) {
        int64_t dep = reference.as_integer(0);
        if (static_cast<size_t>(dep) >= entries.size()) {
          reference.fail("refers to missing task " + std::to_string(dep) + " (the plan has " +
                         std::to_string(entries.size()) + " tasks)");
        }
        if (static_cast<size_t>(dep) == i) reference.fail("a task cannot depend on itself");
        (std::string(key) == "deps" ? task.deps : task.keep_until).push_back(static_cast<TaskId>(dep));
      }
    }
    plan.tasks.push_back(std::move(task));
  }
  require_acyclic(plan, tasks);
  return file;
}

PlanFile load_plan_file(const std::filesystem::path& path) {
  Json document = parse_json_file(path);
  JsonReader reader(document, path.string());
  reader.expect_object();
  return read_plan_json(reader);
}

}  // namespace placesim
