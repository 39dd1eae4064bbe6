// Checks for numeric options that say what to write, in one line, instead of
// CLI11's "Value 0 not in range 0.000000 to 1.79769e+308". They see the text
// as typed, before it is converted, so "abc" and 1e300 are caught too.
#pragma once

#include <CLI/CLI.hpp>

namespace gpupin {

// An integer from `min` to `max`, written in decimal digits.
CLI::Validator WholeNumber(long long min, long long max);

// A finite number of seconds from `min` to `max` (fractions allowed), or a
// duration with its unit ("2s", "500ms"), turned into its seconds.
CLI::Validator Seconds(double min, double max);

}  // namespace gpupin
