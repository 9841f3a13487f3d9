// SPDX-License-Identifier: MIT
//
// Builders of the messages libamdqp's errors carry. Each says what failed
// and what to do about it.
#ifndef AMDQP_SRC_ERRORS_H
#define AMDQP_SRC_ERRORS_H

#include <string>

#include <amdqp/amdqp.hpp>

namespace amdqp::detail {

// open(2) of the device failed with errno @err.
Error open_error(const std::string& path, int err);
// An ioctl of the device node failed as a whole; @what names the operation.
Error call_error(const std::string& what, int err);
// strerror(3) that is thread safe.
std::string errno_text(int err);

}  // namespace amdqp::detail

#endif  // AMDQP_SRC_ERRORS_H
