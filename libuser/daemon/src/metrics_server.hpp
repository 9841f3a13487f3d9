// SPDX-License-Identifier: MIT
//
// Serves Metrics::render() over HTTP (GET /metrics) on a TCP address or a
// unix socket, from a thread of its own so that a slow scraper never
// delays the control loop.
#ifndef AMDQPD_METRICS_SERVER_HPP
#define AMDQPD_METRICS_SERVER_HPP

#include <atomic>
#include <string>
#include <thread>

#include "metrics.hpp"

namespace amdqp::daemon {

class MetricsServer {
  public:
    // @address: "HOST:PORT" (IPv4 or [IPv6]) or "unix:PATH". Throws
    // std::runtime_error when it cannot listen.
    MetricsServer(const std::string& address, const Metrics& metrics);
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    // The address really bound (port 0 gives the kernel's choice).
    const std::string& address() const { return bound_; }

  private:
    void serve();

    const Metrics& metrics_;
    int listen_fd_ = -1;
    int stop_pipe_[2] = {-1, -1};
    std::string bound_;
    std::string unix_path_;
    std::thread thread_;
};

}  // namespace amdqp::daemon

#endif
