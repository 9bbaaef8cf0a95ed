# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the subnet spells its nodes: GUIDs in every spelling the tools and ib_facts use, switch names from
node descriptions, the host and device a CA's description names, and descriptions nobody set.

One spelling everywhere else in the collection: GUIDs are "0x%016x", switch names are short_name().
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

HEX = r"[0-9a-fA-F]+"
_DEVICE_RE = re.compile(r"^(mlx\d+_\d+|HCA-\d+|[a-z][a-z0-9]*_\d+|ibp\S+)$")
# Descriptions a node has until someone sets its node description: chip/vendor strings.
_FACTORY_RE = re.compile(
    r"^(MT\d+\b|ISR\d+\b|SW-\S+\s+Voltaire|.*\bMellanox Technologies$|.*\bNVIDIA\b.*Technologies$)"
)
_DEFAULT_HOSTNAMES = ("localhost", "ubuntu", "debian", "rhel", "rocky", "centos", "(none)")
_AGGREGATION_RE = re.compile(r"Aggregation Node", re.IGNORECASE)


def normalize_guid(value):
    """GUID in any spelling ("0c42:a103:0065:3e1c", "0x2c5e...", "H-e09d...", int) -> "0x%016x"."""
    if value is None:
        return None
    if isinstance(value, int):
        return "0x%016x" % value
    text = str(value).strip()
    if len(text) > 2 and text[1] == "-" and text[0] in "SHR":
        text = text[2:]
    text = text.replace(":", "")
    if text.lower().startswith("0x"):
        text = text[2:]
    try:
        return "0x%016x" % int(text, 16)
    except ValueError:
        return None


def short_name(description):
    """Switch/CA name for sentences: "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1" -> "A09-P1-IBLEAF-04-04"."""
    text = (description or "").strip()
    if text.startswith("MF0;"):
        text = text[4:]
        if ":" in text:
            text = text.rsplit(":", 1)[0]
    return text


def split_description(description):
    """(host, device) when a CA's node description names them ("node12 mlx5_3"), else (None, None)."""
    words = (description or "").split()
    if len(words) == 2 and _DEVICE_RE.match(words[1]) and not is_factory_description(description):
        return words[0], words[1]
    return None, None


def is_aggregation_node(description):
    """True for a SHARP Aggregation Node: a CA inside a switch, not a host."""
    return bool(_AGGREGATION_RE.search(description or ""))


def is_factory_description(description):
    """True for a description nobody set: the chip/vendor string, or a distribution's default hostname."""
    text = (description or "").strip()
    if not text or is_aggregation_node(text):
        return False
    if _FACTORY_RE.match(text):
        return True
    words = text.split()
    return len(words) == 2 and words[0].lower() in _DEFAULT_HOSTNAMES
