// Small std::string_view helpers shared by the parsers. None of them allocate.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace amdqp {

std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view p);
// Parse an unsigned integer in the given base; the whole of s must be digits.
std::optional<uint64_t> parse_u64(std::string_view s, int base = 10);
std::optional<int64_t> parse_i64(std::string_view s);
// "1234.567890" (seconds) -> microseconds; whole string must match.
std::optional<double> parse_seconds_us(std::string_view s);
// Value of "key=value" in a space separated list ("a=1 b=0x2"), if present.
std::optional<std::string_view> kv_get(std::string_view body, std::string_view key);
// Unsigned integer value of a key, accepting 0x-prefixed hex or decimal.
std::optional<uint64_t> kv_u64(std::string_view body, std::string_view key);
// Take the next whitespace separated token from s (s is advanced past it).
std::string_view next_token(std::string_view &s);
std::string hex(uint64_t v);
// Lower-case, no 0x: the way kfd debugfs prints gpu ids.
std::string gpu_hex(uint64_t gpu_id);
bool printable_text(std::string_view s);

} // namespace amdqp
