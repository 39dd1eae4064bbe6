"""The comparisons of bench/gpu/check.sh: gpupin's JSON against nvidia-smi
and the gpu_probe witness. Prints "STATUS check detail" lines (STATUS is
PASS, FAIL or INFO); `seen` answers by its exit status instead."""
import json
import sys

MIB = 1 << 20


def load_json(path):
    with open(path) as f:
        return json.load(f)


def probe_records(path, kind):
    """The witness's "kind key=value ..." lines as dicts."""
    records = []
    with open(path) as f:
        for line in f:
            words = line.split()
            if words and words[0] == kind:
                records.append(dict(w.split("=", 1) for w in words[1:] if "=" in w))
    return records


def say(status, check, detail):
    print(f"{status} {check} {detail}")


def gpus_by_index(ls):
    return {g["index"]: g for g in ls["gpus"]}


def check_ls(ls_path, smi_path):
    gpus = gpus_by_index(load_json(ls_path))
    with open(smi_path) as f:
        rows = [[c.strip() for c in line.split(",")] for line in f if line.strip()]
    if len(rows) != len(gpus):
        say("FAIL", "a", f"gpupin lists {len(gpus)} GPUs, nvidia-smi {len(rows)}")
        return
    for index, uuid, bus_id, total_mib, used_mib in rows:
        gpu = gpus.get(int(index))
        if gpu is None:
            say("FAIL", "a", f"gpupin has no GPU {index}")
            continue
        problems = []
        if gpu["uuid"] != uuid:
            problems.append(f"uuid {gpu['uuid']} != {uuid}")
        if gpu["pci_bus_id"].upper() != bus_id.upper():
            problems.append(f"bus id {gpu['pci_bus_id']} != {bus_id}")
        memory = gpu["memory"]
        total = memory["total_bytes"]
        if total is None or total // MIB != int(total_mib):
            problems.append(f"memory total {total} B != {total_mib} MiB")
        # Used memory moves between two calls; and which of NVML's "used"
        # (with or without the driver's reserve) nvidia-smi prints is itself
        # a question this check answers.
        used = memory["used_bytes"] or 0
        reserved = memory["reserved_bytes"] or 0
        candidates = {"used": used, "used+reserved": used + reserved}
        close = [k for k, v in candidates.items() if abs(v // MIB - int(used_mib)) <= 64]
        if not close:
            problems.append(f"memory used {used // MIB} MiB (+{reserved // MIB} reserved) "
                            f"!= nvidia-smi's {used_mib} MiB")
        if problems:
            say("FAIL", "a", f"GPU {index}: " + "; ".join(problems))
        else:
            say("PASS", "a", f"GPU {index} {uuid} {bus_id} {total_mib} MiB agrees with "
                f"nvidia-smi (its memory.used is NVML's {close[0]})")


def check_memory(nvml_path, ls_path):
    try:
        gpus = gpus_by_index(load_json(ls_path))
    except (OSError, ValueError):
        gpus = {}
    for record in probe_records(nvml_path, "gpu"):
        index = int(record["index"])
        rc = record.get("v2_rc")
        if rc == "absent":
            say("FAIL", "d", f"GPU {index}: the driver has no nvmlDeviceGetMemoryInfo_v2")
            continue
        say("INFO", "d", f"GPU {index}: version=2 (nvtop's) answers {record['v2_bare_rc']} "
            f"(0: accepted)")
        if rc != "0":
            say("FAIL", "d", f"GPU {index}: nvmlDeviceGetMemoryInfo_v2 with version 0x02000028 "
                f"returned {rc}")
            continue
        gpu = gpus.get(index)
        if gpu is None:
            say("FAIL", "d", f"GPU {index}: not in gpupin's ls")
            continue
        memory = gpu["memory"]
        if memory["reserved_bytes"] is None or memory["total_bytes"] != int(record["v2_total"]):
            say("FAIL", "d", f"GPU {index}: gpupin reports total {memory['total_bytes']}, "
                f"reserved {memory['reserved_bytes']}; v2 says {record['v2_total']}, "
                f"{record['v2_reserved']}")
        else:
            say("PASS", "d", f"GPU {index}: memory v2 accepted; gpupin reports its reserve "
                f"({int(memory['reserved_bytes']) // MIB} MiB)")


def find_process(ls, pid):
    for gpu in ls["gpus"]:
        for owner in [gpu] + gpu["mig"]["devices"]:
            for process in owner["processes"]:
                if process["pid"] == pid:
                    return owner, process
    return None, None


def check_seen(ls_path, pid):
    owner, _ = find_process(load_json(ls_path), int(pid))
    sys.exit(0 if owner else 1)


def check_process(ls_path, nvml_path, hold_path, hold_mib):
    ready = probe_records(hold_path, "ready")[0]
    pid, uuid = int(ready["pid"]), ready["uuid"]
    for v3 in probe_records(nvml_path, "v3"):
        if v3.get("stride") in ("24", "32"):  # measurable only with a process listed
            say("INFO", "b", f"GPU {v3['index']}: the driver writes {v3['stride']}-byte _v3 "
                f"process entries")
    witnessed = [p for p in probe_records(nvml_path, "proc") if int(p["pid"]) == pid]
    if not witnessed:
        say("INFO", "b", f"the witness's own _v3 read does not list pid {pid} (stride guess wrong?)")
    try:
        owner, process = find_process(load_json(ls_path), pid)
    except (OSError, ValueError):
        owner, process = None, None
    if owner is None:
        say("FAIL", "b", f"gpupin does not list the CUDA process {pid} (on {uuid})")
        return
    used = process["used_memory_bytes"]
    if owner["uuid"] != uuid:
        say("FAIL", "b", f"gpupin puts pid {pid} on {owner['uuid']}; CUDA says {uuid}")
    elif used is None or used < int(hold_mib) * MIB:
        say("FAIL", "b", f"gpupin reports {used} bytes for pid {pid}; it allocated {hold_mib} MiB")
    else:
        say("PASS", "b", f"gpupin sees pid {pid} on {uuid} with {used // MIB} MiB "
            f"(allocated {hold_mib} MiB)")


def check_run(out_path, err_path, target):
    ready = probe_records(out_path, "ready")
    events = {}
    with open(err_path) as f:
        for line in f:
            if line.startswith("{"):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                events[event.get("event")] = event
    start = events.get("start")
    if not ready or start is None:
        say("FAIL", "c", "no start event from gpupin or no ready line from the program")
        return
    leased = [g["uuid"] for g in start["gpus"]]
    got = ready[0]["uuid"]
    if [g["index"] for g in start["gpus"]] != [int(target)]:
        say("FAIL", "c", f"--only {target} leased {start['gpus']}")
    elif ready[0]["visible_count"] != "1" or leased != [got]:
        say("FAIL", "c", f"the program sees {ready[0]['visible_count']} device(s), device 0 = "
            f"{got}; the lease holds {leased} "
            f"(CUDA_VISIBLE_DEVICES={start.get('cuda_visible_devices')})")
    else:
        say("PASS", "c", f"the program runs on {got}, the leased GPU {target} "
            f"(CUDA_VISIBLE_DEVICES={start.get('cuda_visible_devices')})")
    verdict = events.get("verify", {}).get("verdict", "no verify event")
    say("PASS" if verdict.startswith("verified") else "FAIL", "c", f"--verify: {verdict}")


def check_cuda_visible(map_path, value):
    """One CUDA_VISIBLE_DEVICES value: gpupin's model against the driver."""
    shown = repr(value)
    try:
        result = load_json(map_path)
    except (OSError, ValueError) as error:
        say("FAIL", "f", f"{shown}: no JSON from gpupin map --probe ({error})")
        return
    probe = result.get("probe") or {}
    model = [d["uuid"] for d in result["devices"]]
    driver = [d["uuid"] for d in probe.get("devices", [])]
    dropped = ",".join(d["reason"] for d in result["dropped"]) or "none"
    if probe.get("agree") is True:
        say("PASS", "f", f"{shown}: model and CUDA agree: {len(model)} device(s), "
            f"status {probe.get('status')}, dropped: {dropped}")
    elif probe.get("agree") is False:
        say("FAIL", "f", f"{shown}: model {model} (dropped: {dropped}), CUDA {driver} "
            f"(status {probe.get('status')}): {'; '.join(probe.get('differences', []))}")
    else:
        say("FAIL", "f", f"{shown}: the driver gave no answer: status {probe.get('status')}, "
            f"{probe.get('detail')}")


if __name__ == "__main__":
    checks = {"ls": check_ls, "memory": check_memory, "seen": check_seen,
              "process": check_process, "run": check_run,
              "cuda_visible": check_cuda_visible}
    checks[sys.argv[1]](*sys.argv[2:])
