#include "sim/collectives/executor.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace hcsim {
namespace {

std::string check_step(const Step& st, std::size_t step, const std::vector<Eigen::VectorXd>& buffers) {
  const auto n = static_cast<int>(buffers.size());
  struct Write { int rank; std::int64_t lo, hi; bool reduce; };
  std::vector<Write> writes;
  for (const auto& t : st.transfers) {
    if (t.src < 0 || t.src >= n || t.dst < 0 || t.dst >= n || t.count < 0)
      return fmt::format("step {}: transfer {} -> {} out of range", step, t.src, t.dst);
    const auto src_len = buffers[static_cast<std::size_t>(t.src)].size();
    const auto dst_len = buffers[static_cast<std::size_t>(t.dst)].size();
    if (t.src_offset < 0 || t.src_offset + t.count > src_len || t.dst_offset < 0 || t.dst_offset + t.count > dst_len)
      return fmt::format("step {}: transfer {} -> {} outside the buffers", step, t.src, t.dst);
    if (t.count > 0) writes.push_back({t.dst, t.dst_offset, t.dst_offset + t.count, t.reduce});
  }
  std::sort(writes.begin(), writes.end(), [](const Write& a, const Write& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.lo < b.lo;
  });
  // Sweep each rank's writes by start: an overwrite may not meet any other write, a
  // reduction may not meet an overwrite.
  int rank = -1;
  std::int64_t hi_any = 0, hi_overwrite = 0;
  for (const auto& w : writes) {
    if (w.rank != rank) { rank = w.rank; hi_any = hi_overwrite = std::numeric_limits<std::int64_t>::min(); }
    if (w.lo < (w.reduce ? hi_overwrite : hi_any))
      return fmt::format("step {}: rank {} is overwritten twice at element {}", step, w.rank, w.lo);
    hi_any = std::max(hi_any, w.hi);
    if (!w.reduce) hi_overwrite = std::max(hi_overwrite, w.hi);
  }
  return {};
}

}  // namespace

std::string execute_schedule(const Schedule& sc, std::vector<Eigen::VectorXd>& buffers) {
  for (const auto& st : sc.steps)
    if (st.repeat != 1) return "a compressed schedule (repeated steps) cannot be executed";
  if (static_cast<int>(buffers.size()) != sc.ranks)
    return fmt::format("schedule has {} ranks, {} buffers given", sc.ranks, buffers.size());
  for (std::size_t s = 0; s < sc.steps.size(); ++s) {
    const Step& st = sc.steps[s];
    if (auto err = check_step(st, s, buffers); !err.empty()) return err;
    std::vector<Eigen::VectorXd> payload;
    payload.reserve(st.transfers.size());
    for (const auto& t : st.transfers)
      payload.emplace_back(buffers[static_cast<std::size_t>(t.src)].segment(t.src_offset, t.count));
    for (std::size_t i = 0; i < st.transfers.size(); ++i) {
      const auto& t = st.transfers[i];
      auto dst = buffers[static_cast<std::size_t>(t.dst)].segment(t.dst_offset, t.count);
      if (t.reduce) dst += payload[i];
      else dst = payload[i];
    }
  }
  return {};
}

std::vector<Eigen::VectorXd> expected_result(CollectiveOp op, const std::vector<Eigen::VectorXd>& inputs, int root) {
  const int n = static_cast<int>(inputs.size());
  const auto len = n ? inputs[0].size() : 0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(len);
  for (const auto& x : inputs) sum += x;
  std::vector<Eigen::VectorXd> out(static_cast<std::size_t>(n), Eigen::VectorXd::Constant(len, nan));
  for (int r = 0; r < n; ++r) {
    auto& o = out[static_cast<std::size_t>(r)];
    switch (op) {
      case CollectiveOp::all_reduce: o = sum; break;
      case CollectiveOp::reduce_scatter:
        o.segment(chunk_offset(len, n, r), chunk_size(len, n, r)) = sum.segment(chunk_offset(len, n, r), chunk_size(len, n, r));
        break;
      case CollectiveOp::all_gather:
        for (int i = 0; i < n; ++i)
          o.segment(chunk_offset(len, n, i), chunk_size(len, n, i)) =
              inputs[static_cast<std::size_t>(i)].segment(chunk_offset(len, n, i), chunk_size(len, n, i));
        break;
      case CollectiveOp::broadcast: o = inputs[static_cast<std::size_t>(root)]; break;
      case CollectiveOp::reduce: if (r == root) o = sum; break;
      case CollectiveOp::all_to_all: {
        const auto b = len / n;
        for (int j = 0; j < n; ++j) o.segment(j * b, b) = inputs[static_cast<std::size_t>(j)].segment(r * b, b);
        break;
      }
      case CollectiveOp::send_recv: if (r == 1) o = inputs[0]; break;
    }
  }
  return out;
}

}  // namespace hcsim
