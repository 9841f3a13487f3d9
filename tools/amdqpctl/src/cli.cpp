// SPDX-License-Identifier: MIT
#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <set>

#include "cmd_run.hpp"
#include "commands.hpp"
#include "exit_status.hpp"

namespace amdqpctl {

namespace {

const char* const exit_codes_footer =
    "Exit status: 0 ok, 1 error, 2 usage, 3 amdqp not available (no /dev/amdqp: load the "
    "module), 4 permission denied; run: the command's own status, 126 when it cannot be "
    "executed, 127 when it is not found. See amdqpctl(1).";

// Options that a repeated flag fills, one value per flag.
template <typename T>
CLI::Option* repeatable(CLI::App* app, const std::string& name, std::vector<T>& into,
                        const std::string& help) {
    return app->add_option(name, into, help)->allow_extra_args(false);
}

}  // namespace

RunSplit split_run(const std::vector<std::string>& args) {
    RunSplit out;
    std::size_t i = 1;
    // The verb is the first word that is not an option (global options take
    // no values).
    while (i < args.size() && args[i].starts_with("-"))
        i++;
    if (i >= args.size() || args[i] != "run") {
        out.cli = args;
        return out;
    }
    static const std::set<std::string> with_value = {"-p", "--priority", "-g", "--group"};
    std::size_t j = i + 1;
    while (j < args.size()) {
        if (args[j] == "--") {
            out.cli.assign(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(j));
            out.command.assign(args.begin() + static_cast<std::ptrdiff_t>(j) + 1, args.end());
            return out;
        }
        if (!args[j].starts_with("-") || args[j] == "-")
            break;
        j += with_value.contains(args[j]) ? 2 : 1;
    }
    j = std::min(j, args.size());
    out.cli.assign(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(j));
    out.command.assign(args.begin() + static_cast<std::ptrdiff_t>(j), args.end());
    return out;
}

int run_cli(const std::vector<std::string>& args, Context& ctx, const PreloadSearch& where,
            const std::string& version) {
    CLI::App app{
        "amdqpctl: list, prioritise, suspend and resume AMD GPU hardware queues through "
        "/dev/amdqp (amdqp.ko), or through the cooperative fallback of tagged processes.",
        "amdqpctl"};
    app.require_subcommand(1);
    app.footer(exit_codes_footer);
    app.set_version_flag("--version", "amdqpctl " + version);

    ListOptions list_opt;
    auto* list = app.add_subcommand("list", "List GPU queues: amdqp's and tagged processes'.");
    list->add_flag("--json", list_opt.json, "One JSON array of queue objects");
    repeatable(list, "--pid", list_opt.pids, "Only this process (repeatable)")->type_name("PID");
    repeatable(list, "--gpu", list_opt.gpus, "Only this GPU id (repeatable)")->type_name("GPU");
    list->footer(
        "Columns: pid, command name, container (or cgroup), GPU id, queue id, ring base VA, "
        "priority, state, time spent suspended, mechanism (amdqp: amdqp.ko controls it; coop: "
        "only the cooperative fallback; none). Without /dev/amdqp only activity pages are "
        "shown; with neither, exit status 3.");

    RunOptions run_opt;
    auto* run = app.add_subcommand(
        "run", "Run a command with its GPU queues tagged at a priority (like nice(1)).");
    run->add_option("-p,--priority", run_opt.priority,
                    "high (12), normal (7), low (2) or 0..15; default normal")
        ->type_name("LEVEL");
    run->add_option("-g,--group", run_opt.group,
                    "Tensor-parallel group name (AMDQP_GROUP): one unit for the policy")
        ->type_name("NAME");
    run->add_flag("--stream-priority", run_opt.stream_priority,
                  "Tag each queue by its HSA queue (HIP stream) priority "
                  "(AMDQP_STREAM_PRIORITY=1)");
    run->footer(
        "Forms: amdqpctl run [--priority LEVEL] [--group NAME] [--] COMMAND [ARGS...]\n"
        "Sets AMDQP_PRIORITY (and AMDQP_GROUP), puts libamdqp-preload.so into LD_PRELOAD and "
        "HSA_TOOLS_LIB, adds libamdqp-rocprofiler.so to ROCP_TOOL_LIBRARIES when that is already "
        "set, then executes "
        "COMMAND in place of amdqpctl: "
        "stdin, stdout, stderr, signals and the exit status are COMMAND's. Works without "
        "/dev/amdqp (the tagging layer says so in one line; AMDQP_QUIET=1 silences it). "
        "Exit status: COMMAND's; 126 if it cannot be executed, 127 if not found.");

    PriorityOptions prio_opt;
    auto* prio = app.add_subcommand("priority", "Change the priority of existing GPU queues.");
    prio->add_option("args", prio_opt.args, "PID LEVEL, or LEVEL with --queue/--cgroup")
        ->required()
        ->type_name("[PID] LEVEL");
    repeatable(prio, "--queue", prio_opt.queues,
               "A queue: PID:GPU:QUEUE or PID@0xRINGVA (repeatable)")
        ->type_name("REF");
    prio->add_option("--cgroup", prio_opt.cgroup,
                     "Every queue of the processes in this cgroup and below it (a path under "
                     "/sys/fs/cgroup, or as /proc/PID/cgroup shows it)")
        ->type_name("PATH");
    prio->add_flag("--json", prio_opt.json, "One JSON array of the changes");
    prio->footer(
        "Forms: amdqpctl priority PID LEVEL | --queue REF LEVEL | --cgroup PATH LEVEL\n"
        "LEVEL: high (12), normal (7), low (2) or 0..15. A priority above the queue's ceiling "
        "(amdqpctl ceiling) or changing another user's queues needs CAP_SYS_NICE. Queues made "
        "later keep their tagged priority; only queues amdqp.ko controls can be changed.");

    CeilingOptions ceil_opt;
    auto* ceil = app.add_subcommand(
        "ceiling", "Show or change the priority ceilings the administrator grants (root).");
    ceil->add_option("action", ceil_opt.action, "set, clear, list or flush")
        ->required()
        ->type_name("ACTION");
    ceil->add_option("level", ceil_opt.level, "set: high (12), normal (7), low (2) or 0..15")
        ->type_name("LEVEL");
    repeatable(ceil, "--uid", ceil_opt.uids, "A user name or uid (repeatable)")->type_name("USER");
    repeatable(ceil, "--gid", ceil_opt.gids,
               "A group name or gid; supplementary groups match "
               "too (repeatable)")
        ->type_name("GROUP");
    repeatable(ceil, "--cgroup", ceil_opt.cgroups,
               "A cgroup v2 (a path under /sys/fs/cgroup, as /proc/PID/cgroup shows it, or its "
               "numeric id) and everything below it (repeatable)")
        ->type_name("PATH");
    ceil->add_flag("--json", ceil_opt.json, "JSON output");
    ceil->footer(
        "Forms: amdqpctl ceiling set --uid USER|--gid GROUP|--cgroup PATH LEVEL | clear --uid.. | "
        "list | flush\n"
        "A queue's priority is at most the highest level among the entries matching its "
        "owner's uid, groups and cgroup when it was created, else the module's default_ceiling "
        "(normal); changes re-clamp every queue at once. Needs CAP_SYS_ADMIN; the table is lost "
        "when amdqp.ko unloads.");

    HoldOptions sus_opt;
    auto* sus = app.add_subcommand(
        "suspend", "Take GPU queues off the hardware for as long as this command runs.");
    auto add_hold_options = [&](CLI::App* sub, HoldOptions& o) {
        sub->add_option("pids", o.pids, "Processes whose queues to act on")->type_name("PID");
        repeatable(sub, "--queue", o.queues, "A queue: PID:GPU:QUEUE or PID@0xRINGVA (repeatable)")
            ->type_name("REF");
        sub->add_option("--below", o.below,
                        "Every queue with a priority below LEVEL (high, normal, low, 0..15, or "
                        "all)")
            ->type_name("LEVEL");
        repeatable(sub, "--gpu", o.gpus, "With --below: only this GPU id (repeatable; default all)")
            ->type_name("GPU");
        sub->add_option("--ack-timeout", o.ack_timeout,
                        "Seconds to wait for a cooperative process to acknowledge (default 5)")
            ->type_name("SECONDS");
        sub->add_flag("--json", o.json, "One JSON object on one line");
    };
    add_hold_options(sus, sus_opt);
    sus->add_option("--for", sus_opt.for_seconds,
                    "Release after SECONDS instead of waiting for SIGINT/SIGTERM")
        ->type_name("SECONDS");
    sus->add_option("--lease", sus_opt.lease,
                    "Cooperative processes resume on their own when not renewed for SECONDS "
                    "(renewed every third; default 2)")
        ->type_name("SECONDS");
    sus->add_option("--grace-us", sus_opt.grace_us,
                    "Microseconds running waves may go on before they are saved (0: backend "
                    "default; capped at 255)")
        ->type_name("US");
    sus->footer(
        "Forms: amdqpctl suspend PID... | --queue REF... | --below LEVEL [--gpu G]... "
        "[--for SECONDS]\n"
        "Prints what it suspended, then holds it until SIGINT, SIGTERM or SIGHUP (or --for), "
        "releases it and exits 0. Queues under amdqp.ko are held by this command's /dev/amdqp "
        "descriptor (the kernel releases them even if it is killed); processes under the "
        "cooperative fallback are asked through their activity page, asked to resume when it "
        "stops, and resume on their own within --lease seconds if it is killed or stopped.");

    HoldOptions res_opt;
    auto* res = app.add_subcommand(
        "resume", "Put queues back: asks cooperative processes to resume, reports amdqp holds.");
    add_hold_options(res, res_opt);
    res->footer(
        "Forms: amdqpctl resume PID... | --queue REF... | --below LEVEL [--gpu G]...\n"
        "A cooperative suspension (activity page) is lifted at once. An amdqp.ko suspension "
        "belongs to the /dev/amdqp descriptor that made it and ends when its holder (amdqpctl "
        "suspend, amdqpd) releases it or exits: resume names such holds and exits 1.");

    ConfineOptions con_opt;
    auto* con = app.add_subcommand(
        "confine",
        "Restrict the GPU queues below a priority to some CUs for as long as this command runs.");
    con->add_option("--below", con_opt.below,
                    "Every queue with a priority below LEVEL (high, normal, low, 0..15)")
        ->type_name("LEVEL")
        ->required();
    repeatable(con, "--gpu", con_opt.gpus,
               "Only this GPU id (repeatable; default every GPU that can be confined)")
        ->type_name("GPU");
    con->add_option("--cus", con_opt.cus, "Keep N CUs of every XCC (the first N, see --first-cu)")
        ->type_name("N");
    con->add_option("--first-cu", con_opt.first_cu, "With --cus: the first CU kept (default 0)")
        ->type_name("CU");
    repeatable(con, "--mask", con_opt.masks,
               "Or the mask itself: one 32-bit word per flag, XCC 0's words first, as amdqp "
               "ioctl.rst says; the same for every GPU named")
        ->type_name("WORD");
    con->add_option("--for", con_opt.for_seconds,
                    "Release after SECONDS instead of waiting for SIGINT/SIGTERM")
        ->type_name("SECONDS");
    con->add_option("--grace-us", con_opt.grace_us,
                    "Microseconds running waves may go on before they are saved (0: backend "
                    "default; capped at 255)")
        ->type_name("US");
    con->add_flag("--json", con_opt.json, "One JSON object on one line");
    con->footer(
        "Forms: amdqpctl confine --below LEVEL [--gpu G]... (--cus N [--first-cu F] | --mask "
        "WORD...) [--for SECONDS]\n"
        "The shrinking sibling of suspend --below: the queues keep running, on the CUs given "
        "(ANDed with any CU mask their owner set), and get their own mask back when it stops. "
        "Prints what it confined, then holds it until SIGINT, SIGTERM or SIGHUP (or --for), "
        "releases it and exits 0. Needs amdqp.ko ABI 1.3 and a GPU whose backend controls CU "
        "masks (the sim today).");

    WatchOptions watch_opt;
    auto* watch = app.add_subcommand("watch", "Stream amdqp events until interrupted.");
    watch->add_flag("--json", watch_opt.json, "One JSON object per line, flushed per line");
    repeatable(watch, "--type", watch_opt.types,
               "Only this event type (repeatable): queue_created, queue_destroyed, process_exit, "
               "gpu_reset, preempt_failed, watchdog, device_added, device_removed, priority")
        ->type_name("TYPE");
    watch->add_option("--count", watch_opt.count, "Exit after N events")->type_name("N");
    watch->add_option("--for", watch_opt.for_seconds, "Exit after SECONDS")->type_name("SECONDS");

    StatsOptions stats_opt;
    auto* stats = app.add_subcommand("stats", "Show per-device counters.");
    stats->add_flag("--json", stats_opt.json, "One JSON object");

    StatusOptions status_opt;
    auto* status = app.add_subcommand(
        "status",
        "Show whether amdqp is usable: module, ABI, backends, devices and the mechanism each "
        "uses, tagged processes, daemon.");
    status->add_flag("--json", status_opt.json, "One JSON object");
    status->footer(
        "amdqpd's state (suspend level per GPU, groups, counters) is asked over its socket "
        "(AMDQP_RUNTIME_DIR, default /run/amdqpd, /amdqpd.sock; the folder must be root's or "
        "yours and writable by its owner only): running, not running or not installed. Other "
        "users' processes are shown to root (or CAP_SYS_ADMIN) only.\n"
        "Exit status: 0 when /dev/amdqp is usable, else 3 (or 4), report printed "
        "either way; never an error for the daemon.");

    // CLI11 would call an unknown verb a missing one.
    for (std::size_t i = 1; i < args.size(); i++) {
        if (args[i].starts_with("-"))
            continue;
        static const std::set<std::string> verbs = {"list",    "run",    "priority", "suspend",
                                                    "resume",  "watch",  "stats",    "status",
                                                    "ceiling", "confine"};
        if (!verbs.contains(args[i])) {
            ctx.err << "amdqpctl: unknown verb '" << args[i]
                    << "': one of list, run, priority, suspend, resume, watch, stats, status, "
                       "ceiling, confine (see amdqpctl --help)\n";
            return exit_usage;
        }
        break;
    }

    const RunSplit split = split_run(args);
    std::vector<const char*> argv;
    for (const auto& a : split.cli)
        argv.push_back(a.c_str());
    try {
        app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e, ctx.out, ctx.err);
        return code == 0 ? exit_ok : exit_usage;
    }

