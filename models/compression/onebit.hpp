#pragma once
// The 1-bit sign format shared by onebit-adam, onebit-lamb and zeroone-adam: each chunk of c
// elements (c a multiple of 8) travels as c/8 bytes of packed signs and one fp32 scale
// (||x||_2 / sqrt(c), as DeepSpeed's compressed_allreduce), m = c/8 + 4 bytes. Internal.

#include "models/compression/two_phase.hpp"

namespace hcsim::compression {

// Encode: with error feedback 6 operations per element (add residual, square, accumulate,
// sign, scale * sign, subtract for the new residual), without 3; decode: 1 (scale * sign).
ChunkFormat sign_format(const CodecInput& in, bool error_feedback);

ParamSpec sign_error_feedback_param();

}  // namespace hcsim::compression
