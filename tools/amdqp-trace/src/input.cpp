#include "input.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "error.h"
#include "text.h"

namespace fs = std::filesystem;

namespace amdqp {

namespace {

struct FileCloser {
    void operator()(std::FILE *f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

class Progress {
public:
    Progress(bool on, std::string name, uint64_t total)
        : on_(on), name_(std::move(name)), total_(total) {}
    ~Progress() {
        if (on_ && drawn_)
            std::fprintf(stderr, "\r\033[K");
    }
    void update(uint64_t done) {
        if (!on_)
            return;
        auto now = std::chrono::steady_clock::now();
        if (drawn_ && now - last_ < std::chrono::milliseconds(250))
            return;
        last_ = now;
        drawn_ = true;
        double pct = total_ ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 0;
        std::fprintf(stderr, "\r\033[K%s: %5.1f%% (%llu / %llu MB)", name_.c_str(), pct,
                     static_cast<unsigned long long>(done >> 20),
                     static_cast<unsigned long long>(total_ >> 20));
    }

private:
    bool on_;
    std::string name_;
    uint64_t total_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point last_{};
};

// Drives a parser over a byte stream: splits lines, enforces kMaxLine, handles the
// keep-going policy. Shared by files and memory buffers.
class LineFeeder {
public:
    LineFeeder(LineParser &p, Format f, bool keep_going, InputStats &st)
        : p_(p), json_(f == Format::Rocprof), keep_going_(keep_going), st_(st) {}

    void bytes(std::string_view data) {
        while (!data.empty()) {
            auto nl = data.find('\n');
            std::string_view part = data.substr(0, nl);
            if (!overlong_) {
                if (cur_.size() + part.size() > kMaxLine) {
                    if (!json_)
                        fail_line(lineno(), "line longer than 1 MiB (not a text capture?)");
                    cur_.append(part);
                    p_.line_part(cur_, lineno());
                    cur_.clear();
                    overlong_ = json_;
                } else {
                    cur_.append(part);
                }
            } else {
                p_.line_part(part, lineno());
            }
            if (nl == std::string_view::npos)
                return;
            end_line();
            data.remove_prefix(nl + 1);
        }
    }

    void finish() {
        if (!cur_.empty() || overlong_)
            end_line();
        try {
            p_.finish(st_.lines);
        } catch (const ParseError &e) {
            if (!keep_going_)
                throw;
            ++st_.bad_lines;
            warn(e);
        }
    }

private:
    uint64_t lineno() const { return st_.lines + 1; }

    [[noreturn]] void fail_line(uint64_t ln, const std::string &m) { throw ParseError(ln, m); }

    void end_line() {
        ++st_.lines;
        std::string_view l = cur_;
        if (!l.empty() && l.back() == '\r')
            l.remove_suffix(1);
        try {
            if (overlong_)
                p_.line_part("\n", st_.lines);
            else
                p_.line(l, st_.lines);
        } catch (const ParseError &e) {
            if (!keep_going_)
                throw;
            ++st_.bad_lines;
            warn(e);
        }
        overlong_ = false;
        cur_.clear();
    }

    void warn(const ParseError &e) {
        if (st_.bad_lines <= 10)
            std::fprintf(stderr, "amdqp-trace: warning: %s (skipped)\n", e.where(st_.path).c_str());
    }

    LineParser &p_;
    bool json_, keep_going_;
    InputStats &st_;
    std::string cur_;
    bool overlong_ = false;
};

std::string read_head(const std::string &path, size_t n) {
    File f(std::fopen(path.c_str(), "rb"));
    if (!f)
        throw InputError(path + ": cannot open: " + std::strerror(errno));
    std::string buf(n, '\0');
    size_t got = std::fread(buf.data(), 1, n, f.get());
    buf.resize(got);
    return buf;
}

void collect(const fs::path &p, std::vector<std::string> &out, int depth) {
    std::vector<fs::path> entries;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(p, ec))
        entries.push_back(e.path());
    if (ec)
        throw InputError(p.string() + ": cannot list folder: " + ec.message());
    std::sort(entries.begin(), entries.end());
    for (const auto &e : entries) {
        std::string name = e.filename().string();
        // amdqp-capture's own bookkeeping files are not captures.
        if (name.empty() || name[0] == '.' || starts_with(name, "manifest.") ||
            name == "capture.log" || name == "pids.txt")
            continue;
        if (fs::is_directory(e, ec)) {
            if (depth < 4)
                collect(e, out, depth + 1);
        } else if (fs::is_regular_file(e, ec)) {
            out.push_back(e.string());
        }
    }
}

} // namespace

InputStats parse_file(const std::string &path, Format f, Sink &sink, const InputOptions &opt) {
    InputStats st;
    st.path = path;
    st.format = f;
    auto parser = make_parser(f, sink);
    if (!parser)
        throw InputError(path + ": no parser for format");
    File file(std::fopen(path.c_str(), "rb"));
    if (!file)
        throw InputError(path + ": cannot open: " + std::strerror(errno));
    std::error_code ec;
    uint64_t total = fs::file_size(path, ec);
    if (ec)
        total = 0;
    Progress prog(opt.progress, path, total);
    sink.begin_file(path, format_name(f));
    LineFeeder feeder(*parser, f, opt.keep_going, st);
    std::vector<char> buf(1 << 20);
    try {
        for (;;) {
            size_t got = std::fread(buf.data(), 1, buf.size(), file.get());
            if (got == 0)
                break;
            st.bytes += got;
            feeder.bytes(std::string_view(buf.data(), got));
            prog.update(st.bytes);
        }
        if (std::ferror(file.get()))
            throw InputError(path + ": read error");
        feeder.finish();
    } catch (const ParseError &e) {
        throw InputError(e.where(path));
    }
    sink.end_file();
    return st;
}

void parse_buffer(std::string_view data, Format f, Sink &sink) {
    InputStats st;
    st.path = "<buffer>";
    auto parser = make_parser(f, sink);
    LineFeeder feeder(*parser, f, false, st);
    feeder.bytes(data);
    feeder.finish();
}

std::vector<InputStats> parse_paths(const std::vector<std::string> &paths, Sink &sink,
                                    const InputOptions &opt) {
    std::vector<InputStats> all;
    for (const auto &p : paths) {
        std::error_code ec;
        if (!fs::exists(p, ec))
            throw InputError(p + ": no such file or folder");
        bool folder = fs::is_directory(p, ec);
        std::vector<std::string> files;
        if (folder)
            collect(p, files, 0);
        else
            files.push_back(p);
        if (folder && files.empty())
            throw InputError(p + ": folder holds no capture files");
        for (const auto &f : files) {
            Format fmt = Format::Unknown;
            std::string why;
            if (opt.force_format) {
                fmt = *opt.force_format;
            } else {
                fmt = detect_format(read_head(f, 1 << 16), why);
            }
            if (fmt == Format::Unknown) {
                if (folder) {
                    std::fprintf(stderr, "amdqp-trace: note: skipping %s: %s\n", f.c_str(),
                                 why.c_str());
                    continue;
                }
                throw InputError(f + ":1: " + why);
            }
            all.push_back(parse_file(f, fmt, sink, opt));
        }
    }
    return all;
}

} // namespace amdqp
