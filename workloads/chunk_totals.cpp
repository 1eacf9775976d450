// A chunk's totals for the closed forms and the search (workloads/items.hpp,
// ChunkTotals): one layer of each kind built and summed, times its count, with the
// chunk's ends; the bucket markers and what each has after it.
#include <algorithm>
#include <array>
#include <vector>

#include "sim/core/error.hpp"
#include "workloads/item_builder.hpp"
#include "workloads/items.hpp"
#include "workloads/pass_totals.hpp"

namespace hcsim {

using items_detail::ItemBuilder;

ChunkTotals chunk_totals(const LoweringInput& in, const ComputeDevice& dev, int layers, bool embedding, bool head,
                         int first_layer) {
  // Every layer of a kind (dense or MoE) has the same items, so the chunk is its embedding
  // and head (no layer) plus each kind's count times one layer of that kind.
  ItemBuilder b(in, dev);
  const ChunkItems ends = b.build(0, embedding, head);
  const ChunkItems dense = b.build_kinds({false}, false, false);
  const int n_moe = static_cast<int>(in.model->moe_layers(first_layer, layers)), n_dense = layers - n_moe;
  const ChunkItems moe = n_moe > 0 ? b.build_kinds({true}, false, false) : ChunkItems{};
  ChunkTotals t;
  const PassTotals ef = pass_totals(ends.fwd), eb = pass_totals(ends.bwd);
  const PassTotals of = pass_totals(dense.fwd), ob = pass_totals(dense.bwd);
  t.fwd = add_scaled(ef, of, n_dense);
  t.bwd = add_scaled(eb, ob, n_dense);
  if (n_moe > 0) {
    t.fwd = add_scaled(t.fwd, pass_totals(moe.fwd), n_moe);
    t.bwd = add_scaled(t.bwd, pass_totals(moe.bwd), n_moe);
  }
  // B and W (split_backward), summed the same way.
  auto split = [](const std::vector<Item>& bwd) {
    std::array<std::vector<Item>, 2> bw;
    split_backward(bwd, bw[0], bw[1]);
    return std::array<PassTotals, 2>{pass_totals(bw[0]), pass_totals(bw[1])};
  };
  const auto es = split(ends.bwd), ds = split(dense.bwd);
  t.bwd_input = add_scaled(es[0], ds[0], n_dense);
  t.bwd_weight = add_scaled(es[1], ds[1], n_dense);
  if (n_moe > 0) {
    const auto ms = split(moe.bwd);
    t.bwd_input = add_scaled(t.bwd_input, ms[0], n_moe);
    t.bwd_weight = add_scaled(t.bwd_weight, ms[1], n_moe);
  }
  if (n_moe > 0 && !t.fwd.ep.empty()) {
    // The passes' pieces, in pass order: forward the embedding, the layers first to last,
    // the head; backward the head, the layers last to first, the embedding.
    const ChunkItems emb = b.build(0, embedding, false), hd = b.build(0, false, head);
    const PassTotals df = pass_totals(dense.fwd, true), db = pass_totals(dense.bwd, true);
    const PassTotals mf = pass_totals(moe.fwd, true), mb = pass_totals(moe.bwd, true);
    auto layer = [&](int l, const PassTotals& d, const PassTotals& m) -> const std::vector<EpSegment>& {
      return in.model->moe_layer(first_layer + l) ? m.segments : d.segments;
    };
    t.fwd.segments = pass_totals(emb.fwd, true).segments;
    for (int l = 0; l < layers; ++l) append_segments(t.fwd.segments, layer(l, df, mf));
    append_segments(t.fwd.segments, pass_totals(hd.fwd, true).segments);
    t.bwd.segments = pass_totals(hd.bwd, true).segments;
    for (int l = layers - 1; l >= 0; --l) append_segments(t.bwd.segments, layer(l, db, mb));
    append_segments(t.bwd.segments, pass_totals(emb.bwd, true).segments);
  }
  t.fwd.units = splice_units(ef.units, embedding ? 1 : 0, of.units, layers);
  t.bwd.units = splice_units(eb.units, head ? 1 : 0, ob.units, layers);
  t.comm_bytes = b.act_bytes();
  t.grad_bytes = ends.grad_bytes + n_dense * dense.grad_bytes + n_moe * moe.grad_bytes;
  t.expert_grad_bytes = n_moe * moe.expert_grad_bytes;
  // Backward order: the head's marker, each layer's (last to first), the embedding's.
  const std::size_t head_markers = head ? 1 : 0;
  auto splice = [&](std::vector<Bytes>& out, const std::vector<Bytes>& e, const std::vector<Bytes>& d,
                    const std::vector<Bytes>& m) {
    out.assign(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(std::min(head_markers, e.size())));
    for (int l = layers - 1; l >= 0; --l) {
      const auto& one = in.model->moe_layer(first_layer + l) ? m : d;
      out.insert(out.end(), one.begin(), one.end());
    }
    if (head_markers < e.size()) out.insert(out.end(), e.begin() + static_cast<std::ptrdiff_t>(head_markers), e.end());
  };
  splice(t.markers, ends.markers, dense.markers, moe.markers);
  if (in.model->is_moe()) splice(t.expert_markers, ends.expert_markers, dense.expert_markers, moe.expert_markers);
  // Each marker's compute after it, built from the pass's end: the embedding's markers, the
  // layers first to last (the backward meets them last to first), the head's.
  std::vector<Seconds> ae, ad, am, rev;
  const Seconds te = compute_after_markers(ends.bwd, ae), td = compute_after_markers(dense.bwd, ad),
                tm = n_moe > 0 ? compute_after_markers(moe.bwd, am) : Seconds{};
  const std::size_t hm = std::min(head_markers, ae.size());
  const Seconds emb = hm > 0 ? ae[0] : te;  // the embedding's part of the ends' backward
  for (std::size_t j = ae.size(); j-- > hm;) rev.push_back(ae[j]);
  Seconds later = emb;
  for (int l = 0; l < layers; ++l) {
    const bool moe_layer = in.model->moe_layer(first_layer + l);
    const std::vector<Seconds>& a = moe_layer ? am : ad;
    for (std::size_t j = a.size(); j-- > 0;) rev.push_back(a[j] + later);
    later += moe_layer ? tm : td;
  }
  for (std::size_t j = hm; j-- > 0;) rev.push_back(ae[j] + later - emb);
  t.marker_after.assign(rev.rbegin(), rev.rend());
  HCSIM_ASSERT(t.marker_after.size() == t.markers.size(), "a bucket marker without its place in the backward pass");
  // Each marker's forward compute (its block's: the head's, each layer's last to first, the
  // embedding's), for ZeRO-1/2's overlapped parameter gathers only.
  const StrategySpec& st = *in.strategy;
  if (!st.overlap_param_gather || st.zero < 1 || st.zero > 2) return t;
  const Seconds fh = head ? pass_totals(b.build(0, false, true).fwd).t : Seconds{};
  const Seconds fe = embedding ? pass_totals(b.build(0, true, false).fwd).t : Seconds{};
  const Seconds fm = n_moe > 0 ? pass_totals(moe.fwd).t : Seconds{};
  if (head && !ends.markers.empty()) t.marker_forward.push_back(fh);
  for (int l = layers - 1; l >= 0; --l)
    for (std::size_t j = 0; j < (in.model->moe_layer(first_layer + l) ? moe : dense).markers.size(); ++j)
      t.marker_forward.push_back(in.model->moe_layer(first_layer + l) ? fm : of.t);
  if (embedding && ends.markers.size() > (head ? 1u : 0u)) t.marker_forward.push_back(fe);
  HCSIM_ASSERT(t.marker_forward.size() == t.markers.size(), "a bucket marker without its forward block");
  return t;
}

}  // namespace hcsim
