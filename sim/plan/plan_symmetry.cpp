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
  // Dense orbit ids; every member of an orbit must be the same kind of link.
  std::vector<size_t>& orbit = symmetry->direction_orbit;
  orbit.assign(directions, 0);
  std::map<size_t, size_t> dense;
  std::vector<size_t> size;
  for (size_t d = 0; d < directions; ++d) {
    const size_t root = find(parent, d);
    auto [it, inserted] = dense.emplace(root, dense.size());
    if (inserted) size.push_back(0);
    orbit[d] = it->second;
    ++size[it->second];
    const LinkSpec& mine = cluster.links()[d / 2].spec;
    const LinkSpec& theirs = cluster.links()[root / 2].spec;
    if (mine.bandwidth_bytes_per_second != theirs.bandwidth_bytes_per_second ||
        mine.latency_seconds != theirs.latency_seconds) {
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
  symmetry->approximate_links = 0;
  for (size_t o = 0; o < divisor.size(); ++o) {
    if (divisor[o] == 0) divisor[o] = 1;
    symmetry->approximate_links += disagree[o];
  }
  symmetry->orbit_bandwidth_divisor = std::move(divisor);
}

}  // namespace placesim
