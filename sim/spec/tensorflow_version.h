// TensorFlowVersion: the TensorFlow 1.x release whose log_device_placement output placesim
// imitates ("run": {"tensorflow_version": "1.4"}). Two things in that log changed between 1.x
// releases (docs/placement.md, "The placement log"):
//  - device names: up to 1.3 "/job:localhost/replica:0/task:0/cpu:0", from 1.4
//    "/job:localhost/replica:0/task:0/device:CPU:0";
//  - the order of the op lines, which follows the ids GraphConstructor gives the nodes: early
//    releases (1.5.0-rc0 read) take ready nodes from a stack (std::vector<int> ready_, back()),
//    1.12 (read) the smallest GraphDef index first (std::set<int> ready_). The switch lies
//    between 1.6 and 1.12 and is not pinned down; placesim assumes 1.12.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace placesim {

/// How TensorFlow's GraphConstructor numbered the nodes of a GraphDef (their placer order).
enum class NodeIdOrder {
  kReadyStack,     ///< ready nodes taken last-in first-out (TF 1.0 .. 1.11 as placesim assumes)
  kGraphDefOrder,  ///< ready nodes taken by smallest GraphDef index (TF 1.12 .. 1.15)
};

struct TensorFlowVersion {
  int minor = 4;  ///< 1.<minor>; 1.4 by default: the device names of every other placesim output

  /// "/cpu:0" names (1.0 .. 1.3) instead of "/device:CPU:0" (1.4 and later).
  bool legacy_device_names() const { return minor <= 3; }
  NodeIdOrder node_id_order() const { return minor >= 12 ? NodeIdOrder::kGraphDefOrder : NodeIdOrder::kReadyStack; }
};

std::string to_string(TensorFlowVersion version);  ///< "1.4"
/// "1.0" .. "1.15"; nullopt for anything else.
std::optional<TensorFlowVersion> parse_tensorflow_version(const std::string& text);
/// Every accepted spelling, oldest first ("1.0", ..., "1.15").
std::vector<std::string> tensorflow_version_names();

}  // namespace placesim
