// SPDX-License-Identifier: MIT
#include "cmd_run.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "exit_status.hpp"

namespace amdqpctl {

int cmd_run(Context& ctx, const RunOptions& opt, const PreloadSearch& where) {
    const EnvLookup env = [](const char* name) -> const char* { return std::getenv(name); };
    const PreloadFound preload = find_preload(
        env, where, [](const std::string& p) { return ::access(p.c_str(), R_OK) == 0; });
    const RunPlan plan = plan_run(opt, env, preload);
    if (!plan.warning.empty())
        ctx.err << plan.warning << '\n';
    for (const auto& [name, value] : plan.env)
        if (::setenv(name.c_str(), value.c_str(), 1) != 0)
            throw CtlError(exit_error, "run: cannot set " + name + ": " + std::strerror(errno));

    std::vector<char*> argv;
    for (const auto& a : plan.argv)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ctx.out.flush();
    ctx.err.flush();
    ::execvp(argv[0], argv.data());
    const int err = errno;
    ctx.err << "amdqpctl: run: " << plan.argv.front() << ": "
            << (err == ENOENT ? "command not found" : std::strerror(err)) << '\n';
    return err == ENOENT ? exit_not_found : exit_cannot_execute;
}

}  // namespace amdqpctl
