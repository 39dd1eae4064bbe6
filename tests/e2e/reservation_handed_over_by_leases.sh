#!/usr/bin/env bash
# A pick's reservation belongs to its job once the job runs on the card, and
# ends when the job does. Whichever gpupin of the reservation's owner sees
# the job first keeps that hand-over, `gpupin leases` included: a job seen
# running must not leave its cards reserved until the TTL after it ends.
source "$(dirname "$0")/lib.sh"
scenario="$EXAMPLES/server-4gpu.json"
log="$TEST_TMP/jobs.log"

(
  ids=$("$GPUPIN" --simulate "$scenario" pick --ttl 10m -n 4)
  CUDA_VISIBLE_DEVICES=$ids GPUPIN_SIM_SCENARIO=$scenario exec "$WORKLOAD" --mem 2G --seconds 1 \
    --name job --log "$log"
) &
shell=$!
wait_for_line "$log" '"name":"job"'
run_status "$GPUPIN" --simulate "$scenario" leases
expect_contains "$OUT" "gpupin-sim-workload" "leases names the running job"
[[ $OUT != *"reserved until"* ]] || fail "the job's cards read as reserved: $OUT"
wait "$shell"

run_status "$GPUPIN" --simulate "$scenario" leases
expect_eq "$STATUS" 0 "leases after the job"
[[ $OUT != *"reserved until"* ]] || fail "the ended job's cards are reserved again: $OUT"
run_status "$GPUPIN" --simulate "$scenario" pick -n 4 --ttl 5s
expect_eq "$STATUS" 0 "the 4 cards are free once the job has ended"
