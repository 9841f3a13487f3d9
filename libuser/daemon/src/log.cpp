// SPDX-License-Identifier: MIT
#include "log.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#if AMDQPD_HAVE_SYSTEMD
#include <systemd/sd-journal.h>
#endif

namespace amdqp::daemon {

namespace {

// systemd's rule: stderr is the journal when JOURNAL_STREAM names its
// device and inode.
bool stderr_is_journal() {
    const char* js = std::getenv("JOURNAL_STREAM");
    struct stat st;
    if (!js || fstat(STDERR_FILENO, &st) < 0)
        return false;
    unsigned long long dev = 0, ino = 0;
    if (std::sscanf(js, "%llu:%llu", &dev, &ino) != 2)
        return false;
    return st.st_dev == dev && st.st_ino == ino;
}

const char* name(Level l) {
    switch (l) {
        case Level::kError:
            return "error";
        case Level::kWarning:
            return "warning";
        case Level::kInfo:
            return "info";
        case Level::kDebug:
            return "debug";
    }
    return "?";
}

}  // namespace

Log::Log(std::string_view level) : journal_(AMDQPD_HAVE_SYSTEMD && stderr_is_journal()) {
    set_level(level);
}

void Log::set_level(std::string_view level) {
    level_ = level == "error"     ? Level::kError
             : level == "warning" ? Level::kWarning
             : level == "debug"   ? Level::kDebug
                                  : Level::kInfo;
}

void Log::write(Level l, std::string_view event, const std::string& message) const {
    if (!enabled(l))
        return;
#if AMDQPD_HAVE_SYSTEMD
    if (journal_) {
        sd_journal_send("MESSAGE=%s", message.c_str(), "PRIORITY=%d", static_cast<int>(l),
                        "AMDQPD_EVENT=%.*s", static_cast<int>(event.size()), event.data(),
                        "SYSLOG_IDENTIFIER=amdqpd", nullptr);
        return;
    }
#endif
    std::fprintf(stderr, "amdqpd: %s: %s [%.*s]\n", name(l), message.c_str(),
                 static_cast<int>(event.size()), event.data());
}

}  // namespace amdqp::daemon
