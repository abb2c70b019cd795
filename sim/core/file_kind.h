// What a path that is not a regular file is, in words, for the messages that refuse it as an
// input or an output ("a named pipe (FIFO)", "a character device", ...).
#pragma once

#include <sys/stat.h>

#include <string>

namespace placesim {

/// "a symbolic link", "a character device", "a block device", "a named pipe (FIFO)", "a socket",
/// "a directory", else "not a regular file".
std::string file_kind(mode_t mode);

}  // namespace placesim
