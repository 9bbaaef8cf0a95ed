"""A small two-level fat tree for the verdict's property tests: leaves of hosts under spines, OpenSM-like routing
(a cross-leaf flow towards a host goes through the spine its LID maps to), and one injected fault.

The pass-1 and retest results it makes are shaped as fabric_join writes them (gated, rail, devices, line rate), so
the planner (pairs.retest_plan) and the report (build_report) read them as they read the lab's.
"""

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds, retest_plan

RAIL = "mlx5_0:1"
GOOD, SLOW = 392.0, 180.0
THRESHOLD = 360.0
KINDS = ("bad_node", "bad_link", "leaf_uplink", "leaf_uplinks", "bad_spine", "flaky_node")


class Fabric:
    def __init__(self, leaves, per_leaf, spines):
        self.leaves = ["leaf%d" % (i + 1) for i in range(leaves)]
        self.spines = ["spine%d" % (i + 1) for i in range(spines)]
        self.hosts = []
        self.leaf_of = {}
        for leaf in self.leaves:
            for j in range(per_leaf):
                host = "%s-h%d" % (leaf, j + 1)
                self.hosts.append(host)
                self.leaf_of[host] = leaf
        self.fault = None

    def spine_to(self, host):
        """The spine a flow towards ``host`` crosses (destination-based routing, LIDs spread over the spines)."""
        return self.spines[self.hosts.index(host) % len(self.spines)]

    def inject(self, kind, pick):
        """One fault; ``pick(seq)`` chooses from a sequence (hypothesis' sampled_from, or random.choice)."""
        if kind in ("bad_node", "flaky_node"):
            self.fault = (kind, pick(self.hosts))
        elif kind == "bad_link":
            a = pick(self.hosts)
            self.fault = (kind, frozenset((a, pick([h for h in self.hosts if h != a]))))
        elif kind == "leaf_uplink":
            self.fault = (kind, (pick(self.leaves), pick(self.spines)))
        elif kind == "leaf_uplinks":
            self.fault = (kind, pick(self.leaves))
        else:
            self.fault = (kind, pick(self.spines))
        return self.fault

    def slow(self, server, client, pass_no):
        """Whether the write flow client -> server is degraded by the fault."""
        kind, what = self.fault
        if kind == "bad_node":
            return what in (server, client)
        if kind == "flaky_node":
            return pass_no == 1 and what in (server, client)
        if kind == "bad_link":
            return frozenset((server, client)) == what
        cross = self.leaf_of[server] != self.leaf_of[client]
        spine = self.spine_to(server)
        if kind == "bad_spine":
            return cross and spine == what
        if kind == "leaf_uplinks":
            return cross and what in (self.leaf_of[server], self.leaf_of[client])
        leaf, bad_spine = what
        return cross and spine == bad_spine and leaf in (self.leaf_of[server], self.leaf_of[client])

    def result(self, server, client, round_no, pass_no):
        bw = SLOW if self.slow(server, client, pass_no) else GOOD
        passed = bw >= THRESHOLD
        return {
            "server": server, "server_device": "mlx5_0", "server_port": 1,
            "client": client, "client_device": "mlx5_0", "client_port": 1,
            "rail": RAIL, "test": "write", "kind": "bandwidth", "pass": pass_no, "round": round_no,
            "bw_avg_gbps": bw, "bw_peak_gbps": None, "threshold_gbps": THRESHOLD, "line_rate_gbps": 400.0,
            "threshold_basis": "0.9 x 400 Gb/s port rate", "measured_by": client, "duration_s": 5,
            "passed": passed, "failure": None if passed else "%.1f Gb/s < 360.0 Gb/s" % bw,
            "failure_kind": None if passed else "below_threshold",
        }  # fmt: skip

    def groups(self):
        return dict((h, {"*": self.leaf_of[h]}) for h in self.hosts)

    def run(self, groups=None):
        """Pass 1 (all_pairs), the retest the planner asks for, measured on the same fabric."""
        first = [
            self.result(s, c, i, 1) for i, rnd in enumerate(pair_rounds(self.hosts)) for s, c in rnd
        ]  # fmt: skip
        plan = retest_plan(first, self.hosts, rails=dict((h, [RAIL]) for h in self.hosts), groups=groups)
        second = [self.result(e[0], e[1], i, 2) for i, rnd in enumerate(plan) for e in rnd]
        return first, second, plan
