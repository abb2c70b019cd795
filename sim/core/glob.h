// Glob matching for names (op names, link names): `*` matches any run, `?` one character.
#pragma once

#include <string>

namespace placesim {

bool glob_match(const std::string& pattern, const std::string& text);

}  // namespace placesim
