// Errors carry file:line so that malformed input can be found quickly.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace amdqp {

class ParseError : public std::runtime_error {
public:
    ParseError(uint64_t line, const std::string &msg)
        : std::runtime_error(msg), line_(line), msg_(msg) {}
    uint64_t line() const { return line_; }
    const std::string &message() const { return msg_; }
    // "file:line: message", the form compilers use, so editors can jump to it.
    std::string where(const std::string &file) const {
        return file + ":" + std::to_string(line_) + ": " + msg_;
    }

private:
    uint64_t line_;
    std::string msg_;
};

} // namespace amdqp
