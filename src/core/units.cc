#include "core/units.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

namespace gpupin {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

Error BadSize(std::string_view text) {
  return MakeError(
      ExitCode::kUsage,
      fmt::format("invalid size '{}'; write a number with a unit, e.g. 24G or 500M", text));
}

}  // namespace

Result<uint64_t> ParseSize(std::string_view text) {
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || number < 0 || !std::isfinite(number)) return BadSize(text);
  std::string_view unit(end, text.data() + text.size() - end);
  // `--mem 10` meant 10G far more often than 10 bytes, which would make a
  // shared request that fits beside anything: bytes are written 10B.
  if (unit.empty() && number != 0) {
    return MakeError(ExitCode::kUsage,
                     fmt::format("size '{}' has no unit; write e.g. {}G, {}M, or {}B for bytes",
                                 text, text, text, text));
  }
  // Every spelling of each binary multiple: 24G, 24GB, 24GiB and 24Gi, up
  // to P, which `gpupin ls` prints for the largest totals.
  static constexpr std::pair<std::string_view, int> kUnits[] = {
      {"", 0},    {"b", 0},  {"k", 1}, {"kb", 1}, {"kib", 1}, {"ki", 1}, {"m", 2}, {"mb", 2},
      {"mib", 2}, {"mi", 2}, {"g", 3}, {"gb", 3}, {"gib", 3}, {"gi", 3}, {"t", 4}, {"tb", 4},
      {"tib", 4}, {"ti", 4}, {"p", 5}, {"pb", 5}, {"pib", 5}, {"pi", 5}};
  for (const auto& [name, power] : kUnits) {
    if (!EqualsIgnoreCase(unit, name)) continue;
    double bytes = number * std::pow(1024.0, power);
    // llround's long long ends at 2^63 bytes (8 EiB, far beyond any card):
    // past it, 9999999999999999999B came out as 8192P.
    if (bytes >= 9223372036854775808.0) {
      return MakeError(ExitCode::kUsage,
                       fmt::format("size '{}' is too large: at most 8191P", text));
    }
    return static_cast<uint64_t>(std::llround(bytes));
  }
  return BadSize(text);
}

Result<double> ParsePercent(std::string_view text) {
  if (!text.empty() && text.back() == '%') text.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0 && value <= 100)) {
    return MakeError(
        ExitCode::kUsage,
        fmt::format("invalid percentage '{}'; write a number from 0 to 100, e.g. 80%", text));
  }
  return value;
}

Result<int64_t> ParseDurationMs(std::string_view text) {
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  std::string_view unit(end, text.data() + text.size() - end);
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"", 1000},      {"ms", 1},        {"s", 1000},      {"m", 60'000},
      {"min", 60'000}, {"h", 3'600'000}, {"d", 86'400'000}};
  // A bound that a deadline of now plus the duration cannot overflow: a
  // nanosecond clock runs out after 292 years.
  constexpr double kMaxMs = 1000.0 * 24 * 3'600'000;
  if (ec == std::errc() && number >= 0 && std::isfinite(number)) {
    for (const auto& [name, factor] : kUnits) {
      if (unit != name) continue;
      if (number * factor <= kMaxMs) return static_cast<int64_t>(std::llround(number * factor));
      return MakeError(ExitCode::kUsage, fmt::format("duration '{}' is over 1000 days", text));
    }
  }
  return MakeError(ExitCode::kUsage,
                   fmt::format("invalid duration '{}'; write e.g. 30s, 5m, 2h, 1d or 500ms", text));
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kSuffixes[] = {"B", "K", "M", "G", "T", "P"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{}B", bytes);
  if (value >= 100 || std::abs(value - std::round(value)) < 0.05)
    return fmt::format("{:.0f}{}", value, kSuffixes[unit]);
  return fmt::format("{:.1f}{}", value, kSuffixes[unit]);
}

std::pair<std::string, std::string> FormatBytesApart(uint64_t a, uint64_t b) {
  std::pair<std::string, std::string> texts = {FormatBytes(a), FormatBytes(b)};
  static constexpr const char* kSuffixes[] = {"B", "K", "M"};
  for (int unit = 2; texts.first == texts.second && a != b && unit >= 0; --unit) {
    const uint64_t size = uint64_t{1} << (10 * unit);
    texts = {fmt::format("{}{}", a / size, kSuffixes[unit]),
             fmt::format("{}{}", b / size, kSuffixes[unit])};
  }
  return texts;
}

}  // namespace gpupin
