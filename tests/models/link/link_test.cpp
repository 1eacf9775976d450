// Link registry and resolve_link: presets, overrides, error paths.
#include "models/link/link.hpp"

#include <gtest/gtest.h>

namespace hcsim {
namespace {

LinkSpec resolve_ok(const nlohmann::json& desc) {
  Diagnostics d;
  LinkSpec s = resolve_link(desc, "/links/0", d);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.issues()[0].path + ": " + d.issues()[0].message);
  return s;
}

TEST(LinkRegistry, TypesAndPresetsRegisteredOnceAndIdempotent) {
  register_builtin_links();
  register_builtin_links();
  EXPECT_EQ(link_models().names(), (std::vector<std::string>{"cxl", "electrical", "photonic"}));
  for (const char* name : {"nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie4", "pcie5", "pcie6", "ib-hdr", "ib-ndr",
                           "ib-xdr", "roce-400g", "ethernet-40g", "cxl2", "cxl3", "photonic-cpo",
                           "optical-io-teraphy"})
    EXPECT_NE(link_presets().find(name), nullptr) << name;
}

TEST(LinkRegistry, EveryPresetResolvesAndCitesASource) {
  register_builtin_links();
  for (const auto& [name, p] : link_presets().all()) {
    LinkSpec s = resolve_ok({{"preset", name}});
    EXPECT_EQ(s.name, name);
    EXPECT_EQ(s.technology, p.type);
    EXPECT_GT(s.bandwidth.value(), 0) << name;
    EXPECT_GT(s.latency.value(), 0) << name;
    EXPECT_FALSE(p.source.empty()) << name;
  }
}

TEST(LinkPresets, NvlinkIsPerDirection) {
  // A100: 12 links x 50 GB/s = 600 GB/s bidirectional -> 300 GB/s per direction (hardware.md §1).
  EXPECT_DOUBLE_EQ(resolve_ok({{"preset", "nvlink3"}}).bandwidth.value(), 300e9);
  // H100: 900 GB/s "sum of both directions" -> 450 (nccl #1442).
  EXPECT_DOUBLE_EQ(resolve_ok({{"preset", "nvlink4"}}).bandwidth.value(), 450e9);
  // HDR: 200 Gb/s = 25 GB/s (hardware.md §4).
  EXPECT_DOUBLE_EQ(resolve_ok({{"preset", "ib-hdr"}}).bandwidth.value(), 25e9);
  // PCIe Gen5 x16: 64 GB/s per direction (hardware.md §5).
  EXPECT_DOUBLE_EQ(resolve_ok({{"preset", "pcie5"}}).bandwidth.value(), 64e9);
}

TEST(LinkPresets, EffectiveBandwidthAppliesEfficiency) {
  // nvlink3 efficiency 0.78, NCCL's A100 NVLink bus-bandwidth cap
  // (235 of 300 GB/s per direction): 234 GB/s.
  EXPECT_DOUBLE_EQ(resolve_ok({{"preset", "nvlink3"}}).effective_bandwidth().value(), 300e9 * 0.78);
}

TEST(ResolveLink, OverridesOnTopOfAPreset) {
  LinkSpec s = resolve_ok({{"preset", "nvlink3"}, {"latency", "1 us"}, {"name", "slow-nvlink"}});
  EXPECT_DOUBLE_EQ(s.latency.value(), 1e-6);
  EXPECT_DOUBLE_EQ(s.bandwidth.value(), 300e9);  // untouched preset value
  EXPECT_EQ(s.name, "slow-nvlink");
}

TEST(ResolveLink, EnergyPerBitIsConvertedToBytes) {
  // 5 pJ/bit x 8 bit/B = 40 pJ/B.
  LinkSpec s = resolve_ok({{"type", "electrical"}, {"bandwidth", "100 GB/s"}, {"latency", "1 us"},
                           {"energy_per_byte", "5 pJ/bit"}});
  EXPECT_NEAR(s.energy_per_byte.value(), 40e-12, 1e-24);
  EXPECT_EQ(s.name, "electrical");
  EXPECT_DOUBLE_EQ(s.efficiency, 1.0);  // declared default
}

TEST(ResolveLink, UnknownPresetListsValidOnes) {
  Diagnostics d;
  resolve_link({{"preset", "nvlink9"}}, "/cluster/links/1", d);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/cluster/links/1/preset");
  EXPECT_NE(d.issues()[0].message.find("unknown link preset \"nvlink9\"; valid ones are: cxl2, cxl3,"),
            std::string::npos)
      << d.issues()[0].message;
}

TEST(ResolveLink, UnknownTypeListsValidOnes) {
  Diagnostics d;
  resolve_link({{"type", "carrier-pigeon"}}, "/l", d);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/l/type");
  EXPECT_EQ(d.issues()[0].message, "unknown link type \"carrier-pigeon\"; valid ones are: cxl, electrical, photonic");
}

TEST(ResolveLink, BadOverrideReportedAtItsPath) {
  Diagnostics d;
  resolve_link({{"preset", "ib-ndr"}, {"bandwidth", "fast"}, {"colour", "red"}}, "/t/nic", d);
  ASSERT_EQ(d.issues().size(), 2u);
  EXPECT_EQ(d.issues()[0].path, "/t/nic/colour");
  EXPECT_EQ(d.issues()[1].path, "/t/nic/bandwidth");
  EXPECT_EQ(d.issues()[1].message, "expected a bandwidth such as \"600 GB/s\", got \"fast\"");
}

TEST(ResolveLink, MissingPresetAndTypeAndWrongShape) {
  Diagnostics d;
  resolve_link({{"bandwidth", "1 GB/s"}}, "/x", d);
  resolve_link("nvlink3", "/y", d);
  resolve_link({{"preset", "cxl2"}, {"type", "electrical"}}, "/z", d);
  ASSERT_EQ(d.issues().size(), 3u);
  EXPECT_EQ(d.issues()[0].path, "/x");
  EXPECT_NE(d.issues()[0].message.find("missing \"preset\" or \"type\""), std::string::npos);
  EXPECT_EQ(d.issues()[1].path, "/y");
  EXPECT_EQ(d.issues()[2].path, "/z/type");
  EXPECT_EQ(d.issues()[2].message, "preset \"cxl2\" is of type \"cxl\", got \"electrical\"");
}

TEST(ResolveLink, RequiredParamsOfATypeAreChecked) {
  Diagnostics d;
  resolve_link({{"type", "electrical"}, {"bandwidth", "1 GB/s"}}, "/x", d);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/x/latency");
  EXPECT_EQ(d.issues()[0].message, "required key is missing");
}

}  // namespace
}  // namespace hcsim
