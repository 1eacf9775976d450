// Step-plan builder: ZeRO's parameter gathers, the optimizer and the offload streams (see
// step_plan.hpp).
//
// ZeRO (Rajbhandari et al. SC20 §5): stage 3 keeps 1/N of the parameters and all-gathers
// them unit by unit (plan_sharding.cpp); stages 1 and 2 update their 1/N shard and
// all-gather the updated parameters after the optimizer. Adam reads and writes the fp32
// master weights, momentum and variance of this device's parameters (its shard under
// ZeRO >= 1). With the optimizer state in a pool (workloads/offload.hpp), the shard's state
// streams in before the update and back after it.
#include "workloads/step_plan.hpp"

#include "workloads/offload.hpp"

namespace hcsim {

void plan_optimizer(const LoweringInput& in, StagePlan& sp) {
  const StrategySpec& st = *in.strategy;
  const int ranks = st.grad_ranks();
  const double g = grad_element_bytes(st, in.workload->precision);
  const double params = sp.grad_bytes / Bytes(g);
  // ZeRO-1/2 gather the updated parameters in the model's datatype.
  sp.zero_gather_bytes = st.zero >= 1 && st.zero <= 2 && ranks > 1
                             ? Bytes(params * dtype_bytes(storage_dtype(in.workload->precision)))
                             : Bytes{};
  const double shard = st.zero >= 1 ? static_cast<double>(shard_ranks(st)) : 1.0;
  const Kernel k = optimizer_kernel(params / shard, params, in.workload->precision, g);
  sp.optimizer = Item{};
  sp.optimizer.phase = Phase::optimizer;
  sp.optimizer.t = sp.device->time(k);
  sp.optimizer.bytes = k.bytes;
  sp.optimizer.energy = sp.device->dynamic_energy(k);
  sp.offload_bytes = st.offload == Offload::pool ? offload_state_bytes(params / shard) : Bytes{};
}

}  // namespace hcsim
