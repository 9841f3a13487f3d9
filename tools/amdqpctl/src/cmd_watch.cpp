// SPDX-License-Identifier: MIT
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "exit_status.hpp"
#include "inventory.hpp"
#include "json_util.hpp"
#include "names.hpp"
#include "process_info.hpp"

namespace amdqpctl {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::uint64_t parse_types(const std::vector<std::string>& names) {
    if (names.empty())
        return AMDQP_EVENT_MASK_ALL;
    std::uint64_t mask = 0;
    for (const auto& n : names) {
        bool known = false;
        for (std::uint32_t t = 0; t <= AMDQP_EVENT_MAX; t++) {
            if (n == amdqp::event_type_name(t)) {
                mask |= 1ULL << t;
                known = true;
            }
        }
        if (!known) {
            std::string all;
            for (std::uint32_t t = 0; t <= AMDQP_EVENT_MAX; t++)
                all += std::string(t ? ", " : "") + amdqp::event_type_name(t);
            throw UsageError("unknown event type '" + n + "': one of " + all);
        }
    }
    return mask;
}

// What the type-specific @data means, as a named JSON field and as words.
void describe(const amdqp::Event& e, json& obj, std::string& words) {
    switch (e.type) {
        case AMDQP_EVENT_OVERFLOW:
            obj["lost"] = e.data;
            words = "lost " + std::to_string(e.data) + " event(s)";
            break;
        case AMDQP_EVENT_QUEUE_CREATED:
        case AMDQP_EVENT_PRIORITY:
            obj["priority"] = e.data;
            words = "priority " + priority_label(static_cast<std::uint32_t>(e.data));
            break;
        case AMDQP_EVENT_WATCHDOG:
            obj["suspended_ns"] = e.data;
            words = "resumed by the watchdog after " + seconds(e.data);
            break;
        case AMDQP_EVENT_CONFINE_WATCHDOG:
            obj["confined_ns"] = e.data;
            words = "CU-mask confinement lifted by the watchdog after " + seconds(e.data);
            break;
        case AMDQP_EVENT_DEVICE_ADDED:
            obj["sched_mode"] = sched_mode_name(static_cast<std::uint32_t>(e.data));
            words = "sched " + sched_mode_name(static_cast<std::uint32_t>(e.data));
            break;
        default:
            break;
    }
    if (e.error) {
        const std::string err = std::strerror(-e.error);
        words += (words.empty() ? "" : ", ") + std::string("error: ") + err;
    }
}

void print_event(const Context& ctx, const amdqp::Event& e, bool as_json) {
    const std::string comm = e.pid ? read_process_info(ctx.proc_root, e.pid).comm : "";
    json obj = {{"type", amdqp::event_type_name(e.type)},
                {"timestamp_ns", e.timestamp_ns},
                {"pid", e.pid ? json(e.pid) : json(nullptr)},
                {"comm", or_null(comm)},
                {"gpu", e.gpu_id ? json(e.gpu_id) : json(nullptr)},
                {"queue_id", e.gpu_id ? json(e.queue_id) : json(nullptr)},
                {"error", e.error},
                {"data", e.data}};
    std::string words;
    describe(e, obj, words);
    if (as_json) {
        ctx.out << obj.dump() << '\n';
    } else {
        char ts[32];
        std::snprintf(ts, sizeof(ts), "%llu.%06llu",
                      static_cast<unsigned long long>(e.timestamp_ns / 1000000000),
                      static_cast<unsigned long long>(e.timestamp_ns / 1000 % 1000000));
        ctx.out << ts << ' ' << amdqp::event_type_name(e.type);
        if (e.pid)
            ctx.out << " pid " << e.pid << (comm.empty() ? "" : " (" + comm + ")");
        if (e.gpu_id)
            ctx.out << " gpu " << e.gpu_id;
        if (e.gpu_id && e.type != AMDQP_EVENT_DEVICE_ADDED &&
            e.type != AMDQP_EVENT_DEVICE_REMOVED && e.type != AMDQP_EVENT_GPU_RESET)
            ctx.out << " queue " << e.queue_id;
        if (!words.empty())
            ctx.out << ": " << words;
        ctx.out << '\n';
    }
    // Whoever reads a pipe sees each event when it happens.
    ctx.out.flush();
}

}  // namespace

int cmd_watch(Context& ctx, const WatchOptions& opt) {
    const std::uint64_t mask = parse_types(opt.types);
    if (opt.for_seconds && !(*opt.for_seconds >= 0 && std::isfinite(*opt.for_seconds)))
        throw UsageError("watch: --for needs a number of seconds >= 0");
    if (opt.count && *opt.count == 0)
        throw UsageError("watch: --count needs a number > 0");
    ctx.waiter.arm();
    Sources src = open_sources(ctx);
    if (!src.device)
        src.throw_device_error();
    amdqp::EventReader reader = src.device->events(mask);

    const auto deadline =
        opt.for_seconds
            ? std::optional(Clock::now() + std::chrono::milliseconds(static_cast<long long>(
                                               std::ceil(*opt.for_seconds * 1000))))
            : std::nullopt;
    unsigned long seen = 0;
    for (;;) {
        int timeout_ms = -1;
        if (deadline) {
            auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
            timeout_ms = static_cast<int>(std::max<long long>(0, left.count()));
        }
        WaitResult w = ctx.waiter.wait(reader.fd(), timeout_ms);
        if (w != WaitResult::ready)
            return exit_ok;
        for (const auto& e : reader.read_some()) {
            if (e.type != AMDQP_EVENT_OVERFLOW &&
                (e.type > AMDQP_EVENT_MAX || !(mask & (1ULL << e.type))))
                continue;
            print_event(ctx, e, opt.json);
            if (opt.count && ++seen >= *opt.count)
                return exit_ok;
        }
    }
}

}  // namespace amdqpctl
