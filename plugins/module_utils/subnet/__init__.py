# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 3, the InfiniBand subnet as the subnet manager sees it: how it names nodes (names), the
infiniband-diags parsers (parsers), the topology model and its lookups (model), rails mapped to leaf ports
(rails), the fabric checks (findings, checks, drift) and the result that judges one reading (analysis),
routes through the programmed forwarding tables (routes), switch-port counters (switch_counters) and
opensm.conf (opensm). Imports host/ and below.
"""
