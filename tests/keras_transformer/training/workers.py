"""Runs a command as the workers of a MultiWorkerMirroredStrategy on localhost."""

import json
import os
import pathlib
import socket
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[3]


def free_ports(count):
    """`count` TCP ports that were free on 127.0.0.1 a moment ago."""
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def run_workers(command_of, count=2, timeout=300):
    """Runs `command_of(index)` as worker `index` of a `count`-worker cluster.

    Each process gets its `TF_CONFIG` (a cluster of "worker" tasks on free
    local ports, no "chief": worker 0 is the chief) and the TensorFlow
    backend. All are killed after `timeout` seconds.

    Returns:
        `[(returncode, stdout, stderr)]`, one per worker.
    """
    workers = [f"127.0.0.1:{port}" for port in free_ports(count)]
    processes = []
    for index in range(count):
        tf_config = {
            "cluster": {"worker": workers},
            "task": {"type": "worker", "index": index},
        }
        processes.append(
            subprocess.Popen(
                command_of(index),
                env={
                    **os.environ,
                    "KERAS_BACKEND": "tensorflow",
                    "TF_CONFIG": json.dumps(tf_config),
                },
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        outputs = [p.communicate(timeout=timeout) for p in processes]
    finally:
        for process in processes:
            process.kill()
    return [
        (process.returncode, stdout, stderr)
        for process, (stdout, stderr) in zip(processes, outputs, strict=True)
    ]
