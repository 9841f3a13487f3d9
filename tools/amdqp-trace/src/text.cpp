#include "text.h"

#include <charconv>
#include <cstdio>

namespace amdqp {

static bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_space(s.back()))
        s.remove_suffix(1);
    return s;
}

bool starts_with(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}

std::optional<uint64_t> parse_u64(std::string_view s, int base) {
    if (base == 16 && (starts_with(s, "0x") || starts_with(s, "0X")))
        s.remove_prefix(2);
    if (s.empty())
        return std::nullopt;
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || p != s.data() + s.size())
        return std::nullopt;
    return v;
}

std::optional<int64_t> parse_i64(std::string_view s) {
    if (s.empty())
        return std::nullopt;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
    if (ec != std::errc() || p != s.data() + s.size())
        return std::nullopt;
    return v;
}

std::optional<double> parse_seconds_us(std::string_view s) {
    auto dot = s.find('.');
    auto whole = parse_u64(s.substr(0, dot));
    if (!whole)
        return std::nullopt;
    double us = static_cast<double>(*whole) * 1e6;
    if (dot != std::string_view::npos) {
        std::string_view frac = s.substr(dot + 1);
        if (frac.empty() || frac.size() > 9)
            return std::nullopt;
        auto f = parse_u64(frac);
        if (!f)
            return std::nullopt;
        double scale = 1e6;
        for (size_t i = 0; i < frac.size(); ++i)
            scale /= 10;
        us += static_cast<double>(*f) * scale;
    }
    return us;
}

std::optional<std::string_view> kv_get(std::string_view body, std::string_view key) {
    size_t pos = 0;
    while ((pos = body.find(key, pos)) != std::string_view::npos) {
        size_t end = pos + key.size();
        bool left_ok = pos == 0 || body[pos - 1] == ' ' || body[pos - 1] == ',';
        if (left_ok && end < body.size() && body[end] == '=') {
            size_t v = end + 1;
            size_t stop = v;
            while (stop < body.size() && body[stop] != ' ' && body[stop] != ',')
                ++stop;
            return body.substr(v, stop - v);
        }
        pos = end;
    }
    return std::nullopt;
}

std::optional<uint64_t> kv_u64(std::string_view body, std::string_view key) {
    auto v = kv_get(body, key);
    if (!v)
        return std::nullopt;
    if (starts_with(*v, "0x"))
        return parse_u64(*v, 16);
    return parse_u64(*v, 10);
}

std::string_view next_token(std::string_view &s) {
    size_t i = 0;
    while (i < s.size() && is_space(s[i]))
        ++i;
    size_t j = i;
    while (j < s.size() && !is_space(s[j]))
        ++j;
    std::string_view tok = s.substr(i, j - i);
    s.remove_prefix(j);
    return tok;
}

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string gpu_hex(uint64_t gpu_id) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(gpu_id));
    return buf;
}

bool printable_text(std::string_view s) {
    for (unsigned char c : s)
        if (c == 0 || (c < 0x20 && c != '\t' && c != '\r' && c != '\n' && c != 0x1b))
            return false;
    return true;
}

} // namespace amdqp
