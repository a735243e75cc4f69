#define _GNU_SOURCE
#include "CTestSpawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <stddef.h>

extern char **environ;

int kakapo_test_spawn(pid_t *pid, const char *path, char *const argv[], const char *directory, int stdout_fd,
                      int stderr_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int failure = posix_spawn_file_actions_init(&actions);
    if (failure != 0) return failure;
    failure = posix_spawnattr_init(&attributes);
    if (failure != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return failure;
    }
    if (failure == 0) failure = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (failure == 0) failure = posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
    if (failure == 0) failure = posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
    if (failure == 0 && directory != NULL) failure = posix_spawn_file_actions_addchdir_np(&actions, directory);
#if defined(__APPLE__)
    if (failure == 0) failure = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_CLOEXEC_DEFAULT);
#else
    if (failure == 0) failure = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
    if (failure == 0) failure = posix_spawn(pid, path, &actions, &attributes, argv, environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return failure;
}
