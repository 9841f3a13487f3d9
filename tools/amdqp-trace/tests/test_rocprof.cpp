#include <gtest/gtest.h>

#include "census.h"
#include "error.h"
#include "test_util.h"

using namespace amdqp;
using amdqp::test::Collect;

TEST(Rocprof, FixtureDispatchAndApiSpans) {
    Collect c;
    test::parse_fixture("rocprof-trace.json", Format::Rocprof, c);
    // One kernel dispatch (vectorAdd on GPU9 / queue 0), the rest are API spans.
    ASSERT_EQ(c.dispatches.size(), 1u);
    const auto &d = c.dispatches[0];
    EXPECT_EQ(d.pid, 3108374);
    EXPECT_EQ(d.gpu, "agent9");
    EXPECT_EQ(d.queue, "0");
    EXPECT_DOUBLE_EQ(d.ts_us, 418618585225.0);
    EXPECT_DOUBLE_EQ(d.dur_us, 13.0);
    EXPECT_EQ(c.kernels[0], "vectorAdd(float const*, float const*, float*, int) [clone .kd]");
    // 442 HSA API + 15 HIP API + 3 COPY complete events.
    EXPECT_EQ(c.spans.size(), 460u);
}

static std::string err(const std::string &in) {
    Collect c;
    try {
        parse_buffer(in, Format::Rocprof, c);
    } catch (const ParseError &e) {
        return std::to_string(e.line()) + ":" + e.message();
    }
    return "no error";
}

TEST(Rocprof, MalformedJson) {
    EXPECT_EQ(err(""), "1:empty JSON document");
    EXPECT_EQ(err("{\"traceEvents\":[{\"ph\":\"X\""),
              "1:truncated JSON document (unexpected end of file)");
    EXPECT_EQ(err("{\"traceEvents\":[1,]}"),
              "1:unexpected character ']' where a JSON value was expected");
    EXPECT_EQ(err("{\"a\" 1}"), "1:expected ':' after JSON key");
    EXPECT_EQ(err("{\"a\":1}}"), "1:trailing data after the JSON document");
    EXPECT_EQ(err("{\n\"a\":tru}"), "2:invalid JSON literal 'tru'");
    EXPECT_EQ(err("{\"a\":\"x\\q\"}"), "1:invalid escape in JSON string");
    EXPECT_EQ(err(std::string(100, '[')), "1:JSON nested deeper than 64 levels");
    EXPECT_EQ(err("[{\"ph\":\"X\",\"name\":\"k\",\"args\":{\"queue-id\":\"3\",\"gpu-id\":\"1\"}}]"),
              "no error");
}

TEST(Rocprof, VeryLongSingleLineIsStreamed) {
    // A trace written as one line longer than the 1 MiB line limit still parses.
    std::string big = "{\"traceEvents\":[";
    for (int i = 0; i < 20000; ++i)
        big += std::string(i ? "," : "") + "{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"ts\":\"" +
               std::to_string(i) +
               "\",\"dur\":\"1\",\"args\":{\"queue-id\":\"0\",\"gpu-id\":\"2\",\"pid\":\"7\"}}";
    big += "]}";
    ASSERT_GT(big.size(), size_t{1} << 20);
    Analysis a;
    parse_buffer(big, Format::Rocprof, a);
    ASSERT_EQ(a.subs.size(), 1u);
    EXPECT_EQ(a.subs.begin()->second.n, 20000u);
}

TEST(Rocprof, OutOfRangeNumbersAreZeroNotUndefined) {
    // Found by fuzz_rocprof: a pid of 5e43 was cast to int64 (undefined behaviour).
    amdqp::test::Collect c;
    parse_buffer("{\"traceEvents\":[{\"ph\":\"M\",\"pid\":5e43,\"name\":\"process_name\","
                 "\"args\":{\"name\":\"x\"}},{\"ph\":\"X\",\"name\":\"k\",\"pid\":5e43,"
                 "\"tid\":-1e300,\"ts\":\"1e999\",\"dur\":\"nan\",\"args\":{\"pid\":\"9e99\"}}]}",
                 Format::Rocprof, c);
    ASSERT_EQ(c.spans.size(), 1u);
    EXPECT_EQ(c.spans[0].pid, 0);
    EXPECT_EQ(c.spans[0].tid, 0);
    EXPECT_EQ(c.spans[0].ts_us, 0.0);
    EXPECT_EQ(c.spans[0].dur_us, 0.0);
}
