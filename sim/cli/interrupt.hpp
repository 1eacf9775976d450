#pragma once
// Ctrl-C and SIGTERM: the handler ends every child process hcsim started (killed and
// reaped; sim/core/interrupt.hpp), removes the temporary file of a write in progress (the
// result files are written by rename, so none is left half-written), prints one line and
// exits with 128 + the signal (130 for SIGINT). In a forked child (the engine process, a
// sweep worker) the same handler ends the child quietly: the parent speaks for the run.

#include <string>

namespace hcsim {

// Installed once by cli_main; `program` is argv[0], for the resume commands printed.
void install_interrupt_handlers(const char* program);

// The line printed when interrupted (without the newline); the default says nothing was
// written. Commands that keep what they finished (sweep) say how to resume.
void set_interrupt_message(const std::string& line);

// argv[0] as the user typed it ("build/hcsim").
const std::string& program_name();

// `word` as a shell reads it back: single-quoted when it holds anything but [A-Za-z0-9_./=:,@%+-].
std::string shell_word(const std::string& word);

}  // namespace hcsim
