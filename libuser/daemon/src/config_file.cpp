// SPDX-License-Identifier: MIT
#include "config_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include <amdqp/amdqp.hpp>

namespace amdqp::daemon {

namespace {

// Collects problems with their position; parsing goes on after each, so
// one run of --check-config lists them all.
class Parser {
  public:
    explicit Parser(std::string file) : file_(std::move(file)) {}

    void problem(const toml::source_region& at, const std::string& what) {
        std::ostringstream os;
        os << file_ << ':' << (at.begin.line ? at.begin.line : 1) << ": " << what;
        problems_.push_back(os.str());
    }
    std::string where(const toml::node& n) const {
        return file_ + ":" + std::to_string(n.source().begin.line);
    }
    std::vector<std::string>& problems() { return problems_; }

    // Rejects keys of @table not in @known.
    void known_keys(const toml::table& table, const std::string& section,
                    const std::set<std::string>& known) {
        for (auto&& [key, node] : table) {
            if (!known.contains(std::string(key.str())))
                problem(key.source().begin.line ? key.source() : node.source(),
                        "unknown key '" + std::string(key.str()) + "' in " + section);
        }
    }

    // @key of @t as a table: none when absent, none and @what_else
    // reported when it is something else.
    const toml::table* table(const toml::table& t, std::string_view key,
                             const std::string& what_else) {
        const toml::node* n = t.get(key);
        if (!n)
            return nullptr;
        if (const toml::table* sub = n->as_table())
            return sub;
        problem(n->source(), what_else);
        return nullptr;
    }

    template <typename T>
    std::optional<T> get(const toml::table& t, std::string_view key, const char* type) {
        const toml::node* n = t.get(key);
        if (!n)
            return std::nullopt;
        if (auto v = n->value<T>())
            return v;
        problem(n->source(), std::string(key) + " must be " + type);
        return std::nullopt;
    }

    // A number >= 0 of @Period (the file's unit) into @out.
    template <typename Period, typename Dur>
    void duration_in(const toml::table& t, std::string_view key, Dur& out) {
        const toml::node* n = t.get(key);
        if (!n)
            return;
        std::optional<double> v = n->value<double>();
        if (!v || *v < 0) {
            problem(n->source(), std::string(key) + " must be a number >= 0");
            return;
        }
        out = std::chrono::duration_cast<Dur>(std::chrono::duration<double, Period>(*v));
    }
    // The same in @out's own unit (the key names it: _us, _ms).
    template <typename Dur>
    void duration(const toml::table& t, std::string_view key, Dur& out) {
        duration_in<typename Dur::period>(t, key, out);
    }

    void number(const toml::table& t, std::string_view key, double& out) {
        const toml::node* n = t.get(key);
        if (!n)
            return;
        if (auto v = n->value<double>())
            out = *v;
        else
            problem(n->source(), std::string(key) + " must be a number");
    }

    std::optional<int> priority(const toml::node& n, const std::string& key) {
        if (auto i = n.value<std::int64_t>()) {
            if (*i >= 0 && *i <= 15)
                return static_cast<int>(*i);
        } else if (auto s = n.value<std::string>()) {
            if (auto p = try_parse_priority(*s))
                return p;
        }
        problem(n.source(), key + " must be 0..15 or low, normal, high");
        return std::nullopt;
    }

