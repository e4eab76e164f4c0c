#!/usr/bin/env python3
"""Builds tests/data/pools/two_devices__default.pickle: one snapshot holding two devices' histories,
as torch.cuda.memory._snapshot() writes for a process that used two GPUs. Device 0 is the CUDA-graph
capture cudagraph_mlp__default (private pools, full history); device 1 is the state-only snapshot
stateonly_train__default (no history: a truncated one). Both were recorded with PyTorch 2.11 on an
H100 under the default config; each device's statistics are its source's JSON.

Usage: make_two_devices.py   (run from tests/data/scripts; needs only Python)
"""
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))
POOLS = os.path.join(HERE, "..", "pools")


def load(name):
    with open(os.path.join(POOLS, name + ".pickle"), "rb") as f:
        return pickle.load(f)


def main():
    first = load("cudagraph_mlp__default")
    second = load("stateonly_train__default")
    for segment in second["segments"]:
        segment["device"] = 1
    out = {
        "segments": first["segments"] + second["segments"],
        "device_traces": [first["device_traces"][0], second["device_traces"][0]],
        "allocator_settings": first["allocator_settings"],
        "external_annotations": first.get("external_annotations", []),
    }
    with open(os.path.join(POOLS, "two_devices__default.pickle"), "wb") as f:
        pickle.dump(out, f, protocol=4)


if __name__ == "__main__":
    main()
