"""The gpupin Python module, in real Python processes against the simulated server.

Run by ctest (python.gpupin), which sets GPUPIN_BIN_DIR and GPUPIN_SOURCE_DIR.
Each test gets its own state directory and simulated server; the programs
under test are separate python3 processes importing gpupin from this folder.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
from typing import Sequence

BIN_DIR = os.environ["GPUPIN_BIN_DIR"]
SOURCE_DIR = os.environ["GPUPIN_SOURCE_DIR"]
GPUPIN = os.path.join(BIN_DIR, "gpupin")
WORKLOAD = os.path.join(BIN_DIR, "gpupin-sim-workload")
SIM_LIBCUDA = os.path.join(BIN_DIR, "libgpupin-sim-cuda.so")
SCENARIO = os.path.join(SOURCE_DIR, "examples", "server-4gpu.json")
PYTHON_DIR = os.path.dirname(os.path.abspath(__file__))
# The sanitizers' runtime must be the first library of a process that loads
# a sanitized library: python3 cannot load the ASan build's simulated libcuda.
LIBCUDA_LOADABLE = os.environ.get("GPUPIN_SANITIZED") != "1"
NOT_LOADABLE = "the sanitized simulated libcuda cannot be loaded into python3 (the release build runs this)"


def torch_available() -> bool:
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


class SimulatedServer(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="gpupin-python-")
        # A state directory given by GPUPIN_STATE_DIR must exist for the
        # commands that only read it (a mistyped path is an error).
        os.mkdir(os.path.join(self.tmp, "state"), 0o755)
        self.addCleanup(shutil.rmtree, self.tmp, True)
        config = os.path.join(self.tmp, "gpupin.toml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(f"simulate = {json.dumps(SCENARIO)}\n")
        self.env = {
            key: value
            for key, value in os.environ.items()
            if key
            not in (
                "CUDA_VISIBLE_DEVICES",
                "CUDA_DEVICE_ORDER",
                "GPUPIN_LEASE_ID",
                "XLA_PYTHON_CLIENT_PREALLOCATE",
                "TF_FORCE_GPU_ALLOW_GROWTH",
            )
        }
        self.env.update(
            {
                "GPUPIN": GPUPIN,
                "GPUPIN_CONFIG": config,
                "GPUPIN_STATE_DIR": os.path.join(self.tmp, "state"),
                # What the simulated libcuda and workload read in place of the driver.
                "GPUPIN_SIM_SCENARIO": SCENARIO,
                "GPUPIN_SIM_LIVE_DIR": os.path.join(self.tmp, "live"),
                "PYTHONPATH": PYTHON_DIR,
                "NO_COLOR": "1",
            }
        )
        self.children: list[subprocess.Popen[str]] = []
        self.addCleanup(self.end_children)

    def end_children(self) -> None:
        for child in self.children:
            if child.poll() is None:
                child.kill()
            child.wait()
            for stream in (child.stdin, child.stdout, child.stderr):
                if stream:
                    stream.close()

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        """Runs `code` in a new python3 to its end."""
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def python_holding(self, code: str) -> subprocess.Popen[str]:
        """Starts `code` in a new python3 that then waits for its stdin to close."""
        script = textwrap.dedent(code) + "\nsys.stdout.flush()\nsys.stdin.read()\n"
        child = subprocess.Popen(
            [sys.executable, "-c", script],
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.children.append(child)
        return child

    def gpupin_json(self, *args: str) -> dict:
        done = subprocess.run(
            [GPUPIN, "--json", *args], env=self.env, capture_output=True, text=True, timeout=60
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def lease_holders(self) -> list[int]:
        return [lease["holder_pid"] for lease in self.gpupin_json("leases")["leases"]]

    def lease_commands(self) -> list[str]:
        return [lease["command"] for lease in self.gpupin_json("leases")["leases"]]


class PinTest(SimulatedServer):
    def test_variables_reach_a_cuda_program_the_process_starts(self) -> None:
        log = os.path.join(self.tmp, "workload.log")
        done = self.python(
            f"""
            import json, os, subprocess, sys, gpupin
            cards = gpupin.pin(mem="2G")
            print(json.dumps({{"index": cards[0].index, "uuid": cards[0].uuid,
                               "memory": cards[0].memory_total_bytes,
                               "env": {{k: os.environ.get(k) for k in
                                       ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
                                        "XLA_PYTHON_CLIENT_PREALLOCATE", "TF_FORCE_GPU_ALLOW_GROWTH")}},
                               "holders": [l["holder_pid"] for l in json.loads(subprocess.run(
                                   [os.environ["GPUPIN"], "--json", "leases"], capture_output=True,
                                   text=True).stdout)["leases"]],
                               "me": os.getpid()}}))
            sys.exit(subprocess.run([{WORKLOAD!r}, "--seconds", "0", "--log", {log!r}]).returncode)
            """
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        pinned = json.loads(done.stdout)
        self.assertEqual(pinned["holders"], [pinned["me"]], "the lease is held by the Python process")
        self.assertEqual(pinned["env"]["CUDA_VISIBLE_DEVICES"], str(pinned["index"]))
        self.assertEqual(pinned["env"]["CUDA_DEVICE_ORDER"], "PCI_BUS_ID")
        self.assertEqual(pinned["env"]["XLA_PYTHON_CLIENT_PREALLOCATE"], "false")
        self.assertEqual(pinned["env"]["TF_FORCE_GPU_ALLOW_GROWTH"], "true")
        self.assertGreater(pinned["memory"], 0)
        with open(log, encoding="utf-8") as f:
            start = [json.loads(line) for line in f if '"start"' in line][0]
        self.assertEqual(start["nvml_indices"], [pinned["index"]], "the CUDA program ran on the pinned card")
        self.assertEqual(self.lease_holders(), [], "the lease ended with the process")

    def test_whole_card_request_sets_no_allocator_variables(self) -> None:
        done = self.python(
            """
            import os, gpupin
            gpupin.pin(count=2)
            print(os.environ["CUDA_VISIBLE_DEVICES"], "XLA_PYTHON_CLIENT_PREALLOCATE" in os.environ)
            """
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        visible, xla = done.stdout.split()
        self.assertEqual(len(visible.split(",")), 2)
        self.assertEqual(xla, "False")

    def test_mem_as_an_int_is_bytes(self) -> None:
        done = self.python(
            """
            import json, os, subprocess, gpupin
            gpupin.pin(mem=3 << 30)
            print(subprocess.run([os.environ["GPUPIN"], "--json", "leases"], capture_output=True,
                                 text=True).stdout)
            """
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual([l["shared_bytes"] for l in json.loads(done.stdout)["leases"]], [3 << 30])

    def assert_pin_refuses(self, argument: str, values: Sequence[str], error: str, said: str) -> None:
        """pin(argument=value), for each value (Python source), raises `error`
        saying `said`, and leases nothing."""
        for value in values:
            done = self.python(
                f"""
                import gpupin
                try:
                    gpupin.pin({argument}={value})
                except {error} as refusal:
                    print(refusal)
                """
            )
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn(said, done.stdout)
        self.assertEqual(self.lease_holders(), [], "nothing was leased")

    def test_mem_that_is_no_size_is_refused_before_gpupin_runs(self) -> None:
        self.assert_pin_refuses("mem", ("True", "2.5"), "TypeError", "mem is a size")

    def test_a_timeout_that_is_no_duration_is_refused_before_gpupin_runs(self) -> None:
        self.assert_pin_refuses(
            "timeout",
            ("-5", "'soon'", "float('nan')", "float('inf')", "True"),
            "ValueError",
            "timeout is a number of seconds, at least 0",
        )

    def test_processes_pinning_at_one_instant_get_different_cards(self) -> None:
        go = os.path.join(self.tmp, "go")
        holders = [
            self.python_holding(
                f"""
                import os, sys, time, gpupin
                while not os.path.exists({go!r}):
                    time.sleep(0.001)
                print(gpupin.pin()[0].index)
                """
            )
            for _ in range(4)
        ]
        time.sleep(0.5)  # all four are at the start line
        open(go, "w").close()
        indices = [int(child.stdout.readline()) for child in holders]
        self.assertEqual(sorted(indices), [0, 1, 2, 3], "four processes, four different cards")
        refused = self.python(
            """
            import sys, gpupin
            try:
                gpupin.pin()
            except gpupin.NoGpuAvailable as e:
                print("NoGpuAvailable", e.exit_code, e)
            """
        )
        self.assertEqual(refused.returncode, 0, refused.stderr)
        self.assertTrue(refused.stdout.startswith("NoGpuAvailable 3 "), refused.stdout)
        self.assertEqual(len(refused.stdout.strip().splitlines()), 1, "the binary's one-line reason")

    def test_lease_ends_when_the_process_is_killed(self) -> None:
        child = self.python_holding("import sys, gpupin\nprint(gpupin.pin(only=2)[0].index)")
        self.assertEqual(child.stdout.readline().strip(), "2")
        self.assertEqual(self.lease_holders(), [child.pid])
        self.assertTrue(self.lease_commands()[0].startswith(f"{sys.executable} -c import sys, gpupin"),
                        "the lease names the program that holds it")
        child.send_signal(signal.SIGKILL)
        child.wait()
        again = self.python("import gpupin\nprint(gpupin.pin(only=2)[0].index)")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(again.stdout.strip(), "2", "the card is free again")

    def test_with_block_releases_and_restores_the_variables(self) -> None:
        done = self.python(
            """
            import json, os, subprocess, gpupin
            def holders():
                out = subprocess.run([os.environ["GPUPIN"], "--json", "leases"],
                                     capture_output=True, text=True).stdout
                return len(json.loads(out)["leases"])
            os.environ["CUDA_DEVICE_ORDER"] = "FASTEST_FIRST"
            with gpupin.lease(count=1, exclude=[0, 1]) as cards:
                inside = (holders(), os.environ["CUDA_VISIBLE_DEVICES"], cards[0].index,
                          os.environ["CUDA_DEVICE_ORDER"])
            after = (holders(), os.environ.get("CUDA_VISIBLE_DEVICES"),
                     os.environ["CUDA_DEVICE_ORDER"], gpupin.release())
            print(json.dumps([inside, after]))
            """
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        inside, after = json.loads(done.stdout)
        self.assertEqual(inside[0], 1)
        self.assertIn(inside[2], (2, 3))
        self.assertEqual(inside[1], str(inside[2]))
        self.assertEqual(inside[3], "PCI_BUS_ID")
        self.assertEqual(after, [0, None, "FASTEST_FIRST", False])

    def test_gpus_lists_the_cards(self) -> None:
        done = self.python("import gpupin\nprint([g['index'] for g in gpupin.gpus()])")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "[0, 1, 2, 3]")

    def test_module_runs_the_binary(self) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "gpupin", "--json", "ls"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(len(json.loads(done.stdout)["gpus"]), 4)
        picked = subprocess.run(
            [sys.executable, "-m", "gpupin", "pick", "--only", "1"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.assertEqual(picked.returncode, 0, picked.stderr)
        self.assertEqual(picked.stdout.strip(), "1")

    def test_missing_driver_is_driver_unavailable(self) -> None:
        del self.env["GPUPIN_CONFIG"]
        self.env["GPUPIN_NVML_LIBRARY"] = os.path.join(self.tmp, "no-libnvidia-ml.so.1")
        done = self.python(
            """
            import gpupin
            try:
                gpupin.pin()
            except gpupin.DriverUnavailable as e:
                print("DriverUnavailable", e.exit_code)
            """
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "DriverUnavailable 4")


# In the scripts of ForkTest: the leases gpupin lists, as (holder pid,
# NVML indices), and the variables pin() sets, as this process sees them.
FORK_HELPERS = """
import json, os, subprocess, sys
def leases():
    out = subprocess.run([os.environ["GPUPIN"], "--json", "leases"],
                         capture_output=True, text=True, check=True).stdout
    return sorted([l["holder_pid"], l["gpu_indices"]] for l in json.loads(out)["leases"])
