// SPDX-License-Identifier: MIT
#include "timeline_json.hpp"

#include <zlib.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace amdqp::sim {
namespace {

Ns us_to_ns(double us) {
    return static_cast<Ns>(std::llround(us * 1000.0));
}

KernelClass parse_class(const std::string& s, const std::string& what) {
    if (s == "nccl")
        return KernelClass::kNccl;
    if (s == "gemm")
        return KernelClass::kGemm;
    if (s == "other")
        return KernelClass::kOther;
    throw std::runtime_error(what + ": unknown kernel class '" + s + "'");
}

}  // namespace

Timeline parse_timeline_json(const nlohmann::json& j, const std::string& what) {
    if (!j.is_object() || !j.contains("requests") || !j.at("requests").is_array())
        throw std::runtime_error(what + ": not a kernel timeline (no \"requests\" array)");
    Timeline t;
    t.workload = j.value("workload", std::string{});
    t.device = j.value("device", std::string{});
    t.batch = j.value("batch", 1);
    t.period_s = j.value("period_s", 0.0);
    t.rank = j.value("rank", 0);
    if (j.contains("tp") && j.at("tp").is_number_integer())
        t.tp = j.at("tp").get<int>();
    if (j.contains("request_wall_us") && j.at("request_wall_us").is_array())
        t.request_wall_us = j.at("request_wall_us").get<std::vector<double>>();
    for (const auto& r : j.at("requests")) {
        Request req;
        for (const auto& k : r) {
            if (!k.is_array() || k.size() < 2)
                throw std::runtime_error(what + ": a kernel is not [start_us, dur_us(, class)]");
            Kernel kern{us_to_ns(k.at(0).get<double>()), us_to_ns(k.at(1).get<double>()),
                        KernelClass::kOther};
            if (k.size() > 2)
                kern.cls = parse_class(k.at(2).get<std::string>(), what);
            if (kern.dur < 0)
                throw std::runtime_error(what + ": negative kernel duration");
            req.kernels.push_back(kern);
        }
        if (req.kernels.empty())
            continue;
        // Offsets relative to the first kernel, whatever the file's origin.
        const Ns origin = req.kernels.front().start;
        for (auto& k : req.kernels)
            k.start -= origin;
        t.requests.push_back(std::move(req));
    }
    if (t.requests.empty())
        throw std::runtime_error(what + ": no request with kernels");
    return t;
}

bool is_timeline_file(const std::string& path) {
    const auto ends = [&](std::string_view suffix) {
        return path.size() >= suffix.size() &&
               path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    return ends(".json") || ends(".json.gz");
}

std::string read_maybe_gzip(const std::string& path) {
    // gzread reads a file that is not gzip-compressed as it is.
    const std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
    if (!f)
        throw std::runtime_error(path + ": cannot open");
    std::string out;
    char buf[1 << 16];
    for (;;) {
        const int n = gzread(f.get(), buf, sizeof buf);
        if (n < 0) {
            int err = 0;
            throw std::runtime_error(path + ": " + gzerror(f.get(), &err));
        }
        if (n == 0)
            break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

Timeline load_timeline_json(const std::string& path) {
    const std::string text = read_maybe_gzip(path);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    return parse_timeline_json(j, path);
}

}  // namespace amdqp::sim
