#include "cli/number_checks.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string>

#include "core/units.h"

namespace gpupin {

CLI::Validator WholeNumber(long long min, long long max) {
  return CLI::Validator(
      [min, max](const std::string& text) -> std::string {
        long long value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc() && end == text.data() + text.size() && value >= min && value <= max)
          return "";
        return fmt::format("'{}': write a whole number from {} to {}", text, min, max);
      },
      fmt::format("{}..{}", min, max));
}

CLI::Validator Seconds(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        double value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        const bool number = ec == std::errc() && end == text.data() + text.size();
        // A duration as the other options take it ("2s", "500ms", "1m"),
        // handed on as its seconds.
        if (!number) {
          if (Result<int64_t> ms = ParseDurationMs(text); ms.ok()) {
            value = static_cast<double>(*ms) / 1000;
            if (value >= min && value <= max) {
              text = fmt::format("{}", value);
              return "";
            }
          }
        }
        if (number && std::isfinite(value) && value >= min && value <= max) return "";
        return fmt::format(
            "'{}': write a number of seconds from {} to {}, or a duration (2s, "
            "500ms)",
            text, min, max);
      },
      "SECONDS");
}

}  // namespace gpupin
