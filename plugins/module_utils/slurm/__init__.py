# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 6, acting on verdicts in Slurm: node states, drain/resume plans and topology.conf (remediate), and
the on-node health check that slurmd runs (node_health). Imports every layer below that it needs.
"""
