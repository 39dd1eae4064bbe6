// Where output goes and how it may look: colour only on a terminal and never
// when NO_COLOR is set (https://no-color.org), diagnostics to stderr.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace gpupin {

enum class Color { kNone, kRed, kGreen, kYellow, kBlue, kDim, kBold };

class Terminal {
 public:
  // Decides from the file descriptors, NO_COLOR (colour only) and
  // TERM=dumb (a terminal that takes neither colour nor cursor movement).
  static Terminal Detect(bool json_requested);
  Terminal(bool stdout_color, bool stderr_is_tty, bool stdout_is_tty, bool stdout_cursor)
      : stdout_color_(stdout_color),
        stderr_is_tty_(stderr_is_tty),
        stdout_is_tty_(stdout_is_tty),
        stdout_cursor_(stdout_cursor) {}

  bool stdout_color() const { return stdout_color_; }
  bool stderr_is_tty() const { return stderr_is_tty_; }
  // A person reads stdout, rather than a pipe or a file.
  bool stdout_is_tty() const { return stdout_is_tty_; }
  // stdout is a terminal that can redraw in place (not TERM=dumb).
  bool stdout_cursor() const { return stdout_cursor_; }
  // Wraps text in the escape codes for `color` when colour is on.
  std::string Paint(std::string_view text, Color color) const;

 private:
  bool stdout_color_;
  bool stderr_is_tty_;
  bool stdout_is_tty_;
  bool stdout_cursor_;
};

// The width of the terminal on `fd`, in columns; nullopt when `fd` is no
// terminal or does not say.
std::optional<size_t> TerminalColumns(int fd);

// Number of terminal columns `text` occupies: escape sequences count zero,
// UTF-8 continuation bytes count zero.
size_t DisplayWidth(std::string_view text);

}  // namespace gpupin
