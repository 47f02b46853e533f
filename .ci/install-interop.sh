# Sourced by .ci/run (pip_install is defined there): test-only Python packages of the SPA/RAGEN interop checks (tests/interop).
# Owner: core/interop. Keep each line's reason beside it.
# gymnasium: tests/interop/cluster.test.ts steps workbench_env.py on RAGEN 5eb79b8's own FrozenLake env (copied in tests/fixtures/interop-ragen-stub) over gymnasium (slip probability = the run's)
python3 -c 'import gymnasium' >/dev/null 2>&1 || pip_install python3 'gymnasium==1.1.1'
