#!/usr/bin/env bash
# gpupin config shows each setting, its value and where it came from, and
# the caller's cards against their cap, for two real users (root and
# nobody); nothing a user writes (their file, --config, an option, a
# variable) changes the admin's limits.
source "$(dirname "$0")/lib.sh"
house_rules '[defaults]\nmax_used = "2G"\n\n[limits]\nmax_gpus_per_user = 3\nreserved = ["3"]\n\n[limits.users.nobody]\nmax_gpus_per_user = 1\n'
as_nobody_setup
admin="$GPUPIN_TEST_ADMIN_CONFIG"
install -m 0644 "$EXAMPLES/server-4gpu.json" "$TEST_TMP/server-4gpu.json"
scenario="$TEST_TMP/server-4gpu.json"
install -d -m 1777 "$GPUPIN_SIM_LIVE_DIR"
export XDG_CONFIG_HOME="$TEST_TMP/xdg"
mkdir -p "$XDG_CONFIG_HOME/gpupin"
printf '# mine\n[defaults]\nprefer = "util"\n' >"$XDG_CONFIG_HOME/gpupin/config.toml"
chmod -R a+rX "$XDG_CONFIG_HOME"

# setting JSON KEY FIELD: a field of one row of "settings" (or "limits").
setting() { jq -r --arg key "$2" ".${4:-settings}[] | select(.key == \$key) | .${3:-from}" <<<"$1"; }

# Root holds two cards: a job's reservation and a shared --mem lease.
"$GPUPIN" --simulate "$scenario" pick >/dev/null 2>"$TEST_TMP/pick1.err" || fail "pick"
"$GPUPIN" --simulate "$scenario" pick --mem 1G >/dev/null 2>"$TEST_TMP/pick2.err" || fail "pick --mem"
printf 'quiet = true\n' >"$TEST_TMP/mine.toml"
run_status env GPUPIN_CONFIG="$TEST_TMP/mine.toml" "$GPUPIN" --simulate "$scenario" --json config
expect_eq "$STATUS" 0 "config --json exit status: $ERR"
json=$OUT
expect_eq "$(jq -r .files.admin <<<"$json")" "$admin" "the admin's file"
expect_eq "$(jq -r .files.user <<<"$json")" "$XDG_CONFIG_HOME/gpupin/config.toml" "the user's file"
expect_eq "$(setting "$json" max-used from)" "$admin:2" "max-used comes from the admin's line 2"
expect_eq "$(setting "$json" max-used value)" "2G" "max-used's value"
expect_eq "$(setting "$json" prefer from)" "$XDG_CONFIG_HOME/gpupin/config.toml:3" "prefer comes from the user's file"
expect_eq "$(setting "$json" prefer value)" "util" "prefer's value"
expect_eq "$(setting "$json" simulate from)" "command line" "simulate comes from the command line"
expect_eq "$(setting "$json" state-dir from)" "environment GPUPIN_STATE_DIR" "state-dir comes from the environment"
expect_eq "$(setting "$json" quiet from)" "--config $TEST_TMP/mine.toml:1" "quiet comes from --config"
expect_eq "$(setting "$json" max-util from)" "built in" "max-util is built in"
expect_eq "$(setting "$json" max_gpus_per_user value limits)" "3" "the cap"
expect_eq "$(setting "$json" max_gpus_per_user from limits)" "$admin:5" "the cap's line"
expect_eq "$(setting "$json" reserved value limits)" "3" "the reserved card"
expect_eq "$(setting "$json" queue value limits)" "fair" "the queue's built-in order"
expect_eq "$(setting "$json" users.nobody.max_gpus_per_user from limits)" "$admin:9" "nobody's own cap's line"
expect_eq "$(jq -c .you <<<"$json")" \
  "{\"user\":\"root\",\"gpus_held\":2,\"max_gpus_per_user\":3,\"rule\":\"max_gpus_per_user = 3 in $admin:5\"}" \
  "root's holdings against the cap"

