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

/// Default for input_size_limit(): 256 MiB, far above any bundled or generated input (the largest
/// plan file of the bundled scenarios is a few megabytes) and far below what would exhaust memory
/// once parsed (a JSON document takes about ten times its size in memory).
constexpr uint64_t kDefaultInputSizeLimitBytes = uint64_t{256} << 20;
/// Largest file any reader accepts, in bytes: set_input_size_limit's value, else the environment
/// variable PLACESIM_MAX_INPUT_BYTES, else kDefaultInputSizeLimitBytes.
uint64_t input_size_limit();
/// Overrides the limit for this process (the global --max-input-bytes flag).
void set_input_size_limit(uint64_t bytes);

/// Reads a whole input file. Refuses, with an InputError naming the path, what is not a regular
/// file (a FIFO or device is refused before reading it, so nothing blocks or grows without end),
/// a symbolic-link loop, an unreadable file and a file above input_size_limit().
std::string read_input_file(const std::filesystem::path& path);

/// Parses a JSON file; malformed JSON reports line and column, a missing file names the path.
Json parse_json_file(const std::filesystem::path& path);
/// Parses JSON text; `label` names the source in error messages. An object with a key twice is
/// refused (nlohmann would keep the last value silently), naming the key's JSON path.
Json parse_json_text(const std::string& text, const std::string& label);

/// A user-given word for an error message: cut to 80 bytes with its length when longer.
std::string shown_word(const std::string& word);

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
  /// `number` (this value, already read) when at most `limit`; else fails: "implausibly large".
  double at_most(double number, double limit) const;
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

/// Plausibility limits shared by every reader of physical quantities (models, plans, device and
/// link profiles, clusters): far above any real hardware or model, far below where sums of them
/// would overflow or lose all precision.
constexpr double kMaxPlausibleBytes = 1e16;              ///< 10 PB: one tensor, one device's memory
constexpr double kMaxPlausibleFlops = 1e21;              ///< one op's FLOPs in one step
constexpr double kMaxPlausibleFlopsPerSecond = 1e21;     ///< one device (today's largest: ~1e16)
constexpr double kMaxPlausibleBytesPerSecond = 1e16;     ///< one link or memory (today's: ~1e13)

/// JSON pointer escaping of one path token (~ and /).
std::string escape_pointer_token(const std::string& token);

}  // namespace placesim
