#!/usr/bin/env bash
# A container on a free GPU: `gpupin docker` chooses the card, hands it to
# docker as --gpus "device=<UUID>" (UUIDs: the container's numbering differs
# from the host's), and holds the lease while the container runs; with
# run -d, until the container ends.
#
# Usage: run.sh IMAGE [COMMAND...]   (default COMMAND: nvidia-smi -L)
#   MEM: memory the job needs, for a shared card (default: a whole idle card).
#   GPUPIN names the gpupin binary (default: gpupin on PATH).
set -euo pipefail
gpupin=${GPUPIN:-gpupin}
if (($# == 0)); then
  echo "usage: run.sh IMAGE [COMMAND...]" >&2
  exit 2
fi
image=$1
shift
command=("$@")
((${#command[@]} > 0)) || command=(nvidia-smi -L)
request=()
if [[ -n ${MEM:-} ]]; then request=(--mem "$MEM"); fi
exec "$gpupin" docker "${request[@]}" --wait -- run --rm "$image" "${command[@]}"
