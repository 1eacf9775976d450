// docs/scenario.md stays true to the declarations: every field of every scenario section
// is documented, with its default as declared.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "scenarios/sections.hpp"

namespace hcsim {
namespace {

TEST(Docs, ScenarioReferenceListsEveryField) {
  std::ifstream in(std::string(HCSIM_SOURCE_DIR) + "/docs/scenario.md");
  ASSERT_TRUE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  for (const ParamTable* t : {&sections::top(), &sections::cluster(), &sections::pool(), &sections::workload(),
                              &sections::model_ref(), &sections::strategy(), &sections::fsdp(), &sections::simulation(),
                              &sections::outputs()})
    for (const ParamSpec& p : *t) {
      EXPECT_NE(doc.find("    " + p.name + " "), std::string::npos) << p.name << " is not in docs/scenario.md";
      if (p.def && !p.def->is_null()) {
        EXPECT_NE(doc.find("default " + p.def->dump()), std::string::npos) << p.name << " default";
      }
    }
}

}  // namespace
}  // namespace hcsim
