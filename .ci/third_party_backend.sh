#!/usr/bin/env bash
# CI: build the example third-party backend (examples/third_party_backend) from its folder
# into a fresh virtual environment, install it there, and run the conformance suite and the
# example's own tests against it: zero failures for what it claims.
#
#   PYTHON=.venv/bin/python .ci/third_party_backend.sh
#
# PYTHON is an environment with dispatchtorch, the cpu backend and the conformance suite
# installed (what `make setup-dev` makes). CONFORMANCE_ARGS adds options to the
# conformance command (e.g. "--isolate --timeout 120"). The fresh venv sees that environment's packages
# behind its own (a .pth file), so nothing is downloaded; the example is built and
# installed into the fresh venv only.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
EXAMPLE=examples/third_party_backend

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
venv="$work/venv"

"$PY" -m venv --without-pip "$venv"
purelib="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$PY" - "$purelib" <<'EOF'
import site, sys
lines = [f"import site; site.addsitedir({p!r})" for p in site.getsitepackages()]
open(f"{sys.argv[1]}/_parent_environment.pth", "w").write("\n".join(lines) + "\n")
EOF

echo "== building and installing $EXAMPLE into a fresh venv"
PIP_NO_BUILD_ISOLATION=0 "$venv/bin/python" -m pip install --disable-pip-version-check -q \
    --no-deps --no-index "$EXAMPLE"
"$venv/bin/python" - "$venv" <<'EOF'
import sys
from importlib import metadata
where = metadata.distribution("dispatchtorch-remote").locate_file("")
assert str(where).startswith(sys.argv[1]), f"dispatchtorch-remote found at {where}, not in the venv"
EOF

echo "== the example's own tests"
(cd "$work" && "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    "$OLDPWD/$EXAMPLE/tests/test_remote_device.py")

echo "== conformance against 'remote'"
report="$work/remote-report.json"
status=0
# shellcheck disable=SC2086  # CONFORMANCE_ARGS: extra options, word-split on purpose
# --allow-fallback: remote has no erf, erfc, erfinv kernels (they run on the CPU; the
# report's headline counts them)
"$venv/bin/python" - --backend remote --allow-fallback --report "$report" --no-progress ${CONFORMANCE_ARGS:-} \
    <<'EOF' || status=$?
import sys
from importlib.metadata import entry_points
found = entry_points(group="console_scripts", name="dispatchtorch-conformance")
if not found:
    sys.exit("dispatchtorch-conformance is not installed in $PYTHON's environment "
             "(pip install -e conformance)")
script = next(iter(found))
sys.argv = ["dispatchtorch-conformance", *sys.argv[1:]]
sys.exit(script.load()())
EOF
if [ -f "$report" ]; then
    mkdir -p reports
    cp "$report" reports/remote-conformance.json
    echo "report: reports/remote-conformance.json"
fi
exit "$status"
