"""Stand-in for ansible-test's get-pip bootstrap script.

ansible-test bootstraps pip in its per-test virtualenvs with get-pip.py downloaded from
ci-files.testing.ansible.com, which this network cannot reach. This script does the same job
with the interpreter's own ensurepip and then upgrades pip from PyPI to the version
ansible-test asked for (its arguments are get-pip.py's: pip options and package pins).
scripts/sanity.sh installs it into ansible-test's cache path.
"""

import ensurepip
import os
import subprocess
import sys

args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
# ansible-test runs this with a scrubbed environment: hand pip the system CA bundle the
# machine's pip.conf names, so a TLS-intercepting proxy's CA is trusted as usual.
for bundle in (os.environ.get("PIP_CERT"), "/etc/ssl/certs/ca-certificates.crt"):
    if bundle and os.path.isfile(bundle):
        args = ["--cert", bundle, *args]
        break
ensurepip.bootstrap(upgrade=True)
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "--upgrade", *args]))
