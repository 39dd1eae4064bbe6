"""Take a GPU lease for this Python process before the framework starts CUDA.

    import gpupin
    gpupin.pin(mem="20G")      # before CUDA initialises: at the top of the script
    import torch               # now sees only the chosen card, as cuda:0

`pin()` asks the gpupin binary for a lease held by this process for as long
as it lives (`gpupin env --json --for <this pid>`), and sets
CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER=PCI_BUS_ID and, for a shared request
(`mem=`), the variables that keep TensorFlow and JAX from taking the whole
card, in os.environ. CUDA reads these once, when it initialises in this
process (cuInit), not when a framework is imported: a bare `import torch`
before pin() is harmless; `torch.cuda.init()`, a tensor on "cuda", or a JAX
or TensorFlow GPU backend is not, and pin() then raises
CudaAlreadyInitialized instead of setting variables that would do nothing.

The binary is the one named by the GPUPIN environment variable, else
`gpupin` on PATH, else a `gpupin` beside this file. Standard library only.
`python3 -m gpupin ls` (or pick, leases, ...) runs the binary itself.

The lease belongs to the process that took it, not to its forked children
(os.fork, multiprocessing's fork): in a child, release() ends nothing and
returns False, and pin() asks for a lease of the child's own, which gpupin
serves from the parent's cards since the child runs inside the parent's job.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import json
import math
import numbers
import os
import shutil
import subprocess
import sys
from typing import Any, Iterator, Optional, Sequence, Union

__all__ = [
    "Gpu",
    "GpupinError",
    "NoGpuAvailable",
    "DriverUnavailable",
    "CudaAlreadyInitialized",
    "pin",
    "lease",
    "release",
    "gpus",
    "binary",
    "cuda_initialized",
]

# The variables pin() may set; release() puts back what they were before.
_VARIABLES = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "GPUPIN_LEASE_ID",
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
)

# gpupin's documented exit codes.
_EXIT_NO_GPU = 3
_EXIT_NO_DRIVER = 4

# CUDA driver API: what cuDeviceGetCount answers before cuInit.
_CUDA_SUCCESS = 0
_CUDA_ERROR_NOT_INITIALIZED = 3


class GpupinError(RuntimeError):
    """gpupin could not do what was asked; the message says why."""

    def __init__(self, message: str, exit_code: Optional[int] = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class NoGpuAvailable(GpupinError):
    """No card fits the request now (gpupin exit 3); the message is gpupin's reason.

    Its advice names gpupin's options, each a keyword of pin(): `--wait` is
    wait=True, `--max-used` is max_used=, `--mine-free` is mine_free=True.
    """


class DriverUnavailable(GpupinError):
    """The NVIDIA driver (NVML) cannot be used here (gpupin exit 4)."""


class CudaAlreadyInitialized(GpupinError):
    """CUDA already initialised in this process: CUDA_VISIBLE_DEVICES can no longer take effect.

    Call pin() before anything starts CUDA: first thing in the script, or
    before the first use of the GPU (importing torch alone does not start it).
    """


@dataclasses.dataclass(frozen=True)
class Gpu:
    """One card of the lease. `index` is NVML's (PCI bus order); this process sees the cards as cuda:0, cuda:1, ... in the order returned."""

    index: int
    uuid: str
    name: str
    memory_total_bytes: Optional[int]
    pci_bus_id: Optional[str]


@dataclasses.dataclass
class _Held:
    lease_id: str
    saved: dict[str, Optional[str]]
    gpus: list[Gpu]
    # The process that took the lease, and the only one whose lease it is: a
    # forked child inherits this record with the rest of the module, but
    # the lease stays held by its parent's pid.
    pid: int


_held: Optional[_Held] = None


def _own_held() -> Optional[_Held]:
    """This process's lease from pin(), or None: a record a forked child inherited is forgotten.

    Compared by pid rather than cleared by an os.register_at_fork hook, so
    that a fork that runs no Python hook (a C extension's fork()) is caught too.
    """
    global _held
    if _held is not None and _held.pid != os.getpid():
        _held = None
    return _held


def binary() -> str:
    """The gpupin executable: $GPUPIN, else gpupin on PATH, else one beside this module."""
    named = os.environ.get("GPUPIN")
    if named:
        return named
    found = shutil.which("gpupin")
    if found:
        return found
    beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpupin")
    if os.access(beside, os.X_OK):
        return beside
    raise GpupinError(
        "the gpupin program is not on PATH; install it, or set GPUPIN=/path/to/gpupin"
    )


