// Minimal JSON string escaping for the writers.
#pragma once
#include <string>
#include <string_view>

namespace amdqp {

inline std::string json_str(std::string_view s) {
    std::string o;
    o.reserve(s.size() + 2);
    o.push_back('"');
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"':
            o += "\\\"";
            break;
        case '\\':
            o += "\\\\";
            break;
        case '\n':
            o += "\\n";
            break;
        case '\t':
            o += "\\t";
            break;
        case '\r':
            o += "\\r";
            break;
        default:
            if (c < 0x20 || c >= 0x7f) { // keep output ASCII: raw bytes may not be UTF-8
                static const char *hx = "0123456789abcdef";
                o += "\\u00";
                o.push_back(hx[c >> 4]);
                o.push_back(hx[c & 15]);
            } else {
                o.push_back(ch);
            }
        }
    }
    o.push_back('"');
    return o;
}

} // namespace amdqp
