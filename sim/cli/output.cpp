#include "output.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "sim/core/error.hpp"
#include "sim/core/interrupt.hpp"

namespace hcsim {

void write_file_atomic(const std::string& path, const std::string& content) {
  write_stream_atomic(path, [&](std::ostream& out) { out << content; });
}

void write_stream_atomic(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  set_temp_file(tmp);  // removed by an interrupt before the rename
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp);
    try {
      write(out);
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      set_temp_file("");
      throw;
    }
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    set_temp_file("");
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
  set_temp_file("");
}

void ensure_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw InputError("", "cannot create output directory " + dir);
}

}  // namespace hcsim
