"""The NCCL variable schema: complete for FACTS.md and the NCCL docs, internally consistent."""

import re

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import env as nccl_env
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import schema as nccl_schema
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.schema import VARIABLES, parse_version
from tests.conftest import FIXTURES

TYPES = {
    "int",
    "bool",
    "enum",
    "level",
    "list",
    "algo",
    "iflist",
    "hcalist",
    "cidr",
    "ctapolicy",
    "netdevs",
    "path",
    "str",
}

# Every variable FACTS.md names, and the headline ones of NCCL 2.30's env.rst.
FACTS_VARIABLES = [
    "NCCL_IB_HCA",
    "NCCL_SOCKET_IFNAME",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_RETRY_CNT",
    "NCCL_IB_QPS_PER_CONNECTION",
    "NCCL_IB_TC",
    "NCCL_IB_SL",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_CROSS_NIC",
    "NCCL_IB_ADAPTIVE_ROUTING",
    "NCCL_IB_SPLIT_DATA_ON_QPS",
    "NCCL_DEBUG",
    "NCCL_DEBUG_SUBSYS",
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_CONF_FILE",
    "NCCL_IB_CUDA_SUPPORT",
    "NCCL_IB_GDR_LEVEL",
    "NCCL_SINGLE_RING_THRESHOLD",
    "NCCL_LL_THRESHOLD",
    "NCCL_TREE_THRESHOLD",
    "NCCL_MAX_NRINGS",
    "NCCL_MIN_NRINGS",
]
DOC_VARIABLES = [
    "NCCL_SOCKET_FAMILY",
    "NCCL_SOCKET_NTHREADS",
    "NCCL_NSOCKS_PERTHREAD",
    "NCCL_IB_ADDR_FAMILY",
    "NCCL_IB_ROCE_VERSION_NUM",
    "NCCL_IB_FIFO_TC",
    "NCCL_NET",
    "NCCL_NET_PLUGIN",
    "NCCL_TOPO_FILE",
    "NCCL_P2P_LEVEL",
    "NCCL_P2P_DISABLE",
    "NCCL_SHM_DISABLE",
    "NCCL_BUFFSIZE",
    "NCCL_IB_DISABLE",
    "NCCL_IB_PCI_RELAXED_ORDERING",
    "NCCL_MAX_CTAS",
    "NCCL_MIN_CTAS",
    "NCCL_NVLS_ENABLE",
    "NCCL_CUMEM_ENABLE",
    "NCCL_DMABUF_ENABLE",
    "NCCL_NET_GDR_READ",
    "NCCL_NETDEVS_POLICY",
    "NCCL_CTA_POLICY",
    "NCCL_RAS_ENABLE",
]


@pytest.mark.parametrize("name", FACTS_VARIABLES + DOC_VARIABLES)
def test_schema_knows_the_documented_variables(name):
    assert name in VARIABLES


@pytest.mark.parametrize("name", sorted(VARIABLES))
def test_every_entry_is_well_formed(name):
    entry = VARIABLES[name]
    assert re.match(r"^NCCL_[A-Z0-9_]+$", name)
    assert entry["type"] in TYPES, name
    assert entry["category"] in ("system", "debug", "internal")
    for key in ("since", "deprecated", "removed"):
        if entry.get(key):
            assert parse_version(entry[key]) is not None, (name, key)
    if entry.get("deprecated") and entry.get("since"):
        assert parse_version(entry["since"]) <= parse_version(entry["deprecated"]), name
    if entry["type"] in ("enum", "level", "list", "algo"):
        assert entry.get("choices"), name
    if entry.get("min") is not None and entry.get("max") is not None:
        assert entry["min"] <= entry["max"]
    if entry.get("replacement"):
        assert entry["replacement"] in VARIABLES, name


@pytest.mark.parametrize("name", sorted(n for n in VARIABLES if VARIABLES[n].get("default") is not None))
def test_each_documented_default_passes_its_own_check(name):
    """A schema whose default fails its own type check would flag NCCL's own defaults as errors."""
    entry = VARIABLES[name]
    errors, _unused = nccl_env._check_value(name, entry, entry["default"])
    assert errors == []


