#include "sim/plan/region_ring.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <unordered_map>

#include "sim/plan/distance_tiers.h"
#include "sim/plan/nearest_neighbour_ring.h"

namespace placesim {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);
constexpr size_t kTop = 0;  // the branch for the network outside every region
/// Distinct tiers lie at least this far apart, relative to the largest distance compared.
constexpr double kTierSeparationRelative = 1e-9;

/// A region that holds members, in its own part or in regions inside it; or the top (the
/// network outside every region). Its points are its own members (in group order), then the
/// vertices its child branches hang off.
struct Branch {
  size_t parent = kNone;
  VertexId attach = 0;  ///< the vertex it hangs off (none for the top)
  size_t slot = 0;      ///< `attach`'s index in the parent's child_attach
  size_t depth = 0;     ///< regions above it

  std::vector<size_t> members;       ///< group indices, ascending
  std::vector<VertexId> child_attach;
  size_t point(size_t slot_of_child) const { return members.size() + slot_of_child; }
  std::vector<std::vector<double>> between_seconds;  ///< [point][point]
  std::vector<double> to_own_attach_seconds;         ///< [point] (the top has none)
  /// Per child attach vertex, the child branches with unplaced members, ordered by (tier of
  /// their nearest member's distance, that member's group index).
  std::vector<std::set<std::tuple<double, size_t, size_t>>> waiting;  ///< (tier, group index, branch)

  /// The nearest unplaced member seen from `attach` (ties to the earliest in group order), and
  /// this branch's entry in its parent's `waiting`.
  bool has_nearest = false;
  double nearest_seconds = 0;
  double nearest_tier = 0;
  size_t nearest_index = 0;
  bool waits_in_parent = false;
  std::tuple<double, size_t, size_t> entry_in_parent;
};

struct Member {
  size_t site = 0;      ///< the branch whose own part holds it
  size_t position = 0;  ///< its point in the site
  bool placed = false;
};

/// The best candidate of one step: lowest tier, then lowest group index.
struct Candidate {
  bool found = false;
  double tier = 0;
  size_t index = 0;
  /// Takes the candidate if it is better; returns whether it did.
  bool consider(double candidate_tier, size_t candidate_index) {
    if (found && (candidate_tier > tier || (candidate_tier == tier && candidate_index >= index))) return false;
    found = true;
    tier = candidate_tier;
    index = candidate_index;
    return true;
  }
};

class RegionWalk {
 public:
  RegionWalk(const std::vector<DeviceId>& group, const Cluster& cluster) : group_(group), cluster_(cluster) {}

