#include "sys/docker_client.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <string.h>

#include "core/docker_args.h"
#include "sys/c_string_array.h"

extern char** environ;

namespace gpupin {

Result<int> StartContainerWatch(const std::vector<std::string>& prefix,
                                const std::string& container_id) {
  if (!IsContainerId(container_id)) {
    return MakeError(ExitCode::kError, "docker wrote no container id to follow");
  }
  std::vector<std::string> words = {"docker"};
  words.insert(words.end(), prefix.begin(), prefix.end());
  words.insert(words.end(), {"wait", container_id});
  CStringArray argv(words);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  // It lives as long as the container: a lock or pipe of the caller's that
  // it inherited would stay held all that time.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "docker", &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return MakeError(ExitCode::kError,
                     fmt::format("cannot start docker wait: {}", strerror(spawned)));
  }
  return static_cast<int>(pid);
}

}  // namespace gpupin
