#include "sim/plan/plan_symmetry.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

namespace placesim {
namespace {

size_t find(std::vector<size_t>& parent, size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

void compute_link_orbits(const std::vector<MirroredFlow>& flows, const Cluster& cluster, PlanSymmetry* symmetry) {
  const size_t directions = 2 * cluster.links().size();
  std::vector<size_t> parent(directions);
  std::iota(parent.begin(), parent.end(), size_t{0});
  for (const MirroredFlow& flow : flows) {
    const std::vector<RouteHop>& route = cluster.route(flow.from, flow.to);
    for (auto [from, to] : flow.images) {
      const std::vector<RouteHop>& image = cluster.route(from, to);
      if (image.size() != route.size()) {
        throw std::invalid_argument("the route " + cluster.device(from).name.canonical() + " -> " +
                                    cluster.device(to).name.canonical() + " has " + std::to_string(image.size()) +
                                    " hops, its representative's " + std::to_string(route.size()));
      }
      for (size_t i = 0; i < route.size(); ++i) {
        size_t a = find(parent, link_direction(route[i])), b = find(parent, link_direction(image[i]));
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
      }
    }
  }
  // Dense orbit ids; every member of an orbit must be the same kind of link, or, where NCCL's
  // channels fill links of different bandwidths alike, give each flow crossing it the same rate
  // (bandwidth / the images crossing it).
  std::vector<size_t>& orbit = symmetry->direction_orbit;
  orbit.assign(directions, 0);
  std::map<size_t, size_t> dense;
  std::vector<size_t> size, root_of;
  std::vector<double> crossing(directions, 0);
  for (const MirroredFlow& flow : flows) {
    for (auto [from, to] : flow.images) {
      for (const RouteHop& hop : cluster.route(from, to)) crossing[link_direction(hop)] += 1;
    }
  }
  auto rate = [&](size_t d) { return cluster.links()[d / 2].spec.bandwidth_bytes_per_second / std::max(1.0, crossing[d]); };
  std::vector<bool> mixed;
  for (size_t d = 0; d < directions; ++d) {
    const size_t root = find(parent, d);
    auto [it, inserted] = dense.emplace(root, dense.size());
    if (inserted) {
      size.push_back(0);
      root_of.push_back(root);
      mixed.push_back(false);
    }
    orbit[d] = it->second;
    ++size[it->second];
    const LinkSpec& mine = cluster.links()[d / 2].spec;
    const LinkSpec& theirs = cluster.links()[root / 2].spec;
    const bool same_link = mine.bandwidth_bytes_per_second == theirs.bandwidth_bytes_per_second;
    if (!same_link) mixed[it->second] = true;
    if (mine.latency_seconds != theirs.latency_seconds ||
        (!same_link && std::abs(rate(d) - rate(root)) > 1e-9 * rate(root))) {
      throw std::invalid_argument("links " + cluster.links()[d / 2].name + " and " + cluster.links()[root / 2].name +
                                  " mirror each other but differ in bandwidth or latency");
    }
  }
  // Multiplicity of each flow on each orbit it crosses: its images' crossings / the orbit's size.
  std::vector<double> divisor(size.size(), 0);
  std::vector<bool> disagree(size.size(), false);
  for (const MirroredFlow& flow : flows) {
    std::map<size_t, double> crossings;
    for (auto [from, to] : flow.images) {
      for (const RouteHop& hop : cluster.route(from, to)) crossings[orbit[link_direction(hop)]] += 1;
    }
    for (const RouteHop& hop : cluster.route(flow.from, flow.to)) {
      const size_t o = orbit[link_direction(hop)];
      const double copies = std::max(1.0, crossings[o] / static_cast<double>(size[o]));
      if (divisor[o] != 0 && std::abs(divisor[o] - copies) > 1e-9 * copies) disagree[o] = true;
      divisor[o] = std::max(divisor[o], copies);
    }
  }
  // An orbit of mixed links: each crossing's rate there, times the simulated flows crossing it.
  std::vector<double> simulated_crossings(size.size(), 0);
  for (const MirroredFlow& flow : flows) {
    for (const RouteHop& hop : cluster.route(flow.from, flow.to)) simulated_crossings[orbit[link_direction(hop)]] += 1;
  }
  symmetry->approximate_links = 0;
  symmetry->orbit_bandwidth_bytes_per_second.assign(size.size(), 0);
  for (size_t o = 0; o < divisor.size(); ++o) {
    symmetry->approximate_links += disagree[o];
    symmetry->orbit_bandwidth_bytes_per_second[o] =
        mixed[o] ? rate(root_of[o]) * std::max(1.0, simulated_crossings[o])
                 : cluster.links()[root_of[o] / 2].spec.bandwidth_bytes_per_second / (divisor[o] == 0 ? 1 : divisor[o]);
  }
}

}  // namespace placesim
