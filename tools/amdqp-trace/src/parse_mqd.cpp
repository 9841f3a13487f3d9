// Parser for /sys/kernel/debug/kfd/mqds (pqm_debugfs_mqds): per process, each user
// queue's MQD as a hex dump; on gfx9.4.3 one MQD per XCC, each dump from offset 0.
#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "error.h"
#include "parsers.h"
#include "text.h"

namespace amdqp {

namespace {

constexpr uint64_t kRegFirstByte = kMqdRegFirstDword * 4;
constexpr uint64_t kRegEndByte = kRegFirstByte + kQueueRegCount * 4;
constexpr uint64_t kMaxMqdBytes = 1 << 16; // far above sizeof(struct v9_mqd)

class MqdParser final : public LineParser {
public:
    explicit MqdParser(Sink &s) : sink_(s) {}

    void line(std::string_view raw, uint64_t lineno) override {
        std::string_view l = trim(raw);
        if (l.empty())
            return;
        if (starts_with(l, "Process ")) {
            close_queue(lineno);
            parse_process(l, lineno);
            return;
        }
        auto on = l.find(" on device ");
        if (on != std::string_view::npos) {
            close_queue(lineno);
            if (!have_proc_)
                throw ParseError(lineno, "queue line before any 'Process N PASID M:' line");
            cur_ = MqdRecord{};
            cur_.pid = pid_;
            cur_.pasid = pasid_;
            std::string_view id = trim(l.substr(on + 11));
            if (!parse_u64(id, 16))
                throw ParseError(lineno, "malformed device id '" + std::string(id) + "'");
            cur_.gpu_id = std::string(id);
            std::string_view what = l.substr(0, on);
            if (starts_with(what, "Compute queue"))
                cur_.kind = "Compute";
            else if (starts_with(what, "SDMA queue"))
                cur_.kind = "SDMA";
            else
                cur_.kind = std::string(what.substr(0, 40));
            cur_.queue_ordinal = queue_ordinal_++;
            xcc_ordinal_ = 0;
            in_queue_ = true;
            in_mqd_ = false;
            return;
        }
        if (l.size() > 9 && l[8] == ':' && parse_u64(l.substr(0, 8), 16)) {
            parse_dump_line(l, lineno);
            return;
        }
        throw ParseError(lineno, "unrecognised line in kfd mqds dump: '" +
                                     std::string(l.substr(0, 60)) + "'");
    }

    void finish(uint64_t lineno) override {
        // debugfs output cut at a line boundary parses cleanly; only comparing
        // with the complete MQDs and queues before it shows what is missing.
        if (in_mqd_) {
            auto it = full_len_.find(cur_.kind);
            if (it != full_len_.end() && next_off_ < it->second)
                throw ParseError(lineno, "MQD dump ends at offset " + hex(next_off_) +
                                             ", earlier " + cur_.kind + " MQDs end at " +
                                             hex(it->second) + " (truncated dump?)");
        }
        flush(lineno);
        if (in_queue_) {
            auto it = full_xccs_.find({cur_.kind, cur_.gpu_id});
            if (it != full_xccs_.end() && xcc_ordinal_ < it->second)
                throw ParseError(lineno, "last queue has " + std::to_string(xcc_ordinal_) +
                                             " MQDs, earlier " + cur_.kind + " queues on " +
                                             cur_.gpu_id + " have " + std::to_string(it->second) +
                                             " (truncated dump?)");
        }
        close_queue(lineno);
    }

private:
    void parse_process(std::string_view l, uint64_t lineno) {
        // "Process 94314 PASID 94314:" (older kernels print the PASID as 0x%x)
        std::string_view rest = l.substr(8);
        std::string_view pid = next_token(rest);
        std::string_view kw = next_token(rest);
        std::string_view pasid = next_token(rest);
        if (!pasid.empty() && pasid.back() == ':')
            pasid.remove_suffix(1);
        auto p = parse_i64(pid);
        auto a = starts_with(pasid, "0x") ? parse_u64(pasid, 16) : parse_u64(pasid);
        if (!p || kw != "PASID" || !a || !trim(rest).empty())
            throw ParseError(lineno, "malformed process header, expected 'Process N PASID M:'");
        pid_ = *p;
        pasid_ = *a;
        have_proc_ = true;
        queue_ordinal_ = 0;
        in_queue_ = false;
    }

    void parse_dump_line(std::string_view l, uint64_t lineno) {
        if (!in_queue_)
            throw ParseError(lineno, "MQD dump line outside a queue");
        auto off = parse_u64(l.substr(0, 8), 16);
        if (!off)
            throw ParseError(lineno, "malformed MQD offset");
        if (*off == 0) { // every MQD (one per XCC) restarts at offset 0
            flush(lineno);
            in_mqd_ = true;
            next_off_ = 0;
            got_ = 0;
        }
        if (!in_mqd_ || *off != next_off_)
            throw ParseError(lineno, "MQD dump offset " + hex(*off) +
                                         " out of sequence (expected " + hex(next_off_) + ")");
        if (*off >= kMaxMqdBytes)
            throw ParseError(lineno, "MQD dump longer than 64 KiB");
        std::string_view rest = l.substr(9);
        uint64_t pos = *off;
        for (std::string_view tok = next_token(rest); !tok.empty(); tok = next_token(rest)) {
            auto v = tok.size() == 8 ? parse_u64(tok, 16) : std::nullopt;
            if (!v)
                throw ParseError(lineno,
                                 "malformed MQD word '" + std::string(tok.substr(0, 20)) + "'");
            if (pos >= kRegFirstByte && pos < kRegEndByte) {
                regs_[(pos - kRegFirstByte) / 4] = static_cast<uint32_t>(*v);
                ++got_;
            }
            pos += 4;
        }
        next_off_ = pos;
    }

    void flush(uint64_t) {
        if (!in_mqd_)
            return;
        in_mqd_ = false;
        uint64_t &len = full_len_[cur_.kind];
        len = std::max(len, next_off_);
        cur_.xcc_ordinal = xcc_ordinal_++;
        cur_.has_regs = cur_.kind == "Compute" && got_ == kQueueRegCount;
        if (cur_.has_regs)
            cur_.regs = decode_queue_regs(regs_);
        sink_.mqd(cur_);
    }

    // A queue whose MQD was not dumped still counts as a queue of the process.
    void close_queue(uint64_t lineno) {
        flush(lineno);
        if (in_queue_) {
            uint32_t &n = full_xccs_[{cur_.kind, cur_.gpu_id}];
            n = std::max(n, xcc_ordinal_);
        }
        if (in_queue_ && xcc_ordinal_ == 0) {
            cur_.xcc_ordinal = 0;
            cur_.has_regs = false;
            sink_.mqd(cur_);
        }
        in_queue_ = false;
    }

    Sink &sink_;
    bool have_proc_ = false, in_queue_ = false, in_mqd_ = false;
    int64_t pid_ = 0;
    uint64_t pasid_ = 0;
    uint32_t queue_ordinal_ = 0, xcc_ordinal_ = 0;
    MqdRecord cur_;
    std::array<uint32_t, kQueueRegCount> regs_{};
    size_t got_ = 0;
    uint64_t next_off_ = 0;
    // Longest MQD per kind and most MQDs per queue per (kind, gpu) seen so far.
    std::map<std::string, uint64_t> full_len_;
    std::map<std::pair<std::string, std::string>, uint32_t> full_xccs_;
};

} // namespace

std::unique_ptr<LineParser> make_mqd_parser(Sink &s) {
    return std::make_unique<MqdParser>(s);
}

} // namespace amdqp
