// SPDX-License-Identifier: MIT
// The FIFO split and replay behind `validate --queue-noise`, on cases
// worked out by hand.
#include <gtest/gtest.h>

#include <stdexcept>

#include "queue_noise.hpp"

namespace amdqp::sim {
namespace {

// Arrivals at 0, 10 and 100 ms; services 30, 20 and 10 ms, first tokens
// 5 ms after each start. The second waits 20 ms for the first, the third
// finds the server free.
const std::vector<double> kArrivals{0.0, 0.010, 0.100};
const std::vector<double> kTtft{5, 25, 5};
const std::vector<double> kTotal{30, 40, 10};

TEST(QueueNoise, SplitsWaitFirstTokenAndService) {
    const auto s = fifo_split(kArrivals, kTtft, kTotal);
    EXPECT_EQ(s.wait_ms, (std::vector<double>{0, 20, 0}));
    EXPECT_EQ(s.first_ms, (std::vector<double>{5, 5, 5}));
    EXPECT_EQ(s.service_ms, (std::vector<double>{30, 20, 10}));
}

TEST(QueueNoise, ZeroResidualsGiveTheSameTtfts) {
    const auto s = fifo_split(kArrivals, kTtft, kTotal);
    EXPECT_EQ(fifo_replay(kArrivals, s, {0.0}, 0), kTtft);
}

TEST(QueueNoise, AResidualDelaysEveryoneQueuedBehindIt) {
    const auto s = fifo_split(kArrivals, kTtft, kTotal);
    // +30 ms on the first service (of 30: its first token at 10 ms) and
    // nothing on the others: the second waits 50 ms, the third (arriving
    // after the second now ends, at 80 ms) still none.
    const auto t = fifo_replay(kArrivals, s, {30.0, 0.0, 0.0}, 0);
    EXPECT_EQ(t, (std::vector<double>{10, 55, 5}));
    // Offset 2: request 0 gets residual 2 (0), request 1 residual 0 (+30
    // on its 20 ms: first token 5 * 2.5), request 2 residual 1 (0).
    EXPECT_EQ(fifo_replay(kArrivals, s, {30.0, 0.0, 0.0}, 2), (std::vector<double>{5, 32.5, 5}));
}

TEST(QueueNoise, ServicesNeverGoBelowZero) {
    const auto s = fifo_split(kArrivals, kTtft, kTotal);
    // -100 ms on every service: each takes no time, nobody waits.
    EXPECT_EQ(fifo_replay(kArrivals, s, {-100.0}, 0), (std::vector<double>{0, 0, 0}));
}

TEST(QueueNoise, ReplayAllMeetsEveryResidualOnce) {
    const auto s = fifo_split(kArrivals, kTtft, kTotal);
    const auto all = fifo_replay_all(kArrivals, s, {30.0, 0.0, 0.0});
    ASSERT_EQ(all.size(), 9u);
    EXPECT_EQ(std::vector<double>(all.begin(), all.begin() + 3), (std::vector<double>{10, 55, 5}));
}

TEST(QueueNoise, RefusesMismatchedInput) {
    EXPECT_THROW(fifo_split(kArrivals, {1, 2}, kTotal), std::invalid_argument);
    const auto s = fifo_split(kArrivals, kTtft, kTotal);
    EXPECT_THROW(fifo_replay(kArrivals, s, {}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace amdqp::sim
