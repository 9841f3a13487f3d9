// SPDX-License-Identifier: MIT
// The pod directory: a PodList parsed, cached and refreshed at most every
// refresh period; the loopback HTTP client against a local server.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "kube_pods.hpp"

namespace {

using namespace amdqp::daemon;
using namespace std::chrono_literals;

const char* kPods = R"({"kind":"PodList","items":[
 {"metadata":{"uid":"u-1","namespace":"serving","name":"llm-0",
   "labels":{"amdqp.io/tier":"gold"}},"spec":{"priorityClassName":"inference-high"}},
 {"metadata":{"uid":"u-2","namespace":"batch","name":"train-3"},"spec":{}},
 {"metadata":{"namespace":"x"}}, 7]})";

TEST(KubePods, ParsesAPodList) {
    const auto pods = parse_pod_list(kPods);
    ASSERT_EQ(pods.size(), 2u);
    EXPECT_EQ(pods[0].uid, "u-1");
    EXPECT_EQ(pods[0].namespace_, "serving");
    EXPECT_EQ(pods[0].priority_class, "inference-high");
    EXPECT_EQ(pods[0].labels.at("amdqp.io/tier"), "gold");
    EXPECT_EQ(pods[1].priority_class, "");
    EXPECT_THROW(parse_pod_list("{}"), std::runtime_error);
    EXPECT_THROW(parse_pod_list("not json"), std::runtime_error);
}

TEST(KubePods, MissesRefreshAtMostEveryPeriod) {
    int gets = 0;
    std::string body = R"({"items":[]})";
    KubePods pods(
        [&](const std::string& path) {
            ++gets;
            EXPECT_EQ(path, "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1");
            return body;
        },
        pods_path("http://127.0.0.1:8001", "node-1"), 50ms, false);
    EXPECT_FALSE(pods.find("u-1"));
    EXPECT_EQ(gets, 1);
    body = kPods;
    EXPECT_FALSE(pods.find("u-1")) << "within the period: no second request";
    EXPECT_EQ(gets, 1);
    std::this_thread::sleep_for(60ms);
    auto p = pods.find("u-1");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->name, "llm-0");
    EXPECT_EQ(gets, 2);
    EXPECT_TRUE(pods.find("u-2"));
    EXPECT_EQ(gets, 2) << "hits need no request";
}

TEST(KubePods, PathsAndLoopbackOnly) {
    EXPECT_EQ(pods_path("http://127.0.0.1:10255/pods", "n"), "/pods");
    EXPECT_EQ(pods_path("unix:/run/kube.sock", "n"),
              "/api/v1/pods?fieldSelector=spec.nodeName%3Dn");
    EXPECT_THROW(loopback_http("http://10.1.2.3:8001", 1s), std::runtime_error);
    EXPECT_THROW(loopback_http("https://127.0.0.1:6443", 1s), std::runtime_error);
}

// A one-shot HTTP server on 127.0.0.1 answering @answer.
class OneShotServer {
  public:
    explicit OneShotServer(std::string answer) {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
        socklen_t len = sizeof(a);
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        listen(fd_, 1);
        t_ = std::thread([this, answer] {
            int c = accept(fd_, nullptr, nullptr);
            char buf[4096];
            std::string req;
            while (req.find("\r\n\r\n") == std::string::npos) {
                ssize_t n = recv(c, buf, sizeof(buf), 0);
                if (n <= 0)
                    break;
                req.append(buf, static_cast<std::size_t>(n));
            }
            request = req;
            [[maybe_unused]] auto w = send(c, answer.data(), answer.size(), 0);
            close(c);
        });
    }
    ~OneShotServer() {
        t_.join();
        close(fd_);
    }
    int port() const { return port_; }
    std::string request;

  private:
    int fd_ = -1;
    int port_ = 0;
    std::thread t_;
};

TEST(KubePods, LoopbackHttpGets) {
    {
        OneShotServer s("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"items\":[]}");
        auto get = loopback_http("http://127.0.0.1:" + std::to_string(s.port()), 2s);
        EXPECT_EQ(get("/api/v1/pods"), "{\"items\":[]}");
    }
    {
        OneShotServer s("HTTP/1.1 403 Forbidden\r\n\r\nno");
        auto get = loopback_http("http://127.0.0.1:" + std::to_string(s.port()), 2s);
        try {
            get("/api/v1/pods");
            FAIL() << "no error";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find("403"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
