# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 2, perftest as a tool, one path for every test kind: the registry with the one argument builder and
parameter check (kinds), the console and JSON parsers of the bandwidth and latency tools (bandwidth, latency,
with scan's linear scanners), one side's run with retry (run), the gate (gate) and the perftest_bw/perftest_lat
modules' run(params) (module). Imports host/ and common/.
"""
