"""A rail-optimised fabric of any size as the compact topology (validate/fabric.py) itself, for tests and benches.

Each rail is its own two-level plane, as NDR clusters build them: rail r of host h on leaf (r, h // per_leaf),
port h % per_leaf + 1; each leaf's ports per_leaf+1 .. 2*per_leaf go to the plane's per_leaf spines (uplink u to
spine u, ``trunk`` cables per spine and leaf), a spine's port (leaf - 1) * trunk + t + 1 back (64-port switches
at per_leaf 32). Routes are up/down, as minhop spreads them: a leaf sends its own hosts' LIDs down and the rest
up to spine (host % spines) over trunk cable (host // spines) % trunk; a spine sends a LID down to its leaf
over trunk cable (host // spines) % trunk. Built straight into the compact shape (one byte
per LID per switch), since an ib_topology result of 2048 x 8 would not fit in memory as dicts.
"""

GUID = "0x%016x"


def _ca_lid(n_rails):
    return lambda h, r: 1 + h * n_rails + r


def _switches(n_rails, leaves, spines, per_leaf, trunk, first_lid):
    """Leaves then spines of each rail, LIDs from first_lid on; returns (switch rows, next free LID)."""
    switches, lid = [], first_lid
    for r in range(n_rails):
        for g in range(leaves):
            switches.append([_leaf_guid(r, g), lid, "leaf-r%d-%03d" % (r, g), 2 * per_leaf, "leaf"])
            lid += 1
        for s in range(spines):
            switches.append([_spine_guid(r, s), lid, "spine-r%d-%02d" % (r, s), leaves * trunk, "spine"])
            lid += 1
    return switches, lid


def _leaf_guid(r, g):
    return GUID % (0x10000000 + r * 4096 + g)


def _spine_guid(r, s):
    return GUID % (0x20000000 + r * 4096 + s)


def _ca_guid(h, r):
    return GUID % (0x30000000 + h * 16 + r)


def _host_links(n_hosts, n_rails, per_leaf, ca_lid):
    cas, links, hosts = [], [], {}
    for h in range(n_hosts):
        for r in range(n_rails):
            g = h // per_leaf
            cas.append([_ca_guid(h, r), "node%04d mlx5_%d" % (h, r), False, [[1, ca_lid(h, r)]]])
            links.append([_leaf_guid(r, g), h % per_leaf + 1, _ca_guid(h, r), 1, "host"])
            hosts.setdefault("node%04d" % h, {})["mlx5_%d" % r] = _ca_guid(h, r)
    return cas, links, hosts


def _plane(r, n_hosts, leaves, spines, per_leaf, trunk, size, ca_lid):
    """One rail's ISLs and up/down LFTs."""
    links, lfts = [], {}
    for g in range(leaves):
        for u in range(per_leaf):
            s, t = u // trunk, u % trunk
            links.append([_leaf_guid(r, g), per_leaf + 1 + u, _spine_guid(r, s), g * trunk + t + 1, "isl"])
    for g in range(leaves):
        table = bytearray(size)
        for h in range(n_hosts):
            up = (h % spines) * trunk + (h // spines) % trunk
            table[ca_lid(h, r)] = (h % per_leaf + 1) if h // per_leaf == g else per_leaf + 1 + up
        lfts[_leaf_guid(r, g)] = [0, table.hex()]
    for s in range(spines):
        table = bytearray(size)
        for h in range(n_hosts):
            table[ca_lid(h, r)] = (h // per_leaf) * trunk + (h // spines) % trunk + 1
        lfts[_spine_guid(r, s)] = [0, table.hex()]
    return links, lfts


def rail_planes(n_hosts, n_rails=8, per_leaf=32, trunk=1):
    """The compact topology of n_hosts x n_rails; hosts are node0000, ...; devices mlx5_<rail>."""
    leaves = (n_hosts + per_leaf - 1) // per_leaf
    spines = per_leaf // trunk
    ca_lid = _ca_lid(n_rails)
    switches, size = _switches(n_rails, leaves, spines, per_leaf, trunk, ca_lid(n_hosts, 0))
    cas, links, hosts = _host_links(n_hosts, n_rails, per_leaf, ca_lid)
    lfts = {}
    for r in range(n_rails):
        plane_links, plane_lfts = _plane(r, n_hosts, leaves, spines, per_leaf, trunk, size, ca_lid)
        links.extend(plane_links)
        lfts.update(plane_lfts)
    return {
        "version": 1,
        "switches": switches,
        "cas": cas,
        "links": links,
        "lfts": lfts,
        "hosts": hosts,
        "host_order": sorted(hosts),
        "switch_counter_violations": [],
        "findings": [],
    }
