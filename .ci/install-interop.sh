# Sourced by .ci/run (pip_install is defined there): test-only Python packages of the SPA/RAGEN interop checks (tests/interop).
# Owner: core/interop. Keep each line's reason beside it.
