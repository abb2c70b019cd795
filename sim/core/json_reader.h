// JsonReader: typed, path-aware access to one JSON value of a user file.
// Every accessor checks the type and range and throws InputError naming the file, the JSON
// pointer path and the bad value; objects are checked for unknown keys (with a did-you-mean).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/input_error.h"

namespace placesim {

using Json = nlohmann::json;

/// Parses a JSON file; malformed JSON reports line and column, a missing file names the path.
Json parse_json_file(const std::filesystem::path& path);
/// Parses JSON text; `label` names the source in error messages.
Json parse_json_text(const std::string& text, const std::string& label);

/// Renders a JSON value briefly for error messages (long values are cut).
std::string brief(const Json& value);

/// Closest candidate by edit distance, or empty when none is close.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

class JsonReader {
 public:
  JsonReader(const Json& value, std::string file, std::string path = "");

  const Json& value() const { return *value_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  std::string path_or_root() const { return path_.empty() ? "/" : path_; }

  /// Throws InputError at this value's path.
  [[noreturn]] void fail(const std::string& message) const;

  // --- this value as a typed thing ---
  void expect_object() const;
  void expect_array() const;
  std::string as_string() const;
  double as_number() const;  ///< finite number
  double as_positive_number() const;
  double as_non_negative_number() const;
  int64_t as_integer(int64_t min_value = INT64_MIN, int64_t max_value = INT64_MAX) const;
  bool as_bool() const;
  /// Array elements as readers.
  std::vector<JsonReader> elements() const;
  size_t size() const;

  // --- object members; each access marks the key as known ---
  bool has(const std::string& key) const;
  JsonReader at(const std::string& key) const;  ///< required member
  std::optional<JsonReader> find(const std::string& key) const;
  JsonReader at_index(size_t index) const;

  std::string string_at(const std::string& key) const { return at(key).as_string(); }
  std::string string_or(const std::string& key, const std::string& fallback) const;
  double number_at(const std::string& key) const { return at(key).as_number(); }
  double number_or(const std::string& key, double fallback) const;
  double positive_at(const std::string& key) const { return at(key).as_positive_number(); }
  double positive_or(const std::string& key, double fallback) const;
  double non_negative_or(const std::string& key, double fallback) const;
  int64_t integer_or(const std::string& key, int64_t fallback, int64_t min_value = INT64_MIN,
                     int64_t max_value = INT64_MAX) const;
  bool bool_or(const std::string& key, bool fallback) const;
  /// A string that must be one of `choices`.
  std::string choice_or(const std::string& key, const std::vector<std::string>& choices,
                        const std::string& fallback) const;
  std::string choice_at(const std::string& key, const std::vector<std::string>& choices) const;

  /// Member names of this object, in file order.
  std::vector<std::string> keys() const;
  /// Fails on any member whose name is not in `allowed` (with a did-you-mean).
  void reject_unknown_keys(const std::vector<std::string>& allowed) const;

 private:
  std::string child_path(const std::string& key) const;
  const Json* value_;
  std::string file_;
  std::string path_;
};

/// JSON pointer escaping of one path token (~ and /).
std::string escape_pointer_token(const std::string& token);

}  // namespace placesim
