# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 2, perftest as a tool: the test-kind registry (kinds), the argument vectors, the console and JSON
parsers of the bandwidth and latency tools, one side's run with retry (run) and the absolute gate (gate).
Imports host/ and common/.
"""