  private:
    std::string file_;
    std::vector<std::string> problems_;
};

void parse_daemon(Parser& p, const toml::table& t, DaemonConfig& c) {
    p.known_keys(
        t, "[daemon]",
        {"runtime_dir", "device", "metrics", "queue_metrics", "log_level", "poll_interval_us",
         "idle_poll_ms", "rescan_ms", "coop_lease_ms", "group_by", "realtime_priority"});
    if (auto v = p.get<std::string>(t, "runtime_dir", "a string (a directory)"))
        c.runtime_dir = *v;
    if (auto v = p.get<std::string>(t, "device", "a string (a path)"))
        c.device = *v;
    if (auto v = p.get<std::string>(t, "metrics", "a string: \"\", HOST:PORT or unix:PATH")) {
        c.metrics = *v;
        if (!v->empty() && !v->starts_with("unix:") && v->rfind(':') == std::string::npos)
            p.problem(t.get("metrics")->source(),
                      "metrics must be \"\" (off), HOST:PORT or unix:PATH, not '" + *v + "'");
    }
    if (auto v = p.get<bool>(t, "queue_metrics", "true or false"))
        c.queue_metrics = *v;
    if (auto v = p.get<std::string>(t, "log_level", "a string")) {
        if (*v == "error" || *v == "warning" || *v == "info" || *v == "debug")
            c.log_level = *v;
        else
            p.problem(t.get("log_level")->source(),
                      "log_level must be error, warning, info or debug, not '" + *v + "'");
    }
    p.duration(t, "poll_interval_us", c.poll_interval);
    p.duration(t, "idle_poll_ms", c.idle_poll);
    p.duration(t, "rescan_ms", c.rescan);
    p.duration(t, "coop_lease_ms", c.coop_lease);
    if (auto v = p.get<std::string>(t, "group_by", "a string")) {
        if (*v == "cgroup")
            c.group_by = GroupBy::kCgroup;
        else if (*v == "none")
            c.group_by = GroupBy::kNone;
        else
            p.problem(t.get("group_by")->source(), "group_by must be cgroup or none");
    }
    if (auto v = p.get<std::int64_t>(t, "realtime_priority", "an integer")) {
        if (*v < 0 || *v > 99)
            p.problem(t.get("realtime_priority")->source(),
                      "realtime_priority must be 0 (off) or a SCHED_FIFO priority 1..99");
        else
            c.realtime_priority = static_cast<int>(*v);
    }
    auto positive = [&](const char* key, auto d) {
        if (t.get(key) && d.count() <= 0)
            p.problem(t.get(key)->source(), std::string(key) + " must be > 0");
    };
    positive("poll_interval_us", c.poll_interval);
    positive("idle_poll_ms", c.idle_poll);
    positive("rescan_ms", c.rescan);
    positive("coop_lease_ms", c.coop_lease);
}

// cu_demand = { high = 0.4, 10 = 0.25, normal = "auto" }: the share of a
// GPU that active work of a level needs (policy::Config::cu_demand), or
// "auto": what its queues' dispatches ask for (cu_demand_is_auto).
void parse_cu_demand(Parser& p, const toml::table& t, policy::Config& pc) {
    const toml::table* levels = p.table(t, "cu_demand",
                                        "cu_demand must be a table of priority = fraction or "
                                        "\"auto\", e.g. { high = 0.4 }");
    if (!levels)
        return;
    for (const auto& [key, value] : *levels) {
        const std::string name(key.str());
        const std::optional<int> level = try_parse_priority(name);
        const std::optional<double> share = value.value<double>();
        const std::optional<std::string> word = value.value<std::string>();
        if (!level) {
            p.problem(value.source(),
                      "cu_demand: '" + name + "' is not a priority (0..15 or low, normal, high)");
        } else if (word && *word == "auto") {
            pc.cu_demand_is_auto[static_cast<std::size_t>(*level)] = true;
        } else if (!share || !(*share >= 0 && *share <= 1)) {
            p.problem(value.source(),
                      "cu_demand." + name + " must be a number from 0 to 1 or \"auto\"");
        } else {
            pc.cu_demand[static_cast<std::size_t>(*level)] = *share;
        }
    }
}

// cu_demand_auto = { workgroups_per_cu = 1, min = 0, max = 1, hold_ms = 1000 }:
// how an adaptive demand is computed (policy::Config::AutoDemand).
void parse_cu_demand_auto(Parser& p, const toml::table& t, policy::Config& pc) {
    const toml::table* a = p.table(t, "cu_demand_auto",
                                   "cu_demand_auto must be a table, e.g. { workgroups_per_cu = "
                                   "2, hold_ms = 1000 }");
    if (!a)
        return;
    p.known_keys(*a, "cu_demand_auto", {"workgroups_per_cu", "min", "max", "hold_ms"});
    policy::Config::AutoDemand& d = pc.cu_demand_auto;
    if (auto v = p.get<std::int64_t>(*a, "workgroups_per_cu", "an integer")) {
        if (*v < 1 || *v > policy::kMaxWorkgroupsPerCu)
            p.problem(a->get("workgroups_per_cu")->source(),
                      "cu_demand_auto.workgroups_per_cu must be 1.." +
                          std::to_string(policy::kMaxWorkgroupsPerCu));
        else
            d.workgroups_per_cu = static_cast<std::uint32_t>(*v);
    }
    for (auto [key, out] : {std::pair{"min", &d.min}, std::pair{"max", &d.max}}) {
        const toml::node* v = a->get(key);
        if (!v)
            continue;
        const std::optional<double> f = v->value<double>();
        if (!f || !(*f >= 0 && *f <= 1))
            p.problem(v->source(),
                      std::string("cu_demand_auto.") + key + " must be a number from 0 to 1");
        else
            *out = *f;
    }
    p.duration_in<std::milli>(*a, "hold_ms", d.hold);
}

void parse_policy(Parser& p, const toml::table& t, DaemonConfig& c) {
    p.known_keys(t, "[policy]",
                 {"order", "hold_timeout_us", "hysteresis_min_ms", "hysteresis_max_ms",
                  "hysteresis_initial_ms", "hysteresis_factor", "hysteresis_quantile",
                  "hysteresis_window", "relapse_factor", "max_continuous_suspend_ms",
                  "min_low_share", "share_window_ms", "min_run_slice_ms", "guard_margin_ms",
                  "cu_demand", "cu_demand_auto", "max_continuous_confine_ms"});
    policy::Config& pc = c.policy;
    if (auto v = p.get<std::string>(t, "order", "a string")) {
        if (*v == "before-doorbell")
            pc.order = policy::SuspendOrder::kBeforeDoorbell;
        else if (*v == "after-doorbell")
            pc.order = policy::SuspendOrder::kAfterDoorbell;
        else
            p.problem(t.get("order")->source(),
                      "order must be before-doorbell or after-doorbell, not '" + *v + "'");
    }
    p.duration(t, "hold_timeout_us", c.hold_timeout);
    // The policy's knobs are nanoseconds, given in milliseconds.
    auto dur = [&](const char* key, std::chrono::nanoseconds& out) {
        p.duration_in<std::milli>(t, key, out);
    };
    dur("hysteresis_min_ms", pc.hysteresis_min);
    dur("hysteresis_max_ms", pc.hysteresis_max);
    dur("hysteresis_initial_ms", pc.hysteresis_initial);
    dur("max_continuous_suspend_ms", pc.max_continuous_suspend);
    dur("share_window_ms", pc.share_window);
    dur("min_run_slice_ms", pc.min_run_slice);
    dur("guard_margin_ms", pc.guard_margin);
    dur("max_continuous_confine_ms", pc.max_continuous_confine);
    parse_cu_demand(p, t, pc);
    parse_cu_demand_auto(p, t, pc);
    p.number(t, "hysteresis_factor", pc.hysteresis_factor);
    p.number(t, "hysteresis_quantile", pc.hysteresis_quantile);
    p.number(t, "relapse_factor", pc.relapse_factor);
    p.number(t, "min_low_share", pc.min_low_share);
    if (auto v = p.get<std::int64_t>(t, "hysteresis_window", "an integer")) {
        if (*v < 1)
            p.problem(t.get("hysteresis_window")->source(), "hysteresis_window must be >= 1");
        else
            pc.hysteresis_window = static_cast<std::size_t>(*v);
    }
}

void parse_trust(Parser& p, const toml::table& t, DaemonConfig& c) {
    p.known_keys(
        t, "[trust]",
        {"default_max_priority", "max_pages_per_uid", "max_queues_per_uid", "loop_share_pct"});
    if (const toml::node* n = t.get("default_max_priority")) {
        if (auto v = p.priority(*n, "default_max_priority")) {
            if (*v > priority_normal)
                p.problem(n->source(),
                          "default_max_priority must be normal (7) or lower: higher levels are "
                          "granted by [[rule]]s to identities");
            else
                c.default_max_priority = *v;
        }
    }
    auto count = [&](const char* key, std::size_t& out) {
        if (auto v = p.get<std::int64_t>(t, key, "an integer")) {
            if (*v < 1 || *v > 65536)
                p.problem(t.get(key)->source(), std::string(key) + " must be 1..65536");
            else
                out = static_cast<std::size_t>(*v);
        }
    };
    count("max_pages_per_uid", c.max_pages_per_uid);
    count("max_queues_per_uid", c.max_queues_per_uid);
    if (auto v = p.get<std::int64_t>(t, "loop_share_pct", "an integer")) {
        if (*v < 1 || *v > 100)
            p.problem(t.get("loop_share_pct")->source(),
                      "loop_share_pct must be 1..100 (100: no user is metered)");
        else
            c.loop_share_pct = static_cast<int>(*v);
    }
}

void parse_kubernetes(Parser& p, const toml::table& t, DaemonConfig& c) {
    p.known_keys(t, "[kubernetes]", {"api", "node_name", "refresh_ms"});
    if (auto v =
            p.get<std::string>(t, "api", "a string: \"\", http://127.0.0.1:PORT or unix:PATH")) {
        if (!v->empty() && !v->starts_with("unix:/") && !v->starts_with("http://127.0.0.1:") &&
            !v->starts_with("http://localhost:") && !v->starts_with("http://[::1]:"))
            p.problem(t.get("api")->source(),
                      "api must be \"\" (off), unix:/PATH or http://127.0.0.1:PORT (loopback "
                      "only: run kubectl proxy or use the kubelet's read-only port), not '" +
                          *v + "'");
        else
            c.kube.api = *v;
    }
    if (auto v = p.get<std::string>(t, "node_name", "a string"))
        c.kube.node_name = *v;
    p.duration(t, "refresh_ms", c.kube.refresh);
    if (t.get("refresh_ms") && c.kube.refresh.count() <= 0)
        p.problem(t.get("refresh_ms")->source(), "refresh_ms must be > 0");
}

void parse_rules(Parser& p, const toml::node& node, DaemonConfig& c) {
    const toml::array* rules = node.as_array();
    if (!rules) {
        p.problem(node.source(), "rule must be an array of tables ([[rule]])");
        return;
    }
    for (const toml::node& rn : *rules) {
        const toml::table* rt = rn.as_table();
        if (!rt) {
            p.problem(rn.source(), "each rule must be a table ([[rule]])");
            continue;
        }
        Rule r;
        r.where = p.where(rn);
        p.known_keys(*rt, "[[rule]]", {"match", "priority", "max_priority", "group"});
        const toml::table* m = rt->get_as<toml::table>("match");
        if (!m) {
            p.problem(rn.source(),
                      "a rule needs a match table (match.uid, match.gid, "
                      "match.cgroup, match.k8s_*, match.exe)");
        } else {
            p.known_keys(*m, "a rule's match",
                         {"cgroup", "uid", "gid", "exe", "k8s_priority_class", "k8s_namespace",
                          "k8s_label"});
            if (auto v = p.get<std::string>(*m, "cgroup", "a string (a glob)"))
                r.cgroup = *v;
            if (auto v = p.get<std::string>(*m, "exe", "a string (a glob)"))
                r.exe = *v;
            auto id = [&](const char* key, std::optional<std::uint32_t>& out) {
                if (auto v = p.get<std::int64_t>(*m, key, "an integer")) {
                    if (*v < 0 || *v > 0xFFFFFFFEll)
                        p.problem(m->get(key)->source(), std::string("match.") + key +
                                                             " must be a " +
                                                             (key[0] == 'u' ? "uid" : "gid"));
                    else
                        out = static_cast<std::uint32_t>(*v);
                }
            };
            id("uid", r.uid);
            id("gid", r.gid);
            if (auto v = p.get<std::string>(*m, "k8s_priority_class", "a string"))
                r.k8s_priority_class = *v;
            if (auto v = p.get<std::string>(*m, "k8s_namespace", "a string (a glob)"))
                r.k8s_namespace = *v;
            if (auto v = p.get<std::string>(*m, "k8s_label", "a string (key=value)")) {
                if (v->find('=') == std::string::npos || v->front() == '=')
                    p.problem(m->get("k8s_label")->source(),
                              "match.k8s_label must be key=value, not '" + *v + "'");
                else
                    r.k8s_label = *v;
            }
            if (r.cgroup.empty() && r.exe.empty() && !r.uid && !r.gid && !r.needs_pod() &&
                m->empty())
                p.problem(m->source(), "a rule's match must name uid, gid, cgroup, k8s_* or exe");
        }
        if (const toml::node* pn = rt->get("priority"))
            r.priority = p.priority(*pn, "priority");
        if (const toml::node* pn = rt->get("max_priority"))
            r.max_priority = p.priority(*pn, "max_priority");
        if (r.priority && r.max_priority && *r.max_priority < *r.priority)
            p.problem(rn.source(), "max_priority must not be below priority");
        if (auto v = p.get<std::string>(*rt, "group", "a string")) {
            if (v->empty() || v->size() >= 64)
                p.problem(rt->get("group")->source(), "group must be 1..63 characters");
            else
                r.group = *v;
        }
        if (!rt->get("priority") && !rt->get("max_priority") && !rt->get("group"))
            p.problem(rn.source(), "a rule must set priority, max_priority or group");
        c.rules.push_back(std::move(r));
    }
}

// A process chooses its own executable (a copy of any program in its home
// will do): a rule that grants more than the default must also name an
// identity the tenant cannot pick.
void check_grants(Parser& p, const toml::node& node, const DaemonConfig& c) {
    const toml::array* rules = node.as_array();
    if (!rules)
        return;
    for (std::size_t i = 0; i < c.rules.size() && i < rules->size(); ++i) {
        const Rule& r = c.rules[i];
        const auto ceiling = r.ceiling();
        if (!ceiling || *ceiling <= c.default_max_priority)
            continue;
        if (!r.exe.empty() && !r.uid && !r.gid && r.cgroup.empty() && !r.needs_pod())
            p.problem((*rules)[i].source(),
                      "a rule that grants above default_max_priority must match uid, gid, "
                      "cgroup or k8s_*: exe alone is chosen by the tenant");
    }
}

}  // namespace

namespace {
std::string join_lines(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& l : v)
        s += (s.empty() ? "" : "\n") + l;
    return s;
}
}  // namespace

