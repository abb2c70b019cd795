// Routes (sim/cluster/cluster.h): whatever a search skips (GPUs that forward nothing, parts of
// the network that hang off one vertex and hold neither end), every route must be a shortest
// one by the routing metric (latency + 1 MiB / bandwidth per hop), checked against a plain
// Dijkstra over the whole network, on a fat tree of DGX A100 and on a hand-made network with
// a cycle through a switch, a dead end, and a slow direct link.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <queue>

#include "sim/plan/collective_schedule.h"
#include "tests/support/scenario_text.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

double weight(const ClusterLink& link) { return link.spec.latency_seconds + kMiB / link.spec.bandwidth_bytes_per_second; }

/// The reference: Dijkstra over every vertex, through forwarding vertices only.
double reference_distance(const Cluster& cluster, DeviceId from, DeviceId to) {
  const auto& vertices = cluster.vertices();
  const VertexId source = cluster.device(from).vertex, target = cluster.device(to).vertex;
  std::vector<double> distance(vertices.size(), std::numeric_limits<double>::infinity());
  using Entry = std::pair<double, VertexId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  distance[source] = 0;
  heap.push({0, source});
  while (!heap.empty()) {
    auto [d, v] = heap.top();
    heap.pop();
    if (d > distance[v]) continue;
    if (v == target) return d;
    if (v != source && !vertices[v].forwards) continue;
    for (LinkId l = 0; l < cluster.links().size(); ++l) {
      const ClusterLink& link = cluster.links()[l];
      if (link.a != v && link.b != v) continue;
      const VertexId w = link.a == v ? link.b : link.a;
      if (d + weight(link) < distance[w]) {
        distance[w] = d + weight(link);
        heap.push({distance[w], w});
      }
    }
  }
  return std::numeric_limits<double>::infinity();
}

/// The route's length, after checking that its hops join `from` to `to`.
double route_length(const Cluster& cluster, DeviceId from, DeviceId to) {
  VertexId at = cluster.device(from).vertex;
  double length = 0;
  for (const RouteHop& hop : cluster.route(from, to)) {
    const ClusterLink& link = cluster.links()[hop.link];
    EXPECT_EQ(hop.a_to_b ? link.a : link.b, at);
    at = hop.a_to_b ? link.b : link.a;
    length += weight(link);
  }
  EXPECT_EQ(at, cluster.device(to).vertex);
  return length;
}

void expect_every_route_shortest(const Cluster& cluster, const std::vector<DeviceId>& devices) {
  for (DeviceId from : devices) {
    for (DeviceId to : devices) {
      if (from == to) continue;
      const double expected = reference_distance(cluster, from, to);
      EXPECT_NEAR(route_length(cluster, from, to), expected, 1e-12 * expected) << from << " -> " << to;
    }
  }
}

std::vector<DeviceId> all_devices(const Cluster& cluster) {
  std::vector<DeviceId> ids;
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) ids.push_back(id);
  return ids;
}

Cluster fat_tree() {
  return testing::scenario_from_text(R"({"model": {"zoo": "gpt", "parameters": {"layers": 2, "hidden": 256, "heads": 4, "sequence": 64, "vocabulary": 1000}},
      "cluster": {"template": "dgx_a100", "nodes": 6, "fabric": {"link": "ib_hdr", "topology": "fat_tree",
                                                                 "nodes_per_leaf": 2}},
      "strategy": {"parallelism": {"data": 2}}})")
      .cluster;
}

TEST(ClusterRoutes, EveryRouteOfAFatTreeIsAShortestOne) {
  const Cluster cluster = fat_tree();
  // Routes one pair at a time, then from one source to many at once (one search each).
  expect_every_route_shortest(cluster, all_devices(cluster));
  const Cluster fresh = fat_tree();
  for (DeviceId from : all_devices(fresh)) fresh.prepare_routes(from, all_devices(fresh));
  expect_every_route_shortest(fresh, all_devices(fresh));
}

