// SPDX-License-Identifier: MIT
#include <cstring>
#include <vector>

#include "fake_fixture.h"

namespace {

std::vector<unsigned char> record(std::uint32_t type, std::uint32_t size, std::uint32_t pid,
                                  std::uint64_t data) {
    std::vector<unsigned char> bytes(size, 0xee);  // a newer kernel's unknown tail
    amdqp_event ev{};
    ev.type = type;
    ev.size = size;
    ev.pid = pid;
    ev.data = data;
    std::memcpy(bytes.data(), &ev, std::min<std::size_t>(size, sizeof(ev)));
    return bytes;
}

// read_some() until @n events came or nothing more does.
std::vector<amdqp::Event> drain(amdqp::EventReader& r, std::size_t n) {
    std::vector<amdqp::Event> all;
    for (int i = 0; i < 1000 && all.size() < n; i++) {
        auto got = r.read_some();
        if (got.empty() && !r.wait(0))
            break;
        all.insert(all.end(), got.begin(), got.end());
    }
    return all;
}

TEST_F(FakeDeviceTest, QueueEventsArrive) {
    auto dev = open();
    auto reader = dev.events();
    EXPECT_GE(reader.fd(), 0);
    EXPECT_NE(reader.fd(), dev.fd());
    EXPECT_FALSE(reader.wait(0));
    EXPECT_TRUE(reader.read_some().empty());

    fake->add_queue(100, 1, 0x1000, 12);
    fake->remove_queue(100, 1, 1);
    EXPECT_TRUE(reader.wait(0));
    const auto evs = reader.read_some();
    ASSERT_EQ(evs.size(), 2u);
    EXPECT_EQ(evs[0].type, static_cast<unsigned>(AMDQP_EVENT_QUEUE_CREATED));
    EXPECT_EQ(evs[0].pid, 100u);
    EXPECT_EQ(evs[0].gpu_id, 1u);
    EXPECT_EQ(evs[0].queue_id, 1u);
    EXPECT_EQ(evs[0].data, 12u);
    EXPECT_EQ(evs[1].type, static_cast<unsigned>(AMDQP_EVENT_QUEUE_DESTROYED));
    EXPECT_LT(evs[0].timestamp_ns, evs[1].timestamp_ns);
    EXPECT_FALSE(reader.wait(0));
}

TEST_F(FakeDeviceTest, MaskSelectsTypes) {
    auto dev = open();
    auto reader = dev.events(1ULL << AMDQP_EVENT_QUEUE_DESTROYED);
    fake->add_queue(100, 1, 0x1000, 12);
    fake->remove_queue(100, 1, 1);
    const auto evs = reader.read_some();
    ASSERT_EQ(evs.size(), 1u);
    EXPECT_EQ(evs[0].type, static_cast<unsigned>(AMDQP_EVENT_QUEUE_DESTROYED));
}

TEST_F(FakeDeviceTest, ShortReadsOfWholeRecords) {
    auto dev = open();
    auto reader = dev.events();
    fake->read_chunk = 2 * sizeof(amdqp_event);
    for (std::uint32_t i = 0; i < 9; i++)
        fake->add_queue(100 + i, 1, 0x1000 * (i + 1), 7);
    const auto evs = drain(reader, 9);
    ASSERT_EQ(evs.size(), 9u);
    for (std::uint32_t i = 0; i < 9; i++)
        EXPECT_EQ(evs[i].pid, 100 + i);
}

TEST_F(FakeDeviceTest, RecordsSplitAcrossReads) {
    auto dev = open();
    auto reader = dev.events();
    fake->read_chunk = 12;  // not even a record's header and body together
    for (std::uint32_t i = 0; i < 7; i++)
        fake->add_queue(100 + i, 2, 0x1000 * (i + 1), i);
    const auto evs = drain(reader, 7);
    ASSERT_EQ(evs.size(), 7u);
    for (std::uint32_t i = 0; i < 7; i++) {
        EXPECT_EQ(evs[i].pid, 100 + i);
        EXPECT_EQ(evs[i].gpu_id, 2u);
        EXPECT_EQ(evs[i].data, i);
    }
}

TEST_F(FakeDeviceTest, OverflowIsReportedAndCounted) {
    auto dev = open();
    auto reader = dev.events();
    fake->event_ring = 4;
    for (std::uint32_t i = 0; i < 10; i++)
        fake->add_queue(100 + i, 1, 0x1000 * (i + 1), 7);
    const auto evs = drain(reader, 5);
    ASSERT_EQ(evs.size(), 5u);
    for (std::uint32_t i = 0; i < 4; i++)
        EXPECT_EQ(evs[i].pid, 100 + i);  // the oldest were kept
    EXPECT_EQ(evs[4].type, static_cast<unsigned>(AMDQP_EVENT_OVERFLOW));
    EXPECT_EQ(evs[4].data, 6u);
    EXPECT_EQ(reader.lost(), 6u);

    fake->add_queue(500, 1, 0x99000, 7);
    const auto more = reader.read_some();
    ASSERT_EQ(more.size(), 1u);
    EXPECT_EQ(more[0].pid, 500u);
    EXPECT_EQ(reader.lost(), 6u);
}

TEST_F(FakeDeviceTest, UnknownTypesAreSkippedBySize) {
    auto dev = open();
    auto reader = dev.events();
    fake->emit_raw(record(AMDQP_EVENT_MAX + 7, 64, 1, 0));
    fake->emit_raw(record(AMDQP_EVENT_QUEUE_CREATED, 56, 2, 12));  // longer than ours
    fake->emit_raw(record(AMDQP_EVENT_MAX + 1, 8, 3, 0));          // header only
    fake->emit_raw(record(AMDQP_EVENT_PRIORITY, 24, 4, 0));        // shorter than ours
    fake->add_queue(5, 1, 0x1000, 7);
    const auto evs = reader.read_some();
    ASSERT_EQ(evs.size(), 3u);
    EXPECT_EQ(evs[0].type, static_cast<unsigned>(AMDQP_EVENT_QUEUE_CREATED));
    EXPECT_EQ(evs[0].pid, 2u);
    EXPECT_EQ(evs[0].data, 12u);
    EXPECT_EQ(evs[1].type, static_cast<unsigned>(AMDQP_EVENT_PRIORITY));
    EXPECT_EQ(evs[1].pid, 4u);
    EXPECT_EQ(evs[1].data, 0u);  // past the record's end: zero, not the tail
    EXPECT_EQ(evs[2].pid, 5u);
}

TEST_F(FakeDeviceTest, MalformedRecordSizeIsAnError) {
    auto dev = open();
    auto reader = dev.events();
    auto bytes = record(AMDQP_EVENT_QUEUE_CREATED, sizeof(amdqp_event), 1, 0);
    const std::uint32_t bad_size = 4;  // smaller than the header it is in
    std::memcpy(&bytes[4], &bad_size, sizeof(bad_size));
    fake->emit_raw(bytes);
    try {
        reader.read_some();
        FAIL() << "no error";
    } catch (const amdqp::Error& e) {
        EXPECT_EQ(e.code(), amdqp::errc::abi_mismatch);
        EXPECT_NE(std::string(e.what()).find("malformed event record"), std::string::npos);
    }
}

TEST_F(FakeDeviceTest, ZeroMaskDropsQueuedRecords) {
    auto dev = open();
    auto reader = dev.events();
    fake->add_queue(100, 1, 0x1000, 7);
    reader.set_mask(0);
    reader.set_mask(AMDQP_EVENT_MASK_ALL);
    EXPECT_TRUE(reader.read_some().empty());
}

TEST_F(FakeDeviceTest, UnknownMaskBitsAreRefused) {
    auto dev = open();
    EXPECT_THROW(dev.set_event_mask(1ULL << 40), amdqp::Error);
}

TEST(Events, Names) {
    EXPECT_STREQ(amdqp::event_type_name(AMDQP_EVENT_OVERFLOW), "overflow");
    EXPECT_STREQ(amdqp::event_type_name(AMDQP_EVENT_QUEUE_CREATED), "queue_created");
    EXPECT_STREQ(amdqp::event_type_name(AMDQP_EVENT_PRIORITY), "priority");
    EXPECT_STREQ(amdqp::event_type_name(AMDQP_EVENT_CONFINE_WATCHDOG), "confine_watchdog");
    EXPECT_STREQ(amdqp::event_type_name(AMDQP_EVENT_MAX + 1), "unknown");
}

}  // namespace
