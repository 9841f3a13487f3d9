// SPDX-License-Identifier: MIT
//
// amdqpctl ceiling: the administrator's table of priority ceilings in
// amdqp.ko (AMDQP_IOC_CEILINGS): which uid, gid or cgroup may reach which
// level, whatever its processes ask for.
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "exit_status.hpp"
#include "inventory.hpp"
#include "names.hpp"
#include "process_info.hpp"

namespace amdqpctl {

namespace {

const char* kind_name(std::uint32_t kind) {
    switch (kind) {
        case AMDQP_CEIL_UID:
            return "uid";
        case AMDQP_CEIL_GID:
            return "gid";
        case AMDQP_CEIL_CGROUP:
            return "cgroup";
        default:
            return "unknown";
    }
}

std::optional<std::uint64_t> parse_number(const std::string& s) {
    if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    try {
        return std::stoull(s);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::uint64_t parse_user(const std::string& s) {
    if (auto n = parse_number(s))
        return *n;
    if (const passwd* pw = ::getpwnam(s.c_str()))
        return pw->pw_uid;
    throw UsageError("unknown user '" + s + "': a user name or a uid");
}

std::uint64_t parse_group(const std::string& s) {
    if (auto n = parse_number(s))
        return *n;
    if (const group* gr = ::getgrnam(s.c_str()))
        return gr->gr_gid;
    throw UsageError("unknown group '" + s + "': a group name or a gid");
}

// A cgroup v2 id (as a number) or a cgroup: its folder's inode number.
std::uint64_t parse_cgroup(const Context& ctx, const std::string& s) {
    if (auto n = parse_number(s))
        return *n;
    const std::string folder = cgroup_folder(ctx.sys_root, s);
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw CtlError(exit_error, "cgroup " + s + ": no such cgroup (" + folder + ")");
    return st.st_ino;
}

std::vector<amdqp::Ceiling> named_entries(const Context& ctx, const CeilingOptions& opt,
                                          int level) {
    std::vector<amdqp::Ceiling> out;
    for (const auto& u : opt.uids)
        out.push_back({AMDQP_CEIL_UID, parse_user(u), level, 0});
    for (const auto& g : opt.gids)
        out.push_back({AMDQP_CEIL_GID, parse_group(g), level, 0});
    for (const auto& c : opt.cgroups)
        out.push_back({AMDQP_CEIL_CGROUP, parse_cgroup(ctx, c), level, 0});
    if (out.empty())
        throw UsageError("ceiling: name at least one --uid, --gid or --cgroup");
    return out;
}

nlohmann::json entry_json(const amdqp::Ceiling& c, bool with_level) {
    nlohmann::json j = {{"kind", kind_name(c.kind)}, {"id", c.id}};
    if (with_level)
        j["level"] = c.level;
    return j;
}

}  // namespace

int cmd_ceiling(Context& ctx, const CeilingOptions& opt) {
    const std::string& action = opt.action;
    const bool wants_level = action == "set";
    if (action != "set" && action != "clear" && action != "list" && action != "flush")
        throw UsageError("ceiling: unknown action '" + action + "': set, clear, list or flush");
    if (wants_level != opt.level.has_value())
        throw UsageError(wants_level ? "ceiling set: give the LEVEL after the identities"
                                     : "ceiling " + action + ": takes no LEVEL");
    if ((action == "list" || action == "flush") &&
        (!opt.uids.empty() || !opt.gids.empty() || !opt.cgroups.empty()))
        throw UsageError("ceiling " + action + ": takes no --uid, --gid or --cgroup");
    int level = 0;
    if (wants_level) {
        auto l = amdqp::try_parse_priority(*opt.level);
        if (!l)
            throw UsageError("unknown level '" + *opt.level +
                             "': use high (12), normal (7), low (2) or a number 0..15");
        level = *l;
    }
    std::vector<amdqp::Ceiling> entries;
    if (action == "set" || action == "clear")
        entries = named_entries(ctx, opt, level);

    Sources src = open_sources(ctx);
    if (!src.device)
        src.throw_device_error();
    amdqp::Device& dev = *src.device;

    if (action == "list") {
        const auto table = dev.ceilings();
        const auto v = dev.version();
        if (opt.json) {
            nlohmann::json j = {{"default_ceiling", v.default_ceiling},
                                {"entries", nlohmann::json::array()}};
            for (const auto& c : table)
                j["entries"].push_back(entry_json(c, true));
            ctx.out << j.dump(2) << '\n';
        } else {
            ctx.out << "default ceiling: " << priority_label(v.default_ceiling) << '\n';
            for (const auto& c : table)
                ctx.out << kind_name(c.kind) << ' ' << c.id << ": "
                        << priority_label(static_cast<std::uint32_t>(c.level)) << '\n';
        }
        return exit_ok;
    }
    if (action == "flush") {
        const std::uint32_t n = dev.flush_ceilings();
        if (opt.json)
            ctx.out << nlohmann::json{{"reclamped", n}}.dump() << '\n';
        else
            ctx.out << "ceiling table emptied; " << n << " queue(s) re-clamped\n";
        return exit_ok;
    }

    const auto res = action == "set" ? dev.set_ceilings(entries) : dev.clear_ceilings(entries);
    int status = exit_ok;
    nlohmann::json results = nlohmann::json::array();
    for (const auto& e : res.entries) {
        if (!e.ok()) {
            ctx.err << "amdqpctl: ceiling " << action << ' ' << kind_name(e.kind) << ' ' << e.id
                    << ": "
                    << (e.error == -ENOENT   ? "no such entry"
                        : e.error == -ENOSPC ? "the table is full"
                                             : "invalid entry (an id this kernel refuses?)")
                    << '\n';
            status = exit_error;
        }
        if (opt.json) {
            auto j = entry_json(e, wants_level);
            j["error"] = e.error;
            results.push_back(j);
        } else if (e.ok()) {
            ctx.out << kind_name(e.kind) << ' ' << e.id << ": "
                    << (wants_level
                            ? "ceiling " + priority_label(static_cast<std::uint32_t>(e.level))
                            : std::string("cleared"))
                    << '\n';
        }
    }
    if (opt.json)
        ctx.out << nlohmann::json{{"entries", results}, {"reclamped", res.reclamped}}.dump(2)
                << '\n';
    else
        ctx.out << res.reclamped << " queue(s) re-clamped\n";
    return status;
}

}  // namespace amdqpctl
