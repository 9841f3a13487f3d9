// SPDX-License-Identifier: MIT
//
// Test doubles of the tagging layer's seams (amdqp.ko, the update ioctl)
// and a catcher of what the layer prints.
#ifndef AMDQP_PRELOAD_TESTS_PRELOAD_TEST_UTIL_HPP
#define AMDQP_PRELOAD_TESTS_PRELOAD_TEST_UTIL_HPP

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "kernel_link.hpp"
#include "queue_control.hpp"

namespace amdqp_test {

class FakeLink : public amdqp::preload::KernelLink {
  public:
    struct Call {
        pid_t pid;
        std::uint64_t ring_va;
        int priority;
    };
    // What every registration answers; per ring VA in @by_ring.
    amdqp::preload::RegisterResult answer;
    std::map<std::uint64_t, amdqp::preload::RegisterResult> by_ring;
    std::vector<Call> calls;

    FakeLink() {
        answer.status = amdqp::preload::RegisterResult::unavailable;
        answer.message = "amdqp: /fake/amdqp not found: load the module";
    }
    amdqp::preload::RegisterResult register_queue(pid_t pid, std::uint64_t ring_va,
                                                  int priority) override {
        calls.push_back({pid, ring_va, priority});
        auto it = by_ring.find(ring_va);
        return it != by_ring.end() ? it->second : answer;
    }
};

class FakeControl : public amdqp::preload::QueueControl {
  public:
    struct Call {
        amdqp::preload::KernelQueueId q;
        bool on;
    };
    int rc = 0;
    std::vector<Call> calls;
    int set_active(const amdqp::preload::KernelQueueId& q, bool on) override {
        calls.push_back({q, on});
        return rc;
    }
};

// Collects what is written to fd 2 while it lives.
class StderrCatcher {
  public:
    StderrCatcher() {
        fflush(stderr);
        saved_ = dup(2);
        if (pipe2(pipe_, O_NONBLOCK) == 0)
            dup2(pipe_[1], 2);
    }
    ~StderrCatcher() { restore(); }
    std::string text() {
        restore();
        return text_;
    }

  private:
    void restore() {
        if (saved_ < 0)
            return;
        dup2(saved_, 2);
        ::close(saved_);
        saved_ = -1;
        ::close(pipe_[1]);
        char buf[4096];
        ssize_t n;
        while ((n = ::read(pipe_[0], buf, sizeof(buf))) > 0)
            text_.append(buf, static_cast<std::size_t>(n));
        ::close(pipe_[0]);
    }
    int saved_ = -1;
    int pipe_[2] = {-1, -1};
    std::string text_;
};

inline int count_lines(const std::string& s) {
    int n = 0;
    for (char c : s)
        n += c == '\n';
    return n;
}

}  // namespace amdqp_test

#endif  // AMDQP_PRELOAD_TESTS_PRELOAD_TEST_UTIL_HPP
