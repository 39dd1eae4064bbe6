# examples/python/serve.py: two services started at the same instant pin
# different cards before loading their model, answer on them, and a service
# killed with SIGKILL leaves its card free.
source "$(dirname "$0")/lib.sh"
printf 'simulate = "%s"\n' "$EXAMPLES/server-4gpu.json" >"$TEST_TMP/gpupin.toml"
export GPUPIN_CONFIG="$TEST_TMP/gpupin.toml" GPUPIN="$GPUPIN" PYTHONPATH="$GPUPIN_SOURCE_DIR/python"

service() {
  exec python3 "$EXAMPLES/python/serve.py" --port 0 >"$TEST_TMP/serve$1.out" 2>"$TEST_TMP/serve$1.err"
}
start_at_once 2 service
for i in 1 2; do wait_for_line "$TEST_TMP/serve$i.out" "listening on" 30; done
ask() {
  python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
    "http://$(grep -o '127.0.0.1:[0-9]*' "$TEST_TMP/serve$1.out")/"
}
one=$(ask 1)
two=$(ask 2)
index1=$(jq .gpu_index <<<"$one")
index2=$(jq .gpu_index <<<"$two")
[[ $index1 != "$index2" ]] || fail "both services pinned GPU $index1"
expect_eq "$(jq -r .cuda_visible_devices <<<"$one")" "$index1" "the first service's CUDA_VISIBLE_DEVICES"
expect_eq "$(jq -r .cuda_visible_devices <<<"$two")" "$index2" "the second's"
expect_eq "$(jq -c .prediction <<<"$one")" "[5]" "the model answers"
expect_contains "$(cat "$TEST_TMP/serve1.out")" "serve: GPU $index1 (" "the service says which card it took"
holders=$("$GPUPIN" --json leases | jq -r '[.leases[].holder_pid] | sort | join(" ")')
expect_eq "$holders" "$(printf '%s\n' "${STARTED[@]}" | sort -n | tr '\n' ' ' | sed 's/ $//')" "the leases' holders: the services"

kill -KILL "${STARTED[0]}"
wait "${STARTED[0]}" 2>/dev/null || true
expect_eq "$("$GPUPIN" --json leases | jq -r '[.leases[].holder_pid] | join(" ")')" "${STARTED[1]}" "the killed service's lease ended"
kill "${STARTED[1]}"
wait "${STARTED[1]}" 2>/dev/null || true
echo PASS
