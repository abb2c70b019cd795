#include "sim/core/json_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "sim/core/file_kind.h"

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

// Refuses an object that has a key twice, which nlohmann would resolve silently (the last value
// wins), so a file could say two things and mean one. A SAX pass over text that parsed: a parser
// callback would do it in the one parse, but nlohmann's callback parser is about 4x slower than its
// plain one, while this pass adds about 60% (0.19 s on a 13.9 MB plan file).
class DuplicateKeyCheck : public nlohmann::json_sax<Json> {
 public:
  explicit DuplicateKeyCheck(const std::string& label) : label_(label) {}

  bool null() override { return value_done(); }
  bool boolean(bool) override { return value_done(); }
  bool number_integer(number_integer_t) override { return value_done(); }
  bool number_unsigned(number_unsigned_t) override { return value_done(); }
  bool number_float(number_float_t, const string_t&) override { return value_done(); }
  bool string(string_t&) override { return value_done(); }
  bool binary(binary_t&) override { return value_done(); }
  bool start_object(std::size_t) override {
    levels_.push_back({false, 0, {}, {}});
    return true;
  }
  bool key(string_t& name) override {
    add_key(name);
    return true;
  }
  bool end_object() override {
    levels_.pop_back();
    return value_done();
  }
  bool start_array(std::size_t) override {
    levels_.push_back({true, 0, {}, {}});
    return true;
  }
  bool end_array() override {
    levels_.pop_back();
    return value_done();
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception&) override { return false; }

 private:
  // Objects with few keys (nearly all) are scanned; past kScanned keys, a hash map takes over.
  static constexpr size_t kScanned = 32;
  struct Level {
    bool array;
    size_t index;                   ///< array: elements done
    std::vector<std::string> keys;  ///< object: its keys so far, in order
    std::unordered_map<std::string, size_t> positions;  ///< filled past kScanned keys
  };

  void add_key(const std::string& key) {
    Level& level = levels_.back();
    size_t first = level.keys.size();
    if (level.positions.empty()) {
      for (size_t k = 0; k < level.keys.size() && first == level.keys.size(); ++k) {
        if (level.keys[k] == key) first = k;
      }
    } else if (auto it = level.positions.find(key); it != level.positions.end()) {
      first = it->second;
    }
    if (first != level.keys.size()) {
      std::string object = pointer(levels_.size() - 1);
      std::string path = object + "/" + escape_pointer_token(shown_word(key));
      throw InputError(label_, path,
                       "duplicate key \"" + shown_word(key) + "\": " + path + " is member " + std::to_string(first + 1) +
                           " and member " + std::to_string(level.keys.size() + 1) + " of " +
                           (object.empty() ? "the top-level object" : "the object at " + object) +
                           " (keys must be unique; which value counts would be a guess)");
    }
    level.keys.push_back(key);
    if (level.keys.size() == kScanned) {
      for (size_t k = 0; k < level.keys.size(); ++k) level.positions.emplace(level.keys[k], k);
    } else if (level.keys.size() > kScanned) {
      level.positions.emplace(key, level.keys.size() - 1);
    }
  }
  bool value_done() {
    if (!levels_.empty() && levels_.back().array) ++levels_.back().index;
    return true;
  }
  // JSON pointer of the value at depth `depth` (0: the document): an object's last key so far.
  std::string pointer(size_t depth) const {
    std::string path;
    for (size_t i = 0; i < depth; ++i) {
      const Level& level = levels_[i];
      path += "/" + (level.array ? std::to_string(level.index) : escape_pointer_token(shown_word(level.keys.back())));
    }
    return path;
  }

  std::string label_;
  std::vector<Level> levels_;
};

std::optional<uint64_t>& size_limit_override() {
  static std::optional<uint64_t> limit;
  return limit;
}

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
    DuplicateKeyCheck duplicates(label);
    Json::sax_parse(text, &duplicates);
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

