// Step-plan builder: ZeRO's parameter gathers, the optimizer and the offload streams (see
// step_plan.hpp).
//
// ZeRO (Rajbhandari et al. SC20 §5): stage 3 keeps 1/N of the parameters and all-gathers
// them unit by unit (plan_sharding.cpp); stages 1 and 2 update their 1/N shard and
// all-gather the updated parameters after the optimizer, or with overlap_param_gather bucket
// by bucket before the next step's first forward needs them (Megatron-Core's distributed
// optimizer: megatron/core/distributed/param_and_grad_buffer.py, the buckets of each model
// chunk's buffer; distributed_data_parallel.py, the forward pre-hooks that wait for them). Adam reads and writes the
// fp32 master weights, momentum and variance of this device's parameters (its shard under ZeRO >= 1). With the
// optimizer state in a pool (workloads/offload.hpp), the shard's state streams in before the update and back after it.
#include "workloads/step_plan.hpp"

#include "workloads/offload.hpp"

namespace hcsim {

void plan_optimizer(const LoweringInput& in, StagePlan& sp) {
  const StrategySpec& st = *in.strategy;
  const int ranks = st.grad_ranks();
  const double g = grad_element_bytes(st, in.workload->precision);
  const double dense = sp.grad_bytes / Bytes(g), experts = sp.expert_grad_bytes / Bytes(g);
  const double params = dense + experts;
  const double e = dtype_bytes(storage_dtype(in.workload->precision));
  // ZeRO-1/2 gather the updated parameters in the model's datatype; an MoE model's routed
  // experts are sharded over, and gathered from, their expert replica group.
  const bool zero12 = st.zero >= 1 && st.zero <= 2;
  const int expert_ranks = st.layout().expert_replicas();
  sp.zero_gather_bytes = zero12 && ranks > 1 ? Bytes(dense * e) : Bytes{};
  sp.expert_gather_bytes = zero12 && expert_ranks > 1 && experts > 0 ? Bytes(experts * e) : Bytes{};
  sp.param_gathers.clear();
  if (st.overlap_param_gather && (sp.zero_gather_bytes > Bytes{} || sp.expert_gather_bytes > Bytes{})) {
    // Each chunk's markers filled in backward order up to the bucket size (in gradient
    // bytes), as its buffer's buckets are; then listed in forward order.
    const bool dense_on = sp.zero_gather_bytes > Bytes{}, expert_on = sp.expert_gather_bytes > Bytes{};
    const int chunks = static_cast<int>(sp.chunks.empty() ? sp.totals.size() : sp.chunks.size());
    for (int c = 0; c < chunks; ++c) {
      const std::vector<Bytes>& markers = sp.chunk_markers(c);
      const std::vector<Bytes>& expert = sp.chunk_expert_markers(c);
      const int n = static_cast<int>(markers.size());
      std::vector<ParamGather> chunk;
      Bytes filled{}, filled_expert{};
      int end = n - 1;               // forward index of the bucket's last marker
      for (int i = 0; i < n; ++i) {  // backward order: forward index n - 1 - i
        filled += markers[static_cast<std::size_t>(i)];
        if (!expert.empty()) filled_expert += expert[static_cast<std::size_t>(i)];
        if (filled + filled_expert >= st.dp_bucket || i == n - 1) {
          ParamGather pg;
          pg.chunk = c;
          pg.first = n - 1 - i;
          pg.last = end;
          pg.bytes = dense_on ? Bytes(filled / Bytes(g) * e) : Bytes{};
          pg.expert = expert_on ? Bytes(filled_expert / Bytes(g) * e) : Bytes{};
          if (pg.bytes > Bytes{} || pg.expert > Bytes{}) chunk.push_back(pg);
          filled = filled_expert = Bytes{};
          end = pg.first - 1;
        }
      }
      sp.param_gathers.insert(sp.param_gathers.end(), chunk.rbegin(), chunk.rend());
    }
    sp.zero_gather_bytes = sp.expert_gather_bytes = Bytes{};
  }
  const double shard = st.zero >= 1 ? static_cast<double>(shard_ranks(st)) : 1.0;
  const double shard_params = dense / shard + experts / (st.zero >= 1 ? expert_ranks : 1);
  const Kernel k = optimizer_kernel(shard_params, params, in.workload->precision, g);
  sp.optimizer = Item{};
  sp.optimizer.phase = Phase::optimizer;
  sp.optimizer.t = sp.device->time(k);
  sp.optimizer.bytes = k.bytes;
  sp.optimizer.energy = sp.device->dynamic_energy(k);
  sp.offload_bytes = st.offload == Offload::pool ? offload_state_bytes(shard_params) : Bytes{};
}

}  // namespace hcsim
