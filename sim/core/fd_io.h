// Whole-buffer reads and writes on a pipe or file descriptor, retrying on EINTR and short
// transfers: the forked simulation child and the sweep's worker processes talk through these.
#pragma once

#include <cstddef>

namespace placesim {

/// False when the descriptor closed or failed before all `size` bytes were written.
bool write_all(int fd, const void* data, size_t size);
/// False when the descriptor closed (end of file) or failed before all `size` bytes were read.
bool read_all(int fd, void* data, size_t size);

}  // namespace placesim