def _loaded_libcuda() -> Optional[str]:
    """The path of a libcuda mapped into this process, from /proc/self/maps."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) == 6:
                    path = fields[5].strip()
                    if os.path.basename(path).startswith("libcuda.so"):
                        return path
    except OSError:
        return None
    return None


def _libcuda_initialized(path: str) -> Optional[bool]:
    """Whether cuInit ran in the libcuda already loaded at `path`; None when it cannot be told.

    cuDeviceGetCount answers CUDA_ERROR_NOT_INITIALIZED before cuInit and
    initialises nothing itself. RTLD_NOLOAD uses the copy already mapped and
    never loads a second one.
    """
    try:
        library = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        count = ctypes.c_int(0)
        result = library.cuDeviceGetCount(ctypes.byref(count))
    except (OSError, AttributeError):
        return None
    if result == _CUDA_ERROR_NOT_INITIALIZED:
        return False
    if result == _CUDA_SUCCESS:
        return True
    return None


def _framework_reason() -> Optional[str]:
    """A framework of this process that has started CUDA, by its own account."""
    torch = sys.modules.get("torch")
    torch_cuda = getattr(torch, "cuda", None)
    is_initialized = getattr(torch_cuda, "is_initialized", None)
    if callable(is_initialized):
        try:
            if is_initialized():
                return "torch.cuda.is_initialized() is true"
        except Exception:  # a broken torch install says nothing either way
            pass
    xla_bridge = sys.modules.get("jax._src.xla_bridge")
    backends = getattr(xla_bridge, "_backends", None)
    if isinstance(backends, dict):
        gpu = sorted(name for name in backends if name in ("cuda", "gpu", "rocm"))
        if gpu:
            return f"JAX has a {gpu[0]} backend"
    context = sys.modules.get("tensorflow.python.eager.context")
    context_safe = getattr(context, "context_safe", None)
    if callable(context_safe):
        try:
            ctx = context_safe()
            devices = getattr(ctx, "_context_devices", None) or []
            if any(":GPU:" in str(device) for device in devices):
                return "TensorFlow has created its GPU devices"
        except Exception:
            pass
    return None


def cuda_initialized() -> Optional[str]:
    """Why CUDA_VISIBLE_DEVICES can no longer take effect in this process, or None when it still can.

    Exact where the process can tell: a framework that says it started CUDA
    (torch.cuda.is_initialized(), a JAX GPU backend, TensorFlow's GPU
    devices), or a libcuda in /proc/self/maps on which cuInit already ran. A
    libcuda that is loaded but whose state cannot be read counts as
    initialised, since CUDA would then ignore the variables unnoticed.
    """
    reason = _framework_reason()
    if reason:
        return reason
    path = _loaded_libcuda()
    if path is None:
        return None
    initialized = _libcuda_initialized(path)
    if initialized is False:
        return None
    if initialized:
        return f"cuInit already ran in this process ({path})"
    return f"{path} is loaded in this process and whether cuInit ran cannot be told"


def _run(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [binary(), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    except OSError as error:
        raise GpupinError(f"cannot run gpupin: {error}") from error


def _check(done: subprocess.CompletedProcess[str]) -> Any:
    """gpupin's JSON answer, or the exception for its exit code and last stderr line."""
    if done.returncode == 0:
        try:
            return json.loads(done.stdout)
        except ValueError as error:
            raise GpupinError(f"gpupin printed no JSON: {done.stdout[:200]!r}") from error
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    reason = lines[-1] if lines else f"gpupin exited with status {done.returncode}"
    if reason.startswith("gpupin: "):
        reason = reason[len("gpupin: ") :]
    kind = {_EXIT_NO_GPU: NoGpuAvailable, _EXIT_NO_DRIVER: DriverUnavailable}.get(
        done.returncode, GpupinError
    )
    raise kind(reason, done.returncode)


def _policy_args(policy: dict[str, Any]) -> list[str]:
    """Keyword arguments as gpupin options: max_used="10%" is --max-used=10%, mine_free=True is --mine-free."""
    args = []
    for key, value in policy.items():
        option = "--" + key.replace("_", "-")
        if value is None:
            continue
        if value is True:
            args.append(option)
        elif value is False:
            if key == "near":
                args.append("--no-near")
        elif isinstance(value, (list, tuple)):
            args.append(f"{option}={','.join(str(v) for v in value)}")
        else:
            args.append(f"{option}={value}")
    return args


