// ftrace text: line formats of the kernel's trace/trace_pipe, trace-cmd report,
// the function tracer and kprobes; amdqp tracepoints as kmod/amdqp_trace.h prints them.
#include <gtest/gtest.h>

#include <sstream>

#include "census.h"
#include "error.h"
#include "perfetto.h"
#include "test_util.h"

using namespace amdqp;
using amdqp::test::Collect;

namespace {
const char *kCapture = R"(# tracer: function
#
# entries-in-buffer/entries-written: 12/12   #P:8
#
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
         python3-4711    [003] ..... 100.000100: amdqp_queue_register: gpu_id=63420 pid=4711 queue_id=1 priority=15 ring_va=0x7f41b5200000
         python3-4711    [003] ..... 100.000200: amdqp_queue_register: gpu_id=63420 pid=4711 queue_id=2 priority=15 ring_va=0x7f41b5a00000
  pt_main_thread-5000    [005] ..... 100.000300: amdqp_queue_register: gpu_id=63420 pid=5000 queue_id=3 priority=2 ring_va=0x7f0000000000
         python3-4711    [003] ..... 100.000400: execute_queues_cpsch_entry: (execute_queues_cpsch+0x0/0x1a0 [amdgpu])
         python3-4711    [003] ...1. 100.000450: unmap_queues_cpsch <-execute_queues_cpsch
         python3-4711    [003] ..... 100.000900: execute_queues_cpsch_exit: (create_queue_cpsch+0x1ab/0x2c0 [amdgpu] <- execute_queues_cpsch) ret=0x0
          amdqpd-900     [001] ..... 100.001000: amdqp_suspend_batch: gpu_id=63420 count=1 failed=0 latency_ns=180000
          amdqpd-900     [001] ..... 100.004000: amdqp_resume_batch: gpu_id=63420 count=1 failed=0 latency_ns=120000
CPU:6 [LOST 42 EVENTS]
          amdqpd-900     [001] ..... 100.010000: amdqp_suspend_batch: gpu_id=63420 count=1 failed=1 latency_ns=9000000000
          amdqpd-900     [001] ..... 100.010001: amdqp_error: gpu_id=63420 what=preempt error=-62
          amdqpd-900     [001] ..... 100.012000: amdqp_resume_batch: gpu_id=63420 count=1 failed=0 latency_ns=100000
         python3-4711    [003] ..... 100.020000: amdqp_priority_change: gpu_id=63420 pid=4711 queue_id=2 priority=15->14
         python3-4711    [003] ..... 100.030000: amdqp_queue_unregister: gpu_id=63420 pid=4711 queue_id=2
          amdqpd-900     [001] ..... 100.040000: amdqp_watchdog: gpu_id=63420 pid=5000 queue_id=3 suspended_ns=2000000000
)";
}

TEST(Ftrace, LineFormats) {
    Collect c;
    parse_buffer(
        "            bash-1234  (   1234) [001] d..1.  1234.567890: sched_switch: prev_comm=bash\n"
        " kworker/u16:2-99   [000] 5.000001: function:             pm_send_runlist <-- "
        "execute_queues_cpsch\n"
        " <idle>-0 [002] dNh2. 7.5: amdgpu_sched_run_job: sched_job=1, ring_name=comp_1.0.0\n"
        " my task [x]-77 [003] ..... 8.000000: amdqp_watchdog: gpu_id=1\n",
        Format::Ftrace, c);
    ASSERT_EQ(c.evs.size(), 4u);
    EXPECT_EQ(c.events[0], "sched_switch|prev_comm=bash");
    EXPECT_EQ(c.evs[0].pid, 1234);
    EXPECT_EQ(c.evs[0].cpu, 1);
    EXPECT_DOUBLE_EQ(c.evs[0].ts_us, 1234567890.0);
    EXPECT_EQ(c.events[1], "function|pm_send_runlist <-- execute_queues_cpsch"); // trace-cmd
    EXPECT_EQ(c.evs[1].pid, 99);
    EXPECT_DOUBLE_EQ(c.evs[2].ts_us, 7500000.0);
    EXPECT_EQ(c.evs[2].pid, 0);
    EXPECT_EQ(c.evs[3].pid, 77); // task names may contain spaces and brackets
    EXPECT_EQ(c.evs[3].cpu, 3);
}

