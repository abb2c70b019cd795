#include "sim/core/atomic_file.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "sim/core/input_error.h"

namespace placesim {

void write_file_atomically(const std::filesystem::path& path, const std::string& contents) {
  std::filesystem::path temporary = path;
  temporary += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path.string(), "", "cannot write the file (does the directory exist?)");
    out << contents;
    out.flush();
    if (!out) {
      out.close();
      std::remove(temporary.c_str());
      throw InputError(path.string(), "", "writing the file failed (disk full?)");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::remove(temporary.c_str());
    throw InputError(path.string(), "", "cannot write the file: " + error.message());
  }
}

}  // namespace placesim
