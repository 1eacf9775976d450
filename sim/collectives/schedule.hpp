#pragma once
// Collective algorithms as explicit step schedules: who sends which slice of the buffer to
// whom at each step, and whether the receiver reduces or overwrites. One schedule serves
// three users: the reference executor (executor.hpp) runs it on real buffers to prove the
// algorithm computes the right sum / gather / scatter; the engine's flow mode replays it
// as point-to-point SimGrid flows so that link sharing is real; the cost model sums its
// per-step latency and bandwidth terms. Pure code, no SimGrid.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hcsim {

enum class CollectiveOp : std::uint8_t { all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, send_recv };
std::string_view collective_op_name(CollectiveOp op);
// Parses "all_reduce", "all-reduce" or "allreduce" (any case); false when unknown.
bool parse_collective_op(std::string_view name, CollectiveOp& out);

// Elements [offset, offset+count) of the source rank's buffer go to [dst_offset, ...) of the
// destination's; `reduce` adds into the destination instead of overwriting.
// `multimem`: the transfer is one source's part of an NVLink SHARP operation through the
// reducing switch on its route (NVLS multimem instructions), which the executor runs as any
// other transfer but the cost model and the engine charge as the switch moves it: with
// `reduce` (multimem.ld_reduce), every source's slice goes up to the switch, the
// destination's own slice too, and the sum comes down to the destination once; without
// (multimem.st), the source's slice goes up once and comes down to every destination.
// `via` (>= 0): the data is relayed through that rank, the GPU of the source's node on the
// destination's rail (NCCL's PXN): an NVLink hop src -> via, then via's own NIC to dst; the
// executor ignores it, the cost model and the engine carry both hops.
struct Transfer {
  int src = 0, dst = 0;  // ranks within the group, 0..n-1
  std::int64_t src_offset = 0, dst_offset = 0, count = 0;
  bool reduce = false;
  bool multimem = false;
  int via = -1;
};

struct Step {
  std::vector<Transfer> transfers;  // concurrent within the step
  // Cost-model compression: this step stands for `repeat` steps of the same shape (the
  // steps of one ring phase differ only in which chunk moves). Schedules built with
  // `compressed = true` use it; the executor and flow replay take uncompressed ones.
  int repeat = 1;
};

struct Schedule {
  CollectiveOp op = CollectiveOp::all_reduce;
  int ranks = 0;
  std::int64_t elements = 0;  // buffer length per rank (all-to-all: n blocks of elements/n)
  std::vector<Step> steps;
  int root = 0;               // broadcast / reduce root; send_recv sends from rank 0 to rank 1
};

// Even split of `elements` into n chunks; the first `elements % n` chunks get one more.
std::int64_t chunk_offset(std::int64_t elements, int n, int i);
std::int64_t chunk_size(std::int64_t elements, int n, int i);

// Ring: all-reduce = reduce-scatter then all-gather, 2(n-1) steps of one chunk each.
Schedule ring_schedule(CollectiveOp op, int n, std::int64_t elements);
Schedule ring_schedule(CollectiveOp op, int n, std::int64_t elements, bool compressed);

// Result of each operation, which the executor checks (rank r, inputs x_i, n ranks):
//   all_reduce      every rank holds sum_i x_i
//   reduce_scatter  rank r holds chunk r (chunk_offset/chunk_size over n) of sum_i x_i
//   all_gather      rank r holds chunk i of x_i for every i
//   broadcast       every rank holds x_root;     reduce: rank root holds sum_i x_i
//   all_to_all      block j of rank r's input lands in block r of rank j (elements % n == 0)
//   send_recv       rank 1 holds x_0 (n = 2)

// Double binary tree (Sanders, Speck & Traeff, Parallel Computing 2009; NCCL 2.4): two
// in-order binary trees of height ceil(log2 n), the second the first mirrored (n even) or
// shifted by one rank (n odd), so that the interior ranks of one are leaves of the other
// (but for the first's root when n is odd); each carries half the buffer, pipelined in
// `chunks` pieces: reduce up, then broadcast down.
// all_reduce; broadcast and reduce use the first tree alone on the whole buffer.
// `compressed`: the steps in which every tree edge moves a chunk of one size are one step
// repeated (Step::repeat), so a schedule of c chunks has O(depth) steps, not c + depth.
Schedule double_binary_tree_schedule(CollectiveOp op, int n, std::int64_t elements, int chunks = 1,
                                     bool compressed = false);
// The height of those trees on n ranks, ceil(log2 n): the steps of each phase with one chunk.
int double_binary_tree_height(int n);

// Recursive halving (reduce-scatter) then recursive doubling (all-gather), Rabenseifner
// (Thakur, Rabenseifner & Gropp 2005). Non-power-of-two n: the first 2(n - 2^k) ranks pair
// up before and after. all_reduce for any n; reduce_scatter / all_gather for n = 2^k.
Schedule halving_doubling_schedule(CollectiveOp op, int n, std::int64_t elements);

// Dimension-ordered rings on a torus of `dims` (rank = x0 + d0 * (x1 + ...)): ring
// reduce-scatter along dimension 0, then along dimension 1 on the piece each rank owns,
// ..., then all-gathers in reverse order. all_reduce.
Schedule torus_schedule(CollectiveOp op, const std::vector<int>& dims, std::int64_t elements,
                        bool compressed = false);

// All dimensions at once (the "bucket" or multi-dimensional all-reduce: Sack & Gropp,
// PPoPP 2012; Jouppi et al., ISCA 2023 for TPU v4): the buffer is split into 2d parts for
// the d dimensions of size >= 2; part q reduce-scatters along the dimensions in the order
// (q/2, q/2 + 1, ...) mod d, on rings turning the positive way (q even) or the negative way
// (q odd), then all-gathers back in reverse order. In every phase each dimension's links
// carry two parts, one each way, so all links of the torus are busy at once. all_reduce.
Schedule torus_all_dims_schedule(CollectiveOp op, const std::vector<int>& dims, std::int64_t elements,
                                 bool compressed = false);

