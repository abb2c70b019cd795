#include "sim/core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "sim/core/fd_io.h"
#include "sim/core/file_kind.h"
#include "sim/core/input_error.h"

namespace placesim {
namespace {

std::filesystem::path directory_of(const std::filesystem::path& path) {
  std::filesystem::path directory = path.parent_path();
  return directory.empty() ? std::filesystem::path(".") : directory;
}

// Refuses a target that is there and is not a regular file ("" when it may be replaced).
std::string target_problem(const std::filesystem::path& path) {
  struct stat status;
  if (::lstat(path.c_str(), &status) != 0) return "";
  if (S_ISREG(status.st_mode)) return "";
  return "is " + file_kind(status.st_mode) +
         ", not a regular file: refusing to replace it (give a regular file's path, or - for standard output)";
}

void write_to_standard_output(const std::string& contents) {
  std::cout.flush();
  if (!write_all(STDOUT_FILENO, contents.data(), contents.size())) {
    throw InputError("standard output", "", std::string("writing failed: ") + std::strerror(errno));
  }
}

// "NAME.tmpPID.N" or the older "NAME.tmpPID": the process id, or 0 when `name` is not one.
pid_t temporary_owner(const std::string& name, const std::string& target) {
  std::string prefix = target + ".tmp";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return 0;
  std::string rest = name.substr(prefix.size());
  size_t dot = rest.find('.');
  std::string pid = rest.substr(0, dot);
  std::string counter = dot == std::string::npos ? "1" : rest.substr(dot + 1);
  auto digits = [](const std::string& text) {
    return !text.empty() && text.size() < 10 && text.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(pid) || !digits(counter)) return 0;
  return static_cast<pid_t>(std::stol(pid));
}

}  // namespace

bool is_standard_output(const std::string& path) { return path == "-" || path == "/dev/stdout"; }

std::string output_path_problem(const std::filesystem::path& path) {
  if (is_standard_output(path.string())) return "";
  std::filesystem::path directory = directory_of(path);
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) return "no such directory \"" + directory.string() + "\"";
  if (::access(directory.c_str(), W_OK) != 0) {
    return "cannot write into directory \"" + directory.string() + "\": " + std::strerror(errno);
  }
  return target_problem(path);
}

void write_file_atomically(const std::filesystem::path& path, const std::string& contents) {
  if (is_standard_output(path.string())) return write_to_standard_output(contents);
  if (std::string problem = target_problem(path); !problem.empty()) throw InputError(path.string(), "", problem);
  // A name no other process uses; O_EXCL | O_NOFOLLOW: never reuse or follow what is already there.
  static std::atomic<unsigned> counter{0};
  std::filesystem::path temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temporary = path;
    temporary += ".tmp" + std::to_string(::getpid()) + "." + std::to_string(++counter);
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    std::string reason = std::strerror(errno);
    std::string problem = output_path_problem(path);
    throw InputError(path.string(), "", "cannot write the file: " + (problem.empty() ? reason : problem));
  }
  bool written = write_all(fd, contents.data(), contents.size());
  int write_errno = errno;
  if (::close(fd) != 0 && written) {
    written = false;
    write_errno = errno;
  }
  if (!written) {
    ::unlink(temporary.c_str());
    throw InputError(path.string(), "", std::string("writing the file failed: ") + std::strerror(write_errno));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw InputError(path.string(), "", "cannot write the file: " + reason);
  }
}

size_t remove_stale_temporaries(const std::filesystem::path& path) {
  size_t removed = 0;
  std::error_code error;
  std::string target = path.filename().string();
  for (const auto& entry : std::filesystem::directory_iterator(directory_of(path), error)) {
    pid_t owner = temporary_owner(entry.path().filename().string(), target);
    if (owner <= 0 || owner == ::getpid()) continue;
    if (::kill(owner, 0) == 0 || errno != ESRCH) continue;  // its writer may still be running
    struct stat status;
    if (::lstat(entry.path().c_str(), &status) != 0 || !S_ISREG(status.st_mode)) continue;
    if (::unlink(entry.path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace placesim
