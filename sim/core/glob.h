// Glob matching for names (op names, link names): `*` matches any run, `?` one character.
#pragma once

#include <string>
#include <vector>

namespace placesim {

bool glob_match(const std::string& pattern, const std::string& text);

/// A glob pattern classified once (literal, "*suffix" or general), for matching many names
/// against it: glob_match's answer without classifying the pattern again for each name.
class GlobPattern {
 public:
  explicit GlobPattern(std::string pattern);
  bool matches(const std::string& text) const;
  const std::string& text() const { return pattern_; }

  enum class Kind { kLiteral, kSuffix, kGeneral };

 private:
  std::string pattern_;
  Kind kind_;
};

std::vector<GlobPattern> glob_patterns(const std::vector<std::string>& patterns);
/// Whether any of `patterns` matches `text`.
bool matches_any(const std::vector<GlobPattern>& patterns, const std::string& text);

}  // namespace placesim
