#include "sim/sweep/result_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "sim/core/atomic_file.h"
#include "sim/core/fd_io.h"
#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"

namespace placesim {

ResultStore::ResultStore(std::filesystem::path path, const std::string& sweep_fingerprint) : path_(std::move(path)) {
  std::string text;
  struct stat status;
  if (::lstat(path_.c_str(), &status) == 0) {
    // Never follow a link planted as the resume file, nor read a FIFO or device (read_input_file).
    if (S_ISLNK(status.st_mode)) {
      throw InputError(path_.string(), "", "is a symbolic link, not a regular file: refusing to use it as the sweep's "
                                           "resume file");
    }
    text = read_input_file(path_);
  }
  // Complete lines only: an interrupted write leaves a line without its newline.
  std::vector<std::string> kept;
  size_t start = 0;
  bool header_seen = false;
  for (size_t end = text.find('\n'); end != std::string::npos; start = end + 1, end = text.find('\n', start)) {
    std::string line = text.substr(start, end - start);
    Json json = Json::parse(line, nullptr, false);
    if (json.is_discarded() || !json.is_object()) continue;
    if (!header_seen) {
      if (!json.contains("sweep_fingerprint")) break;
      if (json["sweep_fingerprint"] != sweep_fingerprint) {
        throw InputError(path_.string(), "",
                         "holds the results of another sweep (the scenario or its dimensions changed): remove it, or "
                         "write to another output directory");
      }
      header_seen = true;
      kept.push_back(line);
      continue;
    }
    try {
      SweepRow row = row_from_json(json);
      if (rows_.emplace(std::make_pair(row.index, row.tier), row).second) kept.push_back(line);
    } catch (const std::runtime_error&) {
      // a damaged line is evaluated again
    }
  }
  if (!header_seen) {
    rows_.clear();
    kept = {Json{{"sweep_fingerprint", sweep_fingerprint}}.dump()};
  }
  std::string clean;
  for (const auto& line : kept) clean += line + "\n";
  if (clean != text) write_file_atomically(path_, clean);  // atomic: a failure keeps the old file whole
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    throw InputError(path_.string(), "", std::string("cannot write the sweep's results: ") + std::strerror(errno));
  }
}

ResultStore::~ResultStore() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultStore::append(const SweepRow& row) { append(std::vector<SweepRow>{row}); }

void ResultStore::append(const std::vector<SweepRow>& rows) {
  if (rows.empty()) return;
  std::string lines;
  for (const SweepRow& row : rows) append_row_json_line(row, &lines);
  struct stat before;
  bool sized = ::fstat(fd_, &before) == 0;
  if (!write_all(fd_, lines.data(), lines.size())) {
    std::string reason = std::strerror(errno);
    // No partial line is kept: a resumed sweep would drop it anyway, but a reader of the file should
    // not see one.
    if (sized && ::ftruncate(fd_, before.st_size) != 0) reason += " (and the partial line could not be removed)";
    throw InputError(path_.string(), "", "cannot append a result: " + reason +
                                             "; the results before it are kept: free space and rerun the same "
                                             "command to resume");
  }
  for (const SweepRow& row : rows) rows_[{row.index, row.tier}] = row;
}

}  // namespace placesim
