# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 4, a validation pass from facts to pair results: rails and preflight findings (preflight), pair
rounds and retests (pairs), the pass plan and its per-host slices (plan), the host-side schedule runner
(schedule), joining sides into gated results (join), the pair-result record (results), fault localisation
(localize), the fabric as the plan sees it (fabric), the cable each PHY reading is on (phy), the progress
line (progress) and the fabric_plan, fabric_join and perftest_schedule modules' run functions (module).
Imports perftest/, subnet/, phy/ and below; never report/.
"""
