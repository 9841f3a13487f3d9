// SPDX-License-Identifier: MIT
#include "scenario_file.hpp"

#include <toml++/toml.h>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "timeline_json.hpp"

namespace amdqp::sim {
namespace {

Ns us(const nlohmann::json& j, const char* key, Ns def) {
    return j.contains(key) ? static_cast<Ns>(std::llround(j.at(key).get<double>() * 1e3)) : def;
}
Ns ms(const nlohmann::json& j, const char* key, Ns def) {
    return j.contains(key) ? static_cast<Ns>(std::llround(j.at(key).get<double>() * 1e6)) : def;
}

int parse_level_number(const std::string& key) {
    int level = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), level);
    if (ec != std::errc{} || end != key.data() + key.size() || level < 0 ||
        level > policy::kPriorityMax)
        throw std::runtime_error("cu_demand: '" + key +
                                 "' is not a level (high, normal, low or 0-15)");
    return level;
}

nlohmann::json from_toml(const toml::node& n) {
    if (auto t = n.as_table()) {
        nlohmann::json o = nlohmann::json::object();
        for (const auto& [k, v] : *t)
            o[std::string(k.str())] = from_toml(v);
        return o;
    }
    if (auto a = n.as_array()) {
        nlohmann::json o = nlohmann::json::array();
        for (const auto& v : *a)
            o.push_back(from_toml(v));
        return o;
    }
    if (auto v = n.as_string())
        return v->get();
    if (auto v = n.as_integer())
        return v->get();
    if (auto v = n.as_floating_point())
        return v->get();
    if (auto v = n.as_boolean())
        return v->get();
    throw std::runtime_error("unsupported TOML value (dates are not scenario keys)");
}

void check_keys(const nlohmann::json& j, std::initializer_list<const char*> known,
                const std::string& where) {
    for (const auto& [k, v] : j.items()) {
        bool ok = false;
        for (const char* n : known)
            ok = ok || k == n;
        if (!ok)
            throw std::runtime_error(where + ": unknown key '" + k + "'");
    }
}

}  // namespace

void apply_device_keys(const nlohmann::json& j, DeviceParams& d) {
    if (j.contains("model"))
        d.kind = parse_device_kind(j.at("model").get<std::string>());
    d.compute_fraction = j.value("compute_fraction", d.compute_fraction);
    d.ts.slice = us(j, "slice_us", d.ts.slice);
    d.ts.switch_cost = us(j, "switch_us", d.ts.switch_cost);
    d.ts.yield_when_dry = j.value("yield", d.ts.yield_when_dry);
    d.ts.dry_hold = us(j, "dry_hold_us", d.ts.dry_hold);
    d.hws.corun_rate = j.value("corun_rate", d.hws.corun_rate);
    d.hws.unmap = us(j, "unmap_us", d.hws.unmap);
    d.hws.map = us(j, "map_us", d.hws.map);
    d.hws.cwsr_save_full = us(j, "cwsr_save_us", d.hws.cwsr_save_full);
    d.hws.cwsr_restore_full = us(j, "cwsr_restore_us", d.hws.cwsr_restore_full);
    d.hws.nccl_occupancy = j.value("nccl_occupancy", d.hws.nccl_occupancy);
}

void apply_daemon_keys(const nlohmann::json& j, DaemonParams& d) {
    d.enabled = j.value("enabled", d.enabled);
    if (j.contains("order")) {
        const auto o = j.at("order").get<std::string>();
        if (o == "before-doorbell")
            d.policy.order = policy::SuspendOrder::kBeforeDoorbell;
        else if (o == "after-doorbell")
            d.policy.order = policy::SuspendOrder::kAfterDoorbell;
        else
            throw std::runtime_error("order must be before-doorbell or after-doorbell");
    }
    d.poll_interval = us(j, "poll_interval_us", d.poll_interval);
    d.idle_poll = ms(j, "idle_poll_ms", d.idle_poll);
    d.hold_timeout = us(j, "hold_timeout_us", d.hold_timeout);
    d.wake_latency = us(j, "wake_latency_us", d.wake_latency);
    d.split_calls = j.value("split_calls", d.split_calls);
    auto& p = d.policy;
    p.hysteresis_min =
        std::chrono::nanoseconds(us(j, "hysteresis_min_us", p.hysteresis_min.count()));
    p.hysteresis_initial =
        std::chrono::nanoseconds(us(j, "hysteresis_initial_us", p.hysteresis_initial.count()));
    p.hysteresis_max =
        std::chrono::nanoseconds(us(j, "hysteresis_max_us", p.hysteresis_max.count()));
    p.max_continuous_suspend = std::chrono::nanoseconds(
        ms(j, "max_continuous_suspend_ms", p.max_continuous_suspend.count()));
    p.min_low_share = j.value("min_low_share", p.min_low_share);
    p.max_continuous_confine = std::chrono::nanoseconds(
        ms(j, "max_continuous_confine_ms", p.max_continuous_confine.count()));
    if (j.contains("cu_demand")) {
        // As amdqpd.conf's [policy] cu_demand: level (name or 0-15) -> share.
        const auto& t = j.at("cu_demand");
        if (!t.is_object())
            throw std::runtime_error("cu_demand must be an object of level: share");
        for (const auto& [key, v] : t.items()) {
            const int level = key == "high"     ? 12
                              : key == "normal" ? 7
                              : key == "low"    ? 2
                                                : parse_level_number(key);
            if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1)
                throw std::runtime_error("cu_demand." + key + " must be a number in [0, 1]");
            p.cu_demand[static_cast<std::size_t>(level)] = v.get<double>();
        }
    }
}

