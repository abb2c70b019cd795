// DeviceName::parse (sim/core/device_name.h): TensorFlow's device names, whole or partial, in any
// case, and the error naming the part it cannot read.
#include "sim/core/device_name.h"

#include <gtest/gtest.h>

#include <string>

namespace placesim {
namespace {

TEST(DeviceName, ParsesAWholeNameInAnyCase) {
  const std::optional<DeviceName> name = DeviceName::parse("/JOB:worker/Replica:0/task:3/device:gpu:5", nullptr);
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->job, "worker");
  EXPECT_EQ(name->replica, 0);
  EXPECT_EQ(name->task, 3);
  EXPECT_EQ(name->kind, DeviceKind::kGpu);
  EXPECT_EQ(name->index, 5);
}

TEST(DeviceName, ParsesPartialNamesAndWildcards) {
  const std::optional<DeviceName> short_name = DeviceName::parse("GPU:1", nullptr);
  ASSERT_TRUE(short_name.has_value());
  EXPECT_FALSE(short_name->job.has_value());
  EXPECT_EQ(short_name->kind, DeviceKind::kGpu);
  EXPECT_EQ(short_name->index, 1);
  const std::optional<DeviceName> any_gpu = DeviceName::parse("/task:1/device:GPU:*", nullptr);
  ASSERT_TRUE(any_gpu.has_value());
  EXPECT_EQ(any_gpu->task, 1);
  EXPECT_FALSE(any_gpu->index.has_value());
  const std::optional<DeviceName> cpu = DeviceName::parse("/cpu", nullptr);
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->kind, DeviceKind::kCpu);
  EXPECT_TRUE(DeviceName::parse("GPU:1", nullptr)->matches(*DeviceName::parse("/job:localhost/task:0/device:GPU:1", nullptr)));
}

TEST(DeviceName, NamesThePartItCannotRead) {
  auto error_of = [](const std::string& text) {
    std::string error;
    EXPECT_FALSE(DeviceName::parse(text, &error).has_value()) << text;
    return error;
  };
  EXPECT_EQ(error_of(""), "empty device name");
  EXPECT_EQ(error_of("/"), "empty device name");
  EXPECT_EQ(error_of("/job:w/task:x"), "bad task number in \"task:x\"");
  EXPECT_EQ(error_of("/replica:-1"), "bad replica number in \"replica:-1\"");
  EXPECT_EQ(error_of("/device:FPGA:0"), "unknown device type \"FPGA\" (expected CPU, GPU or TPU)");
  EXPECT_EQ(error_of("/device:GPU:one"), "bad device index in \"device:GPU:one\"");
  EXPECT_EQ(error_of("GPU:1234567890"), "bad device index in \"GPU:1234567890\"");
  EXPECT_EQ(error_of("/job:w/gpu:0:1"),
            "cannot parse \"gpu:0:1\" (expected job:NAME, replica:N, task:N, device:TYPE:N or TYPE:N)");
  EXPECT_EQ(error_of("/job:"), "cannot parse \"job:\" (expected job:NAME, replica:N, task:N, device:TYPE:N or TYPE:N)");
}

}  // namespace
}  // namespace placesim
