#include "sys/docker_client.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <string>

extern char** environ;

namespace gpupin {

std::optional<bool> ContainerRunning(const std::string& container_id) {
  // An id is hex (or a name); anything else is not passed to a command line.
  for (char c : container_id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      return false;
  }
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
  std::string format = "{{.State.Running}}";
  char* argv[] = {const_cast<char*>("docker"),
                  const_cast<char*>("inspect"),
                  const_cast<char*>("--type"),
                  const_cast<char*>("container"),
                  const_cast<char*>("--format"),
                  format.data(),
                  const_cast<char*>(container_id.c_str()),
                  nullptr};
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, "docker", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    return std::nullopt;
  }
  std::string text;
  char buffer[256];
  ssize_t n;
  while ((n = read(out[0], buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) return std::nullopt;
  // `docker inspect` exits 1 both for "No such container" and for a daemon
  // it cannot reach; only the first means the container is gone.
  if (WEXITSTATUS(status) != 0) {
    return text.find("No such") != std::string::npos ? std::optional<bool>(false) : std::nullopt;
  }
  if (text.starts_with("true")) return true;
  if (text.starts_with("false")) return false;
  return std::nullopt;
}

}  // namespace gpupin
