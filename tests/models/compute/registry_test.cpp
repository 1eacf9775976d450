// The compute-device registry: every built-in type registered once, every preset builds
// from its own values and names its public source, unknown types and presets name the
// valid ones.
#include <gtest/gtest.h>

#include "models/compute/compute_device.hpp"
#include "preset_helpers.hpp"

namespace hcsim {
namespace {

TEST(ComputeRegistry, BuiltinTypesAreRegisteredOnce) {
  register_builtin_compute_devices();
  register_builtin_compute_devices();
  EXPECT_EQ(compute_devices().names(), (std::vector<std::string>{"cim-analog", "cpu", "gpu", "pim-dram", "systolic"}));
  for (const auto& [type, e] : compute_devices().entries()) {
    EXPECT_FALSE(e.help.empty()) << type;
    EXPECT_FALSE(e.source.empty()) << type;
    for (const auto& p : e.params) EXPECT_FALSE(p.help.empty()) << type << "." << p.name;
  }
}

TEST(ComputeRegistry, EveryPresetBuildsAndCitesItsSource) {
  register_builtin_compute_devices();
  for (const auto& [name, p] : compute_presets().all()) {
    ASSERT_NE(compute_devices().find(p.type), nullptr) << name;
    EXPECT_FALSE(p.source.empty()) << name;
    EXPECT_FALSE(p.help.empty()) << name;
    auto d = testing_helpers::build_preset(name);
    ASSERT_NE(d, nullptr) << name;
    EXPECT_EQ(d->type(), p.type) << name;
    EXPECT_GT(d->peak(DType::bf16).value(), 0) << name;
    EXPECT_GE(d->max_power().value(), d->idle_power().value()) << name;
  }
  for (const char* required : {"nvidia-a100-80gb-sxm", "nvidia-a100-40gb-sxm", "nvidia-h100-sxm5", "nvidia-h200-sxm", "nvidia-h800-sxm5",
                               "nvidia-b200", "nvidia-v100-sxm2", "google-tpu-v4", "google-tpu-v3", "mlu370-class",
                               "mythic-m1076", "samsung-hbm-pim", "amd-epyc-7543"})
    EXPECT_NE(compute_presets().find(required), nullptr) << required;
}

TEST(ComputeRegistry, UnknownTypeAndPresetNameTheValidOnes) {
  register_builtin_compute_devices();
  Diagnostics d;
  EXPECT_EQ(compute_devices().build("fpga", nlohmann::json::object(), "/devices/0", d), nullptr);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/devices/0/type");
  EXPECT_EQ(d.issues()[0].message,
            "unknown compute device type \"fpga\"; valid ones are: cim-analog, cpu, gpu, pim-dram, systolic");
  EXPECT_EQ(compute_presets().unknown_message("a100").substr(0, 38), "unknown compute device preset \"a100\"; ");
}

}  // namespace
}  // namespace hcsim
