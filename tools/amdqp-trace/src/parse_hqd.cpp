// Parser for /sys/kernel/debug/kfd/hqds (kfd dqm_debugfs_hqds): per GPU node, per
// XCC instance, the register block of every HQD slot KFD may use.
#include <array>

#include "error.h"
#include "parsers.h"
#include "text.h"

namespace amdqp {

namespace {

class HqdParser final : public LineParser {
public:
    explicit HqdParser(Sink &s) : sink_(s) {}

    void line(std::string_view raw, uint64_t lineno) override {
        std::string_view l = trim(raw);
        if (l.empty())
            return;
        if (starts_with(l, "Node ")) {
            flush();
            parse_node(l, lineno);
            return;
        }
        if (starts_with(l, "Inst ") || starts_with(l, "HIQ on MEC") || starts_with(l, "CP Pipe") ||
            starts_with(l, "SDMA Engine")) {
            flush();
            parse_header(l, lineno);
            return;
        }
        if (l == "Device is stopped") {
            // KFD prints this for a GPU whose scheduler is stopped (reset, suspend):
            // it has no HQD registers to show, which is not an error in the dump,
            // but the census must still name the GPU rather than drop it.
            flush();
            in_block_ = false;
            if (have_node_)
                sink_.hqd_device_stopped(node_, gpu_);
            return;
        }
        if (l.size() > 9 && l[8] == ':' && parse_u64(l.substr(0, 8), 16)) {
            parse_regs(l, lineno);
            return;
        }
        throw ParseError(lineno, "unrecognised line in kfd hqds dump: '" +
                                     std::string(l.substr(0, 60)) + "'");
    }

    void finish(uint64_t) override { flush(); }

private:
    void parse_node(std::string_view l, uint64_t lineno) {
        // "Node 2, gpu_id f7bc:"
        std::string_view rest = l.substr(5);
        auto comma = rest.find(',');
        auto node = parse_u64(rest.substr(0, comma));
        std::string_view tail = comma == std::string_view::npos ? "" : trim(rest.substr(comma + 1));
        if (!node || !starts_with(tail, "gpu_id ") || tail.back() != ':')
            throw ParseError(lineno, "malformed node header, expected 'Node N, gpu_id X:'");
        std::string_view id = tail.substr(7, tail.size() - 8);
        if (!parse_u64(id, 16))
            throw ParseError(lineno, "malformed gpu_id '" + std::string(id) + "'");
        node_ = static_cast<uint32_t>(*node);
        gpu_ = std::string(id);
        have_node_ = true;
    }

    static std::optional<uint32_t> num_after(std::string_view l, std::string_view key) {
        auto p = l.find(key);
        if (p == std::string_view::npos)
            return std::nullopt;
        std::string_view rest = l.substr(p + key.size());
        size_t n = 0;
        while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9')
            ++n;
        auto v = parse_u64(rest.substr(0, n));
        if (!v || *v > 0xffff)
            return std::nullopt;
        return static_cast<uint32_t>(*v);
    }

    void parse_header(std::string_view l, uint64_t lineno) {
        if (!have_node_)
            throw ParseError(lineno, "queue header before any 'Node N, gpu_id X:' line");
        cur_ = HqdRecord{};
        cur_.node = node_;
        cur_.gpu_id = gpu_;
        if (starts_with(l, "Inst ")) {
            auto x = num_after(l, "Inst ");
            if (!x)
                throw ParseError(lineno, "malformed XCC instance in '" + std::string(l) + "'");
            cur_.xcc = *x;
        }
        std::optional<uint32_t> pipe, queue;
        if (l.find("HIQ on MEC") != std::string_view::npos) {
            cur_.hiq = true;
            auto mec = num_after(l, "MEC ");
            pipe = num_after(l, "Pipe ");
            queue = num_after(l, "Queue ");
            if (!mec)
                pipe.reset();
            else
                cur_.mec = *mec;
            kind_ = Kind::Cp;
        } else if (l.find("CP Pipe") != std::string_view::npos) {
            pipe = num_after(l, "Pipe ");
            queue = num_after(l, "Queue ");
            kind_ = Kind::Cp;
        } else if (l.find("SDMA Engine") != std::string_view::npos) {
            pipe = num_after(l, "Engine ");
            queue = num_after(l, "RLC ");
            kind_ = Kind::Sdma;
        } else {
            throw ParseError(lineno, "unrecognised queue header '" + std::string(l) + "'");
        }
        if (!pipe || !queue)
            throw ParseError(lineno, "malformed queue header '" + std::string(l) + "'");
        cur_.pipe = *pipe;
        cur_.queue = *queue;
        nregs_ = 0;
        header_line_ = lineno;
        in_block_ = true;
    }

    void parse_regs(std::string_view l, uint64_t lineno) {
        if (!in_block_)
            throw ParseError(lineno, "register line outside a queue block");
        if (!parse_u64(l.substr(0, 8), 16))
            throw ParseError(lineno, "malformed register address");
        std::string_view rest = l.substr(9);
        for (std::string_view tok = next_token(rest); !tok.empty(); tok = next_token(rest)) {
            auto v = tok.size() == 8 ? parse_u64(tok, 16) : std::nullopt;
            if (!v)
                throw ParseError(lineno, "malformed register value '" +
                                             std::string(tok.substr(0, 20)) + "'");
            if (kind_ == Kind::Cp) {
                if (nregs_ >= kQueueRegCount)
                    throw ParseError(lineno, "more than 56 registers in a CP queue block "
                                             "(only the gfx9 layout is supported)");
                regs_[nregs_] = static_cast<uint32_t>(*v);
            }
            ++nregs_;
        }
    }

    void flush() {
        if (!in_block_)
            return;
        in_block_ = false;
        if (kind_ == Kind::Sdma)
            return; // SDMA RLC registers: not user compute queues, not decoded
        if (nregs_ != kQueueRegCount)
            throw ParseError(header_line_, "CP queue block has " + std::to_string(nregs_) +
                                               " registers, expected 56 (gfx9 layout; "
                                               "truncated dump?)");
        cur_.regs = decode_queue_regs(regs_);
        sink_.hqd(cur_);
    }

    enum class Kind { Cp, Sdma };
    Sink &sink_;
    bool have_node_ = false;
    uint32_t node_ = 0;
    std::string gpu_;
    bool in_block_ = false;
    Kind kind_ = Kind::Cp;
    HqdRecord cur_;
    std::array<uint32_t, kQueueRegCount> regs_{};
    size_t nregs_ = 0;
    uint64_t header_line_ = 0;
};

} // namespace

std::unique_ptr<LineParser> make_hqd_parser(Sink &s) {
    return std::make_unique<HqdParser>(s);
}

} // namespace amdqp
