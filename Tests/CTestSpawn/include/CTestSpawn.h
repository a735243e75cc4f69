#ifndef C_TEST_SPAWN_H
#define C_TEST_SPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` (NULL-terminated) in `directory` (NULL: the current one), standard input
/// from /dev/null and standard output and error on the given descriptors, and no other descriptor of this
/// process. Returns 0 and sets `pid`, or an errno value.
///
/// Foundation's Process.run on Linux (Swift 6.3.1) can crash reading /proc/self/fd when the process has
/// over a thousand descriptors open (an over-read in findMaximumOpenFromProcSelfFD, fixed upstream later),
/// which a parallel test suite reaches; this spawns with posix_spawn and closes the rest by range instead.
int kakapo_test_spawn(pid_t *pid, const char *path, char *const argv[], const char *directory, int stdout_fd,
                      int stderr_fd);

#endif
