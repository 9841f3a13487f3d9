// Writes a synthetic ftrace text capture of about N MB to stdout: amdqp
// tracepoints, KFD kprobe entry/exit pairs, function-tracer lines and amdgpu
// events over 8 GPUs, with many processes and queues (exercises the caps).
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: amdqp-trace-gen MEGABYTES > trace.txt\n");
        return 2;
    }
    const unsigned long long target = std::strtoull(argv[1], nullptr, 10) << 20;
    static const unsigned gpus[8] = {0xf7bc, 0xf05b, 0xeb40, 0xc66d,
                                     0xf220, 0xf5c7, 0xeedc, 0xc3f1};
    std::printf(
        "# tracer: function\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n");
    unsigned long long bytes = 0, i = 0;
    char line[512];
    while (bytes < target) {
        unsigned gpu = gpus[i % 8];
        unsigned pid = 1000 + static_cast<unsigned>(i % 5000);
        unsigned cpu = static_cast<unsigned>(i % 128);
        double ts = 1000.0 + static_cast<double>(i) * 1e-5;
        int n = 0;
        switch (i % 8) {
        case 0:
            n = std::snprintf(line, sizeof line,
                              "          python3-%u   [%03u] d..1.  %.6f: amdqp_queue_register: "
                              "gpu_id=%u pid=%u queue_id=%llu priority=7 ring_va=0x7f41b5200000\n",
                              pid, cpu, ts, gpu, pid, i % 100000);
            break;
        case 1:
            n = std::snprintf(line, sizeof line,
                              "          amdqpd-%u   [%03u] .....  %.6f: amdqp_suspend_batch: "
                              "gpu_id=%u count=4 failed=0 latency_ns=180000\n",
                              900, cpu, ts, gpu);
            break;
        case 2:
            n = std::snprintf(
                line, sizeof line,
                "          python3-%u   [%03u] .....  %.6f: execute_queues_cpsch_entry: "
                "(execute_queues_cpsch+0x0/0x1a0 [amdgpu])\n",
                pid, cpu, ts);
            break;
        case 3:
            n = std::snprintf(
                line, sizeof line,
                "          python3-%u   [%03u] .....  %.6f: execute_queues_cpsch_exit: "
                "(create_queue_cpsch+0x1ab/0x2c0 [amdgpu] <- execute_queues_cpsch) ret=0x0\n",
                pid, cpu, ts);
            break;
        case 4:
            n = std::snprintf(line, sizeof line,
                              "          python3-%u   [%03u] ...1.  %.6f: unmap_queues_cpsch "
                              "<-execute_queues_cpsch\n",
                              pid, cpu, ts);
            break;
        case 5:
            n = std::snprintf(line, sizeof line,
                              "          amdqpd-%u   [%03u] .....  %.6f: amdqp_resume_batch: "
                              "gpu_id=%u count=4 failed=0 latency_ns=150000\n",
                              900, cpu, ts, gpu);
            break;
        case 6:
            n = std::snprintf(line, sizeof line,
                              "          python3-%u   [%03u] .....  %.6f: amdgpu_cs_ioctl: "
                              "sched_job=%llu, timeline=gfx_0.0.0, context=%u, seqno=%llu, "
                              "ring_name=gfx_0.0.0, num_ibs=1\n",
                              pid, cpu, ts, i, pid, i);
            break;
        default:
            n = std::snprintf(line, sizeof line,
                              "          python3-%u   [%03u] .....  %.6f: amdqp_queue_unregister: "
                              "gpu_id=%u pid=%u queue_id=%llu\n",
                              pid, cpu, ts, gpu, pid, (i - 7) % 100000);
            break;
        }
        std::fwrite(line, 1, static_cast<size_t>(n), stdout);
        bytes += static_cast<unsigned long long>(n);
        ++i;
    }
    return std::ferror(stdout) ? 1 : 0;
}