Scenario parse_scenario(const nlohmann::json& j, const std::string& base_dir) {
    check_keys(j, {"duration_s", "warmup_s", "devices", "workloads", "daemon"}, "scenario");
    Scenario sc;
    sc.duration = static_cast<Ns>(j.value("duration_s", 30.0) * 1e9);
    sc.warmup = static_cast<Ns>(j.value("warmup_s", 1.0) * 1e9);
    for (const auto& d : j.at("devices")) {
        check_keys(d,
                   {"gpu", "model", "compute_fraction", "slice_us", "switch_us", "yield",
                    "dry_hold_us", "corun_rate", "unmap_us", "map_us", "cwsr_save_us",
                    "cwsr_restore_us", "nccl_occupancy"},
                   "device");
        DeviceParams p;
        apply_device_keys(d, p);
        sc.devices[d.value("gpu", 0u)] = p;
    }
    auto resolve = [&](const std::string& p) {
        const std::filesystem::path path(p);
        return path.is_absolute() ? p : (std::filesystem::path(base_dir) / path).string();
    };
    for (const auto& w : j.at("workloads")) {
        check_keys(w,
                   {"name", "priority", "timeline", "timelines", "gpus", "rate_per_s",
                    "first_arrival_ms", "occupancy", "cu_fraction", "duration_scale",
                    "host_overhead_us", "group", "collectives"},
                   "workload");
        WorkloadSpec s;
        s.name = w.value("name", std::string{});
        if (s.name.empty())
            s.name = std::string("w").append(std::to_string(sc.workloads.size()));
        s.priority = w.value("priority", 7);
        std::vector<std::string> files;
        if (w.contains("timeline"))
            files.push_back(w.at("timeline").get<std::string>());
        if (w.contains("timelines"))
            files = w.at("timelines").get<std::vector<std::string>>();
        const double scale = w.value("duration_scale", 1.0);
        for (const auto& f : files)
            s.ranks.push_back(scale_durations(load_timeline_json(resolve(f)), scale));
        if (w.contains("gpus"))
            s.gpus = w.at("gpus").get<std::vector<std::uint32_t>>();
        s.rate_per_s = w.value("rate_per_s", 0.0);
        s.first_arrival = ms(w, "first_arrival_ms", 0);
        s.occupancy = w.value("occupancy", 1.0);
        s.cu_fraction = w.value("cu_fraction", 1.0);
        s.host_overhead = us(w, "host_overhead_us", 0);
        s.group = w.value("group", std::string{});
        const auto coll = w.value("collectives", std::string("ring"));
        if (coll == "ring")
            s.collectives = Collectives::kRing;
        else if (coll == "arrival")
            s.collectives = Collectives::kArrival;
        else
            throw std::runtime_error("workload " + s.name +
                                     ": collectives must be ring or arrival");
        sc.workloads.push_back(std::move(s));
    }
    if (j.contains("daemon")) {
        check_keys(j.at("daemon"),
                   {"enabled", "order", "poll_interval_us", "idle_poll_ms", "hold_timeout_us",
                    "wake_latency_us", "split_calls", "hysteresis_min_us", "hysteresis_initial_us",
                    "hysteresis_max_us", "max_continuous_suspend_ms", "min_low_share",
                    "max_continuous_confine_ms", "cu_demand"},
                   "daemon");
        apply_daemon_keys(j.at("daemon"), sc.daemon);
    }
    return sc;
}

Scenario load_scenario(const std::string& path) {
    const auto base = std::filesystem::path(path).parent_path().string();
    nlohmann::json j;
    try {
        if (path.ends_with(".toml")) {
            j = from_toml(toml::parse_file(path));
        } else {
            std::ifstream f(path);
            if (!f)
                throw std::runtime_error("cannot open");
            j = nlohmann::json::parse(f);
        }
        return parse_scenario(j, base);
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
}

}  // namespace amdqp::sim
