// SPDX-License-Identifier: MIT
#include "metrics_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace amdqp::daemon {

namespace {

[[noreturn]] void fail(const std::string& address, const char* what) {
    throw std::runtime_error("metrics address " + address + ": " + what + ": " +
                             std::strerror(errno));
}

void write_all(int fd, const std::string& data) {
    std::size_t off = 0;
    while (off < data.size()) {
        ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        off += static_cast<std::size_t>(n);
    }
}

}  // namespace

MetricsServer::MetricsServer(const std::string& address, const Metrics& metrics)
    : metrics_(metrics) {
    if (address.starts_with("unix:")) {
        unix_path_ = address.substr(5);
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        if (unix_path_.empty() || unix_path_.size() >= sizeof(sa.sun_path))
            throw std::runtime_error("metrics address " + address + ": bad socket path");
        std::memcpy(sa.sun_path, unix_path_.c_str(), unix_path_.size() + 1);
        listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listen_fd_ < 0)
            fail(address, "socket");
        ::unlink(unix_path_.c_str());  // a previous run's socket
        if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0) {
            ::close(listen_fd_);
            fail(address, "bind");
        }
        bound_ = address;
    } else {
        const auto colon = address.rfind(':');
        std::string host = address.substr(0, colon);
        const std::string port = address.substr(colon + 1);
        if (host.size() > 1 && host.front() == '[' && host.back() == ']')
            host = host.substr(1, host.size() - 2);
        addrinfo hints{};
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
        addrinfo* res = nullptr;
        if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res))
            throw std::runtime_error("metrics address " + address + ": " + gai_strerror(rc));
        listen_fd_ = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        if (listen_fd_ >= 0)
            setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (listen_fd_ < 0 || ::bind(listen_fd_, res->ai_addr, res->ai_addrlen) < 0) {
            freeaddrinfo(res);
            if (listen_fd_ >= 0)
                ::close(listen_fd_);
            fail(address, "bind");
        }
        freeaddrinfo(res);
        sockaddr_storage ss{};
        socklen_t len = sizeof(ss);
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
        char buf[INET6_ADDRSTRLEN] = "?";
        unsigned p = 0;
        if (ss.ss_family == AF_INET) {
            auto* in = reinterpret_cast<sockaddr_in*>(&ss);
            inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf));
            p = ntohs(in->sin_port);
            bound_ = std::string(buf) + ":" + std::to_string(p);
        } else {
            auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
            inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
            p = ntohs(in6->sin6_port);
            // Appended onto a new string: "[" + std::string(buf) (an insert
            // at the front) makes GCC 12 -O2 warn -Wrestrict, falsely.
            std::string bound = "[";
            bound += buf;
            bound += "]:";
            bound += std::to_string(p);
            bound_ = std::move(bound);
        }
    }
    if (::listen(listen_fd_, 16) < 0 || ::pipe2(stop_pipe_, O_CLOEXEC) < 0) {
        ::close(listen_fd_);
        fail(address, "listen");
    }
    thread_ = std::thread([this] { serve(); });
}

MetricsServer::~MetricsServer() {
    if (thread_.joinable()) {
        char c = 0;
        [[maybe_unused]] ssize_t n = ::write(stop_pipe_[1], &c, 1);
        thread_.join();
    }
    ::close(listen_fd_);
    ::close(stop_pipe_[0]);
    ::close(stop_pipe_[1]);
    if (!unix_path_.empty())
        ::unlink(unix_path_.c_str());
}

void MetricsServer::serve() {
    for (;;) {
        pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        if (fds[1].revents)
            return;
        int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        // One request per connection; a client that sends nothing for a
        // second is dropped.
        std::string req;
        char buf[1024];
        pollfd pc{c, POLLIN, 0};
        while (req.find("\r\n\r\n") == std::string::npos && req.size() < 8192 &&
               ::poll(&pc, 1, 1000) > 0) {
            ssize_t n = ::recv(c, buf, sizeof(buf), 0);
            if (n <= 0)
                break;
            req.append(buf, static_cast<std::size_t>(n));
        }
        std::string status = "200 OK", body;
        if (req.starts_with("GET /metrics ") || req.starts_with("GET / ")) {
            body = metrics_.render();
        } else {
            status = "404 Not Found";
            body = "amdqpd serves GET /metrics\n";
        }
        write_all(c, "HTTP/1.0 " + status +
                         "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                         "Content-Length: " +
                         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
        ::close(c);
    }
}

}  // namespace amdqp::daemon
