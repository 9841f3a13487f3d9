// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "metrics.hpp"
#include "metrics_server.hpp"

namespace {

using namespace amdqp::daemon;

std::string get(const std::string& address, const std::string& request) {
    const auto colon = address.rfind(':');
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
    inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0)
        return "connect failed";
    [[maybe_unused]] auto n = write(fd, request.data(), request.size());
    std::string out;
    char buf[4096];
    ssize_t r;
    while ((r = read(fd, buf, sizeof(buf))) > 0)
        out.append(buf, static_cast<std::size_t>(r));
    close(fd);
    return out;
}

TEST(Metrics, HistogramIsCumulative) {
    Metrics m;
    m.control_loop(80e-6);
    m.control_loop(400e-6);
    m.control_loop(2.0);
    const std::string t = m.render();
    EXPECT_NE(t.find("amdqpd_control_loop_seconds_bucket{le=\"0.0001\"} 1\n"), std::string::npos);
    EXPECT_NE(t.find("amdqpd_control_loop_seconds_bucket{le=\"0.0005\"} 2\n"), std::string::npos);
    EXPECT_NE(t.find("amdqpd_control_loop_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
    EXPECT_NE(t.find("amdqpd_control_loop_seconds_count 3\n"), std::string::npos);
}

TEST(Metrics, ServedOverHttp) {
    Metrics m;
    m.suspend_call(2, 5);
    m.error("suspend");
    MetricsServer server("127.0.0.1:0", m);
    std::string r = get(server.address(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(r.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("amdqpd_suspend_calls_total 1\n"), std::string::npos);
    EXPECT_NE(r.find("amdqpd_queues_suspended_total 5\n"), std::string::npos);
    EXPECT_NE(r.find("amdqpd_errors_total{kind=\"suspend\"} 1\n"), std::string::npos);
    r = get(server.address(), "GET /nope HTTP/1.1\r\n\r\n");
    EXPECT_EQ(r.rfind("HTTP/1.0 404", 0), 0u) << r;
}

TEST(Metrics, BadAddressIsAClearError) {
    Metrics m;
    EXPECT_THROW(MetricsServer("256.1.1.1:80", m), std::runtime_error);
    EXPECT_THROW(MetricsServer("unix:", m), std::runtime_error);
}

}  // namespace