uint64_t input_size_limit() {
  if (size_limit_override()) return *size_limit_override();
  static const uint64_t from_environment = [] {
    const char* text = std::getenv("PLACESIM_MAX_INPUT_BYTES");
    if (!text || !*text) return kDefaultInputSizeLimitBytes;
    char* end = nullptr;
    errno = 0;
    unsigned long long bytes = std::strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || bytes == 0 || text[0] == '-') {
      throw InputError("PLACESIM_MAX_INPUT_BYTES", "", "expected a positive number of bytes, got \"" +
                                                           shown_word(text) + "\"");
    }
    return static_cast<uint64_t>(bytes);
  }();
  return from_environment;
}

void set_input_size_limit(uint64_t bytes) { size_limit_override() = bytes; }

std::string read_input_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  // stat before open: a FIFO or device is refused without opening it (an open could block or
  // have side effects), then fstat of what was opened checks the same thing without a race.
  struct stat status;
  if (::stat(path.c_str(), &status) != 0) {
    int error = errno;
    struct stat link;
    if (error == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      throw InputError(name, "", "is a symbolic link to a missing file");
    }
    if (error == ENOENT || error == ENOTDIR) throw InputError(name, "", "no such file");
    if (error == ELOOP) throw InputError(name, "", "is a symbolic link loop (too many levels of symbolic links)");
    throw InputError(name, "", std::string("cannot read the file: ") + std::strerror(error));
  }
  auto refuse_kind = [&](const struct stat& what) {
    if (S_ISDIR(what.st_mode)) throw InputError(name, "", "is a directory, expected a file");
    if (!S_ISREG(what.st_mode)) {
      throw InputError(name, "", "is " + file_kind(what.st_mode) + ", not a regular file; placesim reads inputs "
                                 "only from regular files (copy the data to a file first)");
    }
  };
  auto refuse_size = [&](uint64_t bytes) {
    uint64_t limit = input_size_limit();
    if (bytes <= limit) return;
    throw InputError(name, "", "is " + std::to_string(bytes) + " bytes, above the input size limit of " +
                                   std::to_string(limit) + " bytes (raise it with --max-input-bytes N or "
                                   "PLACESIM_MAX_INPUT_BYTES=N)");
  };
  refuse_kind(status);
  refuse_size(static_cast<uint64_t>(status.st_size));
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw InputError(name, "", std::string("cannot read the file: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &status) != 0) throw InputError(name, "", std::string("cannot read the file: ") + std::strerror(errno));
  refuse_kind(status);
  refuse_size(static_cast<uint64_t>(status.st_size));
  std::string contents;
  contents.reserve(static_cast<size_t>(status.st_size));
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InputError(name, "", std::string("cannot read the file: ") + std::strerror(errno));
    if (got == 0) break;
    contents.append(buffer, static_cast<size_t>(got));
    refuse_size(contents.size());  // it grew while being read
  }
  return contents;
}

Json parse_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_input_file(path), path.string());
}

std::string shown_word(const std::string& word) {
  constexpr size_t kShown = 80;
  if (word.size() <= kShown) return word;
  return word.substr(0, kShown) + "... (" + std::to_string(word.size()) + " bytes)";
}

std::string brief(const Json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  // Edit distance costs |word| x |candidate|, and is at least their difference in length: a word
  // far longer than every candidate cannot be close, so it is not compared at all.
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    size_t length_difference = word.size() > candidate.size() ? word.size() - candidate.size() : candidate.size() - word.size();
    if (length_difference >= best_distance) continue;
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

double JsonReader::at_most(double number, double limit) const {
  if (number > limit) fail("value " + brief(*value_) + " is implausibly large (limit " + brief(Json(limit)) + ")");
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
    member.fail("expected one of " + join_choices(choices) + ", got \"" + shown_word(value) + "\"" +
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
    throw InputError(file_, child_path(shown_word(it.key())),
                     "unknown key \"" + shown_word(it.key()) + "\"" +
                         (suggestion.empty() ? "" : " (did you mean \"" + suggestion + "\"?)") +
                         "; allowed keys: " + join_choices(allowed));
  }
}

}  // namespace placesim
