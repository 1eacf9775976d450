#pragma once
// SM contention in the analytical mode (docs/models.md, "SM contention"): a pass of compute
// beside a stream of collectives, each holding a share of the device's SMs while it runs, so
// the compute runs at 1 - share meanwhile (the engine's re-rated kernels, sim/engine/
// replay.cpp). workloads/analytical.cpp replays the last backward pass beside its gradient
// buckets with it.
#include <cstddef>
#include <limits>
#include <vector>

#include "sim/core/units.hpp"

namespace hcsim {

// SM contention on a pass beside a communication stream: `work` seconds of compute at the
// full rate that end at 0 when nothing slows them (from -work), and the stream's jobs, each
// slowing the compute to 1 - share while it runs (run() them in order of start).
class ContendedPass {
 public:
  explicit ContendedPass(Seconds work) : now_(-work), left_(work) {}
  // When the pass has `left` seconds of work to go (not before the time reached).
  Seconds reach(Seconds left) {
    while (left_ > left) {
      while (cur_ < jobs_.size() && jobs_[cur_].end <= now_) ++cur_;
      double share = 0;
      Seconds next(std::numeric_limits<double>::infinity());
      if (cur_ < jobs_.size()) {
        if (jobs_[cur_].start <= now_) {
          share = jobs_[cur_].share;
          next = jobs_[cur_].end;
        } else {
          next = jobs_[cur_].start;
        }
      }
      const double rate = 1 - share;
      const Seconds need = (left_ - left) / rate;
      if (now_ + need <= next) {
        now_ += need;
        left_ = left;
        break;
      }
      left_ -= (next - now_) * rate;
      now_ = next;
    }
    return now_;
  }
  void run(Seconds start, Seconds end, double share) { jobs_.push_back({start, end, share}); }

 private:
  struct Job {
    Seconds start{}, end{};
    double share = 0;
  };
  std::vector<Job> jobs_;
  std::size_t cur_ = 0;
  Seconds now_, left_;
};

}  // namespace hcsim