def test_facts_ranges_and_defaults():
    assert (VARIABLES["NCCL_IB_TIMEOUT"]["min"], VARIABLES["NCCL_IB_TIMEOUT"]["max"]) == (0, 31)
    assert VARIABLES["NCCL_IB_TIMEOUT"]["default"] == "20"
    assert (VARIABLES["NCCL_IB_RETRY_CNT"]["max"], VARIABLES["NCCL_IB_RETRY_CNT"]["default"]) == (7, "7")
    assert (VARIABLES["NCCL_IB_QPS_PER_CONNECTION"]["min"], VARIABLES["NCCL_IB_QPS_PER_CONNECTION"]["max"]) == (1, 128)
    assert VARIABLES["NCCL_IB_GID_INDEX"]["default"] == "-1"
    # NCCL_PARAM(IbSl, "IB_SL", -1) / (IbTc, "IB_TC", -1) in src/transport/net_ib/connect.cc.
    assert (VARIABLES["NCCL_IB_SL"]["min"], VARIABLES["NCCL_IB_SL"]["max"], VARIABLES["NCCL_IB_SL"]["default"]) == (
        -1,
        15,
        "-1",
    )
    assert (VARIABLES["NCCL_IB_TC"]["min"], VARIABLES["NCCL_IB_TC"]["max"], VARIABLES["NCCL_IB_TC"]["default"]) == (
        -1,
        255,
        "-1",
    )
    assert {"LOC", "PIX", "PXB", "PHB", "SYS"} <= set(VARIABLES["NCCL_NET_GDR_LEVEL"]["choices"])
    # src/graph/paths.cc levelsOldToNew: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS.
    assert nccl_schema.LEGACY_LEVELS[:5] == ("LOC", "PIX", "PXB", "PHB", "SYS")
    assert VARIABLES["NCCL_IB_GDR_LEVEL"]["removed"] == "2.4.0"
    assert set(VARIABLES["NCCL_CROSS_NIC"]["choices"]) == {"0", "1", "2"}
    assert {"VERSION", "WARN", "INFO", "TRACE"} <= set(VARIABLES["NCCL_DEBUG"]["choices"])
    for name in ("NCCL_IB_CUDA_SUPPORT", "NCCL_SINGLE_RING_THRESHOLD", "NCCL_LL_THRESHOLD", "NCCL_TREE_THRESHOLD"):
        assert VARIABLES[name].get("removed"), name
    for name in ("NCCL_MAX_NRINGS", "NCCL_MIN_NRINGS", "NCCL_MAX_NCHANNELS"):
        assert VARIABLES[name].get("deprecated"), name
    assert "NCCL_ASYNC_ERROR_HANDLING" in nccl_schema.FOREIGN
    assert "NCCL_ASYNC_ERROR_HANDLING" not in VARIABLES


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2.28.9+cuda13.0", (2, 28, 9)),
        ("2.21", (2, 21, 0)),
        ("2.29U1", (2, 29, 0)),
        ("2.5.6+cuda10.0", (2, 5, 6)),
        (22809, (2, 28, 9)),
        (2708, (2, 7, 8)),
        ("x", None),
        (None, None),
    ],
)
def test_parse_version(text, expected):
    assert parse_version(text) == expected


def test_describe():
    assert "range 0..31" in nccl_schema.describe("NCCL_IB_TIMEOUT")
    assert nccl_schema.describe("NCCL_NOPE") is None


SOURCE_NAMES = FIXTURES / "nccl" / "nccl-2.30.7-src-env-names.txt"


def _source_names():
    return [line.strip() for line in SOURCE_NAMES.read_text().splitlines() if line.startswith("NCCL_")]


def test_schema_holds_every_name_nccl_2_30_7_reads():
    """The names grepped from NCCL 2.30.7's src/ (the fixture's header has the commands)."""
    names = _source_names()
    assert len(names) > 240
    missing = [name for name in names if name not in VARIABLES]
    assert missing == []
    assert nccl_schema.NCCL_SOURCE["commit"] in SOURCE_NAMES.read_text()
    assert nccl_schema.NCCL_SOURCE["commit"].startswith("5067397")


def test_names_no_longer_read_are_marked_removed():
    """A name in the schema that NCCL 2.30.7 does not read must be marked removed (or deprecated)."""
    names = set(_source_names())
    gone = sorted(name for name in VARIABLES if name not in names)
    assert gone
    assert [name for name in gone if not (VARIABLES[name].get("removed") or VARIABLES[name].get("deprecated"))] == []


@pytest.mark.parametrize(
    ("text", "value", "used"),
    [("0152", 106, 4), ("0x6a", 106, 4), ("106", 106, 3), ("-1", -1, 2), ("08", 0, 1), ("abc", 0, 0), (" 7", 7, 2)],
)
def test_strtoll_reads_as_c_does(text, value, used):
    assert nccl_schema.strtoll(text) == (value, used)
