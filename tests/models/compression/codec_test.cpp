// The codec family as a whole: the registry, the plan helpers, the on_incompatible policy and
// the scenario-facing resolve_compression().
#include "models/compression/codec.hpp"

#include <gtest/gtest.h>

#include "codec_test_util.hpp"

namespace hcsim {
namespace {

using testing::make_codec;

TEST(CodecRegistry, HoldsEveryCodecWithHelpAndSource) {
  register_builtin_codecs();
  register_builtin_codecs();  // idempotent: a second call adds nothing and does not assert
  const std::vector<std::string> expected = {"bf16",       "fp16",        "int8",     "none",   "onebit-adam",
                                             "onebit-lamb", "powersgd",   "randomk",  "topk",   "zeroone-adam"};
  EXPECT_EQ(codecs().names(), expected);
  for (const auto& [type, entry] : codecs().entries()) {
    EXPECT_FALSE(entry.help.empty()) << type;
    EXPECT_FALSE(entry.source.empty()) << type;
    for (const auto& p : entry.params) EXPECT_FALSE(p.help.empty()) << type << "." << p.name;
    EXPECT_EQ(make_codec({{"type", type}})->type(), type);
  }
}

TEST(CodecRegistry, UnknownTypeNamesTheValidOnes) {
  register_builtin_codecs();
  Diagnostics d;
  EXPECT_EQ(codecs().build("lz4", nlohmann::json::object(), "/strategy/compression", d), nullptr);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/strategy/compression/type");
  EXPECT_EQ(d.issues()[0].message,
            "unknown compression codec type \"lz4\"; valid ones are: bf16, fp16, int8, none, onebit-adam, "
            "onebit-lamb, powersgd, randomk, topk, zeroone-adam");
}

// A slip of a codec's name names it (sim/core/nearest.hpp).
TEST(CodecRegistry, SlipOfATypeNamesTheOneMeant) {
  register_builtin_codecs();
  Diagnostics d;
  EXPECT_EQ(codecs().build("top-k", nlohmann::json::object(), "/strategy/compression", d), nullptr);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].message, "unknown compression codec type \"top-k\"; did you mean \"topk\"?");
}

TEST(CollectivePlan, BytesSentFollowTheBusBandwidthFactors) {
  // NCCL-tests PERFORMANCE.md: all-reduce moves 2(n-1)/n S per rank, all-gather and
  // all-to-all (n-1)/n S, S the collective's buffer.
  CollectivePlan plan{{{WireOp::all_reduce, Bytes(800), Bytes(800)},
                       {WireOp::all_gather, Bytes(100), Bytes(800)},
                       {WireOp::all_to_all, Bytes(800), Bytes(800)}}};
  EXPECT_DOUBLE_EQ(bytes_sent_per_rank(plan, 8).value(), 2 * 7 / 8.0 * 800 + 7 / 8.0 * 800 + 7 / 8.0 * 800);
  EXPECT_DOUBLE_EQ(bytes_sent_per_rank(plan, 1).value(), 0.0);
  EXPECT_FALSE(plan.in_place());
  EXPECT_TRUE((CollectivePlan{{{WireOp::all_reduce, Bytes(8), Bytes(8)}}}).in_place());
  EXPECT_EQ(wire_op_name(WireOp::all_to_all), "all_to_all");
}

TEST(CodecCost, FlatOverloadIsAColumn) {
  auto c = make_codec({{"type", "int8"}});
  const CodecCost a = c->cost(100000, 4, 8, 0);
  const CodecCost b = c->cost(CodecInput{100000, 1, 4, 8, 0});
  EXPECT_EQ(a.wire_bytes_per_rank, b.wire_bytes_per_rank);
  EXPECT_EQ(a.encode_flops, b.encode_flops);
  EXPECT_EQ(a.extra_memory, b.extra_memory);
}

TEST(OnIncompatible, SparseCodecRefusesAnInPlaceRingAllReduce) {
  auto topk = make_codec({{"type", "topk"}, {"ratio", 0.01}});
  const CodecInput in{100000, 1, 4, 8, 0};
  try {
    (void)cost_for_in_place_allreduce(*topk, in, OnIncompatible::error, "/strategy/compression");
    FAIL() << "top-k was accepted for an in-place ring all-reduce";
  } catch (const InputError& e) {
    ASSERT_EQ(e.issues().size(), 1u);
    EXPECT_EQ(e.issues()[0].path, "/strategy/compression");
    EXPECT_EQ(e.issues()[0].message,
              "compression codec \"topk\" cannot be carried by an in-place ring all-reduce: its values + int32 "
              "indices are sparse vectors whose positions differ from rank to rank, so they do not sum in place; "
              "they travel by all-gather; set \"on_incompatible\": \"allgather\" to all-gather the encoded "
              "gradients instead, or choose a codec that sums in place");
  }
}

