#include "sim/core/json_reader.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace placesim {
namespace {

std::pair<size_t, size_t> line_and_column(const std::string& text, size_t byte_offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < text.size() && i + 1 < byte_offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// nlohmann parses any depth, but dumping a value (as error messages do) recurses once per level,
// so absurd nesting would overflow the stack; placesim's own files nest a handful of levels.
constexpr size_t kMaxNestingDepth = 512;

// Byte offset (1-based, like nlohmann's) of the bracket that opens one level too many, or 0.
size_t too_deep_at(const std::string& text) {
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNestingDepth) return i + 1;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return 0;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string type_name(const Json& value) {
  if (value.is_number_integer() || value.is_number_unsigned()) return "an integer";
  if (value.is_number_float()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_null()) return "null";
  if (value.is_array()) return "an array";
  return "an object";
}

// Walks JSON text with nlohmann's SAX interface, keeping the JSON pointer of the value being read,
// to locate errors that nlohmann reports without a position (a number that overflows a double).
class ErrorLocator : public nlohmann::json_sax<Json> {
 public:
  std::string pointer() const {
    std::string path;
    for (const auto& level : levels_) {
      path += "/" + (level.array ? std::to_string(level.index) : escape_pointer_token(level.key));
    }
    return path;
  }
  size_t token_start() const { return token_start_; }

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    levels_.push_back({false, 0, ""});
    return true;
  }
  bool key(string_t& name) override {
    levels_.back().key = name;
    return true;
  }
  bool end_object() override {
    levels_.pop_back();
    return value();
  }
  bool start_array(std::size_t) override {
    levels_.push_back({true, 0, ""});
    return true;
  }
  bool end_array() override {
    levels_.pop_back();
    return value();
  }
  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::json::exception&) override {
    token_start_ = position >= last_token.size() ? position - last_token.size() + 1 : position;
    return false;
  }

 private:
  struct Level {
    bool array;
    size_t index;
    std::string key;
  };
  bool value() {
    if (!levels_.empty() && levels_.back().array) ++levels_.back().index;
    return true;
  }
  std::vector<Level> levels_;
  size_t token_start_ = 0;
};

}  // namespace

Json parse_json_text(const std::string& text, const std::string& label) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw InputError(label, "", "the file is empty; expected a JSON object");
  }
  try {
    Json document = Json::parse(text);
    if (size_t byte = too_deep_at(text)) {
      auto [line, column] = line_and_column(text, byte);
      throw InputError(label, "", "malformed JSON at line " + std::to_string(line) + ", column " +
                                      std::to_string(column) + ": nested more than " +
                                      std::to_string(kMaxNestingDepth) + " levels deep");
    }
    return document;
  } catch (const nlohmann::json::parse_error& error) {
    auto [line, column] = line_and_column(text, error.byte);
    std::string what = error.what();
    // nlohmann's message is "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    auto detail = what.find(": ");
    std::string reason = detail == std::string::npos ? what : what.substr(detail + 2);
    std::ostringstream message;
    message << "malformed JSON at line " << line << ", column " << column << ": " << reason;
    throw InputError(label, "", message.str());
  } catch (const nlohmann::json::out_of_range& error) {
    // "[json.exception.out_of_range.406] number overflow parsing '1e999'": no position, so find it.
    ErrorLocator locator;
    Json::sax_parse(text, &locator);
    auto [line, column] = line_and_column(text, locator.token_start());
    std::string what = error.what();
    auto quote = what.find('\'');
    std::string token = quote == std::string::npos ? "" : what.substr(quote + 1, what.size() - quote - 2);
    if (token.size() > 40) token = token.substr(0, 37) + "...";
    std::ostringstream message;
    message << "number " << token << " at line " << line << ", column " << column
            << " is out of range (the largest number a double holds is about 1.8e308)";
    throw InputError(label, locator.pointer(), message.str());
  }
}

