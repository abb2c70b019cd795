#include "sim/cluster/nccl_tests_log.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"

namespace placesim {
namespace {

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string token; in >> token;) out.push_back(token);
  return out;
}

bool parse_number(const std::string& text, double* value) {
  errno = 0;
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && errno == 0 && std::isfinite(*value);
}

std::string format(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

}  // namespace

NcclTestsLog parse_nccl_tests_log(const std::filesystem::path& path) {
  const std::string file = path.string();
  // A regular file within the input size limit, as every input (read_input_file): a FIFO or a
  // device named as the log is refused instead of blocking or growing without bound.
  std::istringstream in(read_input_file(path));
  NcclTestsLog log;
  std::set<std::string> hosts;
  std::set<double> sizes;
  int time_column = -1;  // index of the out-of-place "time" among a result row's fields
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::vector<std::string> fields = tokens(line);
    if (!fields.empty() && fields.front() == "#") fields.erase(fields.begin());
    if (fields.empty()) continue;
    // "#  Rank  3 Group  0 Pid  6902 on HOST device  3 [0000:0c:00] NVIDIA H100 80GB HBM3"
    // (older nccl-tests: no "Group"); the first rank line of some logs lacks the "#".
    if (fields.front() == "Rank" || fields.front() == "#Rank") {
      ++log.ranks;
      for (size_t i = 0; i + 1 < fields.size(); ++i) {
        if (fields[i] == "on") hosts.insert(fields[i + 1]);
        if (log.device.empty() && fields[i].front() == '[' && fields[i].back() == ']') {
          for (size_t j = i + 1; j < fields.size(); ++j) log.device += (j > i + 1 ? " " : "") + fields[j];
        }
      }
      continue;
    }
    // "#       size         count      type   redop    root     time   algbw   busbw #wrong ..."
    if (fields.size() > 3 && fields[0] == "size" && fields[1] == "count") {
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i] == "time") {
          time_column = static_cast<int>(i);
          break;
        }
      }
      if (time_column < 0) throw InputError(file, "line " + std::to_string(number), "column header without \"time\"");
      continue;
    }
    if (line.find('#') != std::string::npos || time_column < 0) continue;
    double size = 0;
    if (!parse_number(fields[0], &size)) continue;
    const std::string where = "line " + std::to_string(number);
    if (fields.size() < static_cast<size_t>(time_column) + 3) {
      throw InputError(file, where, "a result row with " + std::to_string(fields.size()) + " fields, the header needs " +
                                        std::to_string(time_column + 3) + " (truncated?): \"" + line + "\"");
    }
    NcclTestsRow row;
    row.line = number;
    row.bytes = size;
    double time_us = 0;
    if (!parse_number(fields[time_column], &time_us) || time_us <= 0 ||
        !parse_number(fields[time_column + 1], &row.reported_algbw) ||
        !parse_number(fields[time_column + 2], &row.reported_busbw)) {
      throw InputError(file, where, "expected time (us), algbw and busbw in columns " +
                                        std::to_string(time_column + 1) + "-" + std::to_string(time_column + 3) +
                                        ", got \"" + line + "\"");
    }
    if (size <= 0) continue;  // nccl-tests prints size 0 rows for some collectives; nothing to time
    if (!sizes.insert(size).second) {
      throw InputError(file, where, "size " + fields[0] + " appears twice (several runs in one log? split it)");
    }
    row.seconds = time_us * 1e-6;
    log.rows.push_back(row);
  }
  log.hosts = static_cast<int>(hosts.size());
  if (log.ranks < 2) {
    throw InputError(file, "", "found " + std::to_string(log.ranks) +
                                   " \"#  Rank N ... device\" lines; need one per GPU (2 or more) to know the group size");
  }
  if (time_column < 0) throw InputError(file, "", "no nccl-tests column header (\"#  size  count  type ... time\")");
  if (log.rows.empty()) throw InputError(file, "", "no result rows after the column header");
  return log;
}

void check_nccl_tests_kind(const NcclTestsLog& log, CollectiveKind kind, const std::string& file) {
  const NcclTestsRow* largest = &log.rows.front();
  for (const NcclTestsRow& row : log.rows) {
    if (row.bytes > largest->bytes) largest = &row;
  }
  if (largest->reported_algbw <= 0) return;  // too small to tell (0.00 GB/s)
  const double ratio = largest->reported_busbw / largest->reported_algbw;
  const double expected = bus_bandwidth_factor(kind, log.ranks);
  if (std::abs(ratio / expected - 1) <= 0.05) return;
  std::string fits;
  for (const std::string& name : collective_kind_names()) {
    const double factor = bus_bandwidth_factor(*parse_collective_kind(name), log.ranks);
    if (std::abs(ratio / factor - 1) <= 0.05) fits += (fits.empty() ? "" : " or ") + name;
  }
  throw InputError(file, "line " + std::to_string(largest->line),
                   "busbw / algbw = " + format(ratio) + ", but " + to_string(kind) + " over " +
                       std::to_string(log.ranks) + " GPUs has " + format(expected) +
                       (fits.empty() ? std::string("; no collective fits") : "; this fits " + fits) +
                       " (give --collective)");
}

std::string nccl_tests_profile_csv(const NcclTestsLog& log, CollectiveKind kind, const std::string& system,
                                   const std::string& source) {
  const double factor = bus_bandwidth_factor(kind, log.ranks);
  std::string text = std::string(kCollectiveProfileHeader) + "\n";
  for (const NcclTestsRow& row : log.rows) {
    const double algbw = row.bytes / row.seconds;
    text += system + "," + to_string(kind) + "," + std::to_string(log.ranks) + "," +
            std::to_string(static_cast<long long>(row.bytes)) + "," +
            format(algbw) + "," + format(algbw * factor) + "," + format(row.seconds) + "," + source + " line " +
            std::to_string(row.line) + " out-of-place (upstream busbw " + format(row.reported_busbw) + " GB/s; " +
            std::to_string(log.ranks) + " ranks on " + std::to_string(log.hosts) + " hosts" +
            (log.device.empty() ? "" : "; " + log.device) + ")\n";
  }
  return text;
}

}  // namespace placesim
