#include "pipeline_schedule.hpp"

#include "workloads/strategy.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <optional>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

class GPipe final : public PipelineSchedule {
 public:
  std::string_view type() const override { return "gpipe"; }
  std::vector<PipeOp> order(int, int, int m, int) const override {
    std::vector<PipeOp> out;
    for (int i = 0; i < m; ++i) out.push_back({false, i, 0});
    for (int i = 0; i < m; ++i) out.push_back({true, i, 0});
    return out;
  }
  double in_flight(int, int, int m, int) const override { return m; }
};

class OneFOneB final : public PipelineSchedule {
 public:
  std::string_view type() const override { return "1f1b"; }
  std::vector<PipeOp> order(int stage, int p, int m, int) const override {
    const int warm = std::min(p - stage - 1, m);
    std::vector<PipeOp> out;
    for (int i = 0; i < warm; ++i) out.push_back({false, i, 0});
    for (int i = 0; i < m - warm; ++i) {
      out.push_back({false, warm + i, 0});
      out.push_back({true, i, 0});
    }
    for (int i = m - warm; i < m; ++i) out.push_back({true, i, 0});
    return out;
  }
  double in_flight(int stage, int p, int m, int) const override { return std::min(p - stage, m); }
};

// Megatron-LM's interleaved schedule: forward micro-step k runs chunk (k / p) mod v of
// micro-batch (k / (p v)) p + k mod p; backward runs chunks in reverse. Requires m % p == 0.
class Interleaved final : public PipelineSchedule {
 public:
  std::string_view type() const override { return "interleaved-1f1b"; }
  bool interleaved() const override { return true; }
  static PipeOp step(int k, int p, int v, bool backward) {
    const int group = k / (p * v);
    int chunk = (k / p) % v;
    if (backward) chunk = v - 1 - chunk;
    return {backward, group * p + k % p, chunk};
  }
  std::vector<PipeOp> order(int stage, int p, int m, int v) const override {
    const int total = m * v;
    const int warm = std::min((p - stage - 1) * 2 + (v - 1) * p, total);
    std::vector<PipeOp> out;
    int f = 0, b = 0;
    for (; f < warm; ++f) out.push_back(step(f, p, v, false));
    while (f < total) {
      out.push_back(step(f++, p, v, false));
      out.push_back(step(b++, p, v, true));
    }
    while (b < total) out.push_back(step(b++, p, v, true));
    return out;
  }
  // Korthikanti eq. 5: stage 0 holds p micro-batches times (1 + (p-1)/(p v)) of its layers;
  // never more than the m v chunk forwards there are (all of them in the warm-up).
  double in_flight(int stage, int p, int m, int v) const override {
    const int warm = std::min((p - stage - 1) * 2 + (v - 1) * p, m * v);
    return static_cast<double>(std::min(warm + 1, m * v)) / v;
  }
};

// ZB-H1, the handcrafted zero-bubble schedule of Qi et al. (ICLR 2024, arXiv 2401.10241,
// §3.1, Figure 3 top): 1F1B's order of forwards and B passes (p - s - 1 warm-up forwards,
// then one forward one B, then the remaining B), each B followed by a W, except that stage
// s defers its first s W passes: they run after its last B. The deferred W fill the tail
// of the pipeline that 1F1B leaves idle (the later stages wait there for the B of the
// earlier ones), so with m >= p and pass times F, B, W (W <= F) the pipeline takes
// m (F + B + W) + (p - 1)(F + B - W) against 1F1B's m (F + B + W) + (p - 1)(F + B + W).
// A stage keeps a micro-batch's activations from its forward until its W: p - s - 1 warm-up
// forwards plus the steady state's one plus the s deferred W make min(p, m) on every stage,
// 1F1B's stage-0 peak ("all workers maintain the same number of in-flight microbatches",
// §3.1), so the peak over the stages is 1F1B's.
class ZbH1 final : public PipelineSchedule {
 public:
  std::string_view type() const override { return "zb-h1"; }
  bool splits_backward() const override { return true; }
  std::vector<PipeOp> order(int stage, int p, int m, int) const override {
    const int warm = std::min(p - stage - 1, m);
    std::vector<PipeOp> out;
    int w = 0;  // next W
    auto backward = [&](int i) {
      out.push_back({true, i, 0, PassPart::input});
      if (i >= stage) out.push_back({false, w++, 0, PassPart::weight});
    };
    for (int i = 0; i < warm; ++i) out.push_back({false, i, 0});
    for (int i = 0; i < m - warm; ++i) {
      out.push_back({false, warm + i, 0});
      backward(i);
    }
    for (int i = m - warm; i < m; ++i) backward(i);
    while (w < m) out.push_back({false, w++, 0, PassPart::weight});
    return out;
  }
  double in_flight(int, int p, int m, int) const override { return std::min(p, m); }
};

