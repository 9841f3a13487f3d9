// SPDX-License-Identifier: MIT
#include "exit_status.hpp"

namespace amdqpctl {

int exit_status_for(amdqp::errc code) noexcept {
    switch (code) {
        case amdqp::errc::no_module:
            return exit_unavailable;
        case amdqp::errc::permission:
            return exit_permission;
        case amdqp::errc::no_gpu:
        case amdqp::errc::no_queue:
        case amdqp::errc::invalid:
        case amdqp::errc::abi_mismatch:
        case amdqp::errc::busy:
        case amdqp::errc::system:
            return exit_error;
    }
    return exit_error;
}

}  // namespace amdqpctl