def pin(
    count: int = 1,
    mem: Union[str, int, None] = None,
    wait: bool = False,
    timeout: Optional[float] = None,
    **policy: Any,
) -> list[Gpu]:
    """Lease `count` cards for this process and point CUDA at them; returns the cards.

    mem: memory the program needs ("20G", or bytes as an int): a shared
      request, placed beside other shared jobs; without it the cards are
      whole and idle.
    wait: queue until cards are free instead of raising NoGpuAvailable.
    timeout: seconds to wait at most (implies wait).
    policy: any other gpupin option: only="0,1", exclude=[3],
      max_used="10%", prefer="util", near=False, mine_free=True, ...

    The lease lasts until release(), or until this process ends, however it
    ends; it is this process's alone: a forked child neither holds nor ends
    it, and its own pin() is served from this lease's cards (the child runs
    inside this job: it inherits GPUPIN_LEASE_ID). Raises
    CudaAlreadyInitialized when CUDA already started in this process,
    NoGpuAvailable when nothing fits (with gpupin's reason),
    DriverUnavailable without a usable driver, GpupinError otherwise.
    """
    global _held
    held = _own_held()
    if held is not None:
        raise GpupinError(
            f"this process already holds lease {held.lease_id}; call gpupin.release() first"
        )
    reason = cuda_initialized()
    if reason:
        raise CudaAlreadyInitialized(
            f"CUDA already initialised in this process ({reason}): CUDA_VISIBLE_DEVICES "
            "would change nothing; call gpupin.pin() before the first use of the GPU"
        )
    # bool is an int to Python: mem=True would ask for one byte. numpy's
    # integers are Integral too.
    if isinstance(mem, bool) or not (mem is None or isinstance(mem, (str, numbers.Integral))):
        raise TypeError(f'mem is a size ("20G") or bytes as an int, not {mem!r}')
    # Said in the caller's words, not as the --wait that carries it.
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, numbers.Real)
        or not math.isfinite(timeout)
        or timeout < 0
    ):
        raise ValueError(f"timeout is a number of seconds, at least 0, not {timeout!r}")
    args = ["--json", "env", "--for", str(os.getpid()), f"--count={count}"]
    if mem is not None:
        # gpupin refuses a size without a unit: an int is bytes.
        args.append(f"--mem={int(mem)}B" if isinstance(mem, numbers.Integral) else f"--mem={mem}")
    if timeout is not None:
        args.append(f"--wait={int(timeout * 1000)}ms")
    elif wait:
        args.append("--wait")
    args += _policy_args(policy)
    answer = _check(_run(args))
    chosen = [
        Gpu(
            index=card["index"],
            uuid=card["uuid"],
            name=card["name"],
            memory_total_bytes=card["memory"]["total_bytes"],
            pci_bus_id=card.get("pci_bus_id"),
        )
        for card in answer["gpus"]
    ]
    saved = {name: os.environ.get(name) for name in _VARIABLES}
    for name, value in answer["env"].items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _held = _Held(answer["lease_id"], saved, chosen, os.getpid())
    return chosen


def release() -> bool:
    """End this process's lease (from pin()) and restore the variables; False when it held none.

    A forked child holds none of its parent's lease: there release() returns
    False and changes nothing, the variables included (the child still runs
    inside its parent's job), unless the child pinned a lease of its own.
    """
    global _held
    held = _own_held()
    _held = None
    if held is None:
        return False
    for name, value in held.saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _check(_run(["--json", "release", held.lease_id]))
    return True


@contextlib.contextmanager
def lease(
    count: int = 1,
    mem: Union[str, int, None] = None,
    wait: bool = False,
    timeout: Optional[float] = None,
    **policy: Any,
) -> Iterator[list[Gpu]]:
    """pin() for the length of a `with` block: the lease ends when the block does.

        with gpupin.lease(count=2) as cards:
            subprocess.run(["python3", "train.py"])   # inherits the variables

    Only the block's own lease is released, and only in the process that took
    it: a forked child that leaves the block ends nothing.
    """
    chosen = pin(count, mem, wait, timeout, **policy)
    taken = _held
    try:
        yield chosen
    finally:
        if taken is not None and _own_held() is taken:
            release()


def gpus() -> list[dict[str, Any]]:
    """What `gpupin ls --json` says: one dict per card (see doc/json.md)."""
    return list(_check(_run(["--json", "ls"]))["gpus"])


def main(argv: Sequence[str]) -> int:
    """python3 -m gpupin COMMAND ...: runs the gpupin binary in this process's place."""
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python3 -m gpupin COMMAND [OPTIONS]  (ls, pick, leases, ps, ...: runs gpupin)")
        return 0 if argv else 2
    try:
        program = binary()
        # exec keeps this pid: pick reserves for the shell that ran us, as it would for gpupin.
        os.execv(program, [program, *argv])
    except (GpupinError, OSError) as error:
        print(f"gpupin: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