TEST(ClusterRoutes, RingHopsFoundByTheNearestFirstSearchAreShortest) {
  const Cluster cluster = fat_tree();
  std::vector<DeviceId> gpus;  // GPU 3 of every node: every hop leaves the node
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    const ClusterDevice& device = cluster.device(id);
    if (device.spec.kind == DeviceKind::kGpu && device.name.index == 3) gpus.push_back(id);
  }
  ASSERT_EQ(gpus.size(), 6u);
  const std::vector<DeviceId> ring = topology_ring(gpus, cluster);
  ASSERT_EQ(ring.size(), gpus.size());
  for (size_t i = 0; i < ring.size(); ++i) {
    const DeviceId from = ring[i], to = ring[(i + 1) % ring.size()];
    EXPECT_NEAR(route_length(cluster, from, to), reference_distance(cluster, from, to), 1e-15);
  }
  // Nearest first: the two GPUs under one leaf are neighbours in the ring.
  for (size_t i = 0; i < ring.size(); i += 2) {
    EXPECT_EQ(cluster.device(ring[i]).node / 2, cluster.device(ring[i + 1]).node / 2) << i;
  }
}

// The searches for given ends do not look at the links into regions that hold neither end (a
// 100,000-node switch would cost 100,000 looks per route); a search that looks everywhere
// (visit_devices_by_distance without `wanted`) must choose the very same hops, ties included
// (DGX A100 nodes reach their leaf through 8 NICs of equal cost).
void expect_same_hops_as_a_full_search(Cluster fresh) {
  if (!fresh.links().empty()) fresh.scale_link_bandwidth(0, 1.0);  // forgets any route loading cached
  const Cluster searched_everywhere = fresh;
  const std::vector<DeviceId> devices = all_devices(fresh);
  for (DeviceId from : devices) {
    searched_everywhere.visit_devices_by_distance(from, [](DeviceId, double) { return true; });
    for (DeviceId to : devices) searched_everywhere.remember_visited_route(from, to);
  }
  size_t compared = 0;
  for (DeviceId from : devices) {
    for (DeviceId to : devices) {
      if (from == to) continue;
      const std::vector<RouteHop>& expected = searched_everywhere.route(from, to);
      const std::vector<RouteHop>& got = fresh.route(from, to);
      ASSERT_EQ(got.size(), expected.size()) << from << " -> " << to;
      for (size_t h = 0; h < got.size(); ++h) {
        EXPECT_EQ(got[h].link, expected[h].link) << from << " -> " << to << ", hop " << h;
        EXPECT_EQ(got[h].a_to_b, expected[h].a_to_b) << from << " -> " << to << ", hop " << h;
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, devices.size() * (devices.size() - 1));
}

TEST(ClusterRoutes, SkippingDeadRegionsChoosesTheSameHopsOnAFatTreeAndASingleSwitch) {
  expect_same_hops_as_a_full_search(fat_tree());
  expect_same_hops_as_a_full_search(
      testing::scenario_from_text(R"({"model": {"zoo": "mlp"},
          "cluster": {"template": "dgx_a100", "nodes": 4, "fabric": {"link": "ib_hdr"}},
          "strategy": {"data_parallel": {"replicas": 2}}})")
          .cluster);
  // Every bundled scenario's clusters of up to 200 devices (all pairs), strategies' own included.
  HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  size_t clusters = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(PLACESIM_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".json" || entry.path().filename().string().rfind("sweep_", 0) == 0) continue;
    const Scenario scenario = load_scenario(entry.path(), catalog);
    for (const Strategy& strategy : scenario.strategies) {
      const Cluster& cluster = scenario.cluster_for(strategy);
      if (cluster.devices().size() > 200) continue;
      SCOPED_TRACE(entry.path().filename().string() + ", strategy " + strategy.name);
      expect_same_hops_as_a_full_search(cluster);
      ++clusters;
    }
  }
  EXPECT_GT(clusters, 10u);
  // prepare_routes (one search to many ends) skips too, and agrees.
  const Cluster prepared = fat_tree();
  for (DeviceId from : all_devices(prepared)) prepared.prepare_routes(from, all_devices(prepared));
  expect_same_hops_as_a_full_search(prepared);
}

