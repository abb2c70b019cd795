// InputError: a problem with something the user gave us (a file, a JSON value, a flag).
// It carries the file, the JSON pointer path and a message; the CLI prints it as
// "FILE: /json/path: message" and exits with status 2. Internal bugs never use this type.
#pragma once

#include <stdexcept>
#include <string>

namespace placesim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string json_path, const std::string& message)
      : std::runtime_error(format(file, json_path, message)),
        file_(std::move(file)),
        json_path_(std::move(json_path)),
        message_(message) {}

  const std::string& file() const { return file_; }
  const std::string& json_path() const { return json_path_; }
  /// The message alone, without file and path.
  const std::string& message() const { return message_; }

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
