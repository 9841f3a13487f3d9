// SPDX-License-Identifier: MIT
//
// The command line: verbs, options, --help texts, and the mapping of
// failures to one line on stderr and an exit status.
#ifndef AMDQPCTL_CLI_HPP
#define AMDQPCTL_CLI_HPP

#include <string>
#include <vector>

#include "context.hpp"
#include "run_plan.hpp"

namespace amdqpctl {

// args[0] is the program name. Returns the exit status (`run` only returns
// when the command could not be started).
int run_cli(const std::vector<std::string>& args, Context& ctx, const PreloadSearch& where,
            const std::string& version);

// `run`'s own options and its command, split where the command starts
// (at "--", or at the first word that is not one of run's options), so
// that the command's options are never taken for amdqpctl's.
struct RunSplit {
    std::vector<std::string> cli;      // up to, not including, the command
    std::vector<std::string> command;  // empty when there is none
};
RunSplit split_run(const std::vector<std::string>& args);

}  // namespace amdqpctl

#endif  // AMDQPCTL_CLI_HPP