ConfigError::ConfigError(std::vector<std::string> problems)
    : std::runtime_error(join_lines(problems)), problems_(std::move(problems)) {}

DaemonConfig parse_config(std::string_view text, const std::string& file,
                          std::chrono::milliseconds watchdog_max_suspend,
                          std::chrono::milliseconds watchdog_max_confine) {
    DaemonConfig c;
    c.policy.watchdog_max_suspend = watchdog_max_suspend;
    c.policy.watchdog_max_confine = watchdog_max_confine;
    toml::table root;
    try {
        root = toml::parse(text, file);
    } catch (const toml::parse_error& e) {
        std::ostringstream os;
        os << file << ':' << e.source().begin.line << ": " << e.description();
        throw ConfigError({os.str()});
    }
    Parser p(file);
    p.known_keys(root,
                 "the file (sections are [daemon], [policy], [trust], [kubernetes], [[rule]])",
                 {"daemon", "policy", "trust", "kubernetes", "rule"});
    if (const toml::table* t = p.table(root, "daemon", "daemon must be a table ([daemon])"))
        parse_daemon(p, *t, c);
    if (const toml::table* t = p.table(root, "policy", "policy must be a table ([policy])"))
        parse_policy(p, *t, c);
    if (const toml::table* t = p.table(root, "trust", "trust must be a table ([trust])"))
        parse_trust(p, *t, c);
    if (const toml::table* t =
            p.table(root, "kubernetes", "kubernetes must be a table ([kubernetes])"))
        parse_kubernetes(p, *t, c);
    if (const toml::node* n = root.get("rule")) {
        parse_rules(p, *n, c);
        check_grants(p, *n, c);
    }
    for (const Rule& r : c.rules)
        if (r.needs_pod() && c.kube.api.empty())
            p.problems().push_back(r.where + ": match.k8s_* needs [kubernetes] api");
    if (p.problems().empty()) {
        // Cross-knob rules: attributed to the [policy] table (or line 1).
        toml::source_region at{};
        if (const toml::node* n = root.get("policy"))
            at = n->source();
        for (const std::string& e : c.policy.validate())
            p.problem(at, e);
        if (c.hold_timeout.count() <= 0 || c.hold_timeout > c.policy.hysteresis_min)
            p.problem(at, "hold_timeout_us must be > 0 and not above hysteresis_min");
    }
    if (!p.problems().empty())
        throw ConfigError(std::move(p.problems()));
    return c;
}

