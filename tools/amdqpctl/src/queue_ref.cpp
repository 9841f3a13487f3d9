// SPDX-License-Identifier: MIT
#include "queue_ref.hpp"

#include <charconv>
#include <string>

#include "exit_status.hpp"

namespace amdqpctl {

namespace {

template <typename T>
std::optional<T> parse_number(std::string_view text, int base) {
    if (text.empty())
        return std::nullopt;
    T value{};
    const auto* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
    if (ec != std::errc() || ptr != end)
        return std::nullopt;
    return value;
}

}  // namespace

std::optional<std::uint32_t> parse_u32(std::string_view text) {
    return parse_number<std::uint32_t>(text, 10);
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
    if (text.starts_with("0x") || text.starts_with("0X"))
        return parse_number<std::uint64_t>(text.substr(2), 16);
    return parse_number<std::uint64_t>(text, 10);
}

std::uint32_t parse_pid(std::string_view text, std::string_view what) {
    auto pid = parse_u32(text);
    if (!pid || *pid == 0)
        throw UsageError("bad " + std::string(what) + " '" + std::string(text) +
                         "': a process id is a positive number");
    return *pid;
}

amdqp::QueueRef parse_queue_ref(std::string_view text) {
    const std::string forms =
        "' (use PID:GPU:QUEUE, e.g. 4242:1:3, or PID@0xRINGVA, e.g. "
        "4242@0x7f0000001000; see amdqpctl list)";
    if (auto at = text.find('@'); at != std::string_view::npos) {
        auto pid = parse_u32(text.substr(0, at));
        auto va = parse_u64(text.substr(at + 1));
        if (!pid || *pid == 0 || !va || *va == 0)
            throw UsageError("bad queue reference '" + std::string(text) + forms);
        return amdqp::QueueRef::by_ring_va(*pid, *va);
    }
    auto c1 = text.find(':');
    auto c2 = c1 == std::string_view::npos ? c1 : text.find(':', c1 + 1);
    if (c2 == std::string_view::npos)
        throw UsageError("bad queue reference '" + std::string(text) + forms);
    auto pid = parse_u32(text.substr(0, c1));
    auto gpu = parse_u32(text.substr(c1 + 1, c2 - c1 - 1));
    auto qid = parse_u32(text.substr(c2 + 1));
    if (!pid || *pid == 0 || !gpu || !qid)
        throw UsageError("bad queue reference '" + std::string(text) + forms);
    return amdqp::QueueRef::by_id(*pid, *gpu, *qid);
}

}  // namespace amdqpctl
