#include "sim/core/module_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace placesim {

void* open_placesim_module(const std::string& file_name, const char* environment_variable,
                           const std::string& build_path, std::string* error) {
  std::vector<std::string> candidates;
  if (const char* given = std::getenv(environment_variable)) candidates.push_back(given);
  char self[PATH_MAX] = {0};
  if (::readlink("/proc/self/exe", self, sizeof self - 1) > 0) {
    const std::filesystem::path directory = std::filesystem::path(self).parent_path();
    candidates.push_back((directory / file_name).string());
    candidates.push_back((directory.parent_path() / "lib" / "placesim" / file_name).string());
  }
  candidates.push_back(build_path);
  std::string tried;
  for (const std::string& path : candidates) {
    std::error_code ignored;
    if (path.empty() || !std::filesystem::exists(path, ignored)) {
      tried += (tried.empty() ? "" : ", ") + path + " (missing)";
      continue;
    }
    if (void* module = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return module;
    const char* why = ::dlerror();
    tried += (tried.empty() ? "" : ", ") + path + " (" + (why ? why : "dlopen failed") + ")";
  }
  if (error) {
    *error = "cannot load placesim's module " + file_name + "; tried " + tried + "; set " + environment_variable +
             " to its path";
  }
  return nullptr;
}

void* module_symbol(void* module, const char* symbol) { return module ? ::dlsym(module, symbol) : nullptr; }

}  // namespace placesim