// The most chunk activations `order` keeps at once, in units of the stage's layers (v equal
// chunks): a forward adds its chunk's, its W (or whole backward) frees them.
double peak_chunks(const std::vector<PipeOp>& order, int v) {
  int held = 0, peak = 0;
  for (const PipeOp& op : order) {
    if (op.forward()) peak = std::max(peak, ++held);
    if (op.weight() || (op.backward && op.part == PassPart::whole)) --held;
  }
  return static_cast<double>(peak) / v;
}

// ZB-V (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024, arXiv
// 2405.15362, §4 and Figure 4, V-ZB; the zero-bubble repository's ZB-V): two chunks per
// device in a V (Placement::Shape::v_shape): chunk 0 is virtual stage s, chunk 1 is 2p-1-s.
// Stage s runs, with F0 / F1 the forwards of chunks 0 / 1 and B, W likewise:
//   warm-up   2(p - s) - 1 F0, then s pairs F1 F0, then p - s triples F1 B1 W1
//             (the last device's F1 follows its own F0 of the same micro-batch);
//   steady    F0 B0 W0 F1 B1 W1 while forwards remain (F0 left out once all are done);
//   cool-down s pairs B0 B1, p - s pairs B0 W0 (the oldest W0 pending), then the pending W1,
//             then the pending W0.
// The pattern needs M = max(m, 2p - 1) micro-batches; with fewer the passes of micro-batches
// m..M-1 are left out (each pass depends only on passes of its own micro-batch, so the rest
// keeps its order). With chunk pass times F = B = W the pipeline takes 6 m F + (p - 1) F for
// m >= 2p - 1: every device is busy from its first forward to the end, and (p - 1) F is the
// fill no schedule of this placement avoids (the last device's first forward waits for p - 1
// chunk forwards); the paper's bubble rate for T_F = T_B = T_W is 0 (its table of V-Min,
// V-Half, V-ZB) and this is its limit for m >> p. Each device keeps at peak 2p chunk
// activations for m >= 2p - 1: p micro-batches of its layers, 1F1B's stage-0 peak (the
// paper's "same activation memory as 1F1B").
class ZbV final : public PipelineSchedule {
 public:
  std::string_view type() const override { return "zb-v"; }
  bool splits_backward() const override { return true; }
  Placement placement(int p, int) const override { return {p, 2, Placement::Shape::v_shape}; }
  std::vector<PipeOp> order(int stage, int p, int m, int) const override {
    const int all = std::max(m, 2 * p - 1);
    std::vector<PipeOp> out;
    std::array<int, 2> f{}, b{}, w{};  // next F, B, W per chunk
    auto fwd = [&](int c) { out.push_back({false, f[c]++, c}); };
    auto bwd = [&](int c) { out.push_back({true, b[c]++, c, PassPart::input}); };
    auto wgt = [&](int c) { out.push_back({false, w[c]++, c, PassPart::weight}); };
    for (int i = 0; i < 2 * (p - stage) - 1; ++i) fwd(0);
    for (int i = 0; i < stage; ++i) {
      fwd(1);
      fwd(0);
    }
    for (int i = 0; i < p - stage; ++i) {
      fwd(1);
      bwd(1);
      wgt(1);
    }
    while (f[1] < f[0] || f[0] < all) {
      if (f[0] < all) fwd(0);
      bwd(0);
      wgt(0);
      fwd(1);
      bwd(1);
      wgt(1);
    }
    for (int i = 0; i < stage; ++i) {
      bwd(0);
      bwd(1);
    }
    for (int i = 0; i < p - stage; ++i) {
      bwd(0);
      wgt(0);
    }
    while (w[1] < b[1]) wgt(1);
    while (w[0] < b[0]) wgt(0);
    HCSIM_ASSERT(f[0] == all && f[1] == all && w[0] == all && w[1] == all, "ZB-V order incomplete");
    std::erase_if(out, [&](const PipeOp& op) { return op.microbatch >= m; });
    return out;
  }
  double in_flight(int stage, int p, int m, int v) const override { return peak_chunks(order(stage, p, m, v), 2); }
};

