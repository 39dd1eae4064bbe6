#!/usr/bin/env bash
# Checks what a user or an admin installs, from a build folder that was built
# already (CI: build/release):
# 1. `cmake --install` into a scratch prefix: the installed gpupin finds its
#    simulated server under PREFIX/lib/gpupin.
# 2. The Debian package (cpack): built, installed on this machine with
#    apt-get, run as a user would (ls, run, man, bash completion, the state
#    directory /run/gpupin for root and for another user), purged, and
#    nothing of it left behind.
# Needs root (or sudo) for the package; CI runs it from scripts/test.
#   tests/package/check_install.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: tests/package/check_install.sh BUILD_DIR}" && pwd)
sudo=""
if [[ $(id -u) != 0 ]]; then sudo="sudo"; fi
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
work=$(mktemp -d)
chmod 0755 "$work"
purge=0
cleanup() {
  if ((purge)); then DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq gpupin >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
export NO_COLOR=1

# 1. cmake --install, anywhere.
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
out=$(GPUPIN_STATE_DIR="$work/state-prefix" "$prefix/bin/gpupin" \
  --simulate "$prefix/share/gpupin/examples/lab-8gpu.json" run -- \
  "$prefix/lib/gpupin/gpupin-sim-workload" --seconds 0 2>&1) ||
  fail "gpupin installed under $prefix cannot run its simulated workload: $out"

# 2. The Debian package.
rm -f "$build"/gpupin_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
debs=("$build"/gpupin_*_amd64.deb)
((${#debs[@]} == 1)) && [[ -f ${debs[0]} ]] || fail "expected one gpupin_<version>_amd64.deb in $build"
deb=${debs[0]}
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends != *nvidia* ]] || fail "the package depends on NVIDIA packages: $depends"
if dpkg-query -W -f='${Status}' gpupin 2>/dev/null | grep -q 'ok installed'; then
  fail "gpupin is installed already; this check installs and purges its own package"
fi
state_existed=0
if [[ -e /run/gpupin ]]; then state_existed=1; fi
purge=1
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$deb" >/dev/null
files=$(dpkg -L gpupin)

[[ $(command -v gpupin) == /usr/bin/gpupin ]] || fail "gpupin is not /usr/bin/gpupin: $(command -v gpupin)"
gpupin --version | grep -q "^gpupin [0-9]" || fail "gpupin --version: $(gpupin --version)"
lab=/usr/share/gpupin/examples/lab-8gpu.json
out=$(gpupin --simulate "$lab" ls)
[[ $(grep -cE "^ +[0-7] " <<<"$out") == 8 ]] || fail "the installed gpupin's ls does not show 8 GPUs: $out"
man -P cat gpupin 2>/dev/null | grep -q "gpupin - put programs on the right NVIDIA GPU" ||
  fail "man gpupin does not show the man page"
completion=$(bash --norc --noprofile -c '
  source /usr/share/bash-completion/bash_completion
  _completion_loader gpupin
  COMP_WORDS=(gpupin pi) COMP_CWORD=1 COMP_LINE="gpupin pi" COMP_POINT=9
  _gpupin
  echo "${COMPREPLY[*]}"')
[[ $completion == pick ]] || fail "bash completes 'gpupin pi' to '$completion', not 'pick'"
[[ -f /usr/share/zsh/vendor-completions/_gpupin && -f /usr/share/fish/vendor_completions.d/gpupin.fish ]] ||
  fail "the zsh and fish completions are not installed"
[[ -f /usr/lib/tmpfiles.d/gpupin.conf ]] || fail "no /usr/lib/tmpfiles.d/gpupin.conf"
/usr/bin/python3 -c 'import gpupin' || fail "Debian's python3 cannot import the installed gpupin module"
[[ -x /usr/share/gpupin/examples/shell/sweep.sh ]] || fail "the worked examples are not installed"

workload=/usr/lib/gpupin/gpupin-sim-workload
if command -v systemd-tmpfiles >/dev/null && ((state_existed == 0)); then
  # The package created the shared state directory: jobs of root and of
  # another user lease cards in it.
  modes=$(stat -c '%a %U' /run/gpupin /run/gpupin/leases /run/gpupin/queue /run/gpupin/lock \
    /run/gpupin/arrivals | tr '\n' ' ')
  [[ $modes == "1777 root 1777 root 1777 root 644 root 644 root " ]] ||
    fail "/run/gpupin (and leases/, queue/, lock, arrivals) has modes: $modes"
  out=$(gpupin --simulate "$lab" run -- "$workload" --seconds 0 2>&1) ||
    fail "root's gpupin run in /run/gpupin: $out"
  if id nobody >/dev/null 2>&1; then
    out=$(cd / && setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups \
      gpupin --simulate "$lab" run -- "$workload" --seconds 0 2>&1) ||
      fail "nobody's gpupin run in /run/gpupin: $out"
  fi
else
  out=$(GPUPIN_STATE_DIR="$work/state" gpupin --simulate "$lab" run -- "$workload" --seconds 0 2>&1) ||
    fail "gpupin run of the installed workload: $out"
fi

DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq gpupin >/dev/null
purge=0
! dpkg-query -W -f='${Status}' gpupin 2>/dev/null | grep -q installed || fail "gpupin is still installed"
left=()
while IFS= read -r path; do
  # Directories other packages share (/usr, /usr/share/man/man1) stay.
  if [[ -f $path || -L $path ]] || { [[ -d $path ]] && [[ $path == *gpupin* ]]; }; then left+=("$path"); fi
done <<<"$files"
if ((state_existed == 0)) && [[ -e /run/gpupin ]]; then left+=(/run/gpupin); fi
((${#left[@]} == 0)) || fail "left after purge: ${left[*]}"
echo "PASS: cmake --install, and $(basename "$deb") installs, runs, and purges clean"
