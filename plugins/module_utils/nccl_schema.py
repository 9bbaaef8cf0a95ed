# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one schema of NCCL environment variables (NCCL 2.30 user guide, env.rst, plus FACTS.md).

Each entry: ``type`` (how the value is checked), ``min``/``max`` or ``choices``, ``default`` (NCCL's,
as a string, None when NCCL decides at run time), ``since`` (first NCCL version that reads it),
``deprecated``/``removed`` (version strings) with ``replacement``, ``category`` (``system``: meant to
be kept in configuration; ``debug``: NCCL's docs say not to keep it in production) and ``note``.

Types:
  int      integer (decimal, or 0x hex where NCCL parses with strtoll base 0) in [min, max]
  bool     0 or 1
  enum     one of ``choices`` (case-insensitive unless ``case_sensitive``)
  level    a topology path type (``choices``) or a legacy integer >= 0
  list     comma list of ``choices`` (case-insensitive), optionally led by ``^`` (exclude)
  algo     NCCL_ALGO / NCCL_PROTO syntax: ``[func:]item,item;func:^item`` (2.24+)
  iflist   interface prefixes (``^`` exclude, ``=`` exact)
  hcalist  ``[^][=]dev[:port[:rail[:plane]]],...``
  cidr     an IPv4 or IPv6 network in CIDR notation
  ctapolicy DEFAULT|EFFICIENCY|ZERO joined with '|', or a legacy 0..2
  netdevs  AUTO, ALL or MAX:N
  path     an absolute or relative path without '~'
  str      free text (plugin names, host:port)
Nothing here imports Ansible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

PATH_LEVELS = ("LOC", "PIX", "PXB", "PHB", "SYS")
P2P_LEVELS = ("LOC", "NVL", "PIX", "PXB", "PHB", "SYS")
DEBUG_SUBSYS = (
    "INIT",
    "COLL",
    "P2P",
    "SHM",
    "NET",
    "GRAPH",
    "TUNING",
    "ENV",
    "ALLOC",
    "ALLOC_HOST",
    "CALL",
    "PROXY",
    "NVLS",
    "BOOTSTRAP",
    "REG",
    "PROFILE",
    "RAS",
    "DESTROY",
    "ALL",
)
ALGORITHMS = ("RING", "TREE", "COLLNET", "COLLNETCHAIN", "COLLNETDIRECT", "NVLS", "NVLSTREE", "PAT")
PROTOCOLS = ("LL", "LL128", "SIMPLE")
# Function names accepted in the 2.24+ "func:list;func:list" syntax of NCCL_ALGO / NCCL_PROTO.
FUNCTIONS = (
    "BROADCAST",
    "REDUCE",
    "ALLGATHER",
    "REDUCESCATTER",
    "ALLREDUCE",
    "SENDRECV",
    "SEND",
    "RECV",
    "ALLTOALL",
    "GATHER",
    "SCATTER",
)


def _v(type_, since=None, default=None, note="", category="system", **extra):
    entry = {"type": type_, "since": since, "default": default, "note": note, "category": category}
    entry.update(extra)
    return entry


def _b(since=None, default=None, note="", category="system", **extra):
    return _v("bool", since=since, default=default, note=note, category=category, **extra)


VARIABLES = {
    # --- System configuration -------------------------------------------------------------------
    "NCCL_SOCKET_IFNAME": _v(
        "iflist",
        note="IP interfaces for bootstrap and the Socket transport: prefixes, '=' exact, '^' exclude.",
    ),
    "NCCL_SOCKET_FAMILY": _v("enum", choices=("AF_INET", "AF_INET6"), note="Force IPv4 or IPv6 interfaces."),
    "NCCL_SOCKET_MAGIC": _v("int", min=0, max=2**64 - 1, note="Magic of NCCL's internal socket handshake."),
    "NCCL_SOCKET_RETRY_CNT": _v("int", since="2.24", min=1, default="34", note="Socket connect retries."),
    "NCCL_SOCKET_RETRY_SLEEP_MSEC": _v("int", since="2.24", min=1, default="100", note="First retry delay (ms)."),
    "NCCL_SOCKET_POLL_TIMEOUT_MSEC": _v("int", since="2.28", min=0, default="0", note="Bootstrap poll timeout."),
    "NCCL_SOCKET_NTHREADS": _v(
        "int",
        since="2.4.8",
        min=1,
        max=16,
        note="Socket helper threads per connection; NTHREADS x NSOCKS_PERTHREAD <= 64.",
    ),
    "NCCL_NSOCKS_PERTHREAD": _v(
        "int", since="2.4.8", min=1, max=64, note="Sockets per helper thread; NTHREADS x NSOCKS_PERTHREAD <= 64."
    ),
    "NCCL_CROSS_NIC": _v(
        "enum",
        choices=("0", "1", "2"),
        default="2",
        note="0 same NIC per ring (rail-optimized), 1 allow crossing rails, 2 prefer same NIC.",
    ),
    "NCCL_IB_HCA": _v(
        "hcalist",
        note="RDMA devices: [^][=]dev[:port[:rail[:plane]]],...; without '=' each entry is a prefix "
        "(mlx5_1 also selects mlx5_10..mlx5_19).",
    ),
    "NCCL_IB_TIMEOUT": _v(
        "int",
        min=0,
        max=31,
        default="20",
        note="Verbs local ACK timeout 4.096 us x 2^t; default 20 since 2.23 (18 from 2.14, 14 before); 0 = infinite.",
    ),
    "NCCL_IB_RETRY_CNT": _v("int", since="2.1.15", min=0, max=7, default="7", note="Verbs retry count."),
    "NCCL_IB_GID_INDEX": _v(
        "int",
        since="2.1.4",
        min=-1,
        max=255,
        default="-1",
        note="RoCE GID index; -1 = automatic since 2.21 (do not set it on 2.21+, never on InfiniBand).",
    ),
    "NCCL_IB_ADDR_FAMILY": _v(
        "enum", since="2.21", choices=("AF_INET", "AF_INET6"), default="AF_INET", note="Family of the auto GID."
    ),
    "NCCL_IB_ADDR_RANGE": _v("cidr", since="2.21", note="CIDR range the automatically selected GID must be in."),
    "NCCL_IB_ROCE_VERSION_NUM": _v(
        "enum", since="2.21", choices=("1", "2"), default="2", note="RoCE version of the automatically selected GID."
    ),
    "NCCL_IB_SL": _v("int", since="2.1.4", min=0, max=15, default="0", note="InfiniBand service level."),
    "NCCL_IB_TC": _v(
        "int",
        since="2.1.15",
        min=0,
        max=255,
        default="0",
        note="Traffic class byte = DSCP << 2 | ECN bits (106 = DSCP 26 + ECT0).",
    ),
    "NCCL_IB_FIFO_TC": _v(
        "int", since="2.22.3", min=0, max=255, note="Traffic class of control messages (default: NCCL_IB_TC)."
    ),
    "NCCL_IB_RETURN_ASYNC_EVENTS": _b(since="2.23", default="1", note="Stop IB traffic on fatal async events."),
    "NCCL_OOB_NET_ENABLE": _b(since="2.23", note="Use the NCCL net for out-of-band (bootstrap) allgather."),
    "NCCL_OOB_NET_IFNAME": _v("iflist", since="2.23", note="Devices for out-of-band communication."),
    "NCCL_UID_STAGGER_THRESHOLD": _v("int", since="2.23", min=1, default="256", note="Ranks per unique id."),
    "NCCL_UID_STAGGER_RATE": _v("int", since="2.23", min=1, default="7000", note="Messages per second."),
    "NCCL_NET": _v("str", since="2.10", note="Force a network by name: IB, Socket, or a plugin's name."),
    "NCCL_NET_PLUGIN": _v("str", since="2.11", note="Net plugin suffix, library name or 'none'."),
    "NCCL_TUNER_PLUGIN": _v("str", note="Tuner plugin suffix, library name or 'none'."),
    "NCCL_PROFILER_PLUGIN": _v("str", note="Profiler plugin suffix, library name, STATIC_PLUGIN or 'none'."),
    "NCCL_ENV_PLUGIN": _v("str", since="2.28", note="Environment plugin suffix, library name or 'none'."),
    "NCCL_IGNORE_CPU_AFFINITY": _b(since="2.4.6", default="0", note="Use GPU affinity only."),
    "NCCL_CONF_FILE": _v("path", since="2.23", note="Config file read instead of ~/.nccl.conf (no '~')."),
    "NCCL_DEBUG": _v(
        "enum",
        choices=("VERSION", "WARN", "INFO", "ABORT", "TRACE"),
        note="Log level; WARN for production, INFO/TRACE only while debugging.",
        warn_values=("INFO", "TRACE"),
    ),
    "NCCL_DEBUG_FILE": _v(
        "path", since="2.2.12", note="Log file, %h host and %p pid expand; overwritten.", category="debug"
    ),
    "NCCL_DEBUG_SUBSYS": _v(
        "list",
        since="2.3.4",
        choices=DEBUG_SUBSYS,
        default="INIT,BOOTSTRAP,ENV",
        note="Subsystems logged at INFO.",
        category="debug",
    ),
    "NCCL_DEBUG_TIMESTAMP_FORMAT": _v("str", since="2.26", note="strftime format of log timestamps."),
    "NCCL_DEBUG_TIMESTAMP_LEVELS": _v(
        "list",
        since="2.26",
        choices=("VERSION", "WARN", "INFO", "ABORT", "TRACE", "ALL"),
        default="WARN",
        note="Log levels that get a timestamp.",
        allow_empty=True,
    ),
    "NCCL_COLLNET_ENABLE": _b(since="2.6", default="0", note="Use the CollNet (e.g. SHARP) plugin."),
    "NCCL_COLLNET_NODE_THRESHOLD": _v("int", since="2.9.9", min=1, default="2", note="Nodes below which no CollNet."),
    "NCCL_CTA_POLICY": _v(
        "ctapolicy",
        since="2.27",
        choices=("DEFAULT", "EFFICIENCY", "ZERO", "0", "1", "2"),
        default="DEFAULT",
        note="CTA policy; names may be combined with '|' (2.29+).",
    ),
    "NCCL_NETDEVS_POLICY": _v("netdevs", since="2.28", default="AUTO", note="AUTO, ALL or MAX:N."),
    "NCCL_MULTI_RANK_GPU_ENABLE": _b(since="2.30", default="0", note="Allow several ranks per GPU (experimental)."),
    "NCCL_TOPO_FILE": _v("path", since="2.6", note="XML topology loaded before detection."),
    "NCCL_TOPO_DUMP_FILE": _v("path", since="2.6", note="Where to dump the detected topology.", category="debug"),
    "NCCL_SET_THREAD_NAME": _b(since="2.12", default="0", note="Name NCCL's CPU threads."),
    "NCCL_COMM_ID": _v("str", note="host:port of the bootstrap root (used instead of ncclGetUniqueId)."),
    # --- Debugging (NCCL's docs: do not keep in production) ------------------------------------
    "NCCL_P2P_DISABLE": _b(note="Disable the P2P (NVLink/PCI) transport.", category="debug", warn_values=("1",)),
    "NCCL_P2P_LEVEL": _v(
        "level", since="2.3.4", choices=P2P_LEVELS, note="Max GPU-GPU distance for P2P.", category="debug"
    ),
    "NCCL_P2P_DIRECT_DISABLE": _b(note="Forbid direct access to user buffers between GPUs.", category="debug"),
    "NCCL_SHM_DISABLE": _b(note="Disable the shared-memory transport.", category="debug", warn_values=("1",)),
    "NCCL_BUFFSIZE": _v("int", min=1, default="4194304", note="Buffer size per peer (bytes).", category="debug"),
    "NCCL_NTHREADS": _v("enum", choices=("64", "128", "256", "512"), note="CUDA threads per block.", category="debug"),
    "NCCL_MAX_NCHANNELS": _v(
        "int", since="2.5.0", min=1, deprecated="2.17", replacement="NCCL_MAX_CTAS", category="debug"
    ),
    "NCCL_MIN_NCHANNELS": _v(
        "int", since="2.5.0", min=1, max=32, deprecated="2.17", replacement="NCCL_MIN_CTAS", category="debug"
    ),
    "NCCL_MAX_NRINGS": _v(
        "int", since="2.0.5", min=1, deprecated="2.5.0", replacement="NCCL_MAX_CTAS", category="debug"
    ),
    "NCCL_MIN_NRINGS": _v(
        "int", since="2.2.0", min=1, deprecated="2.5.0", replacement="NCCL_MIN_CTAS", category="debug"
    ),
    "NCCL_CHECKS_DISABLE": _b(since="2.0.5", deprecated="2.2.12", default="0", category="debug"),
    "NCCL_CHECK_POINTERS": _b(
        since="2.2.12", deprecated="2.29.7", replacement="NCCL_CHECK_MODE", default="0", category="debug"
    ),
    "NCCL_CHECK_MODE": _v(
        "enum",
        since="2.29.7",
        choices=("DEFAULT", "DEBUG_LOCAL", "DEBUG_GLOBAL"),
        default="DEFAULT",
        note="Argument checking.",
        category="debug",
        warn_values=("DEBUG_LOCAL", "DEBUG_GLOBAL"),
    ),
    "NCCL_LAUNCH_MODE": _v(
        "enum",
        since="2.1.0",
        choices=("PARALLEL", "GROUP"),
        default="PARALLEL",
        note="GROUP is deprecated since 2.9.",
        category="debug",
        warn_values=("GROUP",),
    ),
    "NCCL_IB_DISABLE": _b(default="0", note="Disable IB/RoCE verbs; NCCL then uses sockets.", category="debug"),
    "NCCL_IB_AR_THRESHOLD": _v("int", since="2.6", min=0, default="8192", note="Bytes.", category="debug"),
    "NCCL_IB_OOO_RQ": _b(since="2.30", default="0", note="Out-of-order receive WRs.", category="debug"),
    "NCCL_IB_QPS_PER_CONNECTION": _v(
        "int",
        since="2.10",
        min=1,
        max=128,
        default="1",
        note="QPs per connection (routing entropy on multi-level fabrics).",
        category="debug",
    ),
    "NCCL_IB_SPLIT_DATA_ON_QPS": _b(
        since="2.18", default="0", note="1 splits each message over the QPs.", category="debug"
    ),
    "NCCL_IB_CUDA_SUPPORT": _b(removed="2.4.0", replacement="NCCL_NET_GDR_LEVEL", category="debug"),
    "NCCL_IB_PCI_RELAXED_ORDERING": _v(
        "enum", since="2.12", choices=("0", "1", "2"), default="2", note="2 = use if available.", category="debug"
    ),
    "NCCL_IB_ADAPTIVE_ROUTING": _b(since="2.16", note="Default 1 on IB, 0 on RoCE.", category="debug"),
    "NCCL_IB_ECE_ENABLE": _b(since="2.23", default="1", note="Enhanced Connection Establishment.", category="debug"),
    "NCCL_MEM_SYNC_DOMAIN": _v("enum", since="2.16", choices=("0", "1"), default="1", category="debug"),
    "NCCL_CUMEM_ENABLE": _b(since="2.18", note="Auto-enabled since 2.19.", category="debug"),
    "NCCL_CUMEM_HOST_ENABLE": _b(since="2.23", category="debug"),
    "NCCL_NET_GDR_LEVEL": _v(
        "level",
        since="2.3.4",
        choices=PATH_LEVELS,
        note="Max NIC-GPU distance for GPUDirect RDMA: LOC, PIX, PXB, PHB, SYS or legacy 0..5 (>4 = SYS).",
        category="debug",
    ),
    "NCCL_IB_GDR_LEVEL": _v(
        "level", since="2.3.4", choices=PATH_LEVELS, deprecated="2.4.0", replacement="NCCL_NET_GDR_LEVEL"
    ),
    "NCCL_NET_GDR_C2C": _b(since="2.26", default="1", note="Default 1 since 2.27.", category="debug"),
    "NCCL_NET_GDR_READ": _b(note="Default 1 on NVLink platforms since 2.4.2.", category="debug"),
    "NCCL_GDRCOPY_ENABLE": _b(default="0", category="debug"),
    "NCCL_GDRCOPY_FIFO_ENABLE": _b(default="1", category="debug"),
    "NCCL_GDRCOPY_SYNC_ENABLE": _b(default="1", category="debug"),
    "NCCL_GDRCOPY_FLUSH_ENABLE": _b(default="0", category="debug"),
    "NCCL_NET_SHARED_BUFFERS": _b(since="2.8", default="1", category="debug"),
    "NCCL_NET_SHARED_COMMS": _b(since="2.12", default="1", category="debug"),
    "NCCL_IGNORE_NET_MISMATCH": _b(since="2.30", default="1", category="debug"),
    "NCCL_IGNORE_COLLNET_MISMATCH": _b(since="2.30", default="0", category="debug"),
    "NCCL_SINGLE_RING_THRESHOLD": _v("int", since="2.1", removed="2.3", category="debug"),
    "NCCL_LL_THRESHOLD": _v("int", since="2.1", removed="2.5", replacement="NCCL_PROTO", category="debug"),
    "NCCL_TREE_THRESHOLD": _v("int", since="2.4", removed="2.5", replacement="NCCL_ALGO", category="debug"),
    "NCCL_ALGO": _v(
        "algo",
        since="2.5",
        choices=ALGORITHMS,
        note="Forcing algorithms stops NCCL from choosing the best one.",
        category="debug",
        warn_always=True,
    ),
    "NCCL_PROTO": _v(
        "algo",
        since="2.5",
        choices=PROTOCOLS,
        note="Forcing protocols is discouraged (LL128 where unsupported can corrupt data).",
        category="debug",
        warn_always=True,
    ),
    "NCCL_NVB_DISABLE": _b(since="2.11", default="0", category="debug"),
    "NCCL_PXN_DISABLE": _b(since="2.12", default="0", category="debug"),
    "NCCL_P2P_PXN_LEVEL": _v("enum", since="2.12", choices=("0", "1", "2"), default="2", category="debug"),
    "NCCL_PXN_C2C": _b(since="2.27", default="1", category="debug"),
    "NCCL_RUNTIME_CONNECT": _b(since="2.22", default="1", category="debug"),
    "NCCL_GRAPH_REGISTER": _b(since="2.11", default="1", category="debug"),
    "NCCL_LOCAL_REGISTER": _b(since="2.19", default="1", category="debug"),
    "NCCL_LEGACY_CUDA_REGISTER": _b(since="2.24", default="0", category="debug"),
    "NCCL_WIN_ENABLE": _b(since="2.27", default="1", category="debug"),
    "NCCL_SET_STACK_SIZE": _b(since="2.9", default="0", category="debug"),
    "NCCL_GRAPH_MIXING_SUPPORT": _b(since="2.13", default="1", category="debug"),
    "NCCL_GRAPH_STREAM_ORDERING": _b(since="2.30", default="1", category="debug"),
    "NCCL_DMABUF_ENABLE": _b(since="2.13", default="1", note="GPUDirect RDMA through dma-buf.", category="debug"),
    "NCCL_P2P_NET_CHUNKSIZE": _v("int", since="2.14", min=1, default="131072", category="debug"),
    "NCCL_P2P_LL_THRESHOLD": _v("int", since="2.14", min=0, default="16384", category="debug"),
    "NCCL_ALLOC_P2P_NET_LL_BUFFERS": _b(since="2.14", default="0", category="debug"),
    "NCCL_COMM_BLOCKING": _b(since="2.14", category="debug"),
    "NCCL_CGA_CLUSTER_SIZE": _v("int", since="2.16", min=0, max=8, category="debug"),
    "NCCL_MAX_CTAS": _v("int", since="2.17", min=1, max=64, note="Up to 32 before 2.25.", category="debug"),
    "NCCL_MIN_CTAS": _v("int", since="2.17", min=1, max=64, note="Up to 32 before 2.25.", category="debug"),
    "NCCL_NVLS_ENABLE": _v(
        "enum", since="2.17", choices=("0", "1", "2"), default="2", note="NVLink SHARP.", category="debug"
    ),
    "NCCL_IB_MERGE_NICS": _b(since="2.20", default="1", category="debug"),
    "NCCL_NET_MERGE_LEVEL": _v("level", since="2.20", choices=PATH_LEVELS, category="debug"),
    "NCCL_NET_MERGE_POLICY": _v("enum", since="2.30.5", choices=("ALL", "RAIL"), default="ALL", category="debug"),
    "NCCL_MNNVL_ENABLE": _v("enum", since="2.21", choices=("0", "1", "2"), default="2", category="debug"),
    "NCCL_MNNVL_UUID": _v("int", since="2.25", min=-(2**63), max=2**64 - 1, category="debug"),
    "NCCL_MNNVL_CLIQUE_ID": _v("int", since="2.25", min=-(2**31), max=2**32 - 1, category="debug"),
    "NCCL_RAS_ENABLE": _b(since="2.24", default="1", category="debug"),
    "NCCL_RAS_ADDR": _v("str", since="2.24", default="localhost:28028", category="debug"),
    "NCCL_RAS_TIMEOUT_FACTOR": _v("int", since="2.24", min=1, default="1", category="debug"),
    "NCCL_LAUNCH_ORDER_IMPLICIT": _b(since="2.26", default="0", category="debug"),
    "NCCL_LAUNCH_RACE_FATAL": _b(since="2.26", default="1", category="debug"),
    "NCCL_IPC_USE_ABSTRACT_SOCKET": _b(since="2.29", default="1", category="debug"),
    "NCCL_SYM_GIN_KERNELS_ENABLE": _b(since="2.29", default="1", category="debug"),
}

# Names that look like NCCL's but are read by someone else: never an error, always a warning.
FOREIGN = {
    "NCCL_ASYNC_ERROR_HANDLING": "is PyTorch's, not NCCL's (now TORCH_NCCL_ASYNC_ERROR_HANDLING); NCCL ignores it",
    "NCCL_BLOCKING_WAIT": "is PyTorch's, not NCCL's (now TORCH_NCCL_BLOCKING_WAIT); NCCL ignores it",
    "NCCL_DESYNC_DEBUG": "is PyTorch's, not NCCL's (now TORCH_NCCL_DESYNC_DEBUG); NCCL ignores it",
    "NCCL_TESTS_DEVICE": "is read by nccl-tests, not by NCCL",
    "NCCL_TESTS_SPLIT_MASK": "is read by nccl-tests, not by NCCL",
    "NCCL_TESTS_SPLIT": "is read by nccl-tests, not by NCCL",
}


def parse_version(text):
    """'2.28.9+cuda13.0' / '2.21' / 22809 -> (2, 28, 9); None when unparsable."""
    if text is None:
        return None
    if isinstance(text, int) and not isinstance(text, bool):
        # NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9 (major*1000+minor*100+patch before).
        code = text
        if code >= 10000:
            return (code // 10000, (code % 10000) // 100, code % 100)
        return (code // 1000, (code % 1000) // 100, code % 100)
    text = str(text).strip()
    head = text.split("+", 1)[0].split("-", 1)[0]
    parts = []
    for piece in head.split("."):
        digits = ""
        for char in piece:
            if char.isdigit():
                digits += char
            else:
                break
        if not digits:
            break
        parts.append(int(digits))
    if not parts:
        return None
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts[:3])


def version_at_least(version, other):
    a = parse_version(version)
    b = parse_version(other)
    if a is None or b is None:
        return None
    return a >= b


def describe(name):
    """One line about a variable for messages and docs."""
    entry = VARIABLES.get(name)
    if entry is None:
        return None
    bits = [entry["type"]]
    if entry.get("choices"):
        bits.append("choices " + ",".join(entry["choices"]))
    if entry.get("min") is not None or entry.get("max") is not None:
        bits.append("range %s..%s" % (entry.get("min", ""), entry.get("max", "")))
    if entry.get("default") is not None:
        bits.append("default " + entry["default"])
    return "; ".join(bits)
