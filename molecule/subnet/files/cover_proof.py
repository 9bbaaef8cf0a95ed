"""cover_links coverage proof for the subnet scenario (lab code, run on the controller).

plan  RESULT.json COLLECTIONS      -> prints [{server, client, slid, dlid}] of every cover_links round
check RESULT.json COLLECTIONS TRACES.json -> prints {"total", "traced", "missing", "rounds", "disjoint"}:
      the directed ISLs that the real ibtracert outputs of those pairs cross, against every ISL of the fabric.
"""

import json
import re
import sys

sys.path.insert(0, sys.argv[3])

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import routes as R  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import normalize_guid  # noqa: E402


def main():
    mode, result_path = sys.argv[1], sys.argv[2]
    with open(result_path) as handle:
        result = json.load(handle)
    rounds, uncovered = R.cover_links_rounds(None, result["routes"], result, max_rounds=8)
    eps = R.endpoints(result)
    router = R.Router(result, result["routes"])
    pairs = []
    for number, pairs_of_round in enumerate(rounds, 1):
        for server, client in pairs_of_round:
            pairs.append(
                {
                    "round": number,
                    "server": server,
                    "client": client,
                    "slid": router.lid_of(eps[client][0]),
                    "dlid": router.lid_of(eps[server][0]),
                }
            )
    if mode == "plan":
        print(json.dumps(pairs))
        return
    with open(sys.argv[4]) as handle:
        traces = json.load(handle)
    index = Index(result)
    traced = set()
    for text in traces:
        current = None
        for line in text.splitlines():
            start = re.match(r"^From ca \{(0x[0-9a-f]+)\}", line)
            if start:
                current = normalize_guid(start.group(1))
            hop = re.match(r"^\[(\d+)\] -> (switch|ca) port \{(0x[0-9a-f]+)\}\[(\d+)\]", line)
            if hop:
                out_port, guid = int(hop.group(1)), normalize_guid(hop.group(3))
                if hop.group(2) == "switch" and index.is_switch(current):
                    traced.add((current, out_port))
                current = guid
    every = R.all_isls(result)
    disjoint = all(len({m for p in r for m in p}) == 2 * len(r) for r in rounds)
    print(
        json.dumps(
            {
                "total": len(every),
                "traced": len(traced & every),
                "rounds": len(rounds),
                "missing": sorted("%s p%d" % (index.name(g), p) for g, p in every - traced),
                "uncovered_planned": len(uncovered),
                "disjoint": disjoint,
                "pairs": len(pairs),
            }
        )
    )


if __name__ == "__main__":
    main()