def variables():
    return {name: os.environ.get(name) for name in ("CUDA_VISIBLE_DEVICES", "GPUPIN_LEASE_ID")}
"""


class ForkTest(SimulatedServer):
    """A lease belongs to the process that pinned it, not to its forked children."""

    def fork_script(self, code: str) -> dict:
        """Runs FORK_HELPERS and `code` in a new python3; its last line of output, as JSON."""
        done = self.python(FORK_HELPERS + textwrap.dedent(code))
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout.splitlines()[-1])

    def test_release_in_a_forked_child_leaves_the_parents_lease(self) -> None:
        seen = self.fork_script(
            """
            import gpupin
            gpupin.pin(only=1)
            before = variables()
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read)
                os.write(write, json.dumps([gpupin.release(), variables()]).encode())
                os._exit(0)
            os.close(write)
            with os.fdopen(read) as pipe:
                in_child = json.load(pipe)
            os.waitpid(pid, 0)
            other = subprocess.run([os.environ["GPUPIN"], "env", "--only=1"],
                                   env={k: v for k, v in os.environ.items()
                                        if k not in ("CUDA_VISIBLE_DEVICES", "GPUPIN_LEASE_ID")},
                                   capture_output=True, text=True)
            during = leases()
            try:
                released = gpupin.release()
            except gpupin.GpupinError as error:  # the lease is gone
                released = str(error)
            print(json.dumps({"me": os.getpid(), "before": before, "in_child": in_child,
                              "leases": during, "other": other.returncode,
                              "released": released, "after": leases()}))
            """
        )
        self.assertEqual(seen["in_child"], [False, seen["before"]],
                         "the child held no lease, and its variables still name the parent's job")
        self.assertEqual(seen["leases"], [[seen["me"], [1]]],
                         "the parent's lease outlived the child's release()")
        self.assertEqual(seen["other"], 3, "another process cannot take the parent's card")
        self.assertEqual([seen["released"], seen["after"]], [True, []], "the parent's own release() ends it")

    def test_forked_child_ending_normally_leaves_the_parents_lease(self) -> None:
        # A child that ends with sys.exit() runs the atexit handlers it
        # inherited, gpupin.release among them; one that leaves the parent's
        # `with gpupin.lease()` block runs the block's release.
        seen = self.fork_script(
            """
            import atexit, gpupin
            atexit.register(gpupin.release)
            def fork_and_wait():
                pid = os.fork()
                if pid:
                    os.waitpid(pid, 0)
                return pid
            gpupin.pin(only=1)
            if fork_and_wait() == 0:
                sys.exit(0)
            after_exit = leases()
            try:
                released = gpupin.release()
            except gpupin.GpupinError as error:  # the lease is gone
                released = str(error)
            in_block = []
            def block():
                with gpupin.lease(only=2):
                    if fork_and_wait() == 0:
                        return "child"
                    in_block.extend(leases())
                return "parent"
            try:
                if block() == "child":
                    os._exit(0)
                ended = None
            except gpupin.GpupinError as error:  # the lease is gone
                ended = str(error)
            print(json.dumps({"me": os.getpid(), "after_exit": after_exit, "released": released,
                              "in_block": in_block, "ended": ended, "after": leases()}))
            """
        )
        me = seen["me"]
        self.assertEqual(seen["after_exit"], [[me, [1]]], "the child's sys.exit() ended nothing")
        self.assertEqual(seen["released"], True)
        self.assertEqual(seen["in_block"], [[me, [2]]], "the child leaving the block ended nothing")
        self.assertEqual([seen["ended"], seen["after"]], [None, []],
                         "the block's end in the parent ended its lease")

    def test_pin_in_a_forked_child_is_served_from_the_parents_cards(self) -> None:
        seen = self.fork_script(
            """
            import gpupin
            parent_cards = [card.index for card in gpupin.pin(count=2, only="1,2,3")]
            parent = variables()
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read)
                cards = [card.index for card in gpupin.pin()]
                pinned = [os.getpid(), cards, variables(), leases()]
                released = [gpupin.release(), variables(), gpupin.release()]
                os.write(write, json.dumps([pinned, released]).encode())
                os._exit(0)
            os.close(write)
            with os.fdopen(read) as pipe:
                pinned, released = json.load(pipe)
            os.waitpid(pid, 0)
            print(json.dumps({"me": os.getpid(), "parent_cards": parent_cards, "parent": parent,
                              "pinned": pinned, "released": released, "after": leases()}))
            """
        )
        me, parent_cards = seen["me"], seen["parent_cards"]
        child, cards, child_variables, child_leases = seen["pinned"]
        self.assertEqual(len(cards), 1)
        self.assertIn(cards[0], parent_cards, "a request inside the parent's job gets one of the job's cards")
        self.assertEqual(child_variables["CUDA_VISIBLE_DEVICES"], str(cards[0]))
        self.assertNotEqual(child_variables["GPUPIN_LEASE_ID"], seen["parent"]["GPUPIN_LEASE_ID"])
        self.assertEqual(child_leases, sorted([[me, parent_cards], [child, cards]]))
        self.assertEqual(seen["released"], [True, seen["parent"], False],
                         "the child's release() ends its own lease and puts back the parent's job variables")
        self.assertEqual(seen["after"], [[me, parent_cards]])

    def test_pool_initializer_pins_each_worker_in_a_pinned_parent(self) -> None:
        seen = self.fork_script(
            """
            import multiprocessing, gpupin
            parent_cards = [card.index for card in gpupin.pin(count=2)]
            context = multiprocessing.get_context("fork")
            barrier = context.Barrier(2)  # inherited: each of the two workers runs one report
            def report(_):
                barrier.wait(20)
                return [os.getpid(), variables()["CUDA_VISIBLE_DEVICES"]]
            with context.Pool(2, initializer=gpupin.pin) as pool:
                workers = pool.map_async(report, range(2), chunksize=1).get(30)
                during = leases()
            print(json.dumps({"me": os.getpid(), "parent_cards": parent_cards, "workers": workers,
                              "during": during, "after": leases()}))
            """
        )
        me, parent_cards = seen["me"], seen["parent_cards"]
        self.assertEqual(len({pid for pid, _ in seen["workers"]}), 2)
        self.assertEqual(sorted(int(cuda) for _, cuda in seen["workers"]), parent_cards,
                         "each worker pinned its own card of the parent's two")
        self.assertEqual(seen["during"], sorted([[me, parent_cards]] +
                                                [[pid, [int(cuda)]] for pid, cuda in seen["workers"]]),
                         "the parent's lease, and one per worker")
        self.assertEqual(seen["after"], [[me, parent_cards]],
                         "the workers' leases ended with them; the parent's did not")


class CudaAlreadyInitializedTest(SimulatedServer):
    def setUp(self) -> None:
        super().setUp()
        # A libcuda.so.1 by its real name, as /proc/self/maps shows the driver's.
        self.libcuda = os.path.join(self.tmp, "libcuda.so.1")
        shutil.copy(SIM_LIBCUDA, self.libcuda)

    @unittest.skipUnless(LIBCUDA_LOADABLE, NOT_LOADABLE)
    def test_raised_after_cuinit(self) -> None:
        done = self.python(
            f"""
            import ctypes, os, gpupin
            cuda = ctypes.CDLL({self.libcuda!r})
            assert cuda.cuInit(0) == 0
            try:
                gpupin.pin()
            except gpupin.CudaAlreadyInitialized as e:
                print("raised:", e)
            print("CUDA_VISIBLE_DEVICES" in os.environ)
            """
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("raised: CUDA already initialised in this process (cuInit already ran", done.stdout)
        self.assertTrue(done.stdout.endswith("False\n"), "nothing set")
        self.assertEqual(self.lease_holders(), [])

    @unittest.skipUnless(LIBCUDA_LOADABLE, NOT_LOADABLE)
    def test_loaded_but_not_initialised_still_takes_effect(self) -> None:
        done = self.python(
            f"""
            import ctypes, gpupin
            cuda = ctypes.CDLL({self.libcuda!r})
            card = gpupin.pin(only=3)[0]
            assert cuda.cuInit(0) == 0
            count = ctypes.c_int()
            assert cuda.cuDeviceGetCount(ctypes.byref(count)) == 0
            print(card.index, count.value)
            """
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "3 1", "cuInit after pin() sees only the pinned card")

    def test_framework_that_started_cuda_is_named(self) -> None:
        # A stand-in with torch's API: Debian's torch is a CPU build that
        # cannot start CUDA.
        done = self.python(
            """
            import sys, types, gpupin
            torch = types.ModuleType("torch")
            torch.cuda = types.SimpleNamespace(is_initialized=lambda: True)
            sys.modules["torch"] = torch
            try:
                gpupin.pin()
            except gpupin.CudaAlreadyInitialized as e:
                print(e)
            """
        )
        self.assertIn("torch.cuda.is_initialized() is true", done.stdout, done.stderr)

    @unittest.skipUnless(torch_available(), "python3-torch is not installed (scripts/setup installs it)")
    def test_not_raised_after_a_bare_import_torch(self) -> None:
        done = self.python(
            """
            import torch, gpupin
            card = gpupin.pin()[0]
            print(card.index, torch.cuda.is_initialized())
            """
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "0 False")


if __name__ == "__main__":
    unittest.main()