# nobody: none held, their own cap.
run_status "${AS_NOBODY[@]}" env HOME="$TEST_TMP" XDG_CONFIG_HOME= "$GPUPIN" --simulate "$scenario" --json config
expect_eq "$STATUS" 0 "config as nobody: $ERR"
expect_eq "$(jq -c .you <<<"$OUT")" \
  "{\"user\":\"nobody\",\"gpus_held\":0,\"max_gpus_per_user\":1,\"rule\":\"max_gpus_per_user = 1 of [limits.users.nobody] in $admin:9\"}" \
  "nobody's holdings against their cap"
expect_eq "$(setting "$OUT" prefer from)" "built in" "nobody does not read root's file"
# A file in nobody's own place that root made for them (sudo vim) is read,
# one that another user owns is not.
mkdir -p "$TEST_TMP/xdg-nobody/gpupin"
printf '[defaults]\nprefer = "index"\n' >"$TEST_TMP/xdg-nobody/gpupin/config.toml"
chmod -R a+rX "$TEST_TMP/xdg-nobody"
run_status "${AS_NOBODY[@]}" env XDG_CONFIG_HOME="$TEST_TMP/xdg-nobody" "$GPUPIN" --simulate "$scenario" --json config
expect_eq "$(setting "$OUT" prefer value)" index "root's file in nobody's place"
chown daemon "$TEST_TMP/xdg-nobody/gpupin/config.toml"
run_status "${AS_NOBODY[@]}" env XDG_CONFIG_HOME="$TEST_TMP/xdg-nobody" "$GPUPIN" --simulate "$scenario" --json config
expect_eq "$(setting "$OUT" prefer from)" "built in" "another user's file in nobody's place"
expect_eq "$(jq -r .files.user_not_read <<<"$OUT")" "it belongs to daemon, not to you" "config says why it is not read"
limits=$(jq -c .limits <<<"$json")

# No user's file, --config, option or variable moves a limit.
printf '[limits]\nmax_gpus_per_user = 8\n' >"$TEST_TMP/lift.toml"
run_status "$GPUPIN" --simulate "$scenario" --config "$TEST_TMP/lift.toml" config
expect_eq "$STATUS" 2 "--config with [limits]"
expect_eq "$ERR" "gpupin: $TEST_TMP/lift.toml:1: [limits]: limits belong to the admin, in $admin; a --config file gives defaults only" "--config with [limits] is refused"
printf '[defaults]\nmax_gpus_per_user = 8\n' >"$TEST_TMP/lift.toml"
run_status "$GPUPIN" --simulate "$scenario" --config "$TEST_TMP/lift.toml" config
expect_eq "$STATUS" 2 "--config naming a limit as a default"
printf 'max_gpus_per_user = 8\n' >"$TEST_TMP/lift.toml"
run_status "$GPUPIN" --simulate "$scenario" --config "$TEST_TMP/lift.toml" config
expect_eq "$STATUS" 2 "--config naming a limit as an option"
printf '[defaults]\nmax_gpus_per_user = 8\n' >"$XDG_CONFIG_HOME/gpupin/config.toml"
run_status "$GPUPIN" --simulate "$scenario" config
expect_eq "$STATUS" 1 "the user's file naming a limit as a default"
run_status "$GPUPIN" --simulate "$scenario" config --max-gpus-per-user 8
expect_eq "$STATUS" 2 "no option sets a limit"
rm "$XDG_CONFIG_HOME/gpupin/config.toml"
run_status env GPUPIN_MAX_GPUS_PER_USER=8 GPUPIN_LIMITS=none "$GPUPIN" --simulate "$scenario" --json config
expect_eq "$(jq -c .limits <<<"$OUT")" "$limits" "the limits, whatever the environment"

# Text: every part is there.
run_status "$GPUPIN" --simulate "$scenario" config
expect_contains "$OUT" "files: admin $admin, user $XDG_CONFIG_HOME/gpupin/config.toml (none)" "the files"
expect_contains "$OUT" "you (root): hold 2 GPUs; the most you may hold: max_gpus_per_user = 3 in $admin:5" "the holdings"