DaemonConfig load_config(const std::string& path, bool must_exist,
                         std::chrono::milliseconds watchdog_max_suspend,
                         std::chrono::milliseconds watchdog_max_confine) {
    std::ifstream in(path);
    if (!in) {
        if (!must_exist && errno == ENOENT) {
            DaemonConfig c;
            c.policy.watchdog_max_suspend = watchdog_max_suspend;
            c.policy.watchdog_max_confine = watchdog_max_confine;
            if (auto errs = c.policy.validate(); !errs.empty()) {
                for (auto& e : errs)
                    e = path + ": (defaults) " + e;
                throw ConfigError(errs);
            }
            return c;
        }
        throw ConfigError({path + ":1: cannot read: " + std::strerror(errno)});
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_config(ss.str(), path, watchdog_max_suspend, watchdog_max_confine);
}

namespace {
std::chrono::milliseconds kernel_watchdog(const std::string& param,
                                          std::chrono::milliseconds fallback) {
    std::ifstream in(param);
    long long v = -1;
    if (in >> v && v >= 0)
        return v == 0 ? std::chrono::milliseconds::max() / 2 : std::chrono::milliseconds(v);
    return fallback;
}
}  // namespace

std::chrono::milliseconds kernel_watchdog_max_suspend(const std::string& param) {
    return kernel_watchdog(param, std::chrono::milliseconds(5000));
}

std::chrono::milliseconds kernel_watchdog_max_confine(const std::string& param) {
    return kernel_watchdog(param, kMaxConfineDefault);
}

}  // namespace amdqp::daemon
