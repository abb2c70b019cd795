#include "sim/cluster/cluster_builder.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <regex>

#include "sim/cluster/collective_profile.h"

namespace placesim {
namespace {

constexpr int64_t kMaxNodes = kMaxClusterNodes;
constexpr size_t kMaxDevicesPerNode = 4096;

// "0000:06:00.0": a 4-digit PCI domain, then bus, device and function, hexadecimal.
bool is_pci_bus_id(const std::string& text) {
  static const std::regex kForm("^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]$");
  return std::regex_match(text, kForm);
}

struct NodeTemplate {
  struct Device {
    std::string local_name;
    DeviceKind kind;
    int index;
    const DeviceSpec* spec;
    std::string shares_compute_with;  ///< local name of an earlier device of the node, or ""
    std::string pci_bus_id;           ///< this device's own, replacing its profile's; or ""
  };
  struct Link {
    std::string a, b;
    LinkSpec spec;
  };
  std::vector<Device> devices;
  std::vector<std::string> switches;
  std::vector<Link> links;
  std::vector<std::string> nics;
};

NodeTemplate read_node(const JsonReader& node, const HardwareCatalog& catalog) {
  node.reject_unknown_keys({"devices", "switches", "links", "nic", "nics"});
  NodeTemplate result;
  std::map<std::string, bool> names;  // name -> is device
  JsonReader devices = node.at("devices");
  if (devices.elements().empty()) devices.fail("a node needs at least one device");
  if (devices.size() > kMaxDevicesPerNode) {
    devices.fail("a node may hold at most " + std::to_string(kMaxDevicesPerNode) + " devices, got " +
                 std::to_string(devices.size()));
  }
  for (const auto& entry : devices.elements()) {
    entry.reject_unknown_keys({"name", "profile", "shares_compute_with", "pci_bus_id"});
    std::string local_name = entry.string_at("name");
    std::string error;
    auto parsed = DeviceName::parse(local_name, &error);
    if (!parsed || !parsed->kind || !parsed->index || parsed->job || parsed->task || parsed->replica) {
      entry.at("name").fail("expected a local device name like \"GPU:0\" or \"CPU:0\", got \"" + local_name + "\"");
    }
    const DeviceSpec& spec = catalog.device(entry.string_at("profile"), entry.at("profile"));
    if (spec.kind != *parsed->kind) {
      entry.at("profile").fail("profile \"" + spec.id + "\" is a " + to_string(spec.kind) + ", but the device is named " +
                               local_name);
    }
    std::string canonical = parsed->local();
    if (names.count(canonical)) entry.at("name").fail("duplicate device name \"" + canonical + "\"");
    names[canonical] = true;
    std::string shares;
    if (auto shared = entry.find("shares_compute_with")) {
      auto other = DeviceName::parse(shared->as_string(), nullptr);
      shares = other && other->kind && other->index ? other->local() : shared->as_string();
      auto earlier = std::find_if(result.devices.begin(), result.devices.end(),
                                  [&](const NodeTemplate::Device& device) { return device.local_name == shares; });
      if (earlier == result.devices.end()) {
        shared->fail("expected an earlier device of this node, got \"" + shared->as_string() + "\"");
      }
      if (earlier->spec != &spec) {
        shared->fail("\"" + shares + "\" has profile \"" + earlier->spec->id + "\", this device \"" + spec.id +
                     "\": only devices of one profile can share compute");
      }
      if (!earlier->shares_compute_with.empty()) shares = earlier->shares_compute_with;
    }
    std::string pci_bus_id;
    if (auto bus = entry.find("pci_bus_id")) {
      pci_bus_id = bus->as_string();
      if (!is_pci_bus_id(pci_bus_id)) {
        bus->fail("expected a PCI bus id DOMAIN:BUS:DEVICE.FUNCTION in hexadecimal, as nvidia-smi and TensorFlow print "
                  "it (\"0000:06:00.0\"), got \"" + shown_word(pci_bus_id) + "\"");
      }
    }
    result.devices.push_back({canonical, *parsed->kind, *parsed->index, &spec, shares, pci_bus_id});
  }
  if (auto switches = node.find("switches")) {
    for (const auto& entry : switches->elements()) {
      std::string name = entry.as_string();
      if (name.empty()) entry.fail("switch names must not be empty");
      if (names.count(name)) entry.fail("duplicate vertex name \"" + name + "\"");
      names[name] = false;
      result.switches.push_back(name);
    }
  }
  auto known_vertex = [&](const JsonReader& where) {
    std::string name = where.as_string();
    auto parsed = DeviceName::parse(name, nullptr);
    if (parsed && parsed->kind && parsed->index && names.count(parsed->local())) return parsed->local();
    if (names.count(name)) return name;
    std::vector<std::string> known;
    for (const auto& [vertex, is_device] : names) known.push_back(vertex);
    std::string suggestion = did_you_mean(name, known);
    where.fail("unknown device or switch \"" + name + "\"" +
               (suggestion.empty() ? "" : " (did you mean \"" + suggestion + "\"?)"));
  };
  if (auto links = node.find("links")) {
    for (const auto& entry : links->elements()) {
      entry.reject_unknown_keys({"endpoints", "type", "count"});
      JsonReader endpoints = entry.at("endpoints");
      if (endpoints.elements().size() != 2) endpoints.fail("expected two endpoints, got " + brief(endpoints.value()));
      std::string a = known_vertex(endpoints.at_index(0));
      std::string b = known_vertex(endpoints.at_index(1));
      if (a == b) endpoints.fail("a link cannot join \"" + a + "\" to itself");
      LinkSpec spec = catalog.link(entry.string_at("type"), entry.at("type"));
      double count = static_cast<double>(entry.integer_or("count", 1, 1, 1024));
      spec.bandwidth_bytes_per_second *= count;
      result.links.push_back({a, b, spec});
    }
  }
  if (node.has("nic") && node.has("nics")) node.at("nics").fail("give either \"nic\" or \"nics\", not both");
  if (auto nic = node.find("nic")) result.nics.push_back(known_vertex(*nic));
  if (auto nics = node.find("nics")) {
    for (const auto& entry : nics->elements()) result.nics.push_back(known_vertex(entry));
  }
  return result;
}

void require_connected(const Cluster& cluster, const JsonReader& where) {
  if (cluster.devices().empty()) return;
  std::vector<bool> seen(cluster.vertices().size(), false);
  std::vector<std::vector<VertexId>> neighbors(cluster.vertices().size());
  for (const auto& link : cluster.links()) {
    neighbors[link.a].push_back(link.b);
    neighbors[link.b].push_back(link.a);
  }
  std::deque<VertexId> queue{cluster.devices().front().vertex};
  seen[queue.front()] = true;
  while (!queue.empty()) {
    VertexId v = queue.front();
    queue.pop_front();
    if (v != cluster.devices().front().vertex && !cluster.vertices()[v].forwards) continue;
    for (VertexId w : neighbors[v]) {
      if (!seen[w]) {
        seen[w] = true;
        queue.push_back(w);
      }
    }
  }
  for (const auto& device : cluster.devices()) {
    if (!seen[device.vertex]) {
      where.fail("device " + device.name.canonical() + " is not connected to " +
                 cluster.devices().front().name.canonical() +
                 " (add a link; routes may pass through switches, CPUs and TPUs, not through GPUs)");
    }
  }
}

/// The network between machines: one link type, one switch or a two-level fat tree.
struct FabricSpec {
  LinkSpec link;
  int64_t nodes_per_leaf = kMaxNodes;  ///< kMaxNodes: a single switch
};

FabricSpec read_fabric(const JsonReader& fabric, const HardwareCatalog& catalog) {
  fabric.reject_unknown_keys({"link", "topology", "nodes_per_leaf"});
  FabricSpec spec;
  spec.link = catalog.link(fabric.string_at("link"), fabric.at("link"));
  std::string topology = fabric.choice_or("topology", {"single_switch", "fat_tree"}, "single_switch");
  spec.nodes_per_leaf = fabric.integer_or("nodes_per_leaf", 16, 1, kMaxNodes);
  if (topology == "single_switch") spec.nodes_per_leaf = kMaxNodes;
  return spec;
}

void add_fabric(Cluster& cluster, const FabricSpec& fabric, const std::vector<std::vector<VertexId>>& nics_per_node) {
  const LinkSpec& link = fabric.link;
  const int64_t nodes_per_leaf = fabric.nodes_per_leaf;
  const int64_t nodes = static_cast<int64_t>(nics_per_node.size());
  const int64_t leaves = (nodes + nodes_per_leaf - 1) / nodes_per_leaf;
  std::vector<VertexId> leaf_switches;
  for (int64_t leaf = 0; leaf < leaves; ++leaf) {
    leaf_switches.push_back(cluster.add_switch(leaves == 1 ? "fabric/switch" : "fabric/leaf:" + std::to_string(leaf)));
  }
  std::vector<int64_t> nics_under_leaf(static_cast<size_t>(leaves), 0);
  for (int64_t node = 0; node < nodes; ++node) {
    size_t leaf = static_cast<size_t>(node / nodes_per_leaf);
    // A vertex listed k times has k NICs (e.g. two HCAs behind one PCIe switch): one link of k
    // times the bandwidth (two links of one name would be one SimGrid link declared twice).
    std::map<VertexId, int> nic_count;
    for (VertexId nic : nics_per_node[static_cast<size_t>(node)]) ++nic_count[nic];
    for (const auto& [nic, count] : nic_count) {
      LinkSpec aggregate = link;
      aggregate.bandwidth_bytes_per_second *= count;
      cluster.add_link(nic, leaf_switches[leaf], aggregate);
      nics_under_leaf[leaf] += count;
    }
  }
  if (leaves > 1) {
    // Full bisection: each leaf's uplink to the spine carries as much as all its NICs.
    VertexId spine = cluster.add_switch("fabric/spine");
    for (size_t leaf = 0; leaf < leaf_switches.size(); ++leaf) {
      LinkSpec uplink = link;
      uplink.bandwidth_bytes_per_second *= static_cast<double>(std::max<int64_t>(1, nics_under_leaf[leaf]));
      cluster.add_link(leaf_switches[leaf], spine, uplink);
    }
  }
}

/// What a description changes of its template: the machines, their job name, the fabric.
struct TemplateOverrides {
  std::optional<int64_t> nodes;
  std::optional<std::string> job;
  std::optional<FabricSpec> fabric;
  std::optional<JsonReader> fabric_description;  ///< read only when there are several machines
};

Cluster build_from_template(const JsonReader& description, const JsonReader& base, const TemplateOverrides& overrides,
                            const HardwareCatalog& catalog) {
  Cluster cluster;
  cluster.name = base.string_or("id", "cluster");
  cluster.description = base.string_or("description", "");
  NodeTemplate node = read_node(base.at("node"), catalog);
  const int64_t nodes = overrides.nodes ? *overrides.nodes : base.integer_or("nodes", 1, 1, kMaxNodes);
  JsonReader nodes_at = description.has("nodes") ? description.at("nodes") : description;
  if (static_cast<double>(nodes) * static_cast<double>(node.devices.size()) > static_cast<double>(kMaxClusterDevices)) {
    nodes_at.fail("a cluster of " + std::to_string(nodes) + " nodes x " + std::to_string(node.devices.size()) +
                  " devices exceeds the limit of 1,000,000 devices");
  }
  std::string default_job = nodes == 1 ? "localhost" : "worker";
  std::string job = overrides.job ? *overrides.job : base.string_or("job", default_job);
  std::vector<std::vector<VertexId>> nics_per_node;
  for (int64_t task = 0; task < nodes; ++task) {
    std::map<std::string, VertexId> vertex_of;
    std::string prefix = "task:" + std::to_string(task) + "/";
    for (const auto& device : node.devices) {
      ClusterDevice cluster_device;
      cluster_device.name.job = job;
      cluster_device.name.replica = 0;
      cluster_device.name.task = static_cast<int>(task);
      cluster_device.name.kind = device.kind;
      cluster_device.name.index = device.index;
      cluster_device.spec = *device.spec;
      if (!device.pci_bus_id.empty()) cluster_device.spec.pci_bus_id = device.pci_bus_id;
      cluster_device.node = static_cast<int>(task);
      if (!device.shares_compute_with.empty()) {
        cluster_device.shares_compute_with = cluster.vertices()[vertex_of.at(device.shares_compute_with)].device;
      }
      DeviceId id = cluster.add_device(std::move(cluster_device), prefix + device.local_name);
      vertex_of[device.local_name] = cluster.device(id).vertex;
    }
    for (const auto& name : node.switches) vertex_of[name] = cluster.add_switch(prefix + name);
    for (const auto& link : node.links) cluster.add_link(vertex_of.at(link.a), vertex_of.at(link.b), link.spec);
    std::vector<VertexId> nics;
    for (const auto& nic : node.nics) nics.push_back(vertex_of.at(nic));
    if (nics.empty()) nics.push_back(vertex_of.at(node.devices.front().local_name));
    nics_per_node.push_back(std::move(nics));
  }
  if (nodes > 1) {
    std::optional<FabricSpec> fabric = overrides.fabric;
    if (!fabric && overrides.fabric_description) fabric = read_fabric(*overrides.fabric_description, catalog);
    if (!fabric && base.has("fabric")) fabric = read_fabric(base.at("fabric"), catalog);
    if (!fabric) nodes_at.fail("a cluster of several nodes needs a \"fabric\" (e.g. {\"link\": \"ib_edr\"})");
    add_fabric(cluster, *fabric, nics_per_node);
    for (const auto& nics : nics_per_node) cluster.nics_per_node.push_back(static_cast<int>(nics.size()));
  }
  require_connected(cluster, base.has("node") ? base.at("node") : description);
  return cluster;
}

/// The overrides a description gives ("nodes", "job", "fabric"); a template's own file gives none.
TemplateOverrides read_overrides(const JsonReader& description) {
  TemplateOverrides overrides;
  if (description.has("nodes")) overrides.nodes = description.integer_or("nodes", 1, 1, kMaxNodes);
  if (description.has("job")) overrides.job = description.string_at("job");
  if (description.has("fabric")) overrides.fabric_description = description.at("fabric");
  return overrides;
}

const std::vector<std::string> kTemplateKeys = {"id",  "description", "node",   "nodes",
                                                "fabric", "job", "sources", "collective_profile"};

/// Attaches the measured collective curves named by "collective_profile" (sim/cluster/
/// collective_profile.h): the description's value wins over the template's; "none" keeps the
/// link-rate model; a list of profiles merges them, each curve from the first that measured it.
/// Relative ".csv" paths resolve against the directory of the file naming them.
void attach_collective_profile(Cluster& cluster, const JsonReader& description, const JsonReader& base,
                               const HardwareCatalog& catalog, const std::filesystem::path& description_directory,
                               const std::filesystem::path& base_directory) {
  const bool own = description.has("collective_profile");
  if (!own && !base.has("collective_profile")) return;
  const JsonReader at = own ? description.at("collective_profile") : base.at("collective_profile");
  std::vector<JsonReader> names;
  if (at.value().is_array()) {
    names = at.elements();
    if (names.empty() || names.size() > 8) at.fail("expected 1 to 8 collective profiles, got " + std::to_string(names.size()));
  } else {
    if (at.as_string() == "none") return;
    names.push_back(at);
  }
  std::vector<CollectiveProfile> profiles;
  for (const JsonReader& name : names) {
    const std::string value = name.as_string();
    if (value == "none") name.fail("\"none\" stands alone, not in a list of profiles");
    std::filesystem::path path =
        collective_profile_path(value, catalog.root(), own ? description_directory : base_directory);
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) {
      name.fail("no collective profile \"" + value + "\" (looked for " + path.string() +
                "; give a bundled id from hardware_profiles/collectives/, a .csv path, or \"none\")");
    }
    profiles.push_back(read_collective_profile(path));
  }
  cluster.collective_profile = std::make_shared<const CollectiveProfile>(
      profiles.size() == 1 ? std::move(profiles.front()) : merge_collective_profiles(profiles));
}

}  // namespace