    try {
        if (list->parsed())
            return cmd_list(ctx, list_opt);
        if (run->parsed()) {
            run_opt.command = split.command;
            return cmd_run(ctx, run_opt, where);
        }
        if (prio->parsed())
            return cmd_priority(ctx, prio_opt);
        if (sus->parsed())
            return cmd_suspend(ctx, sus_opt);
        if (res->parsed())
            return cmd_resume(ctx, res_opt);
        if (con->parsed())
            return cmd_confine(ctx, con_opt);
        if (watch->parsed())
            return cmd_watch(ctx, watch_opt);
        if (stats->parsed())
            return cmd_stats(ctx, stats_opt);
        if (status->parsed())
            return cmd_status(ctx, status_opt);
        if (ceil->parsed())
            return cmd_ceiling(ctx, ceil_opt);
    } catch (const UsageError& e) {
        std::string verb;
        for (const auto* sub : app.get_subcommands())
            verb = sub->get_name();
        ctx.err << "amdqpctl: " << e.what() << " (see amdqpctl " << verb << " --help)\n";
        return e.status();
    } catch (const CtlError& e) {
        ctx.err << "amdqpctl: " << e.what() << '\n';
        return e.status();
    } catch (const amdqp::Error& e) {
        ctx.err << "amdqpctl: " << e.what() << '\n';
        return exit_status_for(e.code());
    } catch (const std::exception& e) {
        ctx.err << "amdqpctl: " << e.what() << '\n';
        return exit_error;
    }
    return exit_usage;
}

}  // namespace amdqpctl