// DualPipe (DeepSeek-AI, DeepSeek-V3 Technical Report, arXiv 2412.19437, §3.2.1, Figure 5,
// Table 2; the order of the deepseek-ai/DualPipe repository): p even, m even, m >= 2p. Half
// the micro-batches (0..m/2-1, chunk 0) enter at stage 0, half (m/2..m-1, chunk 1) at stage
// p-1 (Placement::Shape::dual: every stage holds two model stages, 2x parameters). Stage s
// of the first half (h = s; the second half mirrors it, h = p-1-s, its phases swapped)
// runs, with H = p/2, n = m/2, phase 0 its own direction's chunk and phase 1 the other's:
//   2(H-h-1) F0;  h+1 pairs F0 F1;  H-h-1 triples B1 W F1 (B split, its W at once);
//   n-p+h+1 times: (F0 & B1) (F1 & B0), each a pair of a forward and a whole backward of two
//     micro-batches (the middle stages' first F0 and B1 apart, not paired), both outputs
//     sent when the pair is done; the lowering and the recurrence interleave the two
//     passes' pieces so each computes beside the other's MoE collectives (pair_end);
//   H-h-1 times: B1 (whole), (F1 & B0);
//   h+1 pairs B1 B0, whole until the middle one, split (W deferred) from there;
//   H-h-1 pairs W, B0 (split);  h+1 W.
// Deferred W run oldest first. Table 2 gives the bubble (p/2 - 1)(F&B + B' - 3W), B' = B + W
// the whole backward, F&B a pair's time; with F&B = F + B' the replayed order meets it for
// F = B and W = B or B/2, and stays below it for F <= B otherwise; with F > B it exceeds it
// (tests/engine/dualpipe_test.cpp);
// every stage keeps p + 1 chunk activations at peak (Table 2: PP+1).
class DualPipe final : public PipelineSchedule {
 public:
  std::string_view type() const override { return "dualpipe"; }
  bool splits_backward() const override { return true; }
  Placement placement(int p, int) const override { return {p, 2, Placement::Shape::dual}; }
  ScheduleNeeds needs() const override { return {2, 2, 2}; }
  std::vector<PipeOp> order(int stage, int p, int m, int) const override {
    HCSIM_ASSERT(p % 2 == 0 && m % 2 == 0 && m >= 2 * p, "DualPipe needs p, m even and m >= 2p");
    const int half = p / 2, h = std::min(stage, p - 1 - stage), n = m / 2;
    const int swap = stage >= half ? 1 : 0;  // the second half's phase 0 is direction 1
    std::vector<PipeOp> out;
    std::array<int, 2> f{}, b{};
    std::deque<PipeOp> deferred;  // W of split B passes, oldest first
    auto fwd = [&](int phase, bool paired = false) {
      const int d = phase ^ swap;
      PipeOp op{false, d * n + f[static_cast<std::size_t>(d)]++, d};
      op.paired = paired;
      out.push_back(op);
    };
    auto bwd = [&](int phase, bool split) {
      const int d = phase ^ swap;
      const int i = d * n + b[static_cast<std::size_t>(d)]++;
      out.push_back({true, i, d, split ? PassPart::input : PassPart::whole});
      if (split) deferred.push_back({false, i, d, PassPart::weight});
    };
    auto wgt = [&] {
      out.push_back(deferred.front());
      deferred.pop_front();
    };
    for (int i = 0; i < 2 * (half - h - 1); ++i) fwd(0);
    for (int i = 0; i <= h; ++i) {
      fwd(0);
      fwd(1);
    }
    for (int i = 0; i < half - h - 1; ++i) {
      bwd(1, true);
      wgt();
      fwd(1);
    }
    for (int i = 0; i < n - p + h + 1; ++i) {
      fwd(0, i > 0 || h != half - 1);
      bwd(1, false);
      fwd(1, true);
      bwd(0, false);
    }
    for (int i = 0; i < half - h - 1; ++i) {
      bwd(1, false);
      fwd(1, true);
      bwd(0, false);
    }
    const int mid = (h + 1) / 2;
    for (int i = 0; i <= h; ++i) {
      bwd(1, i > mid || (i == mid && h % 2 == 1));
      bwd(0, i >= mid);
    }
    for (int i = 0; i < half - h - 1; ++i) {
      wgt();
      bwd(0, true);
    }
    while (!deferred.empty()) wgt();
    return out;
  }
  double in_flight(int stage, int p, int m, int v) const override { return peak_chunks(order(stage, p, m, v), 2); }
};

