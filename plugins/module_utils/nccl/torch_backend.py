# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The torch.distributed benchmark that nccl_test's ``backend: torch`` runs on the node.

SCRIPT is written to a temporary file by the module and run with the node's Python that has
torch (``python_executable``). Alone it spawns one process per GPU on 127.0.0.1; started by torchrun (RANK,
WORLD_SIZE, LOCAL_RANK and MASTER_ADDR/PORT in the environment, one agent per node) it is one of the ranks and
joins the rendezvous torchrun made. It runs all_reduce, all_gather (all_gather_into_tensor), reduce_scatter
(reduce_scatter_tensor) and alltoall (all_to_all_single) on float32 buffers,
checks each result once, then times ``iters`` back-to-back calls with CUDA events after ``warmup``
calls. Each rank's mean time is gathered and combined as nccl-tests' ``-a`` does (``average``: ``avg``, the
mean over ranks, nccl-tests' default; ``rank0``, ``min`` or ``max``), then ``size`` means
what it means in nccl-tests: the whole buffer (all_reduce's buffer, all_gather's output,
reduce_scatter's input, alltoall's buffer); algbw = size / time and busbw = algbw x nccl-tests' factor.
Rank 0 prints one line ``RESULT_MARKER <JSON document>`` to stdout (with srun or torchrun the launcher gathers
every node's stdout, so the document reaches the launch host wherever rank 0 ran); NCCL's own log lines go to
stdout as usual, each rank's with its host name.
torch.distributed.all_reduce works in place, so its figure is an in-place one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

RESULT_MARKER = "ibtune-nccl-torch-result: "

SCRIPT = r"""
import json
import os
import socket
import sys
import time


RESULT_MARKER = "ibtune-nccl-torch-result: "

# nccl-tests -a: 0=RANK0, 1=AVG (its default), 2=MIN, 3=MAX.
AVERAGES = ("rank0", "avg", "min", "max")

FACTORS = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: float(n - 1) / n,
    "reduce_scatter": lambda n: float(n - 1) / n,
    "alltoall": lambda n: float(n - 1) / n,
}


def free_port():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def combine_times(times, how="avg"):
    # One time from every rank's mean iteration time, as nccl-tests' -a option combines them.
    if how not in AVERAGES:
        raise ValueError("average %r is not one of %s" % (how, ", ".join(AVERAGES)))
    if how == "rank0":
        return times[0]
    if how == "min":
        return min(times)
    if how == "max":
        return max(times)
    return sum(times) / len(times)


def bench(torch, dist, rank, world, collective, size, warmup, iters, average="avg"):
    elt = 4
    per_rank = max(1, size // elt // world)
    if collective == "all_reduce":
        total = max(1, size // elt)
        buf = torch.empty(total, dtype=torch.float32, device="cuda")
        buf.fill_(rank + 1)
        dist.all_reduce(buf)
        expected = world * (world + 1) / 2.0
        wrong = int((buf != expected).sum().item())

        def op():
            dist.all_reduce(buf)

        keep = [buf]
    elif collective == "all_gather":
        total = per_rank * world
        inp = torch.empty(per_rank, dtype=torch.float32, device="cuda")
        out = torch.empty(total, dtype=torch.float32, device="cuda")
        inp.fill_(rank + 1)
        dist.all_gather_into_tensor(out, inp)
        expected = torch.arange(1, world + 1, dtype=torch.float32, device="cuda").repeat_interleave(per_rank)
        wrong = int((out != expected).sum().item())
        del expected

        def op():
            dist.all_gather_into_tensor(out, inp)

        keep = [inp, out]
    elif collective == "reduce_scatter":
        total = per_rank * world
        inp = torch.empty(total, dtype=torch.float32, device="cuda")
        out = torch.empty(per_rank, dtype=torch.float32, device="cuda")
        inp.fill_(rank + 1)
        dist.reduce_scatter_tensor(out, inp)
        expected = world * (world + 1) / 2.0
        wrong = int((out != expected).sum().item())

        def op():
            dist.reduce_scatter_tensor(out, inp)

        keep = [inp, out]
    elif collective == "alltoall":
        total = per_rank * world
        inp = torch.empty(total, dtype=torch.float32, device="cuda")
        out = torch.empty(total, dtype=torch.float32, device="cuda")
        inp.fill_(rank + 1)
        dist.all_to_all_single(out, inp)
        expected = torch.arange(1, world + 1, dtype=torch.float32, device="cuda").repeat_interleave(per_rank)
        wrong = int((out != expected).sum().item())
        del expected

        def op():
            dist.all_to_all_single(out, inp)

        keep = [inp, out]
    else:
        raise ValueError("unsupported collective %r" % collective)
    for _ in range(warmup):
        op()
    torch.cuda.synchronize()
    dist.barrier()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        op()
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end) / iters
    stats = torch.tensor([ms, float(wrong)], dtype=torch.float64, device="cuda")
    times = torch.zeros(world, dtype=torch.float64, device="cuda")
    dist.all_gather_into_tensor(times, stats[:1].clone())
    wrong_all = stats[1:].clone()
    dist.all_reduce(wrong_all)
    del keep
    torch.cuda.empty_cache()
    size_bytes = total * elt
    rank_times_us = [float(t) * 1000.0 for t in times.tolist()]
    time_us = combine_times(rank_times_us, average)
    algbw = size_bytes / (time_us * 1e-6) / 1e9 if time_us > 0 else 0.0
    return {
        "size": size_bytes,
        "count": total,
        "type": "float",
        "redop": "sum" if collective in ("all_reduce", "reduce_scatter") else "none",
        "root": -1,
        "time_us": round(time_us, 3),
        "algbw": round(algbw, 3),
        "busbw": round(algbw * FACTORS[collective](world), 3),
        "wrong": int(wrong_all.item()),
        "rank_time_us": [round(t, 3) for t in rank_times_us],
        "in_place": collective == "all_reduce",
    }


def worker(rank, world, cfg, port, local_rank=None):
    import torch
    import torch.distributed as dist

    if port is not None:
        # alone: this script made the processes, so it makes the rendezvous too (torchrun sets these itself)
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(port)
        os.environ["RANK"] = str(rank)
        os.environ["WORLD_SIZE"] = str(world)
        os.environ["LOCAL_RANK"] = str(rank)
    device = rank if local_rank is None else local_rank
    torch.cuda.set_device(device)
    kwargs = {"rank": rank, "world_size": world}
    try:
        dist.init_process_group("nccl", device_id=torch.device("cuda", device), **kwargs)
    except TypeError:
        dist.init_process_group("nccl", **kwargs)
    results = {}
    for collective in cfg["collectives"]:
        rows = []
        for size in cfg["sizes"]:
            rows.append(
                bench(
                    torch, dist, rank, world, collective, size, cfg["warmup"], cfg["iters"], cfg.get("average", "avg")
                )
            )
        results[collective] = rows
    hosts = [None] * world
    dist.all_gather_object(hosts, socket.gethostname())
    if rank == 0:
        version = torch.cuda.nccl.version()
        if isinstance(version, tuple):
            version = ".".join(str(v) for v in version)
        doc = {
            "backend": "torch",
            "torch_version": torch.__version__,
            "nccl_version": str(version),
            "world_size": world,
            "host": socket.gethostname(),
            "hosts": sorted(set(hosts), key=hosts.index),
            "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
            "warmup": cfg["warmup"],
            "iters": cfg["iters"],
            "average": cfg.get("average", "avg"),
            "results": results,
        }
        sys.stdout.write(RESULT_MARKER + json.dumps(doc) + "\n")
        sys.stdout.flush()
    dist.barrier()
    dist.destroy_process_group()


def launched():
    # started by torchrun (or another launcher that sets the torch.distributed variables): one rank of many
    return all(name in os.environ for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"))


def main():
    cfg = json.loads(sys.argv[1])
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError as exc:
        sys.stderr.write(
            "ibtune-nccl-torch: %s cannot import torch (%s): set python_executable to the Python that has torch\n"
            % (sys.executable, exc)
        )
        sys.exit(3)

    available = torch.cuda.device_count()
    if available < 1:
        sys.stderr.write("ibtune-nccl-torch: no CUDA device visible to torch\n")
        sys.exit(3)
    started = time.time()
    if launched():
        local_rank = int(os.environ["LOCAL_RANK"])
        if local_rank >= available:
            sys.stderr.write("ibtune-nccl-torch: local rank %d but %d GPUs visible\n" % (local_rank, available))
            sys.exit(3)
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), cfg, None, local_rank)
    else:
        world = cfg.get("nproc") or available
        if world > available:
            sys.stderr.write("ibtune-nccl-torch: %d GPUs asked for, %d visible\n" % (world, available))
            sys.exit(3)
        mp.spawn(worker, args=(world, cfg, free_port()), nprocs=world, join=True)
    sys.stdout.write("ibtune-nccl-torch: done in %.1f s\n" % (time.time() - started))


if __name__ == "__main__":
    main()
"""
