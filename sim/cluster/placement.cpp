#include "sim/cluster/placement.hpp"

#include <algorithm>
#include <string>

#include "sim/core/error.hpp"

namespace hcsim {

Placer::Placer(const ClusterLayout& layout) : layout_(&layout) {
  HCSIM_ASSERT(layout.gpus_per_node > 0, "a node holds at least one device");
  for (const auto& p : layout.pools) {
    HCSIM_ASSERT(p.devices % layout.gpus_per_node == 0, "pool " + p.name + " is not whole nodes");
    held_.emplace_back(p.devices, false);
  }
}

std::uint32_t Placer::nodes(std::uint32_t pool) const { return layout_->pools[pool].devices / layout_->gpus_per_node; }

std::uint32_t Placer::leaf_nodes(std::uint32_t pool) const {
  const std::uint32_t n = layout_->nodes_per_leaf;
  return n == 0 ? std::max<std::uint32_t>(nodes(pool), 1) : n;
}

std::uint32_t Placer::node_free(std::uint32_t pool, std::uint32_t node) const {
  const std::uint32_t g = layout_->gpus_per_node;
  std::uint32_t n = 0;
  for (std::uint32_t d = node * g; d < (node + 1) * g; ++d) n += held_[pool][d] ? 0 : 1;
  return n;
}

// Leaves are the cluster's (nodes_per_leaf consecutive nodes of the whole cluster): a pool
// that starts inside a leaf has a partial first leaf. The offset of the pool's first node in it.
std::uint32_t Placer::leaf_offset(std::uint32_t pool) const {
  if (layout_->nodes_per_leaf == 0) return 0;
  return layout_->pools[pool].first_device / layout_->gpus_per_node % layout_->nodes_per_leaf;
}

std::vector<std::uint32_t> Placer::free_nodes_of_leaf(std::uint32_t pool, std::uint32_t leaf) const {
  std::vector<std::uint32_t> out;
  const std::uint32_t per = leaf_nodes(pool), off = leaf_offset(pool);
  const std::uint32_t from = leaf * per > off ? leaf * per - off : 0;
  for (std::uint32_t node = from; node < std::min(nodes(pool), (leaf + 1) * per - off); ++node)
    if (node_free(pool, node) == layout_->gpus_per_node) out.push_back(node);
  return out;
}

// The nodes a whole-node job of `count` nodes takes; empty when there are not enough.
std::vector<std::uint32_t> Placer::whole_nodes(std::uint32_t pool, std::uint32_t count) const {
  const std::uint32_t per = leaf_nodes(pool);
  const std::uint32_t leaves = (leaf_offset(pool) + nodes(pool) + per - 1) / per;
  std::vector<std::vector<std::uint32_t>> avail(leaves);
  std::uint32_t total = 0;
  for (std::uint32_t l = 0; l < leaves; ++l) {
    avail[l] = free_nodes_of_leaf(pool, l);
    total += static_cast<std::uint32_t>(avail[l].size());
  }
  if (total < count || count == 0) return {};
  // One leaf: the best fit (fewest free nodes that still suffice), ties lowest leaf.
  std::int64_t best = -1;
  for (std::uint32_t l = 0; l < leaves; ++l)
    if (avail[l].size() >= count && (best < 0 || avail[l].size() < avail[static_cast<std::size_t>(best)].size()))
      best = l;
  if (best >= 0) {
    const auto& f = avail[static_cast<std::size_t>(best)];
    return {f.begin(), f.begin() + count};
  }
  // Several leaves: most free nodes first, ties lowest leaf.
  std::vector<std::uint32_t> order(leaves);
  for (std::uint32_t l = 0; l < leaves; ++l) order[l] = l;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return avail[a].size() > avail[b].size(); });
  std::vector<std::uint32_t> out;
  for (auto l : order)
    for (auto node : avail[l])
      if (out.size() < count) out.push_back(node);
  std::sort(out.begin(), out.end());
  return out;
}

// The node a job of n < gpus_per_node devices goes on; -1 when none has room.
std::int64_t Placer::small_node(std::uint32_t pool, std::uint32_t n) const {
  const std::uint32_t g = layout_->gpus_per_node;
  std::int64_t best = -1, fully = -1;
  std::uint32_t best_free = g + 1;
  for (std::uint32_t node = 0; node < nodes(pool); ++node) {
    const std::uint32_t f = node_free(pool, node);
    if (f == g) {
      if (fully < 0) fully = node;
    } else if (f >= n && f < best_free) {
      best = node;
      best_free = f;
    }
  }
  return best >= 0 ? best : fully;
}

bool Placer::fits(std::uint32_t pool, std::uint32_t n) const {
  HCSIM_ASSERT(pool < held_.size(), "no pool " + std::to_string(pool));
  const std::uint32_t g = layout_->gpus_per_node;
  if (n == 0 || n > layout_->pools[pool].devices) return false;
  if (n < g) return small_node(pool, n) >= 0;
  if (n % g != 0) return false;
  return !whole_nodes(pool, n / g).empty();
}

JobPlacement Placer::place(std::uint32_t pool, std::uint32_t n) {
  HCSIM_ASSERT(fits(pool, n), std::to_string(n) + " devices do not fit in pool " + layout_->pools[pool].name);
  const std::uint32_t g = layout_->gpus_per_node;
  JobPlacement p{.pool = pool, .devices = {}};
  std::vector<std::uint32_t> local;
  if (n < g) {
    const auto node = static_cast<std::uint32_t>(small_node(pool, n));
    for (std::uint32_t d = node * g; d < (node + 1) * g && local.size() < n; ++d)
      if (!held_[pool][d]) local.push_back(d);
  } else {
    for (auto node : whole_nodes(pool, n / g))
      for (std::uint32_t d = node * g; d < (node + 1) * g; ++d) local.push_back(d);
  }
  for (auto d : local) {
    held_[pool][d] = true;
    p.devices.push_back(layout_->pools[pool].first_device + d);
  }
  return p;
}

void Placer::release(const JobPlacement& p) {
  HCSIM_ASSERT(p.pool < held_.size(), "no pool " + std::to_string(p.pool));
  for (auto id : p.devices) {
    const std::uint32_t d = id - layout_->pools[p.pool].first_device;
    HCSIM_ASSERT(d < held_[p.pool].size() && held_[p.pool][d], "releasing a device not held: " + std::to_string(id));
    held_[p.pool][d] = false;
  }
}

std::uint32_t Placer::free(std::uint32_t pool) const {
  return static_cast<std::uint32_t>(std::count(held_[pool].begin(), held_[pool].end(), false));
}

std::uint32_t Placer::fragmented(std::uint32_t pool) const {
  std::uint32_t n = 0;
  for (std::uint32_t node = 0; node < nodes(pool); ++node) {
    const std::uint32_t f = node_free(pool, node);
    if (f < layout_->gpus_per_node) n += f;
  }
  return n;
}

}  // namespace hcsim