Cluster build_cluster(const JsonReader& description, const HardwareCatalog& catalog,
                      const std::filesystem::path& base_directory) {
  description.reject_unknown_keys(
      {"template", "file", "id", "description", "node", "nodes", "fabric", "job", "collective_profile"});
  int sources = (description.has("template") ? 1 : 0) + (description.has("file") ? 1 : 0) +
                (description.has("node") ? 1 : 0);
  if (sources != 1) description.fail("give exactly one of \"template\", \"file\" or \"node\"");
  if (description.has("node")) {
    Cluster cluster = build_from_template(description, description, read_overrides(description), catalog);
    attach_collective_profile(cluster, description, description, catalog, base_directory, base_directory);
    return cluster;
  }
  std::filesystem::path path;
  if (description.has("template")) {
    path = catalog.cluster_template(description.string_at("template"), description.at("template"));
  } else {
    path = description.string_at("file");
    if (path.is_relative()) path = base_directory / path;
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) description.at("file").fail("no such file: " + path.string());
  }
  Json document = parse_json_file(path);
  JsonReader base(document, path.string());
  base.reject_unknown_keys(kTemplateKeys);
  Cluster cluster = build_from_template(description, base, read_overrides(description), catalog);
  attach_collective_profile(cluster, description, base, catalog, base_directory, path.parent_path());
  return cluster;
}

