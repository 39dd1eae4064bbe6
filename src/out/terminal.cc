#include "out/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

namespace gpupin {

Terminal Terminal::Detect(bool json_requested) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  const bool dumb = term && std::string_view(term) == "dumb";
  const bool color_allowed = !json_requested && !(no_color && *no_color) && !dumb;
  const bool stdout_tty = isatty(STDOUT_FILENO);
  return Terminal(color_allowed && stdout_tty, isatty(STDERR_FILENO), stdout_tty,
                  stdout_tty && !dumb);
}

std::optional<size_t> TerminalColumns(int fd) {
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) != 0 || size.ws_col == 0) return std::nullopt;
  return size.ws_col;
}

std::string Terminal::Paint(std::string_view text, Color color) const {
  if (!stdout_color_ || color == Color::kNone) return std::string(text);
  const char* code = "";
  switch (color) {
    case Color::kRed:
      code = "31";
      break;
    case Color::kGreen:
      code = "32";
      break;
    case Color::kYellow:
      code = "33";
      break;
    case Color::kBlue:
      code = "34";
      break;
    case Color::kDim:
      code = "2";
      break;
    case Color::kBold:
      code = "1";
      break;
    case Color::kNone:
      break;
  }
  return std::string("\x1b[") + code + "m" + std::string(text) + "\x1b[0m";
}

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
      continue;
    }
    if ((c & 0xC0) != 0x80) ++width;
  }
  return width;
}

}  // namespace gpupin
