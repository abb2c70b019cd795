// Reads the text output of NVIDIA's nccl-tests (all_reduce_perf, all_gather_perf, ...) into a
// collective profile (sim/cluster/collective_profile.h): the "#  Rank" lines give the GPUs and
// hosts, the column header gives the layout (with or without nccl-tests' "root" column), each
// result row gives the size and the out-of-place time. `placesim calibrate --from-nccl-tests`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sim/cluster/collective_profile.h"

namespace placesim {

struct NcclTestsRow {
  int line = 0;  ///< 1-based line of the log
  double bytes = 0;
  double seconds = 0;          ///< out-of-place time
  double reported_algbw = 0;   ///< the log's out-of-place algbw, GB/s (1e9 bytes/s)
  double reported_busbw = 0;   ///< the log's out-of-place busbw, GB/s
};

struct NcclTestsLog {
  int ranks = 0;  ///< "#  Rank" lines: one per GPU
  int hosts = 0;  ///< distinct host names on those lines
  std::string device;  ///< the first rank's device name ("NVIDIA H100 80GB HBM3"), if given
  std::vector<NcclTestsRow> rows;
};

/// Parses a log. Throws InputError naming the file, the line and the bad text: no rank lines,
/// no column header, a result row that does not parse, a size given twice (several runs in one
/// log), no result rows.
NcclTestsLog parse_nccl_tests_log(const std::filesystem::path& path);

/// Checks that the log measured `kind`: the log's busbw / algbw of its largest size must be
/// nccl-tests' factor for `kind` over `log.ranks` GPUs (within 5 %: the log rounds to 0.01 GB/s).
/// Throws InputError at that row otherwise, naming the ratio and the kind it fits.
void check_nccl_tests_kind(const NcclTestsLog& log, CollectiveKind kind, const std::string& file);

/// The profile CSV (kCollectiveProfileHeader, one row per size) of `log` measuring `kind` on
/// `system`; each row's source is `source` + its line and the upstream busbw.
std::string nccl_tests_profile_csv(const NcclTestsLog& log, CollectiveKind kind, const std::string& system,
                                   const std::string& source);

}  // namespace placesim
