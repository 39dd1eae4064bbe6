#!/usr/bin/env python3
"""An inference service that takes its GPU at start-up, then loads its model.

    PYTHONPATH=python python3 examples/python/serve.py --port 8000 --mem 10G

gpupin.pin() comes before anything starts CUDA: it leases a card for this
process (for as long as it runs, however it ends) and sets
CUDA_VISIBLE_DEVICES, so the framework sees that card alone, as cuda:0.
Two services started at the same instant get different cards. GET / answers
with the card and a prediction.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import sys

import gpupin


def load_model() -> tuple[object, str]:
    """The model, and the device it is on: here, a tiny torch layer (or a stand-in without torch)."""
    try:
        import torch  # after pin(): CUDA, when it starts, reads the variables pin() set
    except ImportError:
        return (lambda x: [0.5 * sum(x)]), "cpu (no torch)"
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    layer = torch.nn.Linear(4, 1).to(device)
    torch.nn.init.constant_(layer.weight, 0.5)
    torch.nn.init.zeros_(layer.bias)

    def predict(x: list[float]) -> list[float]:
        with torch.no_grad():
            return layer(torch.tensor([x], device=device)).flatten().tolist()

    return predict, device


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000, help="0: any free port")
    parser.add_argument("--mem", help="memory the model needs, e.g. 10G (a shared card)")
    parser.add_argument("--wait", action="store_true", help="queue until a card is free")
    args = parser.parse_args()

    try:
        card = gpupin.pin(mem=args.mem, wait=args.wait)[0]
    except gpupin.NoGpuAvailable as error:
        print(f"serve: no GPU for this service: {error}", file=sys.stderr)
        return 3
    print(f"serve: GPU {card.index} ({card.name}, {card.uuid}) as cuda:0", flush=True)

    predict, device = load_model()
    answer = {
        "gpu_index": card.index,
        "gpu_uuid": card.uuid,
        "cuda_visible_devices": os.environ["CUDA_VISIBLE_DEVICES"],
        "device": device,
    }

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({**answer, "prediction": predict([1.0, 2.0, 3.0, 4.0])}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", args.port), Handler)
    print(f"serve: model on {device}, listening on 127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
