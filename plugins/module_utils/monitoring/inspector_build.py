# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How to build the NCCL Inspector profiler plugin from an NCCL source tag, as data (filter inspector_build).

NCCL's repository carries the plugin under ``ext-profiler/inspector`` up to 2.28 and ``plugins/profiler/inspector``
from 2.29. Up to 2.28 it is plain C++ with its own copy of the profiler API headers (``nccl/profiler_v5.h``...):
``make`` needs g++ only, neither CUDA nor NCCL's headers, and the library exports ``ncclProfiler_v5``, the
profiler interface NCCL 2.28.x loads (2.28.3 and 2.28.9 alike). Its Makefile writes ``version.cc`` from
``utils/extract_git_version.sh``, which the 2.28 tags do not ship: the build writes ``version.cc`` itself with
the tag, so the plugin's ``git_rev`` (in every JSON record) names what was built.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.schema import parse_version

LIBRARY = "libnccl-profiler-inspector.so"
UPSTREAM_ARCHIVE = "https://github.com/NVIDIA/nccl/archive/refs/tags/%s.tar.gz"
_TAG_RE = re.compile(r"^v(?P<version>[0-9]+\.[0-9]+\.[0-9]+)-[0-9]+$")
FIRST_TAG = (2, 23, 0)  # the profiler plugin API, and the Inspector with it, start with NCCL 2.23
MOVED_IN = (2, 29, 0)  # ext-profiler/ became plugins/profiler/


class BuildError(ValueError):
    pass


def tag_version(tag):
    """'v2.28.9-1' -> (2, 28, 9); BuildError for anything that is not an NCCL release tag."""
    match = _TAG_RE.match(tag or "")
    if not match:
        raise BuildError(
            "fabric_monitoring_inspector_source_tag=%r is not an NCCL release tag such as v2.28.9-1" % (tag,)
        )
    return parse_version(match.group("version"))


def plan(tag, install_dir, url="", make="make", jobs=2):
    """{url, archive, unpack_dir, plugin_dir, make_argv, version_cc, built, installed} for one tag.

    ``install_dir`` holds one directory per tag (the unpacked source and the built library); the library the
    NCCL environment points at (ibtune_nccl_inspector.plugin) is a link to the chosen tag's build.
    """
    version = tag_version(tag)
    if version < FIRST_TAG:
        raise BuildError(
            "fabric_monitoring_inspector_source_tag=%s predates NCCL's profiler plugin API (2.23): "
            "pick v2.23.4-1 or later" % tag
        )
    subdir = "plugins/profiler/inspector" if version >= MOVED_IN else "ext-profiler/inspector"
    unpack_dir = "%s/%s/src" % (install_dir.rstrip("/"), tag)
    plugin_dir = "%s/%s" % (unpack_dir, subdir)
    return {
        "url": url or UPSTREAM_ARCHIVE % tag,
        "archive": "%s/%s/nccl-%s.tar.gz" % (install_dir.rstrip("/"), tag, tag),
        "unpack_dir": unpack_dir,
        "plugin_dir": plugin_dir,
        "make_argv": [make, "-C", plugin_dir, "-j%d" % max(int(jobs), 1), LIBRARY],
        "version_cc": '#include "version.h"\nconst char* get_git_version_info() { return "%s"; }\n' % tag,
        "built": "%s/%s" % (plugin_dir, LIBRARY),
        "installed": "%s/%s/%s" % (install_dir.rstrip("/"), tag, LIBRARY),
    }