TEST(Ftrace, AmdqpTimeline) {
    Analysis a;
    parse_buffer(kCapture, Format::Ftrace, a);
    EXPECT_EQ(a.trace_events, 14u);
    EXPECT_EQ(a.lost, 42u);
    EXPECT_EQ(a.amdqp_registers, 3u);
    EXPECT_EQ(a.amdqp_unregisters, 1u);
    EXPECT_EQ(a.amdqp_prio_changes, 1u);
    EXPECT_EQ(a.amdqp_watchdogs, 1u);
    // gpu_id 63420 == 0xf7bc: the same GPU the kfd dumps call f7bc.
    auto key = std::make_pair(int64_t{4711}, std::string("f7bc"));
    ASSERT_EQ(a.amdqp_max_queues.count(key), 1u);
    EXPECT_EQ(a.amdqp_max_queues.at(key), 2u);
    ASSERT_EQ(a.suspended_us.count("f7bc"), 1u);
    const Stats &s = a.suspended_us.at("f7bc");
    EXPECT_EQ(s.n, 2u);
    EXPECT_NEAR(s.min, 2000.0, 1e-6); // 100.010000 -> 100.012000
    EXPECT_NEAR(s.max, 3000.0, 1e-6); // 100.001000 -> 100.004000
    EXPECT_EQ(a.suspend_batch_us.n, 2u);
    EXPECT_NEAR(a.suspend_batch_us.max, 9e6, 1e-6);
    EXPECT_EQ(a.suspend_failed, 1u);
    ASSERT_EQ(a.amdqp_errors.size(), 1u);
    EXPECT_EQ(a.amdqp_errors[0], "gpu_id=63420 what=preempt error=-62");
    // KFD: one execute_queues_cpsch kprobe pair of 500 us, one function-trace hit.
    EXPECT_EQ(a.kfd_calls.at("execute_queues_cpsch"), 1u);
    EXPECT_EQ(a.kfd_calls.at("unmap_queues_cpsch"), 1u);
    EXPECT_NEAR(a.kfd_durations.at("execute_queues_cpsch").max, 500.0, 1e-6);
    EXPECT_EQ(a.runlist_updates_by_pid.at(4711), 1u);
}

TEST(Ftrace, PerfettoOutputPairsSpans) {
    std::ostringstream os;
    {
        PerfettoWriter w(os);
        parse_buffer(kCapture, Format::Ftrace, w);
    }
    std::string j = os.str();
    EXPECT_EQ(j.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0), 0u);
    EXPECT_NE(j.find("\"ph\":\"B\",\"name\":\"suspended\""), std::string::npos);
    EXPECT_NE(j.find("\"ph\":\"E\",\"name\":\"suspended\""), std::string::npos);
    EXPECT_NE(j.find("\"ph\":\"B\",\"name\":\"execute_queues_cpsch\",\"cat\":\"kfd\",\"pid\":4711,"
                     "\"tid\":4711,\"ts\":100000400.0"),
              std::string::npos);
    EXPECT_NE(j.find("GPU f7bc (amdqp)"), std::string::npos);
    EXPECT_EQ(j.substr(j.size() - 4), "\n]}\n");
}

TEST(Ftrace, MalformedLines) {
    auto err = [](const std::string &in) {
        Collect c;
        try {
            parse_buffer(in, Format::Ftrace, c);
        } catch (const ParseError &e) {
            return std::to_string(e.line()) + ":" + e.message();
        }
        return std::string("no error");
    };
    EXPECT_EQ(err("# tracer: nop\n  bash-1 [001] ..... 1.0: x: y\n  bash-1 [001] ..... 1.0"),
              "3:not an ftrace event line (no '[cpu] timestamp:'): 'bash-1 [001] ..... 1.0'");
    EXPECT_EQ(err(" bash [001] 1.5: x: y\n"), "1:malformed task-pid column 'bash'");
    EXPECT_EQ(err(" bash-1 [001] 1.5: bad name!: y\n"), "1:malformed event name 'bad name!'");
    EXPECT_EQ(err(" bash-1 [001] 1.5: nocolon\n"),
              "1:event line without 'name:' after the timestamp");
    EXPECT_EQ(
        err(" bash-1 [001] 1.1234567890: x: y\n"),
        "1:not an ftrace event line (no '[cpu] timestamp:'): 'bash-1 [001] 1.1234567890: x: y'");
}
