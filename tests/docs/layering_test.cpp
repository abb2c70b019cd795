// The folder graph of the sources, checked against docs/architecture.md. Every `#include "..."`
// that names a file of this repository (from the root, or beside the including file) in sim/,
// models/, real_backend/, cli/, bench/, examples/ and tests/, headers included, is an edge from the
// including file's folder to the included file's folder. The architecture document lists the
// allowed edges in a ```layering block and the edges still to remove in a ```layering-debt
// block; the test fails on an edge in neither, on a listed edge that no include makes any more
// (the document must not drift), and on a cycle among the allowed edges. It also checks that only
// sim/engine includes SimGrid and only real_backend/ includes CUDA or MPI headers.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Edge = std::pair<std::string, std::string>;

const fs::path kRoot = PLACESIM_SOURCE_DIR;

/// The folder of a repository file, relative to the root ("sim/plan", "tests/sim/plan", "models").
std::string folder_of(const fs::path& relative_file) { return relative_file.parent_path().generic_string(); }

bool is_source(const fs::path& path) {
  static const std::set<std::string> extensions = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".inc", ".ipp"};
  return extensions.count(path.extension().string()) > 0;
}

/// The header an `#include` line names between `open` and `close` (`"` and `"`, or `<` and `>`);
/// "" when the line is no such include.
std::string included(const std::string& line, char open, char close) {
  size_t at = line.find_first_not_of(" \t");
  if (at == std::string::npos || line[at] != '#') return "";
  at = line.find_first_not_of(" \t", at + 1);
  if (at == std::string::npos || line.compare(at, 7, "include") != 0) return "";
  at = line.find_first_not_of(" \t", at + 7);
  if (at == std::string::npos || line[at] != open) return "";
  const size_t end = line.find(close, at + 1);
  return end == std::string::npos ? "" : line.substr(at + 1, end - at - 1);
}

/// Edge -> one include that makes it ("file:line"), over every source file of the scanned folders.
std::map<Edge, std::string> include_edges() {
  std::map<Edge, std::string> edges;
  for (const char* top : {"sim", "models", "real_backend", "cli", "bench", "examples", "tests"}) {
    if (!fs::exists(kRoot / top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / top)) {
      if (!entry.is_regular_file() || !is_source(entry.path())) continue;
      const fs::path file = fs::relative(entry.path(), kRoot);
      std::ifstream in(entry.path());
      std::string line;
      for (int number = 1; std::getline(in, line); ++number) {
        const fs::path named = included(line, '"', '"');
        if (named.empty()) continue;
        fs::path target;
        if (fs::exists(kRoot / file.parent_path() / named)) {
          target = (file.parent_path() / named).lexically_normal();
        } else if (fs::exists(kRoot / named)) {
          target = named.lexically_normal();
        } else {
          continue;  // a system or third-party header
        }
        const std::string from = folder_of(file), to = folder_of(target);
        if (from != to) edges.emplace(Edge{from, to}, file.generic_string() + ":" + std::to_string(number));
      }
    }
  }
  return edges;
}

/// The edges of the fenced block "```<tag>" of docs/architecture.md: lines "from -> to to ...";
/// "#" starts a comment.
std::set<Edge> documented_edges(const std::string& tag) {
  std::ifstream in(kRoot / "docs/architecture.md");
  std::string line;
  bool inside = false, found = false;
  std::set<Edge> edges;
  while (std::getline(in, line)) {
    if (!inside) {
      if (line == "```" + tag) inside = found = true;
      continue;
    }
    if (line.rfind("```", 0) == 0) break;
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string from, arrow, to;
    if (!(words >> from)) continue;
    EXPECT_TRUE(words >> arrow && arrow == "->") << "docs/architecture.md ```" << tag << ": expected FROM -> TO...: " << line;
    while (words >> to) edges.insert({from, to});
  }
  EXPECT_TRUE(found) << "docs/architecture.md has no ```" << tag << " block";
  return edges;
}

/// A cycle among `edges` as "a -> b -> a", or "" when there is none.
std::string find_cycle(const std::set<Edge>& edges) {
  std::map<std::string, std::vector<std::string>> next;
  for (const auto& [from, to] : edges) next[from].push_back(to);
  std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
  std::vector<std::string> path;
  std::string cycle;
  std::function<bool(const std::string&)> visit = [&](const std::string& node) {
    state[node] = 1;
    path.push_back(node);
    for (const auto& to : next[node]) {
      if (state[to] == 1) {
        for (auto it = std::find(path.begin(), path.end(), to); it != path.end(); ++it) cycle += *it + " -> ";
        cycle += to;
        return true;
      }
      if (state[to] == 0 && visit(to)) return true;
    }
    path.pop_back();
    state[node] = 2;
    return false;
  };
  for (const auto& [node, unused] : next) {
    if (state[node] == 0 && visit(node)) return cycle;
  }
  return "";
}

TEST(Layering, EveryFolderIncludeIsAllowedByTheArchitectureDocument) {
  const std::set<Edge> allowed = documented_edges("layering");
  const std::set<Edge> debt = documented_edges("layering-debt");
  const std::map<Edge, std::string> actual = include_edges();
  ASSERT_FALSE(actual.empty()) << "no include found under " << kRoot;
  for (const auto& [edge, where] : actual) {
    EXPECT_TRUE(allowed.count(edge) || debt.count(edge))
        << edge.first << " -> " << edge.second << " (" << where
        << ") is in neither the layering nor the layering-debt block of docs/architecture.md";
  }
  for (const auto& listed : {allowed, debt}) {
    for (const Edge& edge : listed) {
      EXPECT_TRUE(actual.count(edge)) << edge.first << " -> " << edge.second
                                      << " is listed in docs/architecture.md but no include makes it: remove it";
    }
  }
  for (const Edge& edge : allowed) {
    EXPECT_FALSE(debt.count(edge)) << edge.first << " -> " << edge.second << " is both allowed and debt";
  }
}

/// Files of the scanned folders whose `#include <...>` names a header starting with one of `prefixes`.
std::vector<std::string> files_including(const std::vector<std::string>& prefixes) {
  std::vector<std::string> found;
  for (const char* top : {"sim", "models", "real_backend", "cli", "bench", "examples", "tests"}) {
    if (!fs::exists(kRoot / top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / top)) {
      if (!entry.is_regular_file() || !is_source(entry.path())) continue;
      std::ifstream in(entry.path());
      std::string line;
      while (std::getline(in, line)) {
        const std::string header = included(line, '<', '>');
        if (header.empty()) continue;
        if (std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return header.rfind(p, 0) == 0; })) {
          found.push_back(fs::relative(entry.path(), kRoot).generic_string());
          break;
        }
      }
    }
  }
  return found;
}

TEST(Layering, OnlyTheEngineIncludesSimGridAndOnlyTheRealBackendCudaOrMpi) {
  for (const std::string& file : files_including({"simgrid", "xbt"})) {
    EXPECT_EQ(file.rfind("sim/engine/", 0), 0u) << file << " includes SimGrid: only sim/engine may";
  }
  for (const std::string& file : files_including({"cuda", "cublas", "nccl", "mpi.h"})) {
    EXPECT_EQ(file.rfind("real_backend/", 0), 0u) << file << " includes CUDA or MPI: only real_backend/ may";
  }
}

TEST(Layering, TheAllowedFolderGraphHasNoCycle) {
  const std::string cycle = find_cycle(documented_edges("layering"));
  EXPECT_EQ(cycle, "") << "the allowed folder graph of docs/architecture.md has a cycle";
}

}  // namespace
