// Writes an output file atomically: to a temporary file beside it, then renamed over it, so an
// interrupted run never leaves a truncated file that looks complete.
//
// Output rules (docs/reliability.md, "Security"): "-" and "/dev/stdout" stream to standard output;
// any other path must be absent or a regular file (a symbolic link, device, FIFO or directory is
// refused, never replaced or followed). The temporary file is created with O_CREAT | O_EXCL |
// O_NOFOLLOW under a name no other process uses (NAME.tmpPID.N), so a link planted there makes the
// write fail instead of redirecting it.
#pragma once

#include <filesystem>
#include <string>

namespace placesim {

/// True for "-" and "/dev/stdout", which stream to standard output instead of naming a file.
bool is_standard_output(const std::string& path);

/// Why `path` cannot be written as an output ("" when it can): its directory is missing or not
/// writable, or the path exists and is not a regular file. Checked before long work starts.
std::string output_path_problem(const std::filesystem::path& path);

/// Writes `contents` to `path` (or to standard output, see is_standard_output). Throws InputError
/// naming the path and the operating system's reason when the file cannot be written; nothing is
/// left behind (no temporary file, no partial output) when it throws.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

/// Removes the temporary files ("NAME.tmpPID.N") of writes to `path` whose process is gone, left
/// by a writer killed before its rename. Returns how many were removed.
size_t remove_stale_temporaries(const std::filesystem::path& path);

}  // namespace placesim
