#include "json_out.h"

namespace amdqp {

namespace {

std::string scalar(const Json &j) {
    return j.dump(-1, ' ', true, Json::error_handler_t::replace);
}

// Like json_dump, with ", " and ": " between items: rows read like the docs.
void spaced(std::string &out, const Json &j) {
    if (j.is_object()) {
        out += '{';
        bool first = true;
        for (const auto &[k, v] : j.items()) {
            out += first ? "" : ", ";
            first = false;
            out += scalar(Json(k));
            out += ": ";
            spaced(out, v);
        }
        out += '}';
    } else if (j.is_array()) {
        out += '[';
        bool first = true;
        for (const auto &v : j) {
            out += first ? "" : ", ";
            first = false;
            spaced(out, v);
        }
        out += ']';
    } else {
        out += scalar(j);
    }
}

} // namespace

std::string json_dump(const Json &j) {
    return scalar(j);
}

void write_json_rows(std::ostream &os, const Json &doc) {
    std::string out = "{";
    bool first = true;
    for (const auto &[k, v] : doc.items()) {
        out += first ? "\n  " : ",\n  ";
        first = false;
        out += scalar(Json(k));
        out += ": ";
        if (v.is_array() && !v.empty()) {
            out += '[';
            bool f2 = true;
            for (const auto &row : v) {
                out += f2 ? "\n    " : ",\n    ";
                f2 = false;
                spaced(out, row);
            }
            out += "\n  ]";
        } else {
            spaced(out, v);
        }
    }
    out += "\n}\n";
    os << out;
}

} // namespace amdqp
