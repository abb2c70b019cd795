// NcclVersion: the NCCL release a strategy's collectives ran on ("nccl_version": "2.2"), where
// the algorithms `auto` may pick differ: NCCL 1.x ran one ring in rank order, NCCL 2.0-2.3 rings
// searched over the topology, NCCL 2.4 added its trees (docs/communication.md, "NCCL's trees").
#pragma once

#include <optional>
#include <string>

namespace placesim {

struct NcclVersion {
  int major = 2;
  int minor = 20;  ///< 2.20 by default: the release whose tuning constants placesim reads

  /// NCCL 2.x searches its rings over the topology (NCCL 1.x: one ring in rank order).
  bool searches_rings() const { return major >= 2; }
  /// NCCL 2.4 introduced the double binary tree for all-reduces (NVIDIA's NCCL 2.4 release notes
  /// and its announcement, "Massively Scale Your Deep Learning Training with NCCL 2.4", 2019-02).
  bool has_trees() const { return major > 2 || (major == 2 && minor >= 4); }
};

std::string to_string(NcclVersion version);  ///< "2.20"
/// "MAJOR.MINOR" or "MAJOR.MINOR.PATCH" with MAJOR 1 or 2 and MINOR 0-99 (the patch is read and
/// ignored); nullopt for anything else.
std::optional<NcclVersion> parse_nccl_version(const std::string& text);

}  // namespace placesim
