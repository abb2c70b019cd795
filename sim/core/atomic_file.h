// Writes an output file atomically: to a temporary file beside it, then renamed over it, so an
// interrupted run never leaves a truncated file that looks complete.
#pragma once

#include <filesystem>
#include <string>

namespace placesim {

/// Throws InputError (naming the path) when the file cannot be written.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

}  // namespace placesim
