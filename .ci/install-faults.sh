# Sourced by .ci/run: what the fault tests of issue 37 need. Owner: the fault fixes (h3-faults). Keep each line's reason beside it.
# The shellcheck tool (Debian's, 0.9.0 on bookworm): tests/interop/bundle-quoting.test.ts runs it on a generated SPA/RAGEN bundle's
# launch.sh, install_env.sh, slurm.sbatch and env.sh (exported into a folder with spaces, a comma and parentheses); the test
# skips loudly without it.
command -v shellcheck >/dev/null 2>&1 || { (apt-get update -qq || true); apt-get install -y -qq shellcheck >/dev/null || echo "*** shellcheck could not be installed: the bundle quoting test will skip it ***" >&2; }
