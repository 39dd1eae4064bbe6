#include "core/topology.h"

#include <algorithm>
#include <cctype>

namespace gpupin {
namespace {

std::optional<TopologyLevel> LevelAt(
    const std::vector<std::vector<std::optional<TopologyLevel>>>& levels, size_t a, size_t b) {
  if (a >= levels.size() || b >= levels[a].size()) return std::nullopt;
  return levels[a][b];
}

bool NvLinked(const Gpu& from, const Gpu& to) {
  std::string target = NormalizePciBusId(to.pci_bus_id);
  if (target.empty()) return false;
  return std::any_of(from.nvlink_peer_bus_ids.begin(), from.nvlink_peer_bus_ids.end(),
                     [&](const std::string& peer) { return NormalizePciBusId(peer) == target; });
}

Closeness PairCloseness(const std::vector<Gpu>& gpus,
                        const std::vector<std::vector<std::optional<TopologyLevel>>>& levels,
                        size_t a, size_t b) {
  // The driver may answer for one direction only; the closer answer wins.
  std::optional<TopologyLevel> level;
  for (auto candidate : {LevelAt(levels, a, b), LevelAt(levels, b, a)}) {
    if (candidate && (!level || *candidate < *level)) level = candidate;
  }
  const Gpu& x = gpus[a];
  const Gpu& y = gpus[b];
  if (level == TopologyLevel::kInternal || (x.board_id && x.board_id == y.board_id)) {
    return Closeness::kSameBoard;
  }
  if (NvLinked(x, y) || NvLinked(y, x)) return Closeness::kNvLink;
  if (level && *level <= TopologyLevel::kMultiple) return Closeness::kPcieSwitch;
  if ((level && *level <= TopologyLevel::kNode) || (x.numa_node && x.numa_node == y.numa_node)) {
    return Closeness::kNumaNode;
  }
  return Closeness::kSystem;
}

}  // namespace

const char* ClosenessName(Closeness closeness) {
  switch (closeness) {
    case Closeness::kSameBoard:
      return "on one board";
    case Closeness::kNvLink:
      return "linked by NVLink";
    case Closeness::kPcieSwitch:
      return "under one PCIe switch";
    case Closeness::kNumaNode:
      return "on one NUMA node";
    case Closeness::kSystem:
      break;
  }
  return "across NUMA nodes";
}

Topology::Topology(const std::vector<Gpu>& gpus,
                   const std::vector<std::vector<std::optional<TopologyLevel>>>& levels)
    : size_(gpus.size()), matrix_(size_ * size_, Closeness::kSameBoard) {
  for (size_t a = 0; a < size_; ++a) {
    for (size_t b = a + 1; b < size_; ++b) {
      Closeness closeness = PairCloseness(gpus, levels, a, b);
      matrix_[a * size_ + b] = closeness;
      matrix_[b * size_ + a] = closeness;
    }
  }
}

std::string NormalizePciBusId(const std::string& bus_id) {
  std::string lower;
  for (char c : bus_id) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (std::count(lower.begin(), lower.end(), ':') != 2) return lower;
  size_t colon = lower.find(':');
  size_t first_digit = lower.find_first_not_of('0');
  std::string domain = first_digit < colon ? lower.substr(first_digit, colon - first_digit) : "0";
  return domain + lower.substr(colon);
}

}  // namespace gpupin