Json parse_json_file(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw InputError(path.string(), "", "no such file");
  }
  if (std::filesystem::is_directory(path, error)) {
    throw InputError(path.string(), "", "is a directory, expected a JSON file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "", "cannot open the file for reading");
  std::ostringstream contents;
  contents << in.rdbuf();
  return parse_json_text(contents.str(), path.string());
}

std::string brief(const Json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string escape_pointer_token(const std::string& token) {
  std::string escaped;
  for (char c : token) {
    if (c == '~') escaped += "~0";
    else if (c == '/') escaped += "~1";
    else escaped += c;
  }
  return escaped;
}

JsonReader::JsonReader(const Json& value, std::string file, std::string path)
    : value_(&value), file_(std::move(file)), path_(std::move(path)) {}

void JsonReader::fail(const std::string& message) const { throw InputError(file_, path_or_root(), message); }

void JsonReader::expect_object() const {
  if (!value_->is_object()) fail("expected an object, got " + type_name(*value_) + " " + brief(*value_));
}

void JsonReader::expect_array() const {
  if (!value_->is_array()) fail("expected an array, got " + type_name(*value_) + " " + brief(*value_));
}

std::string JsonReader::as_string() const {
  if (!value_->is_string()) fail("expected a string, got " + type_name(*value_) + " " + brief(*value_));
  return value_->get<std::string>();
}

double JsonReader::as_number() const {
  if (!value_->is_number()) fail("expected a number, got " + type_name(*value_) + " " + brief(*value_));
  double number = value_->get<double>();
  if (!std::isfinite(number)) fail("expected a finite number, got " + brief(*value_));
  return number;
}

double JsonReader::as_positive_number() const {
  if (!value_->is_number()) fail("expected a positive number, got " + type_name(*value_) + " " + brief(*value_));
  double number = as_number();
  if (!(number > 0)) fail("expected a positive number, got " + brief(*value_));
  return number;
}

double JsonReader::as_non_negative_number() const {
  if (!value_->is_number()) {
    fail("expected a non-negative number, got " + type_name(*value_) + " " + brief(*value_));
  }
  double number = as_number();
  if (number < 0) fail("expected a non-negative number, got " + brief(*value_));
  return number;
}

int64_t JsonReader::as_integer(int64_t min_value, int64_t max_value) const {
  std::string wanted = min_value == 1 ? "a positive integer" : min_value == 0 ? "a non-negative integer" : "an integer";
  bool integral_float = value_->is_number_float() && std::isfinite(value_->get<double>()) &&
                        std::floor(value_->get<double>()) == value_->get<double>() &&
                        std::fabs(value_->get<double>()) < 9.0e18;
  if (!value_->is_number_integer() && !value_->is_number_unsigned() && !integral_float) {
    fail("expected " + wanted + ", got " + brief(*value_));
  }
  if (value_->is_number_unsigned() && value_->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    fail("expected " + wanted + " no larger than " + std::to_string(max_value) + ", got " + brief(*value_));
  }
  int64_t number = integral_float ? static_cast<int64_t>(value_->get<double>()) : value_->get<int64_t>();
  if (number < min_value) fail("expected " + wanted + ", got " + brief(*value_));
  if (number > max_value) {
    fail("expected " + wanted + " no larger than " + std::to_string(max_value) + ", got " + brief(*value_));
  }
  return number;
}

bool JsonReader::as_bool() const {
  if (!value_->is_boolean()) fail("expected true or false, got " + brief(*value_));
  return value_->get<bool>();
}

std::vector<JsonReader> JsonReader::elements() const {
  expect_array();
  std::vector<JsonReader> items;
  items.reserve(value_->size());
  for (size_t i = 0; i < value_->size(); ++i) items.emplace_back((*value_)[i], file_, path_ + "/" + std::to_string(i));
  return items;
}

size_t JsonReader::size() const { return value_->size(); }

bool JsonReader::has(const std::string& key) const { return value_->is_object() && value_->contains(key); }

std::string JsonReader::child_path(const std::string& key) const { return path_ + "/" + escape_pointer_token(key); }

JsonReader JsonReader::at(const std::string& key) const {
  expect_object();
  auto it = value_->find(key);
  if (it == value_->end()) fail("missing required key \"" + key + "\"");
  return JsonReader(*it, file_, child_path(key));
}

std::optional<JsonReader> JsonReader::find(const std::string& key) const {
  expect_object();
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonReader(*it, file_, child_path(key));
}

JsonReader JsonReader::at_index(size_t index) const {
  expect_array();
  if (index >= value_->size()) fail("index " + std::to_string(index) + " out of range");
  return JsonReader((*value_)[index], file_, path_ + "/" + std::to_string(index));
}

std::string JsonReader::string_or(const std::string& key, const std::string& fallback) const {
  auto member = find(key);
  return member ? member->as_string() : fallback;
}

double JsonReader::number_or(const std::string& key, double fallback) const {
  auto member = find(key);
  return member ? member->as_number() : fallback;
}

double JsonReader::positive_or(const std::string& key, double fallback) const {
  auto member = find(key);
  return member ? member->as_positive_number() : fallback;
}

double JsonReader::non_negative_or(const std::string& key, double fallback) const {
  auto member = find(key);
  return member ? member->as_non_negative_number() : fallback;
}

int64_t JsonReader::integer_or(const std::string& key, int64_t fallback, int64_t min_value, int64_t max_value) const {
  auto member = find(key);
  return member ? member->as_integer(min_value, max_value) : fallback;
}

bool JsonReader::bool_or(const std::string& key, bool fallback) const {
  auto member = find(key);
  return member ? member->as_bool() : fallback;
}

namespace {
std::string join_choices(const std::vector<std::string>& choices) {
  std::string text;
  for (size_t i = 0; i < choices.size(); ++i) text += (i ? ", " : "") + ("\"" + choices[i] + "\"");
  return text;
}
}  // namespace

std::string JsonReader::choice_at(const std::string& key, const std::vector<std::string>& choices) const {
  JsonReader member = at(key);
  std::string value = member.as_string();
  if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
    std::string suggestion = did_you_mean(value, choices);
    member.fail("expected one of " + join_choices(choices) + ", got \"" + value + "\"" +
                (suggestion.empty() ? "" : " (did you mean \"" + suggestion + "\"?)"));
  }
  return value;
}

std::string JsonReader::choice_or(const std::string& key, const std::vector<std::string>& choices,
                                  const std::string& fallback) const {
  return find(key) ? choice_at(key, choices) : fallback;
}

std::vector<std::string> JsonReader::keys() const {
  expect_object();
  std::vector<std::string> names;
  for (auto it = value_->begin(); it != value_->end(); ++it) names.push_back(it.key());
  return names;
}

void JsonReader::reject_unknown_keys(const std::vector<std::string>& allowed) const {
  expect_object();
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
    std::string suggestion = did_you_mean(it.key(), allowed);
    throw InputError(file_, child_path(it.key()),
                     "unknown key \"" + it.key() + "\"" +
                         (suggestion.empty() ? "" : " (did you mean \"" + suggestion + "\"?)") +
                         "; allowed keys: " + join_choices(allowed));
  }
}

}  // namespace placesim
