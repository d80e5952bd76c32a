"""The throughput fields of a training-speed row, shared by
`training_speed.py` (ours) and `torch_peer.py` (PyTorch's), kept free of
TensorFlow, Keras and this package: the peer's process never imports them."""


def throughput_record(
    name, framework, jit_compile, steps, seconds, batch, length, flops_per_token
):
    """A row's setting and throughput: `steps` timed steps of `batch`
    sequences of `length` target tokens in `seconds`, at `flops_per_token`
    model FLOPs per target token (`model_gflops` is the achieved rate)."""
    tokens_per_second = steps * batch * length / seconds
    achieved = tokens_per_second * flops_per_token / 1e9
    return {
        "config": name,
        "framework": framework,
        "jit_compile": jit_compile,
        "batch": f"{batch} x {length}+{length}",
        "steps": steps,
        "seconds_per_step": round(seconds / steps, 4),
        "target_tokens_per_second": round(tokens_per_second, 1),
        "mflop_per_target_token": round(flops_per_token / 1e6, 1),
        "model_gflops": round(achieved, 1),
    }


def with_peak_and_memory(result, peak_gflops):
    """`result` with this process's float32 matmul peak, the model FLOPs
    utilization against it, and the process's peak resident memory."""
    import resource  # noqa: PLC0415

    result["matmul_peak_gflops"] = round(peak_gflops, 1)  # float32, this process
    result["mfu"] = round(result["model_gflops"] / peak_gflops, 3)
    # ru_maxrss is in KiB on Linux.
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result["peak_rss_gb"] = round(peak_rss / 1e9, 2)
    result["peak_rss_gib"] = round(peak_rss / 2**30, 2)
    return result
