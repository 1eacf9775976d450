#pragma once
// Registration of each codec file's entries into codecs(); called once by
// register_builtin_codecs() (registry.cpp). Internal to models/compression.

#include "models/compression/codec.hpp"

namespace hcsim::compression {

void register_cast_codecs(Registry<Codec>& r);      // none, fp16, bf16   (cast.cpp)
void register_int8_codec(Registry<Codec>& r);       // int8               (int8.cpp)
void register_sparse_codecs(Registry<Codec>& r);    // topk, randomk      (sparse.cpp)
void register_onebit_codecs(Registry<Codec>& r);    // onebit-adam, onebit-lamb (onebit.cpp)
void register_zeroone_adam_codec(Registry<Codec>& r);  // zeroone-adam    (zeroone_adam.cpp)
void register_powersgd_codec(Registry<Codec>& r);   // powersgd           (powersgd.cpp)

}  // namespace hcsim::compression
