#pragma once
// Atomic result files: written to a temporary name in the same directory and renamed, so
// a killed run never leaves a partial file that looks complete.
#include <functional>
#include <iosfwd>
#include <string>

namespace hcsim {
void write_file_atomic(const std::string& path, const std::string& content);
// The same, the content written by `write` (a large file streamed, not held as one string).
void write_stream_atomic(const std::string& path, const std::function<void(std::ostream&)>& write);
// Creates the output directory `dir` (one level) unless it exists; InputError if it cannot.
void ensure_dir(const std::string& dir);
}
