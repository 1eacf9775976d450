// Pipelined double binary tree and pipelined chain schedules (see schedule.hpp).
#include <algorithm>

#include "sim/collectives/ring_phase.hpp"
#include "sim/collectives/schedule.hpp"
#include "sim/core/error.hpp"

namespace hcsim {
namespace {

// One binary tree of a double binary tree, by rank: each rank's parent (-1 at the root) and
// depth, and the tree's height.
struct Tree {
  std::vector<int> parent, depth;
  int height = 0;
};

// The in-order binary tree on positions 0..n-1 (Sanders, Speck & Traeff 2009, the shape
// NCCL's trees take, src/graph/trees.cc): position p > 0 whose lowest set bit is b hangs
// below p + b when bit 2b of p is clear and that is inside the tree, else below p - b; the
// root 0 has one child, the largest power of two below n. Odd positions are leaves, so the
// second tree, the first mirrored (p -> n - 1 - p, n even) or shifted by one (p -> p + 1,
// n odd), makes the first's interior ranks its leaves. Its height is ceil(log2 n).
Tree in_order_tree(int n, bool second) {
  auto rank = [&](int p) { return !second ? p : n % 2 == 0 ? n - 1 - p : (p + 1) % n; };
  std::vector<int> up(static_cast<std::size_t>(n), -1);
  for (int p = 1; p < n; ++p) {
    const int b = p & -p;
    const int above = (p & (2 * b)) == 0 ? p + b : p - b;
    up[static_cast<std::size_t>(p)] = above < n ? above : p - b;
  }
  Tree t;
  t.parent.assign(static_cast<std::size_t>(n), -1);
  t.depth.assign(static_cast<std::size_t>(n), 0);
  for (int p = 1; p < n; ++p) {
    int d = 0;
    for (int q = p; q != 0; q = up[static_cast<std::size_t>(q)]) ++d;
    const auto r = static_cast<std::size_t>(rank(p));
    t.parent[r] = rank(up[static_cast<std::size_t>(p)]);
    t.depth[r] = d;
    t.height = std::max(t.height, d);
  }
  return t;
}

struct TreeJob {
  const Tree* tree = nullptr;
  std::int64_t offset = 0, length = 0;
};

// The transfers of the tree jobs in the phase's steps `steps` (ascending): emit(step,
// transfer), in the order of the ranks within a step. D is the height of both trees.
// Reduce up the tree: a rank at depth d sends chunk k at step k + D - d.
template <class Emit>
void tree_reduce(int n, int chunks, const TreeJob& t, const std::vector<int>& steps, Emit emit) {
  const int D = t.tree->height;
  for (int r = 0; r < n; ++r) {
    const int up = t.tree->parent[static_cast<std::size_t>(r)];
    if (up < 0) continue;
    for (const int s : steps) {
      const int k = s - D + t.tree->depth[static_cast<std::size_t>(r)];
      if (k < 0 || k >= chunks) continue;
      const auto off = t.offset + chunk_offset(t.length, chunks, k), cnt = chunk_size(t.length, chunks, k);
      if (cnt == 0) continue;
      emit(static_cast<std::size_t>(s), Transfer{r, up, off, off, cnt, true});
    }
  }
}

// Broadcast down: a rank at depth d receives chunk k at step k + d - 1.
template <class Emit>
void tree_broadcast(int n, int chunks, const TreeJob& t, const std::vector<int>& steps, Emit emit) {
  for (int r = 0; r < n; ++r) {
    const int up = t.tree->parent[static_cast<std::size_t>(r)];
    if (up < 0) continue;
    for (const int s : steps) {
      const int k = s - t.tree->depth[static_cast<std::size_t>(r)] + 1;
      if (k < 0 || k >= chunks) continue;
      const auto off = t.offset + chunk_offset(t.length, chunks, k), cnt = chunk_size(t.length, chunks, k);
      if (cnt == 0) continue;
      emit(static_cast<std::size_t>(s), Transfer{up, r, off, off, cnt, false});
    }
  }
}

// Runs `jobs(emit)` twice: to count each step's transfers, then to place them in steps
// reserved to their size (a step of a wide tree would otherwise grow many times).
template <class Jobs>
void fill_steps(std::vector<Step>& steps, std::size_t count, Jobs jobs) {
  std::vector<std::size_t> sizes(count, 0);
  jobs([&](std::size_t step, const Transfer&) { ++sizes[step]; });
  steps.resize(count);
  for (std::size_t i = 0; i < count; ++i) steps[i].transfers.reserve(sizes[i]);
  jobs([&](std::size_t step, const Transfer& t) { steps[step].transfers.push_back(t); });
}

void drop_empty_steps(Schedule& sc) {
  sc.steps.erase(std::remove_if(sc.steps.begin(), sc.steps.end(), [](const Step& s) { return s.transfers.empty(); }),
                 sc.steps.end());
}

// Where each of a phase's steps goes in a compressed schedule: -1 for a step that repeats the
// one before it, else its index among the kept steps, with `repeat` the length of its run.
// Step s of a phase moves chunks s - D + 1 .. s of each job (one per depth, reduce and
// broadcast alike); when all of them exist (D - 1 <= s < chunks) every tree edge is busy, and
// consecutive such steps move the same counts between the same ranks unless a job's chunks
// change size within the range (chunk_size: the first length % chunks are one larger). Those
// steps are one step repeated: the cost model and event mode see the same transfers.
std::vector<int> compress_phase(int chunks, int D, const std::vector<std::int64_t>& lengths, std::vector<int>& repeat) {
  const int count = chunks + D - 1;
  std::vector<int> at(static_cast<std::size_t>(count), -1);
  repeat.clear();
  auto signature = [&](int s) {  // -1: not steady; else which jobs move their larger chunks
    if (s < D - 1 || s >= chunks) return -1;
    int sig = 0;
    for (std::size_t j = 0; j < lengths.size(); ++j) {
      const std::int64_t r = lengths[j] % chunks;
      if (s < r)
        sig |= 1 << j;
      else if (s - D + 1 < r)
        return -1;  // larger and smaller chunks in one step
    }
    return sig;
  };
  int prev = -1;
  for (int s = 0; s < count; ++s) {
    const int sig = signature(s);
    if (sig >= 0 && sig == prev) {
      ++repeat.back();
      continue;
    }
    at[static_cast<std::size_t>(s)] = static_cast<int>(repeat.size());
    repeat.push_back(1);
    prev = sig;
  }
  return at;
}

}  // namespace

int double_binary_tree_height(int n) {
  int d = 0;
  while ((1 << d) < n) ++d;
  return d;
}

Schedule double_binary_tree_schedule(CollectiveOp op, int n, std::int64_t elements, int chunks, bool compressed) {
  HCSIM_ASSERT(n >= 1 && chunks >= 1, "a tree needs ranks and at least one chunk");
  Schedule sc{op, n, elements, {}, 0};
  if (n == 1) return sc;
  const Tree first = in_order_tree(n, false), second = in_order_tree(n, true);
  const int D = first.height;
  HCSIM_ASSERT(D == double_binary_tree_height(n), "an in-order tree of another height");
  const auto phase_steps = static_cast<std::size_t>(chunks + D - 1);
  const std::int64_t half = elements / 2;
  const TreeJob a{&first, 0, half}, b{&second, half, elements - half}, whole{&first, 0, elements};
  const bool both = op == CollectiveOp::all_reduce;
  std::vector<int> repeat;
  std::vector<int> at;
  if (compressed) {
    at =
        compress_phase(chunks, D, both ? std::vector<std::int64_t>{a.length, b.length} : std::vector{elements}, repeat);
  } else {
    repeat.assign(phase_steps, 1);
    for (std::size_t s = 0; s < phase_steps; ++s) at.push_back(static_cast<int>(s));
  }
  const auto phase = repeat.size();
  std::vector<int> steps;  // the phase's kept steps
  for (std::size_t s = 0; s < at.size(); ++s)
    if (at[s] >= 0) steps.push_back(static_cast<int>(s));
  // Step s of a phase into its place among the kept steps.
  auto kept = [&](auto emit, std::size_t base) {
    return [&, emit, base](std::size_t s, const Transfer& t) { emit(base + static_cast<std::size_t>(at[s]), t); };
  };
  switch (op) {
    case CollectiveOp::all_reduce:
      fill_steps(sc.steps, 2 * phase, [&](auto emit) {
        tree_reduce(n, chunks, a, steps, kept(emit, 0));
        tree_reduce(n, chunks, b, steps, kept(emit, 0));
        tree_broadcast(n, chunks, a, steps, kept(emit, phase));
        tree_broadcast(n, chunks, b, steps, kept(emit, phase));
      });
      break;
    case CollectiveOp::broadcast:
      fill_steps(sc.steps, phase, [&](auto emit) { tree_broadcast(n, chunks, whole, steps, kept(emit, 0)); });
      break;
    case CollectiveOp::reduce:
      fill_steps(sc.steps, phase, [&](auto emit) { tree_reduce(n, chunks, whole, steps, kept(emit, 0)); });
      break;
    default: HCSIM_ASSERT(false, "tree schedule supports all-reduce, broadcast and reduce only");
  }
  for (std::size_t i = 0; i < sc.steps.size(); ++i) sc.steps[i].repeat = repeat[i % phase];
  drop_empty_steps(sc);
  return sc;
}

Schedule chain_schedule(CollectiveOp op, int n, std::int64_t elements, int chunks) {
  HCSIM_ASSERT(n >= 1 && chunks >= 1, "a chain needs ranks and at least one chunk");
  HCSIM_ASSERT(op == CollectiveOp::broadcast || op == CollectiveOp::reduce, "chain supports broadcast and reduce");
  Schedule sc{op, n, elements, {}, 0};
  if (n == 1) return sc;
  const bool reduce = op == CollectiveOp::reduce;
  sc.steps.resize(static_cast<std::size_t>(chunks + n - 2));
  // Position p of the chain sends chunk k at step k + p; broadcast runs 0 -> n-1, reduce n-1 -> 0.
  for (int p = 0; p + 1 < n; ++p) {
    const int src = reduce ? n - 1 - p : p, dst = reduce ? n - 2 - p : p + 1;
    for (int k = 0; k < chunks; ++k) {
      const auto off = chunk_offset(elements, chunks, k), cnt = chunk_size(elements, chunks, k);
      if (cnt > 0) sc.steps[static_cast<std::size_t>(k + p)].transfers.push_back({src, dst, off, off, cnt, reduce});
    }
  }
  drop_empty_steps(sc);
  return sc;
}

Schedule pairwise_all_to_all_schedule(int n, std::int64_t elements, bool compressed,
                                      const std::vector<double>& weight) {
  HCSIM_ASSERT(n >= 1 && elements % n == 0, "all-to-all needs a buffer of n equal blocks");
  HCSIM_ASSERT(weight.empty() || weight.size() == static_cast<std::size_t>(n), "a block weight per rank");
  Schedule sc{CollectiveOp::all_to_all, n, elements, {}, 0};
  const std::int64_t b = elements / n;
  if (b == 0) return sc;
  const BlockWeights w{weight};
  // Partners swap blocks in the same step, so the exchange works in place.
  append_pairwise(sc.steps, n, compressed, [&](Step& st, int r, int j) {
    st.transfers.push_back({r, j, j * b, r * b, w.block(b, j), false});
  });
  return sc;
}

Schedule send_recv_schedule(std::int64_t elements) {
  Schedule sc{CollectiveOp::send_recv, 2, elements, {}, 0};
  if (elements > 0) sc.steps.push_back({{{0, 1, 0, 0, elements, false}}});
  return sc;
}

}  // namespace hcsim
