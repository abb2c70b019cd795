// Text made safe to put inside HTML or SVG elements and attribute values (& < > " ').
#pragma once

#include <string>

namespace placesim {

std::string html_escape(const std::string& text);

}  // namespace placesim