# Built-in defaults say what they mean, not the empty value behind them.
run_status env GPUPIN_NVML_LIBRARY=/elsewhere/libnvidia-ml.so.1 "$GPUPIN" --json config
for row in "max-util:10%, shared: none" "near:on; off with --order" "watch:off; --watch alone: 2" \
  "state-dir:$GPUPIN_STATE_DIR" "nvml:/elsewhere/libnvidia-ml.so.1"; do
  expect_eq "$(setting "$OUT" "${row%%:*}" value)" "${row#*:}" "config's ${row%%:*}"
done
expect_eq "$(setting "$OUT" nvml from)" "environment GPUPIN_NVML_LIBRARY" "where nvml comes from"

# The environment is stronger than a --config file, and the command line
# than both: the state directory and the library the variables name are used.
mkdir -p "$TEST_TMP/other-state"
printf 'state-dir = "%s"\nnvml = "/from/file/libnvidia-ml.so.1"\n' "$TEST_TMP/other-state" >"$TEST_TMP/places.toml"
run_status env GPUPIN_NVML_LIBRARY=/elsewhere/libnvidia-ml.so.1 "$GPUPIN" --config "$TEST_TMP/places.toml" --json config
expect_eq "$(setting "$OUT" state-dir value) $(setting "$OUT" state-dir)" \
  "$GPUPIN_STATE_DIR environment GPUPIN_STATE_DIR" "GPUPIN_STATE_DIR over --config's state-dir"
expect_eq "$(setting "$OUT" nvml value) $(setting "$OUT" nvml)" \
  "/elsewhere/libnvidia-ml.so.1 environment GPUPIN_NVML_LIBRARY" "GPUPIN_NVML_LIBRARY over --config's nvml"
run_status env GPUPIN_NVML_LIBRARY=/elsewhere/libnvidia-ml.so.1 "$GPUPIN" --config "$TEST_TMP/places.toml" ls
expect_eq "$STATUS" 4 "ls without a driver"
expect_contains "$ERR" "cannot load NVML (/elsewhere/libnvidia-ml.so.1:" "ls loads the variable's library, not the file's"
env GPUPIN_NVML_LIBRARY="$GPUPIN_BIN_DIR/libgpupin-sim-nvml.so" "$GPUPIN" --config "$TEST_TMP/places.toml" \
  --simulate "$scenario" pick >/dev/null 2>"$TEST_TMP/pick3.err" || fail "pick with --config: $(cat "$TEST_TMP/pick3.err")"
expect_eq "$(ls "$TEST_TMP/other-state/leases" 2>/dev/null | wc -l)" 0 "no lease in --config's state directory"
expect_eq "$("$GPUPIN" --json leases | jq '.leases | length')" 3 "the lease is in GPUPIN_STATE_DIR's"
run_status "$GPUPIN" --config "$TEST_TMP/places.toml" --nvml /typed/libnvidia-ml.so.1 --json config
expect_eq "$(setting "$OUT" nvml value) $(setting "$OUT" nvml)" \
  "/typed/libnvidia-ml.so.1 command line" "a typed --nvml over the variable and the file"
# A home that is no directory (HOME=/dev/null, as service accounts have)
# holds no user's file: nothing to read, no error.
for home in "HOME=/dev/null" "XDG_CONFIG_HOME=/dev/null"; do
  run_status env -u XDG_CONFIG_HOME "$home" "$GPUPIN" --simulate "$scenario" ls
  expect_eq "$STATUS:$ERR" "0:" "ls with $home"
done

# A switch given by its negated name shows as the value it gives.
mkdir -p "$TEST_TMP/xdg-near/gpupin"
printf '[defaults]\nno_near = true\n' >"$TEST_TMP/xdg-near/gpupin/config.toml"
run_status env XDG_CONFIG_HOME="$TEST_TMP/xdg-near" "$GPUPIN" --json config
expect_eq "$(setting "$OUT" near value)" false "no_near = true is near false"
env -u GPUPIN_STATE_DIR "$GPUPIN" --json config >"$TEST_TMP/bare.json"
expect_eq "$(setting "$(cat "$TEST_TMP/bare.json")" state-dir value)" "$(
  [[ -d /run/gpupin && -w /run/gpupin ]] && echo /run/gpupin || echo /tmp/gpupin
)" "the default state directory"
echo PASS
