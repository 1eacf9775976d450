#pragma once
// Shared set-up of the report tests: a compute device with round parameters registered as
// "report-test" (time = FLOPs / rate + bytes / bandwidth; dynamic energy = FLOPs x energy
// per FLOP + bytes x energy per byte; constant idle power), small scenarios built from
// JSON objects, and the quickstart scenario -- each run once per test binary.

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"
#include "sim/report/report.hpp"

namespace hcsim::testing {

class RoundDevice final : public ComputeDevice {
 public:
  explicit RoundDevice(const Params& p)
      : rate_(p.get<FlopsPerSecond>("rate")),
        bw_(p.get<BytesPerSecond>("memory_bandwidth")),
        cap_(p.get<Bytes>("capacity")),
        idle_(p.get<Watts>("idle_power")),
        e_flop_(p.get<JoulesPerFlop>("energy_per_flop")),
        e_byte_(p.get<JoulesPerByte>("energy_per_byte")) {}
  std::string_view type() const override { return "report-test"; }
  Seconds time(const Kernel& k) const override { return k.flops / rate_ + k.bytes / bw_; }
  Joules dynamic_energy(const Kernel& k) const override { return k.flops * e_flop_ + k.bytes * e_byte_; }
  FlopsPerSecond peak(DType, bool) const override { return rate_; }
  Bytes memory_capacity() const override { return cap_; }
  BytesPerSecond memory_bandwidth() const override { return bw_; }
  Watts idle_power() const override { return idle_; }
  Watts max_power() const override { return Watts(1000); }

 private:
  FlopsPerSecond rate_;
  BytesPerSecond bw_;
  Bytes cap_;
  Watts idle_;
  JoulesPerFlop e_flop_;
  JoulesPerByte e_byte_;
};

inline void register_round_device() {
  register_builtins();
  if (compute_devices().find("report-test")) return;
  static const ParamTable params = {
      {.name = "rate", .kind = ParamKind::quantity, .dim = Dim::flop_rate, .def = 100e12, .min = 0,
       .min_exclusive = true, .help = "FLOP/s"},
      {.name = "memory_bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .def = 1e18, .min = 0,
       .min_exclusive = true, .help = "B/s"},
      {.name = "capacity", .kind = ParamKind::quantity, .dim = Dim::data, .def = 80e9, .min = 0, .help = "B"},
      {.name = "idle_power", .kind = ParamKind::quantity, .dim = Dim::power, .def = 50.0, .min = 0, .help = "W"},
      {.name = "energy_per_flop", .kind = ParamKind::quantity, .dim = Dim::energy_per_flop, .def = 1e-12, .min = 0,
       .help = "J/flop"},
      {.name = "energy_per_byte", .kind = ParamKind::quantity, .dim = Dim::energy_per_byte, .def = 0.0, .min = 0,
       .help = "J/B"},
  };
  compute_devices().add({"report-test", "round-number device for report tests", params,
                         [](const Params& p) { return std::make_unique<RoundDevice>(p); }, "test fixture"});
}

// A small GPT on one NVSwitch node of `dp*tp*pp` report-test devices whose NVLink is `link`.
inline nlohmann::json small_doc(int dp, int tp, int pp, const nlohmann::json& link, int global_batch = 8) {
  const int n = dp * tp * pp;
  return {{"name", "small"},
          {"cluster",
           {{"pools", {{{"name", "t"}, {"type", "report-test"}, {"count", n}}}},
            {"topology", {{"type", "nvswitch-cluster"}, {"gpus_per_node", n}, {"nvlink", link}}}}},
          {"workload",
           {{"model",
             {{"type", "gpt"},
              {"overrides", {{"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"vocab", 1024}, {"seq_len", 512}}}}},
            {"global_batch", global_batch},
            {"micro_batch", 1}}},
          {"strategy", {{"dp", dp}, {"tp", tp}, {"pp", pp}, {"schedule", "1f1b"}}},
          {"simulation", {{"symmetry", false}}}};
}

inline nlohmann::json nvlink3() { return {{"preset", "nvlink3"}}; }

struct Run {
  Scenario sc;
  RunOutput out;
  nlohmann::json report;
};

inline std::shared_ptr<const Run> run_doc(const nlohmann::json& doc) {
  static std::map<std::string, std::shared_ptr<const Run>> cache;
  const std::string key = doc.dump();
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  register_round_device();
  auto r = std::make_shared<Run>();
  r->sc = parse_scenario(doc, "test.json");
  r->out = run_scenario(r->sc);
  r->report = report_json(r->sc, r->out);
  return cache[key] = r;
}

inline std::shared_ptr<const Run> quickstart() {
  static std::shared_ptr<const Run> r = [] {
    register_builtins();
    auto q = std::make_shared<Run>();
    q->sc = load_scenario(std::string(HCSIM_SOURCE_DIR) + "/scenarios/quickstart.json");
    q->out = run_scenario(q->sc);
    q->report = report_json(q->sc, q->out);
    return q;
  }();
  return r;
}

}  // namespace hcsim::testing
