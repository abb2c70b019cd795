// InputError: a problem with something the user gave us (a file, a JSON value, a flag).
// It carries the file, the JSON pointer path and a message; the CLI prints it as
// "FILE: /json/path: message" and exits with status 2. Internal bugs never use this type.
// Messages echo what the user gave, so control bytes (escape sequences, bells, newlines) are shown
// as \xNN and a message longer than kMaxMessageBytes is cut: a hostile file cannot drive the
// terminal or make a message of hundreds of megabytes.
#pragma once

#include <stdexcept>
#include <string>

namespace placesim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string json_path, const std::string& message)
      : std::runtime_error(printable(format(file, json_path, message))),
        file_(std::move(file)),
        json_path_(std::move(json_path)),
        message_(printable(message)) {}

  const std::string& file() const { return file_; }
  const std::string& json_path() const { return json_path_; }
  /// The message alone, without file and path.
  const std::string& message() const { return message_; }

  static constexpr size_t kMaxMessageBytes = 16384;
  /// `text` with control bytes as \xNN, cut to kMaxMessageBytes.
  static std::string printable(const std::string& text) {
    static const char kHex[] = "0123456789abcdef";
    std::string shown;
    for (size_t i = 0; i < text.size(); ++i) {
      if (shown.size() >= kMaxMessageBytes) {
        return shown + "... (" + std::to_string(text.size() - i) + " more bytes not shown)";
      }
      unsigned char c = static_cast<unsigned char>(text[i]);
      if (c < 0x20 || c == 0x7f) {
        shown += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
      } else {
        shown += text[i];
      }
    }
    return shown;
  }

 private:
  static std::string format(const std::string& file, const std::string& path, const std::string& message) {
    std::string text;
    if (!file.empty()) text += file + ": ";
    if (!path.empty()) text += path + ": ";
    return text + message;
  }
  std::string file_;
  std::string json_path_;
  std::string message_;
};

}  // namespace placesim
