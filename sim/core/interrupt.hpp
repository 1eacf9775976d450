#pragma once
// What an interrupt (SIGINT, SIGTERM) has to clean up, kept where a signal handler can
// reach it without allocating or locking: the child processes hcsim forked (the engine
// process of a run, sweep and search workers, the plot process) and the temporary file an
// atomic write has open. The handler itself belongs to the command line
// (sim/cli/interrupt.cpp); library code only registers what it starts.

#include <sys/types.h>

#include <string>

namespace hcsim {

// fork() with the new child tracked until forget_child(). SIGINT and SIGTERM are blocked
// across the fork, so a signal cannot fall between the fork and the tracking. In the
// child, the table starts empty (its parent's children are not its own) and the child is
// killed when its parent dies (PR_SET_PDEATHSIG), so even a parent ended by SIGKILL leaves
// no engine process behind.
pid_t fork_child();

// Stops tracking `pid`; called before the child is reaped, so a handler never signals a
// pid that may have been reused.
void forget_child(pid_t pid);

// Async-signal-safe: SIGKILL to every tracked child, then reaps each.
void kill_children() noexcept;

// The temporary file being written (write_file_atomic), or "" once it is renamed.
void set_temp_file(const std::string& path);

// Async-signal-safe: unlinks the temporary file being written, if any.
void remove_temp_file() noexcept;

}  // namespace hcsim
