// SPDX-License-Identifier: MIT
//
// Queue references as users type them: PID:GPU:QID or PID@0xRINGVA.
#ifndef AMDQPCTL_QUEUE_REF_HPP
#define AMDQPCTL_QUEUE_REF_HPP

#include <cstdint>
#include <optional>
#include <string_view>

#include <amdqp/amdqp.hpp>

namespace amdqpctl {

// Throws UsageError with the accepted forms.
amdqp::QueueRef parse_queue_ref(std::string_view text);

// A decimal number that fits in 32 bits, nothing else.
std::optional<std::uint32_t> parse_u32(std::string_view text);
// Decimal, or hexadecimal with 0x.
std::optional<std::uint64_t> parse_u64(std::string_view text);
// A positive pid; throws UsageError naming @what.
std::uint32_t parse_pid(std::string_view text, std::string_view what = "pid");

}  // namespace amdqpctl

#endif  // AMDQPCTL_QUEUE_REF_HPP
