# Sourced by the benchmarks. provenance COMMAND...: the first line of every
# benchmark's output, what a figure needs to be reproduced and compared: the
# command, when, at which commit, on how many CPUs, under which kernel, and
# the load the machine had as it started.
provenance() {
  printf '# %s | %s | commit %s | %s CPUs | %s | load %s\n' "$*" "$(date -u +%FT%TZ)" \
    "$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    "$(nproc)" "$(uname -sr)" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