// Hierarchical (rank = node * per_node + local): ring reduce-scatter inside each node,
// ring all-reduce across nodes among ranks of equal local index on their chunk, ring
// all-gather inside each node. all_reduce.
Schedule hierarchical_schedule(CollectiveOp op, int nodes, int per_node, std::int64_t elements,
                               bool compressed = false);

// Hierarchical all-to-all (rank = node * per_node + local), in place: a pairwise exchange
// inside each node, in which each rank hands every local peer j the blocks bound for local
// index j of every node (per pair and step, `nodes` blocks), then a pairwise exchange across
// the nodes among ranks of equal local index (one rail each), each message the per_node
// blocks one node sends one rank. The node-crossing bytes are the flat exchange's, in
// nodes - 1 messages per rank instead of n - per_node, all on the sender's own rail; the
// intra-node step adds (per_node - 1) nodes blocks per rank on NVLink.
// `weight` (empty: even): per rank, its blocks' size as a share of b (an MoE dispatch's
// uneven routing: BlockWeights below).
Schedule hierarchical_all_to_all_schedule(int nodes, int per_node, std::int64_t elements, bool compressed = false,
                                          const std::vector<double>& weight = {});

// Parallel rings across nodes, as NCCL's channels (rank = node * per_node + local): ring j
// carries slice j of per_node slices and visits each node's ranks in the order j, j+1, ...,
// j-1, so the rings leave every node through different ranks and hence different NICs.
// all_reduce: slice j of the buffer; reduce_scatter and all_gather: slice j of every rank's
// chunk (NCCL runs them on as many channels as all-reduce, src/enqueue.cc), so each ring
// moves (n-1)/n of S/per_node and the per_node rings together use every NIC.
// `pxn`: ring j's node-crossing hop, from local rank j - 1 to local rank j of the next node,
// is relayed through local rank j of its own node (NCCL's PXN, on fabrics where a hop between
// rails climbs to the spines): ring j then crosses on rail j alone.
Schedule multi_ring_schedule(CollectiveOp op, int nodes, int per_node, std::int64_t elements,
                             bool compressed = false, bool pxn = false);

// NVLS tree all-reduce across nodes (NCCL's NVLS_TREE; NVIDIA/nccl src/device/all_reduce.h),
// rank = node * per_node + local, pipelined in `chunks` pieces: piece k is split into
// per_node slices, slice l owned by local rank l; at step k each node reduce-scatters piece k
// through its NVSwitch (multimem loads: rank l receives the node's sum of slice l); at steps
// k + 1 .. k + 2D the ranks of local index l (one rail, each on its own NIC) all-reduce slice
// l on a double binary tree over the nodes (D = ceil(log2 nodes), its height; NCCL's NVLS
// tree, src/graph/connect.cc); at step k + 2D + 1 rank l multicasts the result to its node
// (multimem stores). chunks + 2D + 1 steps; the stages of different pieces overlap, as
// NCCL's scatter, reduce, network and broadcast warps work on successive chunks. all_reduce.
Schedule nvls_tree_schedule(CollectiveOp op, int nodes, int per_node, std::int64_t elements, int chunks = 1);

// Pipelined chain 0 -> 1 -> ... -> n-1 in `chunks` pieces: broadcast from rank 0, or reduce
// to rank 0 along the reversed chain.
Schedule chain_schedule(CollectiveOp op, int n, std::int64_t elements, int chunks = 1);

// Pairwise exchange all-to-all, in place: partners swap blocks. n = 2^k: partner r xor s at
// steps s = 1..n-1; otherwise partner (s - r) mod n at steps s = 0..n-1.
// compressed: at most 64 evenly spaced steps, each standing for its share of the n - 1.
// `weight` (empty: even): the block bound for rank j moves weight[j] b elements.
Schedule pairwise_all_to_all_schedule(int n, std::int64_t elements, bool compressed = false,
                                      const std::vector<double>& weight = {});

// An all-to-all's uneven blocks (an MoE dispatch under skewed routing, workloads/
// transformer.hpp MoeLoad): the block rank r's buffer holds for rank j is weight[j] of the
// even block b = elements / n, the busiest rank's 1 (the buffer is sized for it). Every
// source sends rank j the same share: its experts' share of the routed tokens. The combine
// sends the same blocks back, each from j; on full-duplex links the reversed transfers load
// the reversed directions as much, so it costs the same, and its schedule is the dispatch's.
// `block(b, j)`: weight[j] b rounded, at least one element (b itself when even).
struct BlockWeights {
  const std::vector<double>& weight;
  [[nodiscard]] std::int64_t block(std::int64_t b, int j) const {
    if (weight.empty()) return b;
    return std::max<std::int64_t>(1, std::llround(static_cast<double>(b) * weight[static_cast<std::size_t>(j)]));
  }
};

// NCCL's PXN on a schedule of ranks node * per_node + local: a transfer between nodes whose
// ends have different local indices is relayed through the source node's rank of the
// destination's local index (`via`), so it crosses on the destination's rail alone (NCCL 2.12,
// NCCL_P2P_PXN_LEVEL; multi_ring_schedule's crossing hops, the pairwise all-to-all's).
void relay_across_rails(Schedule& sc, int per_node);

// One transfer of the whole buffer from rank 0 to rank 1.
Schedule send_recv_schedule(std::int64_t elements);

}  // namespace hcsim
