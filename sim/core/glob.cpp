#include "sim/core/glob.h"

namespace placesim {
namespace {

/// The general case: one pass with backtracking to the last `*` (linear in the text for each
/// place the star resumes at).
bool match_with_wildcards(const std::string& pattern, const std::string& text) {
  size_t p = 0, t = 0, star = std::string::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

bool glob_match(const std::string& pattern, const std::string& text) {
  // The patterns the planners match every op against are literal or "*suffix" (tensor
  // parallelism's "*/qkv", "*/mlp_proj", ...): compared directly, without the general pass, whose
  // backtracking tries the suffix at every place of the name.
  const size_t wildcard = pattern.find_first_of("*?");
  if (wildcard == std::string::npos) return pattern == text;
  if (wildcard == 0 && pattern[0] == '*' && pattern.find_first_of("*?", 1) == std::string::npos) {
    const size_t suffix = pattern.size() - 1;
    return text.size() >= suffix && text.compare(text.size() - suffix, suffix, pattern, 1, suffix) == 0;
  }
  return match_with_wildcards(pattern, text);
}

}  // namespace placesim
