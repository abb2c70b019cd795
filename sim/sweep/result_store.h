// The sweep's resume file (out/results.jsonl): a header line with the sweep's fingerprint, then
// one JSON line per finished evaluation, appended and flushed as each one ends, so an
// interrupted sweep loses nothing it finished. Separate from the scheduling: whoever evaluates
// (processes here, MPI ranks later) appends rows; the store only reads and appends. Not
// thread-safe; one writer (the scheduling process).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/sweep/sweep_row.h"

namespace placesim {

class ResultStore {
 public:
  /// Opens (creating) `path`. Rows already there are loaded; a last line cut short by an
  /// interruption is dropped. Throws InputError when the file belongs to another sweep
  /// (different fingerprint), is not a regular file (a link is never followed) or cannot be
  /// written (naming the operating system's reason).
  ResultStore(std::filesystem::path path, const std::string& sweep_fingerprint);
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  /// Rows by (configuration index, tier).
  const std::map<std::pair<size_t, Tier>, SweepRow>& rows() const { return rows_; }
  bool has(size_t index, Tier tier) const { return rows_.count({index, tier}) > 0; }
  /// Appends one row as a line, written to the operating system at once. Throws InputError
  /// (disk full: the reason) and leaves no partial line when it cannot.
  void append(const SweepRow& row);
  /// Appends `rows` as lines in one write (a worker's group of rows as it arrives), each row
  /// whole: when the write fails none of them is kept, nor a partial line.
  void append(const std::vector<SweepRow>& rows);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::map<std::pair<size_t, Tier>, SweepRow> rows_;
};

}  // namespace placesim