template <class S>
void add_schedule(const char* help,
                  const char* source = "Huang et al. 2019 (GPipe); Narayanan et al. 2021 (PipeDream-Flush); SC21 §2.2") {
  pipeline_schedules().add({S().type().data(), help, {}, [](const Params&) { return std::make_unique<S>(); }, source});
}

// with_a2a_overlap (pipeline_schedule.hpp).
class A2aOverlap final : public PipelineSchedule {
 public:
  explicit A2aOverlap(std::unique_ptr<PipelineSchedule> base) : base_(std::move(base)) {}
  std::string_view type() const override { return base_->type(); }
  bool interleaved() const override { return base_->interleaved(); }
  Placement placement(int p, int interleave) const override { return base_->placement(p, interleave); }
  ScheduleNeeds needs() const override { return base_->needs(); }
  bool pairs() const override { return true; }
  std::vector<PipeOp> order(int stage, int p, int m, int v) const override {
    std::vector<PipeOp> out;
    std::optional<PipeOp> held;  // a backward waiting for the next forward
    for (const PipeOp& op : base_->order(stage, p, m, v)) {
      HCSIM_ASSERT(op.part == PassPart::whole && !op.paired, "the all-to-all overlap pairs whole passes");
      if (op.backward) {
        if (held) out.push_back(*held);
        held = op;
      } else if (held) {
        out.push_back(op);
        out.back().paired = true;
        out.push_back(*held);
        held.reset();
      } else {
        out.push_back(op);
      }
    }
    if (held) out.push_back(*held);
    return out;
  }
  double in_flight(int stage, int p, int m, int v) const override { return peak_chunks(order(stage, p, m, v), v); }

 private:
  std::unique_ptr<PipelineSchedule> base_;
};

}  // namespace

std::unique_ptr<PipelineSchedule> with_a2a_overlap(std::unique_ptr<PipelineSchedule> base) {
  return std::make_unique<A2aOverlap>(std::move(base));
}

std::unique_ptr<PipelineSchedule> make_schedule(std::string_view name, bool a2a_overlap, std::string_view path) {
  auto s = pipeline_schedules().get(name, std::string(path)).make(Params());
  return a2a_overlap ? with_a2a_overlap(std::move(s)) : std::move(s);
}

Registry<PipelineSchedule>& pipeline_schedules() {
  static Registry<PipelineSchedule> r("pipeline schedule");
  return r;
}

void register_builtin_schedules() {
  static bool done = false;
  if (done) return;
  done = true;
  add_schedule<GPipe>("all forwards, then all backwards; stage keeps m micro-batches of activations");
  add_schedule<OneFOneB>("PipeDream-Flush: p-s-1 warm-up forwards, then one forward one backward; keeps p-s");
  add_schedule<Interleaved>("interleaved 1F1B with v chunks per device; bubble (p-1)/(v m); needs m divisible by p");
  add_schedule<ZbH1>("zero bubble ZB-H1: backward split into B and W, stage s defers s W; bubble (p-1)(F+B-W)",
                     "Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024 (arXiv 2401.10241) §3.1");
  add_schedule<ZbV>(
      "zero bubble ZB-V: 2 chunks per device in a V (chunk 1 on stage 2p-1-s), backward split into B "
      "and W; bubble (p-1) F of a chunk when F = B = W; keeps p micro-batches",
      "Qi et al., Pipeline Parallelism with Controllable Memory, NeurIPS 2024 (arXiv 2405.15362) §4, V-ZB");
  add_schedule<DualPipe>(
      "DualPipe: half the micro-batches enter at each end, every stage holds two model stages (2x "
      "parameters); a forward and a backward of two micro-batches run as a pair, each computing "
      "beside the other's MoE all-to-alls; needs pp even, m even and m >= 2 pp",
      "DeepSeek-V3 Technical Report (arXiv 2412.19437) §3.2.1, Table 2; deepseek-ai/DualPipe");
}

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
    case Recompute::op:
      return "selective-op";
  }
  return "?";
}

std::optional<Recompute> recompute_named(std::string_view name) {
  for (const Recompute r : {Recompute::none, Recompute::selective, Recompute::full, Recompute::op})
    if (recompute_name(r) == name) return r;
  return std::nullopt;
}

}  // namespace hcsim