  std::optional<std::vector<DeviceId>> ring() {
    if (!build_branches()) return std::nullopt;
    measure();
    // Tiers apart by far more than the walk's tie tolerance, so no tier boundary falls inside it.
    static_assert(kTierSeparationRelative > 100 * kRingTieRelative && DistanceTiers::kTieRelative < kRingTieRelative);
    tiers_.emplace(kTierSeparationRelative * largest_distance_seconds());
    std::vector<size_t> order;  // children before parents
    for (size_t b = 1; b < branches_.size(); ++b) order.push_back(b);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return branches_[x].depth > branches_[y].depth; });
    for (size_t b : order) {
      refresh(b);
      publish(b);
    }
    std::vector<DeviceId> ring{group_.front()};
    place(0);
    size_t last = 0;
    for (size_t placed = 1; placed < group_.size(); ++placed) {
      const Candidate next = nearest_unplaced(last);
      if (!next.found) return std::nullopt;  // the rest is unreachable: the walk keeps group order
      place(next.index);
      ring.push_back(group_[next.index]);
      last = next.index;
    }
    if (tiers_->ambiguous()) return std::nullopt;
    return ring;
  }

 private:
  /// The branch of `region` (the top for none), made with those of the regions around it if new.
  size_t branch_for(uint32_t region) {
    if (region == Cluster::kNoRegion) return kTop;
    if (auto it = branch_of_region_.find(region); it != branch_of_region_.end()) return it->second;
    const size_t b = branches_.size();
    branches_.emplace_back();
    branch_of_region_[region] = b;
    branches_[b].attach = cluster_.region_attach_vertex(region);
    const size_t parent = branch_for(cluster_.enclosing_region(region));
    branches_[b].parent = parent;
    branches_[b].depth = branches_[parent].depth + 1;
    return b;
  }

  bool build_branches() {
    std::vector<DeviceId> sorted = group_;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return false;
    branches_.emplace_back();  // the top
    members_.resize(group_.size());
    for (size_t i = 0; i < group_.size(); ++i) {
      const size_t site = branch_for(cluster_.region_of(cluster_.device(group_[i]).vertex));
      members_[i].site = site;
      members_[i].position = branches_[site].members.size();
      branches_[site].members.push_back(i);
      if (branches_[site].members.size() > kMaxRegionMembers) return false;
    }
    for (size_t b = 1; b < branches_.size(); ++b) {
      Branch& branch = branches_[b];
      if (!cluster_.vertices()[branch.attach].forwards) return false;
      Branch& parent = branches_[branch.parent];
      auto known = std::find(parent.child_attach.begin(), parent.child_attach.end(), branch.attach);
      branch.slot = static_cast<size_t>(known - parent.child_attach.begin());
      if (known == parent.child_attach.end()) parent.child_attach.push_back(branch.attach);
      if (parent.child_attach.size() > kMaxAttachVertices) return false;
    }
    return true;
  }

  /// The distances the walk adds up: within each branch, between its points and from each to
  /// the branch's attach vertex (infinite where routes, which never pass through a GPU, cannot
  /// join them: an attach vertex reached only through GPUs).
  void measure() {
    for (size_t b = 0; b < branches_.size(); ++b) {
      Branch& branch = branches_[b];
      std::vector<VertexId> points;
      for (size_t i : branch.members) points.push_back(cluster_.device(group_[i]).vertex);
      points.insert(points.end(), branch.child_attach.begin(), branch.child_attach.end());
      std::vector<VertexId> ends = points;
      if (b != kTop) ends.push_back(branch.attach);
      for (VertexId from : points) {
        std::vector<double> distances = cluster_.vertex_distances(from, ends);
        if (b != kTop) branch.to_own_attach_seconds.push_back(distances.back());
        distances.resize(points.size());
        branch.between_seconds.push_back(std::move(distances));
      }
      branch.waiting.resize(branch.child_attach.size());
    }
  }

  /// An upper bound of every finite distance the walk compares: up from a member to an attach
  /// vertex around it, one distance within a branch, and down from an attach vertex to the
  /// nearest member inside (each no longer than the route up, across and down, so no shorter
  /// than the walk's).
  double largest_distance_seconds() const {
    double up = 0, within = 0;
    for (const Member& member : members_) {
      double seconds = 0;
      size_t point = member.position;
      for (size_t b = member.site; b != kTop && std::isfinite(seconds); b = branches_[b].parent) {
        seconds += branches_[b].to_own_attach_seconds[point];
        point = branches_[branches_[b].parent].point(branches_[b].slot);
        if (std::isfinite(seconds)) up = std::max(up, seconds);
      }
    }
    for (const Branch& branch : branches_) {
      for (const auto& row : branch.between_seconds) {
        for (double seconds : row) {
          if (std::isfinite(seconds)) within = std::max(within, seconds);
        }
      }
    }
    return 2 * up + within;
  }

  /// Recomputes the branch's nearest unplaced member (seen from its attach vertex).
  void refresh(size_t b) {
    Branch& branch = branches_[b];
    Candidate best;
    double best_seconds = 0;
    auto consider = [&](double seconds, size_t index) {
      if (std::isfinite(seconds) && best.consider(tiers_->tier(seconds), index)) best_seconds = seconds;
    };
    for (size_t k = 0; k < branch.members.size(); ++k) {
      if (!members_[branch.members[k]].placed) consider(branch.to_own_attach_seconds[k], branch.members[k]);
    }
    for (size_t slot = 0; slot < branch.waiting.size(); ++slot) {
      if (branch.waiting[slot].empty()) continue;
      const size_t child = std::get<2>(*branch.waiting[slot].begin());
      consider(branch.to_own_attach_seconds[branch.point(slot)] + branches_[child].nearest_seconds,
               branches_[child].nearest_index);
    }
    branch.has_nearest = best.found;
    branch.nearest_seconds = best_seconds;
    branch.nearest_tier = best.tier;
    branch.nearest_index = best.index;
  }

  /// Updates the branch's entry in its parent's waiting list.
  void publish(size_t b) {
    Branch& branch = branches_[b];
    auto& waiting = branches_[branch.parent].waiting[branch.slot];
    if (branch.waits_in_parent) waiting.erase(branch.entry_in_parent);
    branch.waits_in_parent = branch.has_nearest;
    if (!branch.has_nearest) return;
    branch.entry_in_parent = {branch.nearest_tier, branch.nearest_index, b};
    waiting.insert(branch.entry_in_parent);
  }

  void place(size_t index) {
    members_[index].placed = true;
    for (size_t b = members_[index].site; b != kTop; b = branches_[b].parent) {
      refresh(b);
      publish(b);
    }
  }

  /// The nearest unplaced member in `branch` seen from its point `from` plus `seconds`: its own
  /// members, then the nearest of each child attach vertex's waiting branches but `except`.
  void consider_branch(const Branch& branch, size_t from, double seconds, size_t except, Candidate& best) {
    for (size_t k = 0; k < branch.members.size(); ++k) {
      const size_t i = branch.members[k];
      const double total = seconds + branch.between_seconds[from][k];
      if (!members_[i].placed && k != from && std::isfinite(total)) best.consider(tiers_->tier(total), i);
    }
    for (size_t slot = 0; slot < branch.waiting.size(); ++slot) {
      for (const auto& [tier, index, child] : branch.waiting[slot]) {
        if (child == except) continue;
        const double total = seconds + branch.between_seconds[from][branch.point(slot)] + branches_[child].nearest_seconds;
        if (std::isfinite(total)) best.consider(tiers_->tier(total), index);
        break;
      }
    }
  }

  /// The walk's next member after group member `from`: the nearest unplaced in its own branch,
  /// then, region by region outwards, in each branch around the one it came up from.
  Candidate nearest_unplaced(size_t from) {
    Candidate best;
    const Member& member = members_[from];
    consider_branch(branches_[member.site], member.position, 0, kNone, best);
    double up_seconds = 0;
    size_t point = member.position;
    for (size_t b = member.site; b != kTop; b = branches_[b].parent) {
      const Branch& branch = branches_[b];
      up_seconds += branch.to_own_attach_seconds[point];
      point = branches_[branch.parent].point(branch.slot);
      consider_branch(branches_[branch.parent], point, up_seconds, b, best);
    }
    return best;
  }

  const std::vector<DeviceId>& group_;
  const Cluster& cluster_;
  std::vector<Branch> branches_;
  std::unordered_map<uint32_t, size_t> branch_of_region_;
  std::vector<Member> members_;
  std::optional<DistanceTiers> tiers_;
};

}  // namespace

std::optional<std::vector<DeviceId>> region_ring(const std::vector<DeviceId>& group, const Cluster& cluster) {
  if (group.empty()) return group;
  return RegionWalk(group, cluster).ring();
}

}  // namespace placesim
