// Parameter declarations: defaults, unit normalisation, unknown keys, ranges, all at once.
#include "sim/core/params.hpp"
#include "sim/core/registry.hpp"

#include <gtest/gtest.h>

namespace hcsim {
namespace {

ParamTable table() {
  return {
      {.name = "bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .def = "600 GB/s", .min = 0,
       .min_exclusive = true, .help = "per direction"},
      {.name = "count", .kind = ParamKind::integer, .min = 1, .max = 64, .help = "lanes"},
      {.name = "mode", .kind = ParamKind::choice, .def = "ring", .choices = {"ring", "tree"}, .help = "algorithm"},
  };
}

TEST(Params, DefaultsFilledAndUnitsNormalised) {
  Diagnostics d;
  auto p = resolve_params(table(), {{"count", 8}}, "/x", d);
  ASSERT_TRUE(d.ok());
  EXPECT_DOUBLE_EQ(p.get<BytesPerSecond>("bandwidth").value(), 600e9);
  EXPECT_EQ(p.integer("count"), 8);
  EXPECT_EQ(p.string("mode"), "ring");
}

TEST(Params, EveryProblemReportedWithItsPath) {
  Diagnostics d;
  resolve_params(table(), {{"bandwidth", "600 GB"}, {"mode", "star"}, {"colour", 1}}, "/links/2", d);
  ASSERT_EQ(d.issues().size(), 4u);
  EXPECT_EQ(d.issues()[0].path, "/links/2/colour");
  EXPECT_EQ(d.issues()[0].message, "unknown key \"colour\"; valid ones are: bandwidth, count, mode");
  EXPECT_EQ(d.issues()[1].path, "/links/2/bandwidth");
  EXPECT_EQ(d.issues()[1].message, "expected a bandwidth such as \"600 GB/s\", got \"600 GB\"");
  EXPECT_EQ(d.issues()[2].path, "/links/2/count");
  EXPECT_EQ(d.issues()[2].message, "required key is missing");
  EXPECT_EQ(d.issues()[3].path, "/links/2/mode");
  EXPECT_EQ(d.issues()[3].message, "unknown value \"star\"; valid ones are: ring, tree");
}

// A slip of a key or a choice names the one meant (sim/core/nearest.hpp); anything further
// lists the valid ones (above).
TEST(Params, UnknownKeyOrValueNearAValidOneIsSuggested) {
  Diagnostics d;
  resolve_params(table(), {{"bandwith", "600 GB/s"}, {"count", 1}, {"mode", "rnig"}}, "/links/2", d);
  ASSERT_EQ(d.issues().size(), 2u);
  EXPECT_EQ(d.issues()[0].path, "/links/2/bandwith");
  EXPECT_EQ(d.issues()[0].message, "unknown key \"bandwith\"; did you mean \"bandwidth\"?");
  EXPECT_EQ(d.issues()[1].path, "/links/2/mode");
  EXPECT_EQ(d.issues()[1].message, "unknown value \"rnig\"; did you mean \"ring\"?");
}

TEST(Params, Ranges) {
  Diagnostics d;
  resolve_params(table(), {{"count", 65}, {"bandwidth", 0}}, "", d);
  ASSERT_EQ(d.issues().size(), 2u);
  EXPECT_EQ(d.issues()[0].message, "must be greater than 0 B/s, got 0 B/s");
  EXPECT_EQ(d.issues()[1].message, "must be between 1 and 64, got 65");
  Diagnostics d2;
  resolve_params(table(), {{"count", 2.5}}, "", d2);
  EXPECT_EQ(d2.issues()[0].message, "expected an integer, got 2.5");
}

struct Thing { virtual ~Thing() = default; };

TEST(Registry, UnknownTypeNamesValidOnes) {
  Registry<Thing> r("widget");
  r.add({"b", "", {}, [](const Params&) { return std::make_unique<Thing>(); }, ""});
  r.add({"a", "", {}, [](const Params&) { return std::make_unique<Thing>(); }, ""});
  try {
    (void)r.get("c", "/w/type");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.render(), "/w/type: unknown widget type \"c\"; valid ones are: a, b");
  }
}

TEST(JsonPointer, Escapes) { EXPECT_EQ(json_child("/a", "b/c~d"), "/a/b~1c~0d"); }

}  // namespace
}  // namespace hcsim
