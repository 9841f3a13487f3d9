// SPDX-License-Identifier: MIT
// Where the completion of a queue's packets is learned: the read index the
// packet processor (sim executor or thread backend) publishes in the control
// page. The sim never touches user signals, so completion signals are
// decremented by whoever looks at them (signal.h), by comparing a packet's
// index with this read index.
#pragma once

#include <hsa/hsa.h>
#include <linux/amdqp_sim.h>

#include <cstdint>
#include <mutex>

namespace hsasim {

class CompletionSource {
  public:
    using Callback = void (*)(hsa_status_t status, hsa_queue_t* source, void* data);

    CompletionSource(amdqp_sim_uq_ctl* ctl, Callback callback, void* data)
        : ctl_(ctl), callback_(callback), data_(data) {}

    // Packets consumed so far. With @report_error, a queue error (ctl->error)
    // goes to the queue's creation callback, once, from the calling thread.
    uint64_t read_index(bool report_error = true);

    // The queue is going away: keep the last read index, forget the page.
    void detach();

  private:
    std::mutex mu_;
    amdqp_sim_uq_ctl* ctl_;
    uint64_t frozen_ = 0;
    Callback callback_;
    void* data_;
    bool error_reported_ = false;
};

}  // namespace hsasim
