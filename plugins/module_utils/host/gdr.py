# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect RDMA: choose dma-buf or nvidia_peermem from what the host has, and say why.

Two ways exist for an RDMA NIC to read and write GPU memory:
- dma-buf: the upstream way. It needs the kernel's RDMA dma-buf import (ib_umem_dmabuf, Linux 5.12), user space
  that registers dma-buf memory regions (ibv_reg_dmabuf_mr, rdma-core 34) and an NVIDIA driver that exports GPU
  memory as dma-buf, which only the NVIDIA open GPU kernel modules do. No extra kernel module is loaded.
- nvidia_peermem: a module of the NVIDIA driver that plugs into the peer-memory API of the RDMA core. That API
  (ib_register_peer_memory_client) exists only in the ib_core of MLNX_OFED and DOCA-OFED, never in a stock
  kernel, where loading nvidia_peermem fails (-EINVAL) and a persisted modules-load entry fails every boot.
``plan()`` decides; the rdma_stack role gathers the facts, loads the module only when planned, and persists it
only after it loaded. Pure functions.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

DMABUF_MIN_KERNEL = (5, 12)
DMABUF_MIN_RDMA_CORE = 34
VENDOR_SOURCES = ("doca", "mlnx_ofed")


def kernel_version(release):
    """'6.1.0-18-amd64' -> (6, 1); None when unreadable."""
    match = re.match(r"^(\d+)\.(\d+)", str(release or ""))
    return (int(match.group(1)), int(match.group(2))) if match else None


def rdma_core_major(version):
    """rdma-core's package version -> its major number: '44.0-2' -> 44, MLNX/DOCA's '2501mlnx56-1...' -> 2501
    (those are newer than any upstream release), None when unknown."""
    match = re.match(r"^(?:\d+:)?(\d+)", str(version or ""))
    return int(match.group(1)) if match else None


def nvidia_flavor(proc_version=None, modinfo_license=None):
    """'open', 'proprietary' or None (no NVIDIA kernel module found).

    /proc/driver/nvidia/version says "NVIDIA UNIX Open Kernel Module" for the open modules when the driver is
    loaded; otherwise ``modinfo -F license nvidia`` gives "Dual MIT/GPL" (open) or "NVIDIA" (proprietary)."""
    text = (proc_version or "").strip()
    if text:
        return "open" if "Open Kernel Module" in text else "proprietary"
    lic = (modinfo_license or "").strip()
    if not lic:
        return None
    return "open" if "GPL" in lic else "proprietary"


def dmabuf_blockers(kernel, rdma_core, flavor):
    """What stops dma-buf here: (known, unknown) lists of phrases. Known blockers rule dma-buf out; unknown ones
    (rdma-core or the NVIDIA modules not installed yet, e.g. in check mode before the install) leave it open."""
    known, unknown = [], []
    kver = kernel_version(kernel)
    if kver is None or kver < DMABUF_MIN_KERNEL:
        known.append("kernel %s is older than 5.12 (no RDMA dma-buf import)" % (kernel or "unknown"))
    major = rdma_core_major(rdma_core)
    if major is None:
        unknown.append("rdma-core is not installed yet")
    elif major < DMABUF_MIN_RDMA_CORE:
        known.append("rdma-core %s is older than 34 (no ibv_reg_dmabuf_mr)" % rdma_core)
    if flavor is None:
        unknown.append("no NVIDIA kernel module is installed")
    elif flavor != "open":
        known.append("the NVIDIA kernel modules are the proprietary flavor (dma-buf needs the open GPU kernel modules)")
    return known, unknown


def plan(requested, source, kernel=None, rdma_core=None, flavor=None, peermem_found=False):
    """{mode: dmabuf|peermem|none, load: bool, reason: str, error: str|None} for rdma_stack_gdr=requested.

    - none: nothing loaded, nothing persisted.
    - dmabuf: nothing to load; an error when the host is known not to do it (old kernel or rdma-core, proprietary
      NVIDIA modules); what is not installed yet is said, not an error.
    - peermem: only with a vendor stack (MLNX_OFED/DOCA); load nvidia_peermem when the driver provides it.
    - auto: dma-buf when kernel, rdma-core and the NVIDIA open modules all support it; else peermem with a vendor
      stack and an NVIDIA driver; else none, saying what is missing.
    """
    vendor = source in VENDOR_SOURCES
    known, unknown = dmabuf_blockers(kernel, rdma_core, flavor)
    if requested == "none":
        return _plan("none", False, "rdma_stack_gdr=none: GPUDirect RDMA is not set up")
    if requested == "dmabuf":
        if known:
            return _plan(
                "dmabuf",
                False,
                "dma-buf requested",
                "rdma_stack_gdr=dmabuf but %s: fix that, or set rdma_stack_gdr=auto." % "; ".join(known),
            )
        reason = _dmabuf_reason(kernel, rdma_core)
        if unknown:
            reason += "; not usable yet: %s" % "; ".join(unknown)
        return _plan("dmabuf", False, reason)
    if requested == "peermem":
        if not vendor:
            return _plan(
                "peermem",
                False,
                "nvidia_peermem requested",
                "rdma_stack_gdr=peermem needs the peer-memory API of MLNX_OFED/DOCA-OFED's ib_core, which the stock"
                " kernel of rdma_stack_source=%s lacks (nvidia_peermem fails to load with -EINVAL): set"
                " rdma_stack_gdr=auto (dma-buf with the NVIDIA open kernel modules) or rdma_stack_source=doca."
                % source,
            )
        return _peermem(peermem_found, "rdma_stack_gdr=peermem")
    # auto
    blockers = known + unknown
    if not blockers:
        return _plan("dmabuf", False, "auto: " + _dmabuf_reason(kernel, rdma_core))
    if vendor and flavor is not None:
        return _peermem(
            peermem_found,
            "auto: %s, so nvidia_peermem with the %s stack's peer-memory ib_core" % ("; ".join(blockers), source),
        )
    why = "; ".join(blockers)
    if vendor:
        hint = "install the NVIDIA driver and run the role again"
    elif flavor is None and not known:
        hint = "install the NVIDIA open GPU kernel modules and run the role again"
    else:
        hint = (
            "install the NVIDIA open GPU kernel modules (and a 5.12+ kernel) for dma-buf, or use rdma_stack_source=doca"
        )
    return _plan("none", False, "auto: no GPUDirect RDMA method works here (%s): %s" % (why, hint))


def peermem_up(loaded, load_ran, load_rc):
    """Whether nvidia_peermem is loaded now: it was already (``loaded``: /sys/module/nvidia_peermem exists), or the
    load ran (``load_ran``) and modprobe's ``load_rc`` is 0 (modprobe reports rc only when it failed)."""
    return bool(loaded) or (bool(load_ran) and load_rc == 0)


def _dmabuf_reason(kernel, rdma_core):
    return (
        "dma-buf, no module to load (kernel %s, rdma-core %s; it needs the NVIDIA open GPU kernel modules; NCCL 2.13+"
        " and perftest --use_cuda_dmabuf use it)" % (kernel, rdma_core)
    )


def _peermem(found, why):
    if found:
        return _plan("peermem", True, why + ": loading nvidia_peermem")
    return _plan(
        "peermem",
        False,
        why + ": but the NVIDIA driver provides no nvidia_peermem for this kernel, so nothing is loaded or persisted;"
        " run the role again once the driver (470+) is installed",
    )


def _plan(mode, load, reason, error=None):
    return {"mode": mode, "load": load, "reason": reason, "error": error}
