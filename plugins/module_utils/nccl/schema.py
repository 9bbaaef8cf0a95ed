# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one schema of NCCL environment variables: NCCL 2.30's user guide (env.rst) and NCCL's source.

Every ``NCCL_*`` name that NCCL 2.30.7 reads is here (``NCCL_SOURCE`` records the commit; the names were
taken from src/ by grepping NCCL_PARAM, DEFINE_NCCL_PARAM and ncclGetEnv, the list is
tests/fixtures/nccl/nccl-2.30.7-src-env-names.txt), plus names older NCCL versions read (``removed``).
Names found in the source but not described by NCCL's documentation have ``category`` ``internal``: the
schema knows they are read and how (an integer, a string), not what they are for.

Each entry: ``type`` (how the value is checked), ``min``/``max`` or ``choices``, ``default`` (NCCL's,
as a string, None when NCCL decides at run time), ``since`` (first NCCL version that reads it),
``deprecated``/``removed`` (version strings) with ``replacement``, ``category`` (``system``: meant to
be kept in configuration; ``debug``: NCCL's docs say not to keep it in production; ``internal``: read
by NCCL's source, not documented) and ``note``.

Types:
  int      integer (decimal, or 0x hex where NCCL parses with strtoll base 0) in [min, max]
  bool     0 or 1
  enum     one of ``choices`` (case-insensitive unless ``case_sensitive``)
  level    a topology path type (``choices``, compared case-sensitively as NCCL's strcmp does) or a legacy
           integer >= 0 (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and above SYS: LEGACY_LEVELS)
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

# The NCCL source this schema was completed from (src/ of this commit equals tag v2.30.7-1).
NCCL_SOURCE = {
    "version": "2.30.7",
    "tag": "v2.30.7-1",
    "commit": "5067397c2676d5aed50042fc39e5c8ee96eb0027",
    "repository": "https://github.com/NVIDIA/nccl",
}

# src/graph/topo.cc topoPathTypeStr up to PATH_SYS: what ncclGetLevel (src/graph/paths.cc) accepts by
# strcmp, so case matters ("pxb" is not read). The documented ones are LOC, (NVL,) PIX, PXB, PHB, SYS.
PATH_LEVELS = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS")
P2P_LEVELS = PATH_LEVELS
# src/graph/paths.cc levelsOldToNew: the legacy integer levels (values above 5 are clamped to 5).
LEGACY_LEVELS = ("LOC", "PIX", "PXB", "PHB", "SYS", "SYS")
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
    "NCCL_IB_SL": _v(
        "int", since="2.1.4", min=-1, max=15, default="-1", note="InfiniBand service level; -1 (unset) means SL 0."
    ),
    "NCCL_IB_TC": _v(
        "int",
        since="2.1.15",
        min=-1,
        max=255,
        default="-1",
        note="Traffic class byte = DSCP << 2 | ECN bits (106 = DSCP 26 + ECT0); -1 (unset) means 0.",
    ),
    "NCCL_IB_FIFO_TC": _v(
        "int",
        since="2.22.3",
        min=-1,
        max=255,
        default="-1",
        note="Traffic class of control messages (-1: NCCL_IB_TC).",
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
        note="Max NIC-GPU distance for GPUDirect RDMA: LOC, PIX, PXB, PHB, SYS or legacy 0 LOC, 1 PIX, 2 PXB, 3 PHB, "
        "4+ SYS.",
        category="debug",
    ),
    "NCCL_IB_GDR_LEVEL": _v(
        "level", since="2.3.4", choices=PATH_LEVELS, removed="2.4.0", replacement="NCCL_NET_GDR_LEVEL"
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
    # --- Read by NCCL 2.30.7's source (NCCL_SOURCE), not described by the documentation above ---------
    "NCCL_ALLGATHERV_ENABLE": _v("int", default="1", note="Read in src/enqueue.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_CHUNK_SIZE": _v("int", default="0", note="Read in src/enqueue.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_COMM_SHRINK_SHARE_RESOURCES": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default NCCL_CONFIG_UNDEF_INT.",
        category="internal",
    ),
    "NCCL_COMM_SPLIT_SHARE_RESOURCES": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default NCCL_CONFIG_UNDEF_INT.",
        category="internal",
    ),
    "NCCL_CONNECT_ROUND_MAX_PEERS": _v(
        "int", default="128", note="Read in src/transport.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_DEV_API_JIT": _v("int", default="0", note="Read in src/gin/gin_host.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_DISABLE_MEM_MANAGER": _v(
        "int", default="0", note="Read in src/mem_manager.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_ELASTIC_BUFFER_REGISTER": _v(
        "int", default="1", note="Read in src/dev_runtime.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_ENABLE_VERSION_CHECK": _v(
        "int", default="1", note="Read in src/dev_runtime.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_GDAKI_USE_RELIABLE_DB": _v(
        "int",
        default="0",
        note="Read in src/transport/net_ib/gdaki/gin_host_gdaki.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_GDR_FLUSH_DISABLE": _v(
        "int", default="0", note="Read in src/transport/net_ib/connect.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_GIN_ENABLE": _v("int", default="1", note="Read in src/gin/gin_host.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_GIN_ERROR_QUERY_SEC": _v(
        "int",
        default="10",
        note="Read in src/transport/net_ib/gdaki/gin_host_gdaki.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_GIN_GDAKI_MAX_DEST_RD_ATOMIC": _v(
        "int",
        default=None,
        note="Read in src/transport/net_ib/gdaki/gin_host_gdaki.cc (NCCL 2.30.7); default decided at run time (-2).",
        category="internal",
    ),
    "NCCL_GIN_GDAKI_MAX_QP_RD_ATOMIC": _v(
        "int",
        default=None,
        note="Read in src/transport/net_ib/gdaki/gin_host_gdaki.cc (NCCL 2.30.7); default decided at run time (-2).",
        category="internal",
    ),
    "NCCL_GIN_GDAKI_NIC_HANDLER": _v(
        "int",
        default="0",
        note="Read in src/transport/net_ib/gdaki/gin_host_gdaki.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_GIN_GDAKI_QP_DEPTH": _v(
        "int",
        default="128",
        note="Read in src/transport/net_ib/gdaki/gin_host_gdaki.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_GIN_IB_TC": _v(
        "int", default="-1", note="Read in src/transport/net_ib/gin.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_GIN_NCONNECTIONS": _v(
        "int",
        default=None,
        note="Read in src/gin/gin_host.cc (NCCL 2.30.7); default decided at run time (-2).",
        category="internal",
    ),
    "NCCL_GIN_PLUGIN": _v("str", note="Read in src/plugin/gin.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_GIN_PLUGIN_REF_COUNT": _v(
        "int", default="0", note="Read in src/plugin/gin.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_GIN_PROXY_QUEUE_SIZE": _v(
        "int", default="-1", note="Read in src/gin/gin_host_proxy.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_GIN_TYPE": _v(
        "int", default="-1", note="Read in src/transport/net_ib/gin.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_GRAPH_DUMP_FILE": _v("path", note="Read in src/graph/search.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_GRAPH_DUMP_FILE_RANK": _v("int", default="0", note="Read in src/init.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_GRAPH_FILE": _v("path", note="Read in src/graph/search.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_GRAPH_HELPER_DISABLE": _v("int", default="0", note="Read in src/init.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_GROUP_CUDA_STREAM": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default NCCL_GROUP_CUDA_STREAM.",
        category="internal",
    ),
    "NCCL_HOSTID": _v("str", note="Read in src/misc/utils.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_IBVERBS_LIB": _v("path", note="Read in src/misc/ibvsymbols.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_IB_DATA_DIRECT": _v(
        "int", default="1", note="Read in src/transport/net_ib/init.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_DEVICE_PCI_ORDER": _v(
        "int", default="1", note="Read in src/transport/net_ib/init.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_MERGE_VFS": _v(
        "int", default="1", note="Read in src/transport/net_ib/init.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_MQP_RETRY_ALL": _v(
        "int", default="0", note="Read in src/misc/ibvwrap.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_MQP_RETRY_CNT": _v(
        "int", default="34", note="Read in src/misc/ibvwrap.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_MQP_RETRY_SLEEP_MSEC": _v(
        "int", default="100", note="Read in src/misc/ibvwrap.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_PKEY": _v(
        "int", default="0", note="Read in src/transport/net_ib/connect.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS": _v(
        "int",
        default=None,
        note="Read in src/transport/net_ib/common.cc (NCCL 2.30.7); default decided at run time (-2).",
        category="internal",
    ),
    "NCCL_IB_QUERY_PORT_SPEED": _v(
        "int", default="1", note="Read in src/misc/ibvwrap.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_RECEIVER_SIDE_MATCHING_SCHEME": _v(
        "int",
        default=None,
        note="Read in src/transport/net_ib/p2p.cc (NCCL 2.30.7); default decided at run time (-2).",
        category="internal",
    ),
    "NCCL_IB_RESILIENCY_PORT_FAILOVER": _v(
        "int", default="0", note="Read in src/transport/net_ib/p2p_resiliency.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_RESILIENCY_PORT_FAILOVER_MAX_ATTEMPTS": _v(
        "int", default="1", note="Read in src/transport/net_ib/p2p_resiliency.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY": _v(
        "int", default="10", note="Read in src/transport/net_ib/p2p_resiliency.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_RESILIENCY_PORT_RECOVERY": _v(
        "int",
        default="0",
        note="Read in src/transport/net_ib/p2p_resiliency_recovery.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT": _v(
        "int",
        default="5000",
        note="Read in src/transport/net_ib/p2p_resiliency_recovery.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_INTERVAL": _v(
        "int",
        default="500",
        note="Read in src/transport/net_ib/p2p_resiliency_recovery.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE": _v(
        "int",
        default="5",
        note="Read in src/transport/net_ib/p2p_resiliency_recovery.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE": _v(
        "int",
        default="5",
        note="Read in src/transport/net_ib/p2p_resiliency_recovery.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT": _v(
        "int",
        default="4000",
        note="Read in src/transport/net_ib/p2p_resiliency_recovery.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX": _v(
        "int",
        default="5",
        note="Read in src/transport/net_ib/p2p_resiliency_recovery.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY": _v(
        "int",
        default="200",
        note="Read in src/transport/net_ib/p2p_resiliency_recovery.cc (NCCL 2.30.7).",
        category="internal",
    ),
    "NCCL_IB_ROUTABLE_FLID_GID_INDEX": _v(
        "int", default="1", note="Read in src/transport/net_ib/connect.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_SUBNET_AWARE_ROUTING": _v(
        "int", default="0", note="Read in src/transport/net_ib/connect.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_SUBNET_PREFIX_LEN": _v(
        "int", default="24", note="Read in src/transport/net_ib/connect.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_USE_INLINE": _v(
        "int", default="0", note="Read in src/transport/net_ib/connect.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IB_WARN_RAIL_LOCAL": _v(
        "int", default="0", note="Read in src/transport/net_ib/connect.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_IGNORE_DISABLED_P2P": _v(
        "int", default="0", note="Read in src/graph/paths.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_L1_SHARED_MEMORY_CARVEOUT": _v(
        "int", default="0", note="Read in src/enqueue.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_LL128_BUFFSIZE": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default decided at run time (-2).",
        category="internal",
    ),
    "NCCL_LL128_C2C": _v("int", default="1", note="Read in src/graph/tuning.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_LL128_NTHREADS": _v(
        "int",
        default=None,
        note="Read in src/graph/tuning.cc (NCCL 2.30.7); default decided at run time (-2).",
        category="internal",
    ),
    "NCCL_LL_BUFFSIZE": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default decided at run time (-2).",
        category="internal",
    ),
    "NCCL_LSA_TEAM_SIZE": _v("int", default="0", note="Read in src/dev_runtime.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_MAX_P2P_NCHANNELS": _v(
        "int", default=None, note="Read in src/graph/paths.cc (NCCL 2.30.7); default MAXCHANNELS.", category="internal"
    ),
    "NCCL_MIN_P2P_NCHANNELS": _v(
        "int", default="1", note="Read in src/graph/paths.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_MLOPART_RDMA_ENABLE": _v(
        "int", default="0", note="Read in src/register/coll_reg.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_MNNVL_CROSS_CLIQUE": _v("int", default="0", note="Read in src/init.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_MNNVL_RAIL_PER_HOST": _v(
        "int", default="0", note="Read in src/graph/search.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_MNNVL_SCATTER_NETS_ENABLE": _v(
        "int", default="1", note="Read in src/graph/search.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_MULTI_SEGMENT_REGISTER": _v(
        "int", default="1", note="Read in src/transport/generic.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_NCHANNELS_PER_NET_PEER": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default NCCL_CONFIG_UNDEF_INT.",
        category="internal",
    ),
    "NCCL_NET_DISABLE_INTRA": _v(
        "int", default="0", note="Read in src/graph/paths.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_NET_FORCE_FLUSH": _v(
        "int", default="0", note="Read in src/graph/paths.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_NET_FORCE_MERGE": _v("str", note="Read in src/graph/topo.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_NET_GDR_MLOPART": _v(
        "int", default="0", note="Read in src/graph/paths.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_NET_OPTIONAL_RECV_COMPLETION": _v(
        "int", default="1", note="Read in src/transport/net.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_NET_OVERHEAD": _v(
        "int",
        default=None,
        note="Read in src/graph/tuning.cc (NCCL 2.30.7); default decided at run time (-2).",
        category="internal",
    ),
    "NCCL_NET_PLUGIN_REF_COUNT": _v(
        "int", default="0", note="Read in src/plugin/net.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_NO_CACHE": _v("str", note="char*", category="internal"),
    "NCCL_NUM_RMA_CTX": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default NCCL_CONFIG_UNDEF_INT.",
        category="internal",
    ),
    "NCCL_NVB_PRECONNECT": _v("int", default="1", note="Read in src/init.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default NCCL_CONFIG_UNDEF_INT.",
        category="internal",
    ),
    "NCCL_NVLSTREE_MAX_CHUNKSIZE": _v(
        "int",
        default=None,
        note="Read in src/transport/nvls.cc (NCCL 2.30.7); default decided at run time (-2).",
        category="internal",
    ),
    "NCCL_NVLS_CHUNKSIZE": _v(
        "int", default="131072", note="Read in src/transport/nvls.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_NVLS_NCHANNELS": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default NCCL_CONFIG_UNDEF_INT.",
        category="internal",
    ),
    "NCCL_NVTX_DISABLE": _v("int", default="0", note="Read in src/init_nvtx.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_P2P_EPOCH_ENABLE": _v("int", default="1", note="Read in src/enqueue.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_P2P_MAX_PEERS": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default NCCL_CONFIG_UNDEF_INT.",
        category="internal",
    ),
    "NCCL_P2P_NVL_CHUNKSIZE": _v(
        "int", default="524288", note="Read in src/init.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_P2P_PCI_CHUNKSIZE": _v(
        "int", default="131072", note="Read in src/init.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_P2P_PER_CHANNEL_NET_BW": _v(
        "int", default="14", note="Read in src/graph/paths.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_P2P_READ_ENABLE": _v(
        "int",
        default=None,
        note="Read in src/transport/p2p.cc (NCCL 2.30.7); default decided at run time (-2).",
        category="internal",
    ),
    "NCCL_P2P_SCHEDULE_GROUP_SIZE": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default NCCL_MAX_DEV_WORK_P2P_PER_BATCH.",
        category="internal",
    ),
    "NCCL_P2P_USE_CUDA_MEMCPY": _v(
        "int", default="0", note="Read in src/transport/p2p.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_PAT_ENABLE": _v("int", default="2", note="Read in src/graph/tuning.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_PROGRESS_APPENDOP_FREQ": _v(
        "int", default="8", note="Read in src/proxy.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_PROXY_APPEND_BATCH_SIZE": _v(
        "int", default="16", note="Read in src/proxy.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_PROXY_CPUSET": _v("str", note="Read in src/proxy.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_PROXY_DUMP_SIGNAL": _v("int", default="-1", note="Read in src/proxy.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_REPORT_CONNECT_PROGRESS": _v(
        "int", default="0", note="Read in src/transport.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_RMA_DISABLE": _v("int", default="0", note="Read in src/dev_runtime.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_RMA_PLUGIN": _v("str", note="Read in src/plugin/rma.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_RMA_PLUGIN_REF_COUNT": _v(
        "int", default="0", note="Read in src/plugin/rma.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_RMA_PROXY_DUMP_SIGNAL": _v(
        "int", default="-1", note="Read in src/rma/rma_proxy.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_RMA_PROXY_QUEUE_SIZE": _v(
        "int", default="-1", note="Read in src/rma/rma_proxy.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SET_CPU_STACK_SIZE": _v("int", default="1", note="Read in src/init.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_SHADOW_MEMPOOL_MAX_SIZE": _v(
        "int", default="1073741824", note="Read in src/allocator.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SHM_LOCALITY": _v(
        "int", default="2", note="Read in src/transport/shm.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SINGLE_PROC_MEM_REG_ENABLE": _v(
        "int", default="0", note="Read in src/group.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SOCKET_INLINE": _v(
        "int", default="128", note="Read in src/transport/net_socket.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SOCKET_MIN_TASKSIZE": _v(
        "int", default="65536", note="Read in src/transport/net_socket.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SOCKET_RCVBUF": _v(
        "int", default="-1", note="Read in src/misc/socket.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SOCKET_SNDBUF": _v(
        "int", default="-1", note="Read in src/misc/socket.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SYM_CE_THRESHOLD": _v(
        "int", default="8388608", note="Read in src/enqueue.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SYM_CTAS": _v("int", default="0", note="Read in src/sym_kernels.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_SYM_KERNEL": _v("str", note="Read in src/sym_kernels.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_SYM_NOWIN_ENABLE": _v(
        "int", default="0", note="Read in src/scheduler/symmetric_sched.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SYM_REUSE_SYSMEM_HANDLES": _v(
        "int", default="0", note="Read in src/dev_runtime.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SYM_RS_GIN_CHUNK_SIZE": _v(
        "int", default="-1", note="Read in src/sym_kernels.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_SYM_TMA_ENABLE": _v(
        "int", default="0", note="Read in src/sym_kernels.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_THREAD_THRESHOLDS": _v("str", note="Read in src/graph/tuning.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_TOPO_DUMP_FILE_RANK": _v(
        "int", default="0", note="Read in src/graph/topo.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_TOPO_SPLIT_MLOPART": _v(
        "int", default="1", note="Read in src/graph/topo.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_UNPACK_DOUBLE_NCHANNELS": _v(
        "int", default="1", note="Read in src/graph/connect.cc (NCCL 2.30.7).", category="internal"
    ),
    "NCCL_WARN_ENABLE_DEBUG_INFO": _b(default="0", note="Read in src/debug.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_WIN_STRIDE": _v("int", default="-1", note="Read in src/dev_runtime.cc (NCCL 2.30.7).", category="internal"),
    "NCCL_WORK_ARGS_BYTES": _v(
        "int", default=None, note="Read in src/init.cc (NCCL 2.30.7); default INT64_MAX.", category="internal"
    ),
    "NCCL_WORK_FIFO_BYTES": _v(
        "int",
        default=None,
        note="Read in src/init.cc (NCCL 2.30.7); default NCCL_WORK_FIFO_BYTES_DEFAULT.",
        category="internal",
    ),
    "NCCL_PARAM_DUMP_ALL": _b(
        since="2.30",
        default="0",
        note="Read in src/param/param.cc (NCCL 2.30.7): dump every parameter.",
        category="debug",
    ),
}

# Read by the NCCL Inspector profiler plugin (NCCL_PROFILER_PLUGIN=.../libnccl-profiler-inspector.so), not by NCCL:
# checked like NCCL's own (the role fabric_monitoring builds the plugin, nccl_env sets them from ibtune_nccl_inspector).
# Names and defaults from ext-profiler/inspector/inspector.cc (v2.28.9-1) and plugins/profiler/inspector (v2.30.7-1).
_INSPECTOR = "Read by the NCCL Inspector plugin: "
PLUGIN_VARIABLES = {
    "NCCL_INSPECTOR_ENABLE": _b(default="0", note=_INSPECTOR + "1 turns it on.", category="profiler"),
    "NCCL_INSPECTOR_DUMP_THREAD_ENABLE": _b(default="1", note=_INSPECTOR + "its dump thread.", category="profiler"),
    "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS": _v(
        "int",
        min=-1,
        default="0",
        category="profiler",
        note=_INSPECTOR + "dump period; up to 2.29 the part below one second is slept as NANOseconds.",
    ),
    "NCCL_INSPECTOR_DUMP_DIR": _v("path", note=_INSPECTOR + "where <host>-pid<pid>.log files go.", category="profiler"),
    "NCCL_INSPECTOR_DUMP_VERBOSE": _b(default="0", note=_INSPECTOR + "adds event traces.", category="profiler"),
    "NCCL_INSPECTOR_ENABLE_P2P": _b(default="1", note=_INSPECTOR + "P2P tracking (2.30).", category="profiler"),
    "NCCL_INSPECTOR_PROM_DUMP": _b(default="0", note=_INSPECTOR + "Prometheus output (2.30).", category="profiler"),
    "NCCL_INSPECTOR_DUMP_MIN_SIZE_BYTES": _v(
        "int", min=0, default="8192", category="profiler", note=_INSPECTOR + "smallest message tracked (2.30)."
    ),
    "NCCL_INSPECTOR_REQUIRE_KERNEL_TIMING": _b(
        default="1", category="profiler", note=_INSPECTOR + "GPU-timed events only (2.30)."
    ),
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


def strtoll(text):
    """C's strtoll(text, &end, 0) as NCCL calls it: (value, consumed).

    Leading whitespace and a sign are skipped; "0x"/"0X" then hex digits is hex, a leading "0" octal, else
    decimal; parsing stops at the first character that does not fit ("0152" is 106, "0x6a" is 106, "08" is 0
    with 1 character consumed, since 8 is not an octal digit). consumed is the number of characters read
    (0 when no number was found, and value is then 0, as strtoll returns). value is None when the number does
    not fit in 64 bits (strtoll sets ERANGE; NCCL then keeps its default).
    """
    text = str(text)
    i, n = 0, len(text)
    while i < n and text[i] in " \t\n\v\f\r":
        i += 1
    sign = 1
    if i < n and text[i] in "+-":
        sign = -1 if text[i] == "-" else 1
        i += 1
    base, digits = 10, "0123456789"
    if text[i : i + 2] in ("0x", "0X") and i + 2 < n and text[i + 2] in "0123456789abcdefABCDEF":
        base, digits = 16, "0123456789abcdefABCDEF"
        i += 2
    elif i < n and text[i] == "0":
        base, digits = 8, "01234567"
    start = i
    while i < n and text[i] in digits:
        i += 1
    if i == start:
        return 0, 0
    value = sign * int(text[start:i], base)
    if not -(2**63) <= value <= 2**63 - 1:
        return None, i
    return value, i