Cluster build_template_cluster(const std::string& template_id, int64_t nodes, const std::string& fabric_link,
                               const HardwareCatalog& catalog) {
  const Json id = template_id;
  const std::filesystem::path path = catalog.cluster_template(template_id, JsonReader(id, "", "/cluster/template"));
  Json document = parse_json_file(path);
  JsonReader base(document, path.string());
  base.reject_unknown_keys(kTemplateKeys);
  TemplateOverrides overrides;
  overrides.nodes = nodes;
  if (!fabric_link.empty()) {
    const Json link = fabric_link;
    overrides.fabric = FabricSpec{catalog.link(fabric_link, JsonReader(link, "", "/cluster/fabric/link")), kMaxNodes};
  }
  Cluster cluster = build_from_template(base, base, overrides, catalog);
  attach_collective_profile(cluster, base, base, catalog, path.parent_path(), path.parent_path());
  return cluster;
}

Cluster load_cluster_file(const std::filesystem::path& path, const HardwareCatalog& catalog) {
  Json document = parse_json_file(path);
  JsonReader base(document, path.string());
  base.reject_unknown_keys(kTemplateKeys);
  Cluster cluster = build_from_template(base, base, read_overrides(base), catalog);
  attach_collective_profile(cluster, base, base, catalog, path.parent_path(), path.parent_path());
  return cluster;
}

}  // namespace placesim
