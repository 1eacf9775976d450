#pragma once
// Whole-buffer reads and writes on a pipe or file descriptor, retried on EINTR and on
// short transfers: the results of a forked engine child and of sweep workers travel this
// way. False on end of file or on an error.
#include <cstddef>

namespace hcsim {

bool write_all(int fd, const void* data, std::size_t n);
bool read_all(int fd, void* data, std::size_t n);
// read_all at file offset `at`, leaving the descriptor's own offset where it was.
bool pread_all(int fd, void* data, std::size_t n, long long at);

}  // namespace hcsim
