// SPDX-License-Identifier: MIT
//
// amdqpd's log: journald with structured fields when started by systemd
// (stderr connected to the journal), plain "amdqpd: level: message" lines
// on stderr otherwise.
#ifndef AMDQPD_LOG_HPP
#define AMDQPD_LOG_HPP

#include <string>
#include <string_view>

namespace amdqp::daemon {

enum class Level { kError = 3, kWarning = 4, kInfo = 6, kDebug = 7 };

class Log {
  public:
    // @level: "error", "warning", "info", "debug".
    explicit Log(std::string_view level = "info");
    void set_level(std::string_view level);
    bool enabled(Level l) const { return l <= level_; }
    // @event: a short machine-readable name (AMDQPD_EVENT= in the journal).
    void write(Level l, std::string_view event, const std::string& message) const;
    void error(std::string_view event, const std::string& m) const {
        write(Level::kError, event, m);
    }
    void warning(std::string_view event, const std::string& m) const {
        write(Level::kWarning, event, m);
    }
    void info(std::string_view event, const std::string& m) const { write(Level::kInfo, event, m); }
    void debug(std::string_view event, const std::string& m) const {
        if (enabled(Level::kDebug))
            write(Level::kDebug, event, m);
    }
    bool journal() const { return journal_; }

  private:
    Level level_ = Level::kInfo;
    bool journal_ = false;
};

}  // namespace amdqp::daemon

#endif
