// SPDX-License-Identifier: MIT
#include "kube_pods.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

namespace amdqp::daemon {

PodDirectory::~PodDirectory() = default;

std::vector<PodInfo> parse_pod_list(std::string_view json) {
    const auto j = nlohmann::json::parse(json, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("items") || !j["items"].is_array())
        throw std::runtime_error("not a PodList");
    std::vector<PodInfo> out;
    for (const auto& item : j["items"]) {
        if (!item.is_object())
            continue;
        const auto& md = item.value("metadata", nlohmann::json::object());
        const auto& spec = item.value("spec", nlohmann::json::object());
        PodInfo p;
        if (!md.is_object() || !md.contains("uid") || !md["uid"].is_string())
            continue;
        p.uid = md["uid"].get<std::string>();
        if (md.contains("namespace") && md["namespace"].is_string())
            p.namespace_ = md["namespace"].get<std::string>();
        if (md.contains("name") && md["name"].is_string())
            p.name = md["name"].get<std::string>();
        if (md.contains("labels") && md["labels"].is_object())
            for (const auto& [k, v] : md["labels"].items())
                if (v.is_string())
                    p.labels[k] = v.get<std::string>();
        if (spec.is_object() && spec.contains("priorityClassName") &&
            spec["priorityClassName"].is_string())
            p.priority_class = spec["priorityClassName"].get<std::string>();
        out.push_back(std::move(p));
    }
    return out;
}

namespace {

class Fd {
  public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

  private:
    int fd_;
};

struct Target {
    bool unix_socket = false;
    std::string socket_path;
    sockaddr_in6 in6{};
    sockaddr_in in4{};
    bool v6 = false;
    std::string path;  // "" = none given
};

Target parse_api(const std::string& api) {
    Target t;
    if (api.starts_with("unix:")) {
        t.unix_socket = true;
        std::string rest = api.substr(5);
        const auto colon = rest.find(":/");
        t.socket_path = rest.substr(0, colon);
        if (colon != std::string::npos)
            t.path = rest.substr(colon + 1);
        return t;
    }
    if (!api.starts_with("http://"))
        throw std::runtime_error("api must be http://127.0.0.1:PORT or unix:PATH: " + api);
    std::string rest = api.substr(7);
    const auto slash = rest.find('/');
    std::string hostport = rest.substr(0, slash);
    if (slash != std::string::npos)
        t.path = rest.substr(slash);
    const auto colon = hostport.rfind(':');
    if (colon == std::string::npos)
        throw std::runtime_error("api needs a port: " + api);
    std::string host = hostport.substr(0, colon);
    const int port = std::stoi(hostport.substr(colon + 1));
    if (port <= 0 || port > 65535)
        throw std::runtime_error("bad port in " + api);
    if (host == "localhost")
        host = "127.0.0.1";
    if (host == "[::1]") {
        t.v6 = true;
        t.in6.sin6_family = AF_INET6;
        t.in6.sin6_port = htons(static_cast<std::uint16_t>(port));
        t.in6.sin6_addr = in6addr_loopback;
    } else {
        t.in4.sin_family = AF_INET;
        t.in4.sin_port = htons(static_cast<std::uint16_t>(port));
        if (inet_pton(AF_INET, host.c_str(), &t.in4.sin_addr) != 1 ||
            (ntohl(t.in4.sin_addr.s_addr) >> 24) != 127)
            throw std::runtime_error("api must be on loopback: " + api);
    }
    return t;
}

// Waits for @events on @fd until @deadline; throws on timeout.
void wait_fd(int fd, short events, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            throw std::runtime_error("timed out");
        pollfd p{fd, events, 0};
        const int r = ::poll(&p, 1, static_cast<int>(left.count()));
        if (r > 0)
            return;
        if (r < 0 && errno != EINTR)
            throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
}

std::string get(const Target& t, const std::string& path, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const int family = t.unix_socket ? AF_UNIX : t.v6 ? AF_INET6 : AF_INET;
    Fd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (fd.get() < 0)
        throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    int r;
    if (t.unix_socket) {
        sockaddr_un un{};
        un.sun_family = AF_UNIX;
        if (t.socket_path.size() >= sizeof(un.sun_path))
            throw std::runtime_error("socket path too long");
        std::memcpy(un.sun_path, t.socket_path.c_str(), t.socket_path.size() + 1);
        r = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&un), sizeof(un));
    } else if (t.v6) {
        r = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&t.in6), sizeof(t.in6));
    } else {
        r = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&t.in4), sizeof(t.in4));
    }
    if (r < 0 && errno != EINPROGRESS)
        throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
    wait_fd(fd.get(), POLLOUT, deadline);
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err)
        throw std::runtime_error(std::string("connect: ") + std::strerror(err));
    // HTTP/1.0: the server closes after the answer and never chunks it.
    const std::string req = "GET " + path +
                            " HTTP/1.0\r\nHost: localhost\r\nAccept: application/json\r\n"
                            "User-Agent: amdqpd\r\n\r\n";
    for (std::size_t off = 0; off < req.size();) {
        wait_fd(fd.get(), POLLOUT, deadline);
        const ssize_t n = ::send(fd.get(), req.data() + off, req.size() - off, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            throw std::runtime_error(std::string("send: ") + std::strerror(errno));
        if (n > 0)
            off += static_cast<std::size_t>(n);
    }
    constexpr std::size_t kMax = 64u << 20;
    std::string answer;
    char buf[65536];
    for (;;) {
        wait_fd(fd.get(), POLLIN, deadline);
        const ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            throw std::runtime_error(std::string("recv: ") + std::strerror(errno));
        }
        answer.append(buf, static_cast<std::size_t>(n));
        if (answer.size() > kMax)
            throw std::runtime_error("answer over 64 MiB");
    }
    const auto head_end = answer.find("\r\n\r\n");
    if (head_end == std::string::npos || !answer.starts_with("HTTP/1."))
        throw std::runtime_error("not an HTTP answer");
    const auto sp = answer.find(' ');
    const std::string status = answer.substr(sp + 1, 3);
    if (status != "200")
        throw std::runtime_error("HTTP " + answer.substr(sp + 1, answer.find("\r\n") - sp - 1));
    std::string head = answer.substr(0, head_end);
    for (auto& c : head)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (head.find("transfer-encoding: chunked") != std::string::npos)
        throw std::runtime_error("chunked answer to an HTTP/1.0 request");
    return answer.substr(head_end + 4);
}

}  // namespace

