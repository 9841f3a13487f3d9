// SPDX-License-Identifier: MIT
#ifndef AMDQPCTL_CMD_RUN_HPP
#define AMDQPCTL_CMD_RUN_HPP

#include "context.hpp"
#include "run_plan.hpp"

namespace amdqpctl {

// Replaces amdqpctl with the command, tagged (like nice(1), so that stdin,
// stdout, stderr, signals and the exit status are the command's own).
// Returns only when the command cannot be executed: 127 (not found) or 126.
int cmd_run(Context& ctx, const RunOptions& opt, const PreloadSearch& where);

}  // namespace amdqpctl

#endif  // AMDQPCTL_CMD_RUN_HPP
