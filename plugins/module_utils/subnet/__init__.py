# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 3, the InfiniBand subnet as the subnet manager sees it: infiniband-diags parsers and the topology
model, rails mapped to leaf ports and fabric checks (topology), routes through the programmed forwarding
tables (routes), switch-port counters (switch_counters) and opensm.conf (opensm). Imports host/ and below.
"""