HttpGet loopback_http(const std::string& api, std::chrono::milliseconds timeout) {
    Target t = parse_api(api);
    return [t, timeout](const std::string& path) { return get(t, path, timeout); };
}

std::string pods_path(const std::string& api, const std::string& node) {
    const Target t = parse_api(api);
    if (!t.path.empty() && t.path != "/")
        return t.path;
    return "/api/v1/pods?fieldSelector=spec.nodeName%3D" + node;
}

struct KubePods::Thread {
    std::condition_variable cv;
    std::thread t;
};

KubePods::KubePods(HttpGet get, std::string path, std::chrono::milliseconds refresh, bool threaded)
    : get_(std::move(get)), path_(std::move(path)), refresh_(refresh) {
    if (threaded) {
        thread_ = std::make_unique<Thread>();
        thread_->t = std::thread([this] { loop(); });
    }
}

KubePods::~KubePods() {
    if (thread_) {
        {
            std::lock_guard lk(mu_);
            stop_ = true;
        }
        thread_->cv.notify_all();
        thread_->t.join();
    }
}

std::optional<PodInfo> KubePods::find(const std::string& pod_uid) {
    bool run_here = false;
    {
        std::lock_guard lk(mu_);
        if (auto it = pods_.find(pod_uid); it != pods_.end())
            return it->second;
        const auto now = std::chrono::steady_clock::now();
        if (!have_last_ || now - last_ >= refresh_) {
            wanted_ = true;
            run_here = !thread_;
        }
    }
    if (!run_here) {
        if (thread_)
            thread_->cv.notify_all();
        return std::nullopt;
    }
    refresh_now();
    std::lock_guard lk(mu_);
    if (auto it = pods_.find(pod_uid); it != pods_.end())
        return it->second;
    return std::nullopt;
}

void KubePods::refresh_now() {
    std::string error;
    std::map<std::string, PodInfo> pods;
    bool ok = false;
    try {
        for (PodInfo& p : parse_pod_list(get_(path_)))
            pods.emplace(p.uid, std::move(p));
        ok = true;
    } catch (const std::exception& e) {
        error = e.what();
    }
    std::lock_guard lk(mu_);
    last_ = std::chrono::steady_clock::now();
    have_last_ = true;
    wanted_ = false;
    error_ = error;
    if (ok)
        pods_ = std::move(pods);
}

std::string KubePods::last_error() const {
    std::lock_guard lk(mu_);
    return error_;
}

void KubePods::loop() {
    std::unique_lock lk(mu_);
    for (;;) {
        thread_->cv.wait(lk, [this] { return stop_ || wanted_; });
        if (stop_)
            return;
        lk.unlock();
        refresh_now();
        lk.lock();
    }
}

}  // namespace amdqp::daemon
