#!/usr/bin/env python3
# Build a small signed flat apt repository of stand-in packages that carry NVIDIA's package
# names (doca-ofed, mlnx-ofed-all, mlnx-ofed-kernel-utils). Test-only: lives in molecule/.
#
# usage: mkrepo.py SPEC.json
# SPEC: {"out": dir, "gnupghome": dir, "key": uid, "inrelease": bool,
#        "packages": [{"name", "version", "depends"?, "ofed_info"?, "openibd"?}]}
# A package with "ofed_info" ships /usr/bin/ofed_info printing that line for -s, like the real tool;
# one with "openibd" ships openibd.service (the file beside this script), which logs each start to
# /var/log/ibtune-standin/openibd.log and fails while /etc/ibtune-standin/openibd-fail exists.
import email.utils
import hashlib
import json
import os
import subprocess
import sys
import tempfile

OFED_INFO = """#!/bin/sh
# stand-in for ofed_info (ibtune.fabric molecule test)
case "$1" in
  -s) echo '{line}' ;;
  *) echo '{line}'; echo; echo 'stand-in package, no components' ;;
esac
"""

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "openibd.service")) as _f:
    OPENIBD = _f.read()


def build_deb(pkg, outdir):
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "DEBIAN"))
        control = [
            "Package: %s" % pkg["name"],
            "Version: %s" % pkg["version"],
            "Architecture: all",
            "Maintainer: ibtune.fabric tests <tests@ibtune.invalid>",
        ]
        if pkg.get("depends"):
            control.append("Depends: %s" % pkg["depends"])
        control.append("Description: stand-in for NVIDIA's %s (test only)" % pkg["name"])
        with open(os.path.join(root, "DEBIAN", "control"), "w") as f:
            f.write("\n".join(control) + "\n")
        if pkg.get("ofed_info"):
            os.makedirs(os.path.join(root, "usr", "bin"))
            path = os.path.join(root, "usr", "bin", "ofed_info")
            with open(path, "w") as f:
                f.write(OFED_INFO.format(line=pkg["ofed_info"]))
            os.chmod(path, 0o755)
        if pkg.get("openibd"):
            os.makedirs(os.path.join(root, "lib", "systemd", "system"))
            with open(os.path.join(root, "lib", "systemd", "system", "openibd.service"), "w") as f:
                f.write(OPENIBD)
        deb = "%s_%s_all.deb" % (pkg["name"], pkg["version"])
        subprocess.run(
            ["dpkg-deb", "--root-owner-group", "--build", root, os.path.join(outdir, deb)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return deb, control


def digest(path, algo):
    h = hashlib.new(algo)
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    out = spec["out"]
    os.makedirs(out, exist_ok=True)
    stanzas = []
    for pkg in spec["packages"]:
        deb, control = build_deb(pkg, out)
        path = os.path.join(out, deb)
        stanzas.append(
            "\n".join(
                control[:-1]
                + [
                    "Filename: ./%s" % deb,
                    "Size: %d" % os.path.getsize(path),
                    "MD5sum: %s" % digest(path, "md5"),
                    "SHA256: %s" % digest(path, "sha256"),
                    control[-1],
                ]
            )
        )
    packages = os.path.join(out, "Packages")
    with open(packages, "w") as f:
        f.write("\n\n".join(stanzas) + "\n")
    size = os.path.getsize(packages)
    release = os.path.join(out, "Release")
    with open(release, "w") as f:
        f.write("Origin: ibtune-standin\nLabel: %s\nDate: %s\n" % (spec["key"], email.utils.formatdate(usegmt=True)))
        f.write("MD5Sum:\n %s %d Packages\n" % (digest(packages, "md5"), size))
        f.write("SHA256:\n %s %d Packages\n" % (digest(packages, "sha256"), size))
    gpg = ["gpg", "--batch", "--yes", "--homedir", spec["gnupghome"], "--local-user", spec["key"]]
    for name in ("Release.gpg", "InRelease"):
        if os.path.exists(os.path.join(out, name)):
            os.remove(os.path.join(out, name))
    subprocess.run(gpg + ["--armor", "--detach-sign", "--output", release + ".gpg", release], check=True)
    if spec.get("inrelease"):
        subprocess.run(gpg + ["--clearsign", "--output", os.path.join(out, "InRelease"), release], check=True)


if __name__ == "__main__":
    main()