// g0 - s0 ==slow== s1 - g1, with a fast detour s0 - x - s1 (a cycle: x is no dead end) and a
// dead end s0 - d - g2 (d hangs off s0). Routes g0 -> g1 must take the detour; routes to g2 must
// enter the dead end.
TEST(ClusterRoutes, ADetourOnACycleIsTakenAndADeadEndEnteredOnlyForItsOwnDevices) {
  Cluster cluster = testing::gpus(3);
  const VertexId s0 = cluster.add_switch("s0"), s1 = cluster.add_switch("s1"), x = cluster.add_switch("x"),
                 d = cluster.add_switch("d");
  const LinkSpec fast = testing::round_link(100e9, 1e-6), slow = testing::round_link(1e9, 1e-6);
  cluster.add_link(cluster.device(0).vertex, s0, fast);
  cluster.add_link(cluster.device(1).vertex, s1, fast);
  cluster.add_link(s0, s1, slow);
  cluster.add_link(s0, x, fast);
  cluster.add_link(x, s1, fast);
  cluster.add_link(s0, d, fast);
  cluster.add_link(d, cluster.device(2).vertex, fast);
  expect_every_route_shortest(cluster, all_devices(cluster));
  EXPECT_EQ(cluster.route(0, 1).size(), 4u);  // g0 - s0 - x - s1 - g1
  EXPECT_EQ(cluster.route(1, 2).size(), 5u);  // g1 - s1 - x - s0 - d - g2
}

// Names (Cluster::match): a spec with task, kind and index is looked up in an index built as
// devices are added; every other spec scans. Both must give what a scan gives, in cluster order.
TEST(ClusterNames, MatchByTaskKindAndIndexAgreesWithAScan) {
  Cluster cluster;
  for (int task : {0, 1, 2}) {
    for (auto [kind, count] : {std::pair{DeviceKind::kCpu, 1}, std::pair{DeviceKind::kGpu, 4}}) {
      for (int index = 0; index < count; ++index) {
        ClusterDevice device;
        device.name = DeviceName{"worker", 0, task, kind, index};
        device.spec = testing::round_gpu();
        device.node = task;
        cluster.add_device(device, "task:" + std::to_string(task) + "/" + device.name.local());
      }
    }
  }
  auto scan = [&](const std::string& text) {
    DeviceName spec = *DeviceName::parse(text, nullptr);
    std::vector<DeviceId> found;
    for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
      if (spec.matches(cluster.device(id).name)) found.push_back(id);
    }
    return found;
  };
  // Devices in order: task t's CPU:0 is 5t, its GPU:i is 5t + 1 + i.
  EXPECT_EQ(cluster.match(*DeviceName::parse("/task:1/device:GPU:3", nullptr)), std::vector<DeviceId>{9});
  EXPECT_EQ(cluster.match(*DeviceName::parse("/gpu:2", nullptr)), (std::vector<DeviceId>{3, 8, 13}));
  for (const char* text : {"/task:1/device:GPU:3", "/job:worker/replica:0/task:2/device:CPU:0",
                           "/job:other/task:2/device:CPU:0", "/replica:1/task:0/device:GPU:0", "/task:3/device:GPU:0",
                           "/task:0/device:GPU:4", "/task:0/device:TPU:0", "/gpu:2", "/job:worker/task:1", "/cpu:0"}) {
    EXPECT_EQ(cluster.match(*DeviceName::parse(text, nullptr)), scan(text)) << text;
  }
}

}  // namespace
}  // namespace placesim
