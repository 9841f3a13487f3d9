#include "input.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

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

// --keep-going warnings, capped over all the files of one run: a broken capture
// must not bury the report under a million identical lines.
struct Warnings {
    uint64_t shown = 0, hidden = 0;
};
constexpr uint64_t kMaxWarnings = 10;

// Drives a parser over a byte stream: splits lines, enforces kMaxLine, handles the
// keep-going policy. Shared by files and memory buffers.
class LineFeeder {
public:
    LineFeeder(LineParser &p, Format f, bool keep_going, InputStats &st, Warnings &w)
        : p_(p), json_(f == Format::Rocprof || f == Format::RocprofV3Json), keep_going_(keep_going),
          st_(st), w_(w) {}

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
        if (w_.shown >= kMaxWarnings) {
            ++w_.hidden;
            return;
        }
        ++w_.shown;
        std::fprintf(stderr, "amdqp-trace: warning: %s (skipped)\n", e.where(st_.path).c_str());
    }

    LineParser &p_;
    bool json_, keep_going_;
    InputStats &st_;
    Warnings &w_;
    std::string cur_;
    bool overlong_ = false;
};

class NullSink : public Sink {};

// An opened input: a file, or stdin for "-". Pipes cannot be reopened, so what
// format detection read is kept in head and parsed before the rest of the stream.
struct Source {
    std::string name;
    File owned;
    std::FILE *fp = nullptr;
    std::string head;
    uint64_t total = 0; // size for the progress indicator; 0 when unknown (pipes)
};

Source open_source(const std::string &path) {
    Source s;
    s.name = path;
    if (path == "-") {
        s.name = "<stdin>";
        s.fp = stdin;
        return s;
    }
    s.owned.reset(std::fopen(path.c_str(), "rb"));
    if (!s.owned)
        throw InputError(path + ": cannot open: " + std::strerror(errno));
    s.fp = s.owned.get();
    std::error_code ec;
    if (fs::is_regular_file(path, ec))
        s.total = fs::file_size(path, ec);
    if (ec)
        s.total = 0;
    return s;
}

void read_head(Source &s, size_t n) {
    s.head.resize(n);
    size_t got = 0;
    // A pipe delivers short reads; keep going until n bytes or end of input.
    while (got < n) {
        size_t r = std::fread(s.head.data() + got, 1, n - got, s.fp);
        if (r == 0)
            break;
        got += r;
    }
    s.head.resize(got);
    if (std::ferror(s.fp))
        throw InputError(s.name + ": read error");
}

InputStats parse_source(Source &src, Format f, Sink &sink, const InputOptions &opt,
                        Warnings &warnings) {
    InputStats st;
    st.path = src.name;
    st.format = f;
    auto parser = make_parser(f, sink);
    if (!parser)
        throw InputError(src.name + ": no parser for format");
    parser->source_name(src.name);
    Progress prog(opt.progress, src.name, src.total);
    sink.begin_file(src.name, format_name(f));
    LineFeeder feeder(*parser, f, opt.keep_going, st, warnings);
    std::vector<char> buf(1 << 20);
    try {
        st.bytes += src.head.size();
        feeder.bytes(src.head);
        for (;;) {
            size_t got = std::fread(buf.data(), 1, buf.size(), src.fp);
            if (got == 0)
                break;
            st.bytes += got;
            feeder.bytes(std::string_view(buf.data(), got));
            prog.update(st.bytes);
        }
        if (std::ferror(src.fp))
            throw InputError(src.name + ": read error");
        feeder.finish();
    } catch (const ParseError &e) {
        throw InputError(e.where(src.name));
    }
    sink.end_file();
    return st;
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

// An error without the file name it starts with, which the inventory already
// gives: "f:10: msg" -> "line 10: msg", "f: cannot open" -> "cannot open".
std::string reason_of(std::string_view what, const std::string &name) {
    if (!starts_with(what, name + ":"))
        return std::string(what);
    what.remove_prefix(name.size() + 1);
    size_t digits = 0;
    while (digits < what.size() && what[digits] >= '0' && what[digits] <= '9')
        ++digits;
    if (digits && digits < what.size() && what[digits] == ':')
        return "line " + std::string(what);
    return std::string(trim(what));
}

} // namespace

InputStats parse_file(const std::string &path, Format f, Sink &sink, const InputOptions &opt) {
    Source src = open_source(path);
    Warnings w;
    return parse_source(src, f, sink, opt, w);
}

void parse_buffer(std::string_view data, Format f, Sink &sink) {
    InputStats st;
    st.path = "<buffer>";
    auto parser = make_parser(f, sink);
    Warnings w;
    LineFeeder feeder(*parser, f, false, st, w);
    feeder.bytes(data);
    feeder.finish();
}

std::vector<InputStats> parse_paths(const std::vector<std::string> &paths, Sink &sink,
                                    const InputOptions &opt, std::vector<InputEntry> *inventory) {
    std::vector<InputStats> all;
    Warnings warnings, quiet_warnings;
    for (const auto &p : paths) {
        std::error_code ec;
        if (p != "-" && !fs::exists(p, ec))
            throw InputError(p + ": no such file or folder");
        bool folder = p != "-" && fs::is_directory(p, ec);
        std::vector<std::string> files;
        if (folder)
            collect(p, files, 0);
        else
            files.push_back(p);
        if (folder && files.empty())
            throw InputError(p + ": folder holds no capture files");
        for (const auto &f : files) {
            // In a folder one bad file must not cost the analysis of the others:
            // unless --strict, it is named with its reason and left out.
            bool tolerant = folder && !opt.strict;
            Format fmt = Format::Unknown;
            std::string name = f == "-" ? "<stdin>" : f;
            auto skip = [&](const std::string &why) {
                std::fprintf(stderr, "amdqp-trace: note: skipping %s: %s\n", f.c_str(),
                             why.c_str());
                if (inventory)
                    inventory->push_back({name, fmt, false, reason_of(why, name)});
            };
            std::string why;
            std::optional<Source> src;
            try {
                src.emplace(open_source(f));
                if (opt.force_format) {
                    fmt = *opt.force_format;
                } else {
                    read_head(*src, 1 << 16);
                    fmt = detect_format(src->head, why);
                }
            } catch (const InputError &e) {
                if (!tolerant)
                    throw;
                skip(e.what());
                continue;
            }
            if (fmt == Format::Unknown) {
                if (tolerant) {
                    skip(why);
                    continue;
                }
                throw InputError(src->name + ":1: " + why);
            }
            if (tolerant && !opt.keep_going) {
                // With --keep-going bad lines are only warnings. Otherwise check the whole file
                // before any of it reaches the analysis, so a file that breaks half-way leaves no
                // partial records behind.
                NullSink null;
                InputOptions quiet = opt;
                quiet.progress = false;
                try {
                    parse_source(*src, fmt, null, quiet, quiet_warnings);
                } catch (const InputError &e) {
                    skip(e.what());
                    continue;
                }
                std::rewind(src->fp);
                src->head.clear();
            }
            all.push_back(parse_source(*src, fmt, sink, opt, warnings));
            if (inventory)
                inventory->push_back({name, fmt, true, {}});
        }
    }
    if (warnings.hidden)
        std::fprintf(stderr, "amdqp-trace: warning: %llu more malformed lines skipped, not shown\n",
                     static_cast<unsigned long long>(warnings.hidden));
    return all;
}

} // namespace amdqp
