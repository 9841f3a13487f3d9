// SPDX-License-Identifier: MIT
//
// The pods of this node, for rules that match a PriorityClass, namespace
// or label. amdqpd learns a process's pod from its cgroup
// (pod_uid_of_cgroup) and the pod's facts here: from the API server
// through a loopback proxy (kubectl proxy as a sidecar, holding the
// DaemonSet's service-account token, RBAC: list pods) or from the
// kubelet's read-only endpoint. Plain HTTP on loopback or a unix socket
// only: TLS and credentials stay in the proxy.
#ifndef AMDQPD_KUBE_PODS_HPP
#define AMDQPD_KUBE_PODS_HPP

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process_facts.hpp"

namespace amdqp::daemon {

// A pod's facts by its UID; never blocks (the controller's loop asks).
class PodDirectory {
  public:
    virtual ~PodDirectory();
    // nullopt while unknown: asks for a refresh, the caller tries again later.
    virtual std::optional<PodInfo> find(const std::string& pod_uid) = 0;
};

// The pods of a PodList (the API's /api/v1/pods, the kubelet's /pods).
// Throws std::runtime_error on what is not one.
std::vector<PodInfo> parse_pod_list(std::string_view json);

// GETs @path, returns the body of a 200 answer; throws std::runtime_error.
using HttpGet = std::function<std::string(const std::string& path)>;

// A minimal HTTP/1.0 GET over loopback TCP or a unix socket, for
// @api = "http://127.0.0.1:PORT[/path]" or "unix:/socket[:/path]". Bounded:
// @timeout for the whole exchange, 64 MiB of answer.
HttpGet loopback_http(const std::string& api, std::chrono::milliseconds timeout);

// The path to ask @api for: its own path if it names one (the kubelet's
// /pods), else the API's pods of @node.
std::string pods_path(const std::string& api, const std::string& node);

// Caches the node's pods; a miss refreshes the list, at most every
// @refresh, on a thread of its own (the HTTP call never blocks the loop).
class KubePods : public PodDirectory {
  public:
    // @threaded false: the refresh runs inside find() (tests).
    KubePods(HttpGet get, std::string path, std::chrono::milliseconds refresh,
             bool threaded = true);
    ~KubePods() override;
    KubePods(const KubePods&) = delete;
    KubePods& operator=(const KubePods&) = delete;

    std::optional<PodInfo> find(const std::string& pod_uid) override;
    // Reads the list now; the message of the last failure, "" if none.
    void refresh_now();
    std::string last_error() const;

  private:
    void loop();

    HttpGet get_;
    std::string path_;
    std::chrono::milliseconds refresh_;
    mutable std::mutex mu_;
    std::map<std::string, PodInfo> pods_;
    std::chrono::steady_clock::time_point last_{};
    bool have_last_ = false;
    bool wanted_ = false;
    bool stop_ = false;
    std::string error_;
    struct Thread;
    std::unique_ptr<Thread> thread_;
};

}  // namespace amdqp::daemon

#endif
