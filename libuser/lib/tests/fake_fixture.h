// SPDX-License-Identifier: MIT
#ifndef AMDQP_TESTS_FAKE_FIXTURE_H
#define AMDQP_TESTS_FAKE_FIXTURE_H

#include <gtest/gtest.h>

#include <memory>

#include <amdqp/amdqp.hpp>

#include "fake_amdqp.hpp"

// A fake /dev/amdqp with two GPUs and nothing on them.
class FakeDeviceTest : public ::testing::Test {
  protected:
    FakeDeviceTest() {
        fake->add_gpu(1, AMDQP_SCHED_HWS);
        fake->add_gpu(2, AMDQP_SCHED_MES);
    }
    amdqp::Device open() { return amdqp::Device::open(fake->path, fake); }

    std::shared_ptr<amdqp::testing::FakeAmdqp> fake = std::make_shared<amdqp::testing::FakeAmdqp>();
};

#endif  // AMDQP_TESTS_FAKE_FIXTURE_H
