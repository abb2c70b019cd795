#include "sim/sweep/result_store.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "sim/core/input_error.h"

namespace placesim {

ResultStore::ResultStore(std::filesystem::path path, const std::string& sweep_fingerprint) : path_(std::move(path)) {
  std::string text;
  {
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
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
  if (clean != text) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << clean;
    if (!out.flush()) throw std::runtime_error("cannot write " + path_.string());
  }
  file_ = std::fopen(path_.c_str(), "ab");
  if (!file_) throw std::runtime_error("cannot open " + path_.string() + ": " + std::strerror(errno));
}

ResultStore::~ResultStore() {
  if (file_) std::fclose(file_);
}

void ResultStore::append(const SweepRow& row) {
  std::string line = row_json(row).dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    throw std::runtime_error("cannot append to " + path_.string() + ": " + std::strerror(errno));
  }
  rows_[{row.index, row.tier}] = row;
}

}  // namespace placesim
