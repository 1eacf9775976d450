// Step-plan builder: pipeline sends (see step_plan.hpp).
//
// Each pass sends its output to the next virtual stage: b * (s/cp) * h activations forward
// and their gradients backward (Narayanan et al. SC21 §2.2). With the scatter/gather
// optimisation (SC21 §4.1) or sequence parallelism each tensor-parallel rank sends its 1/tp
// share. Activation compression (Optimus-CC style, models/compression): encode on the
// sender, fewer bytes on the wire, decode on the receiver before its pass.
#include "workloads/step_plan.hpp"

#include <algorithm>

namespace hcsim {

void plan_pipeline_sends(const LoweringInput& in, const StepPlan& plan, std::vector<StagePlan>& stages) {
  const StrategySpec& st = *in.strategy;
  Bytes bytes = st.scatter_gather || st.sequence_parallel ? plan.act_bytes / st.tp : plan.act_bytes;
  CodecCost cc;
  if (st.pp_codec) {
    const double e = dtype_bytes(storage_dtype(in.workload->precision));
    const auto elements = static_cast<std::int64_t>(bytes.value() / e);
    const std::int64_t rows = std::max<std::int64_t>(1, elements / in.model->hidden);
    cc = st.pp_codec->cost(CodecInput{rows, std::max<std::int64_t>(1, elements / rows), e, 1, st.step});
    if (cc.compressed) bytes = cc.wire_bytes_per_rank;
  }
  for (StagePlan& sp : stages) {
    sp.send_bytes = bytes;
    if (!cc.compressed) continue;
    sp.send_codec.compressed = true;
    sp.send_codec.encode = codec_item(*sp.device, cc.encode_flops, cc.encode_memory_traffic);
    sp.send_codec.decode = codec_item(*sp.device, cc.decode_flops, cc.decode_memory_traffic);
  }
}

}  // namespace hcsim
