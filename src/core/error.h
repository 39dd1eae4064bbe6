// Errors are values: a message a user can act on plus the exit code the
// process ends with. They gain context on the way up and are printed once, by
// main, as "gpupin: <message>".
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gpupin {

// Documented in gpupin(1) and --help; `run` exits with its child's status instead.
enum class ExitCode : int {
  kOk = 0,
  kError = 1,
  kUsage = 2,
  kNoGpu = 3,
  kNvmlUnavailable = 4,
};

struct Error {
  ExitCode code = ExitCode::kError;
  std::string message;
  // Nonzero: gpupin was stopped by this signal (SIGINT, SIGTERM...) and,
  // once it has said so and cleaned up, dies by it rather than exiting.
  int signal = 0;
  // The option whose value was refused ("--max-used"), when one was: a value
  // a config file gave is then reported at that file's line.
  std::string option;
  // What failed is another user's doing that root will undo (a flooded
  // folder of the state directory): a queued job keeps its place and tries
  // again, as it does behind a held lock, rather than give up.
  bool passing = false;

  // "what: message", keeping the exit code, the signal, the option and
  // whether it passes.
  Error WithContext(const std::string& what) const {
    return {code, what + ": " + message, signal, option, passing};
  }
  // "--option: message", a usage error about the value given to `name`.
  Error OfOption(const std::string& name) const {
    return {ExitCode::kUsage, name + ": " + message, signal, name, passing};
  }
};

inline Error MakeError(ExitCode code, std::string message) { return {code, std::move(message)}; }

// The value given to the option `name` ("--poll") is refused: `message` says why.
inline Error OptionError(const std::string& name, const std::string& message) {
  return Error{ExitCode::kUsage, message}.OfOption(name);
}

// A value or an Error. Deliberately small: exceptions never cross module
// boundaries, so every fallible call in gpupin returns one of these.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Success carries no value.
struct Ok {};
using Status = Result<Ok>;

}  // namespace gpupin
