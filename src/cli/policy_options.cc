#include "cli/policy_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <tuple>

#include "cli/number_checks.h"
#include "core/units.h"

namespace gpupin {
namespace {

// "1,3" and "--only 1 --only 3" mean the same. An empty id (",", "0,,1")
// is a slip, not "no cards": refused rather than read as fewer ids.
Result<std::vector<std::string>> SplitIds(const std::vector<std::string>& values,
                                          std::string_view option) {
  std::vector<std::string> ids;
  for (const std::string& value : values) {
    size_t start = 0;
    while (start <= value.size()) {
      size_t end = value.find(',', start);
      if (end == std::string::npos) end = value.size();
      if (end == start) {
        return OptionError(std::string(option),
                           fmt::format("an empty id in '{}'; write ids such as 0,2 or GPU-8f2a, "
                                       "separated by single commas",
                                       value));
      }
      ids.push_back(value.substr(start, end - start));
      start = end + 1;
    }
  }
  return ids;
}

}  // namespace

void AddPolicyOptions(CLI::App& app, PolicyFlags& flags) {
  app.add_option("-n,--count", flags.count, "how many GPUs, 1 to 4096 (default 1)")
      ->check(WholeNumber(1, 4096))
      ->option_text("N");
  app.add_option("--mem", flags.mem,
                 "memory the job needs (24G, 500M; bytes 1024B): a shared request")
      ->option_text("SIZE");
  app.add_option("--max-used", flags.max_used,
                 "a card using more is busy (default 1G; shared: 80%)")
      ->option_text("SIZE|PCT");
  app.add_option("--max-util", flags.max_util,
                 "a card busier than this is busy (default 10%; shared: none)")
      ->option_text("PCT");
  app.add_option("--only", flags.only, "only these cards (NVML index or UUID prefix)")
      ->option_text("IDS");
  app.add_option("--exclude", flags.exclude, "never these cards")->option_text("IDS");
  flags.order_option =
      app.add_option("--order", flags.order,
                     "preference order of cards, the listed ones first (turns --near off unless "
                     "given too)")
          ->option_text("IDS");
  app.add_option("--prefer", flags.prefer, "ranking among eligible cards")
      ->check(CLI::IsMember({"free", "util", "index"}))
      ->option_text("free|util|index");
  flags.near_option = app.add_flag(
      "--near,!--no-near", flags.near,
      "for -n>1, prefer cards close in the topology (the default, unless --order is given), or "
      "not");
  app.add_flag("--mine-free", flags.mine_free, "my own processes do not make a card busy");
  flags.max_jobs_option =
      app.add_option("--max-jobs", flags.max_jobs,
                     "at most N gpupin jobs per card (1 to 10000), for a shared request (--mem)")
          ->check(WholeNumber(1, 10000))
          ->option_text("N");
  app.add_flag("--uuid", flags.uuid, "give the job GPU UUIDs instead of indices");
  app.add_option("--wait", flags.wait,
                 "queue until GPUs are free (optionally at most DURATION, then exit 3; 0: no "
                 "waiting); the user "
                 "holding the fewest cards goes first, ties by arrival, each user's jobs in order "
                 "(queue = \"fifo\" in the admin config: arrival order); a state lock held by "
                 "another process is waited out, naming it; Ctrl-C, SIGTERM or "
                 "SIGHUP leaves the queue; a request too few cards could ever meet (lost, "
                 "MIG, PROHIBITED) exits 3 at once (doc/queue.md)")
      ->expected(0, 1)
      ->option_text("[=DURATION]");
  app.add_option("--settle", flags.settle,
                 "a foreign compute process younger than this makes its card busy whatever it "
                 "uses: it may still be allocating (default 120s; 0 turns it off)")
      ->option_text("DURATION");
  app.add_option("--poll", flags.poll,
                 "re-check interval for what cannot be watched, e.g. a waiting job ahead suspended "
                 "with Ctrl-Z (default 2s)")
      ->option_text("DURATION");
}

Result<Request> ToRequest(const PolicyFlags& flags) {
  Request request;
  request.count = flags.count;
  if (flags.mem) {
    Result<uint64_t> bytes = ParseSize(*flags.mem);
    if (!bytes.ok()) return bytes.error().OfOption("--mem");
    if (*bytes == 0) return OptionError("--mem", "a shared request needs more than 0 bytes");
    request.mem_bytes = *bytes;
  }
  if (flags.max_used) {
    UsageLimit limit;
    if (flags.max_used->ends_with('%')) {
      Result<double> percent = ParsePercent(*flags.max_used);
      if (!percent.ok()) return percent.error().OfOption("--max-used");
      limit.percent = *percent;
    } else {
      Result<uint64_t> bytes = ParseSize(*flags.max_used);
      // A bare number is as likely a share of the card as an amount.
      const bool bare_number = std::all_of(
          flags.max_used->begin(), flags.max_used->end(),
          [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
      if (!bytes.ok() && bare_number) {
        return OptionError("--max-used",
                           fmt::format("'{0}' has no unit; write e.g. {0}% of the card's memory, "
                                       "or {0}G, {0}M, {0}B",
                                       *flags.max_used));
      }
      if (!bytes.ok()) return bytes.error().OfOption("--max-used");
      limit.bytes = *bytes;
    }
    request.max_used = limit;
  }
  if (flags.max_util) {
    Result<double> percent = ParsePercent(*flags.max_util);
    if (!percent.ok()) return percent.error().OfOption("--max-util");
    request.max_util_percent = *percent;
  }
  for (auto [ids, values, option] : {std::tuple{&request.only, &flags.only, "--only"},
                                     std::tuple{&request.exclude, &flags.exclude, "--exclude"},
                                     std::tuple{&request.order, &flags.order, "--order"}}) {
    Result<std::vector<std::string>> split = SplitIds(*values, option);
    if (!split.ok()) return split.error();
    *ids = std::move(*split);
  }
  request.prefer = flags.prefer == "util"    ? Preference::kUtil
                   : flags.prefer == "index" ? Preference::kIndex
                                             : Preference::kFree;
  // The user's own order of the cards is what they asked for: closeness,
  // a default, would overrule it (`--order 1,2,3,0` keeping GPU 0 for
  // interactive work still chose 0 and 1, which share a switch).
  const bool near_set = flags.near_option && flags.near_option->count() > 0;
  request.near = near_set ? flags.near : request.order.empty();
  request.mine_free = flags.mine_free;
  request.max_jobs = flags.max_jobs;
  Result<int64_t> settle_ms = ParseDurationMs(flags.settle);
  if (!settle_ms.ok()) return settle_ms.error().OfOption("--settle");
  request.settle_ms = *settle_ms;
  return request;
}

}  // namespace gpupin
