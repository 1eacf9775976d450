#pragma once
// Where a job's devices go inside its pool (docs/cluster.md): the placement the scheduler
// loop and the schedulers share.
//
// A pool is whole nodes of `ClusterLayout::gpus_per_node` devices; the cluster's nodes are
// grouped in leaves of `nodes_per_leaf` consecutive nodes (0: one leaf per pool), so a pool
// that starts inside a leaf has a partial first leaf. The rules,
// which keep a job's tensor-parallel group inside a node and its data-parallel ring under as
// few leaf switches as they can (issue #21, "placement packs nodes and leaves"):
//
// - A job of n < gpus_per_node devices goes on one node: best fit among the partly held
//   nodes with at least n free devices (fewest free first, ties lowest node), else the lowest
//   fully free node. It takes the lowest free devices of that node.
// - A job of n >= gpus_per_node devices takes n / gpus_per_node whole free nodes (n must be
//   a multiple of gpus_per_node; the job-list parser enforces it, fits() says no otherwise
//   and place() asserts). If one leaf has enough free nodes: the leaf with the fewest free
//   nodes that still has enough (best fit, ties lowest leaf), its lowest free nodes. Else the
//   leaves in order of most free nodes (ties lowest leaf), each giving its free nodes in
//   ascending order, until there are enough.
//
// JobPlacement::devices is ascending. Everything is deterministic: the same calls give the
// same devices.

#include <cstdint>
#include <vector>

#include "sim/cluster/cluster_types.hpp"

namespace hcsim {

class Placer {
 public:
  // `layout` must outlive the Placer and its copies; every pool's size is whole nodes.
  explicit Placer(const ClusterLayout& layout);

  // Whether `n` devices of `pool` can be placed now by the rules above.
  [[nodiscard]] bool fits(std::uint32_t pool, std::uint32_t n) const;
  // Places `n` devices of `pool` (asserts fits()).
  JobPlacement place(std::uint32_t pool, std::uint32_t n);
  // Frees a placement made by place() (asserts its devices are held).
  void release(const JobPlacement& p);
  // Free devices of `pool`.
  [[nodiscard]] std::uint32_t free(std::uint32_t pool) const;
  // Free devices of `pool` on nodes that are partly held (free but unusable by whole-node jobs).
  [[nodiscard]] std::uint32_t fragmented(std::uint32_t pool) const;
  [[nodiscard]] const ClusterLayout& layout() const { return *layout_; }

 private:
  [[nodiscard]] std::uint32_t nodes(std::uint32_t pool) const;
  [[nodiscard]] std::uint32_t node_free(std::uint32_t pool, std::uint32_t node) const;
  [[nodiscard]] std::uint32_t leaf_nodes(std::uint32_t pool) const;  // nodes per leaf of `pool`
  [[nodiscard]] std::uint32_t leaf_offset(std::uint32_t pool) const;
  [[nodiscard]] std::vector<std::uint32_t> free_nodes_of_leaf(std::uint32_t pool, std::uint32_t leaf) const;
  [[nodiscard]] std::vector<std::uint32_t> whole_nodes(std::uint32_t pool, std::uint32_t count) const;
  [[nodiscard]] std::int64_t small_node(std::uint32_t pool, std::uint32_t n) const;  // -1: none

  const ClusterLayout* layout_;
  std::vector<std::vector<bool>> held_;  // per pool, per device of the pool (local index)
};

}  // namespace hcsim
