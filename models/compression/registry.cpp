// The compression-codec registry and its explicit filling (no static initialisers).
#include "models/compression/builtin.hpp"

namespace hcsim {

Registry<Codec>& codecs() {
  static Registry<Codec> registry("compression codec");
  return registry;
}

void register_builtin_codecs() {
  static bool done = false;
  if (done) return;
  done = true;
  Registry<Codec>& r = codecs();
  compression::register_cast_codecs(r);
  compression::register_int8_codec(r);
  compression::register_sparse_codecs(r);
  compression::register_onebit_codecs(r);
  compression::register_zeroone_adam_codec(r);
  compression::register_powersgd_codec(r);
}

}  // namespace hcsim
