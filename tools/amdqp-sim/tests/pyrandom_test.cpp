// SPDX-License-Identifier: MIT
// PyRandom against CPython 3 (values printed by random.Random(seed)), and
// the llm_tp driver's arrival schedules.
#include <gtest/gtest.h>

#include <cstdint>

#include "pyrandom.hpp"

namespace amdqp::sim {
namespace {

TEST(PyRandom, MatchesCPythonsRandom) {
    PyRandom r(7919);  // random.Random(7919).random() x 3
    EXPECT_DOUBLE_EQ(r.random(), 0.6392620987771694);
    EXPECT_DOUBLE_EQ(r.random(), 0.9573079957282321);
    EXPECT_DOUBLE_EQ(r.random(), 0.8938394140126673);
    EXPECT_DOUBLE_EQ(PyRandom(0).random(), 0.8444218515250481);
    // A seed of two 32-bit words.
    EXPECT_DOUBLE_EQ(PyRandom((std::uint64_t{1} << 40) + 5).random(), 0.5043802970418443);
    EXPECT_NEAR(PyRandom(7921).expovariate(1.0), 0.7155861695118503, 1e-15);
}

TEST(PyRandom, ArrivalScheduleOfTheLlmDriver) {
    // server.arrival_schedule(1.0, 35, "poisson", 7919 + seq): the committed
    // runs' hp_alone (seq 0) and contended (seq 2) phases, 5 s warm-up.
    const auto alone = arrival_schedule(1.0, 35.0, true, 7919);
    const auto cont = arrival_schedule(1.0, 35.0, true, 7921);
    EXPECT_EQ(alone.size(), 34u);
    EXPECT_EQ(cont.size(), 28u);
    std::size_t measured = 0;
    for (double t : cont)
        measured += t >= 5.0;
    EXPECT_EQ(measured, 23u);  // the contended phase's "scheduled"
    EXPECT_NEAR(alone[0], 1.0196036197344145, 1e-12);
    EXPECT_NEAR(alone[2], 6.416149618727574, 1e-12);
    const auto fixed = arrival_schedule(2.0, 2.0, false, 1);
    EXPECT_EQ(fixed, (std::vector<double>{0.5, 1.0, 1.5}));
}

}  // namespace
}  // namespace amdqp::sim
