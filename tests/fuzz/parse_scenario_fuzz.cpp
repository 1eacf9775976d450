// libFuzzer target: arbitrary bytes as a scenario file -> read_json_file (size and depth
// bounds, duplicate keys, JSON syntax) -> parse_scenario (sections, units, ranges, presets,
// cross-field rules, topology build): the path every scenario file takes through
// `hcsim validate` and `hcsim run`. The contract under test: bad input ends in an
// InputError; anything else -- another exception, a crash, an assertion (InternalError), a
// sanitizer report, a hang or runaway memory (libFuzzer's -timeout and -rss_limit_mb) --
// is a finding.
//
// Built only with clang (-fsanitize=fuzzer); see tests/fuzz.cmake and scripts/fuzz.sh.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "scenarios/scenario.hpp"

namespace {

// The input lives in an anonymous in-memory file so that it is read exactly as a file on
// disk is, without touching the disk.
struct MemFile {
  int fd = ::memfd_create("hcsim-fuzz", 0);
  std::string path = "/proc/self/fd/" + std::to_string(fd);

  void set(const std::uint8_t* data, std::size_t size) {
    if (fd < 0 || ::ftruncate(fd, 0) != 0) std::abort();
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static MemFile file;
  file.set(data, size);
  try {
    (void)hcsim::load_scenario(file.path);
  } catch (const hcsim::InputError&) {
    // Expected for bad input; any other exception escapes and libFuzzer reports it.
  }
  return 0;
}