TEST(OnIncompatible, AllgatherPolicySwitchesToOneAllGather) {
  auto topk = make_codec({{"type", "topk"}, {"ratio", 0.01}});
  const CodecInput in{100000, 1, 4, 8, 0};
  const CodecCost c = cost_for_in_place_allreduce(*topk, in, OnIncompatible::allgather, "/s");
  ASSERT_EQ(c.plan.phases.size(), 1u);
  EXPECT_EQ(c.plan.phases[0].op, WireOp::all_gather);
  // k = ceil(0.01 * 1e5) = 1000 entries of 4-byte value + 4-byte index; the gathered buffer holds 8 of them.
  EXPECT_DOUBLE_EQ(c.plan.phases[0].contribution.value(), 8000.0);
  EXPECT_DOUBLE_EQ(c.plan.phases[0].buffer.value(), 64000.0);
  // 1-bit Adam's all-gather form: the whole encoded buffer (8 chunk messages) in one all-gather.
  auto onebit = make_codec({{"type", "onebit-adam"}, {"warmup_steps", 0}});
  const CodecCost o = cost_for_in_place_allreduce(*onebit, in, OnIncompatible::allgather, "/s");
  ASSERT_EQ(o.plan.phases.size(), 1u);
  EXPECT_EQ(o.plan.phases[0].op, WireOp::all_gather);
  // P = 100032 (multiple of 8 lcm(8, 8) = 64), c = 12504, m = 12504/8 + 4 = 1567, n m = 12536.
  EXPECT_DOUBLE_EQ(o.wire_bytes_per_rank.value(), 12536.0);
}

TEST(OnIncompatible, InPlaceCodecIsUnchanged) {
  auto fp16 = make_codec({{"type", "fp16"}});
  const CodecInput in{1000, 1, 4, 8, 0};
  const CodecCost c = cost_for_in_place_allreduce(*fp16, in, OnIncompatible::error, "/s");
  EXPECT_TRUE(c.plan.in_place());
  EXPECT_EQ(c.wire_bytes_per_rank, fp16->cost(in).wire_bytes_per_rank);
}

TEST(ResolveCompression, ReadsTypeParamsAndPolicy) {
  Diagnostics d;
  auto cfg = resolve_compression({{"type", "topk"}, {"ratio", 0.001}, {"on_incompatible", "allgather"}}, "/c", d);
  ASSERT_TRUE(cfg.has_value());
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(cfg->codec->type(), "topk");
  EXPECT_EQ(cfg->on_incompatible, OnIncompatible::allgather);
  auto def = resolve_compression({{"type", "none"}}, "/c", d);
  ASSERT_TRUE(def.has_value());
  EXPECT_EQ(def->on_incompatible, OnIncompatible::error);
}

TEST(ResolveCompression, ReportsEveryProblemWithItsPath) {
  Diagnostics d;
  auto cfg = resolve_compression({{"type", "topk"}, {"ratio", 0}, {"on_incompatible", "drop"}, {"k", 5}},
                                 "/strategy/compression", d);
  EXPECT_FALSE(cfg.has_value());
  ASSERT_EQ(d.issues().size(), 3u);
  EXPECT_EQ(d.issues()[0].path, "/strategy/compression/on_incompatible");
  EXPECT_EQ(d.issues()[0].message, "unknown value \"drop\"; valid ones are: error, allgather");
  EXPECT_EQ(d.issues()[1].path, "/strategy/compression/k");
  EXPECT_EQ(d.issues()[1].message, "unknown key \"k\"; valid ones are: error_feedback, ratio, select_passes");
  EXPECT_EQ(d.issues()[2].path, "/strategy/compression/ratio");
  EXPECT_EQ(d.issues()[2].message, "must be between 0 and 1, got 0");
  Diagnostics d2;
  EXPECT_FALSE(resolve_compression({{"ratio", 0.1}}, "/c", d2).has_value());
  ASSERT_EQ(d2.issues().size(), 1u);
  EXPECT_EQ(d2.issues()[0].path, "/c/type");
}

}  // namespace
}  // namespace hcsim
