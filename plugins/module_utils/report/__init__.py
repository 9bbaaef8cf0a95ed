# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 5, the verdict and its files: build_report (build), the peer gate, systemic and per-host verdicts
(verdict), the baseline (baseline), suspect cables and switch counters (topology), report.json, junit.xml,
summary.md and ibtune.prom (render), report.html (html) and the fabric_report module's run (module).
Imports validate/ and below.
"""
