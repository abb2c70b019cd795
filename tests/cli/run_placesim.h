// Runs the built placesim binary the way a user does, from a shell, and captures everything it
// prints (stdout and stderr together) and its exit status. For the CLI tests only.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace placesim::testing {

struct CommandResult {
  int exit_status = -1;  ///< the process's exit code; 128 + N when signal N killed it
  std::string output;    ///< stdout and stderr, interleaved as printed
};

/// A fresh, empty directory under the system temp directory; removed by the caller.
inline std::filesystem::path make_temp_directory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "placesim_test_XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  return pattern;
}

inline std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// Runs `placesim ARGUMENTS...` in `working_directory`.
inline CommandResult run_placesim(const std::vector<std::string>& arguments,
                                  const std::filesystem::path& working_directory = PLACESIM_SOURCE_DIR) {
  std::filesystem::path log_directory = make_temp_directory();
  std::filesystem::path log = log_directory / "output.txt";
  std::string command = "cd " + shell_quote(working_directory.string()) + " && exec " + shell_quote(PLACESIM_BINARY);
  for (const auto& argument : arguments) command += " " + shell_quote(argument);
  command += " >" + shell_quote(log.string()) + " 2>&1 </dev/null";
  int status = std::system(command.c_str());
  CommandResult result;
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_status = 128 + WTERMSIG(status);
  std::ifstream in(log, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  result.output = text.str();
  std::error_code ignored;
  std::filesystem::remove_all(log_directory, ignored);
  return result;
}

/// Runs `placesim ARGUMENTS...` with standard output and standard error captured apart: `output`
/// holds standard output only, `errors` standard error (for outputs that must be stdout's whole).
struct SplitResult {
  int exit_status = -1;
  std::string output;
  std::string errors;
};
inline SplitResult run_placesim_split(const std::vector<std::string>& arguments,
                                      const std::filesystem::path& working_directory = PLACESIM_SOURCE_DIR) {
  std::filesystem::path log_directory = make_temp_directory();
  std::string command = "cd " + shell_quote(working_directory.string()) + " && exec " + shell_quote(PLACESIM_BINARY);
  for (const auto& argument : arguments) command += " " + shell_quote(argument);
  command += " >" + shell_quote((log_directory / "stdout.txt").string()) + " 2>" +
             shell_quote((log_directory / "stderr.txt").string()) + " </dev/null";
  int status = std::system(command.c_str());
  SplitResult result;
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_status = 128 + WTERMSIG(status);
  auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  };
  result.output = read(log_directory / "stdout.txt");
  result.errors = read(log_directory / "stderr.txt");
  std::error_code ignored;
  std::filesystem::remove_all(log_directory, ignored);
  return result;
}

/// A whole file's bytes ("" when it cannot be read).
inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

struct ReportAndTrace {
  std::string report, trace;
};

/// `placesim run --quiet SCENARIO EXTRA... --report report.json --trace trace.json` in a fresh
/// directory (SCENARIO relative to the source tree): the two files it wrote. A non-zero exit
/// status fails the calling test (with placesim's output).
inline ReportAndTrace run_report_and_trace(const std::string& scenario, const std::vector<std::string>& extra = {}) {
  const std::filesystem::path directory = make_temp_directory();
  std::vector<std::string> arguments{"run", "--quiet", (std::filesystem::path(PLACESIM_SOURCE_DIR) / scenario).string()};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  for (const char* flag : {"--report", "report.json", "--trace", "trace.json"}) arguments.push_back(flag);
  const CommandResult result = run_placesim(arguments, directory);
  EXPECT_EQ(result.exit_status, 0) << result.output;
  ReportAndTrace files{read_bytes(directory / "report.json"), read_bytes(directory / "trace.json")};
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
  return files;
}

}  // namespace placesim::testing
