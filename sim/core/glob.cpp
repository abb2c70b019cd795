#include "sim/core/glob.h"

#include <utility>

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

/// The patterns the planners match every op against are literal or "*suffix" (tensor
/// parallelism's "*/qkv", "*/mlp_proj", ...): compared directly, without the general pass, whose
/// backtracking tries the suffix at every place of the name.
GlobPattern::Kind kind_of(const std::string& pattern) {
  const size_t wildcard = pattern.find_first_of("*?");
  if (wildcard == std::string::npos) return GlobPattern::Kind::kLiteral;
  if (wildcard == 0 && pattern[0] == '*' && pattern.find_first_of("*?", 1) == std::string::npos) {
    return GlobPattern::Kind::kSuffix;
  }
  return GlobPattern::Kind::kGeneral;
}

bool match_as(GlobPattern::Kind kind, const std::string& pattern, const std::string& text) {
  switch (kind) {
    case GlobPattern::Kind::kLiteral:
      return pattern == text;
    case GlobPattern::Kind::kSuffix: {
      const size_t suffix = pattern.size() - 1;
      return text.size() >= suffix && text.compare(text.size() - suffix, suffix, pattern, 1, suffix) == 0;
    }
    case GlobPattern::Kind::kGeneral:
      break;
  }
  return match_with_wildcards(pattern, text);
}

}  // namespace

bool glob_match(const std::string& pattern, const std::string& text) { return match_as(kind_of(pattern), pattern, text); }

GlobPattern::GlobPattern(std::string pattern) : pattern_(std::move(pattern)), kind_(kind_of(pattern_)) {}

bool GlobPattern::matches(const std::string& text) const { return match_as(kind_, pattern_, text); }

std::vector<GlobPattern> glob_patterns(const std::vector<std::string>& patterns) {
  std::vector<GlobPattern> compiled;
  compiled.reserve(patterns.size());
  for (const std::string& pattern : patterns) compiled.emplace_back(pattern);
  return compiled;
}

bool matches_any(const std::vector<GlobPattern>& patterns, const std::string& text) {
  for (const GlobPattern& pattern : patterns) {
    if (pattern.matches(text)) return true;
  }
  return false;
}

}  // namespace placesim
