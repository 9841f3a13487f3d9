// Helpers shared by the tests: a sink that keeps every record, fixture paths.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "input.h"
#include "records.h"

namespace amdqp::test {

struct Collect : Sink {
    std::vector<HqdRecord> hqds;
    std::vector<MqdRecord> mqds;
    std::vector<std::string> events; // "name|body|pid|cpu|ts"
    std::vector<TraceEvent> evs;
    std::vector<HipQueueRecord> hipqs;
    std::vector<DispatchRecord> dispatches;
    std::vector<std::string> kernels;
    std::vector<ApiSpan> spans;
    std::vector<WorkloadResult> workloads;
    uint64_t lost = 0;
    void hqd(const HqdRecord &r) override { hqds.push_back(r); }
    std::vector<std::string> stopped; // "node:gpu_id" of each "Device is stopped"
    void hqd_device_stopped(uint32_t node, const std::string &gpu) override {
        stopped.push_back(std::to_string(node) + ":" + gpu);
    }
    void mqd(const MqdRecord &r) override { mqds.push_back(r); }
    void trace_event(const TraceEvent &e) override {
        events.push_back(std::string(e.name) + "|" + std::string(e.body));
        TraceEvent c = e;
        c.name = c.body = c.task = {}; // views die with the line
        evs.push_back(c);
    }
    void lost_events(uint64_t n) override { lost += n; }
    void hip_queue(const HipQueueRecord &q) override { hipqs.push_back(q); }
    void hip_queue_used(const HipQueueRecord &q) override { used.push_back(q); }
    std::vector<HipQueueRecord> used;
    void dispatch(const DispatchRecord &d) override {
        dispatches.push_back(d);
        dispatches.back().kernel = {};
        kernels.emplace_back(d.kernel);
    }
    void api_span(const ApiSpan &a) override {
        spans.push_back(a);
        spans.back().name = spans.back().category = {};
    }
    void workload(const WorkloadResult &w) override { workloads.push_back(w); }
};

inline std::string fixture(const std::string &name) {
    return std::string(AMDQP_TRACE_FIXTURES) + "/" + name;
}

inline std::string slurp(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

inline void parse_fixture(const std::string &name, Format f, Sink &s) {
    parse_file(fixture(name), f, s, InputOptions{});
}

struct ShellResult {
    int rc;
    std::string out; // stdout and stderr together
};

inline ShellResult shell(const std::string &cmd) {
    std::string full = "(" + cmd + ") 2>&1";
    std::unique_ptr<FILE, int (*)(FILE *)> p(popen(full.c_str(), "r"), pclose);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p.get())) > 0)
        out.append(buf, n);
    int st = pclose(p.release());
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

inline std::string bin() {
    return AMDQP_TRACE_BIN;
}

// A fresh folder per test, removed afterwards.
class TempDir {
public:
    TempDir() {
        const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = std::filesystem::temp_directory_path() /
               ("amdqp-trace-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" +
                info->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
    }
    ~TempDir() { std::filesystem::remove_all(dir_); }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    std::string path(const std::string &name) const { return (dir_ / name).string(); }
    std::string write(const std::string &name, const std::string &data) const {
        std::filesystem::create_directories((dir_ / name).parent_path());
        std::ofstream(path(name), std::ios::binary) << data;
        return path(name);
    }

private:
    std::filesystem::path dir_;
};

// Lines of a text, without their newlines.
inline std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> v;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
        v.push_back(l);
    return v;
}

inline std::string replace_all(std::string s, const std::string &from, const std::string &to) {
    for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size())
        s.replace(p, from.size(), to);
    return s;
}

} // namespace amdqp::test
