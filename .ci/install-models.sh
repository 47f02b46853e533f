# Sourced by .ci/run (pip_install is defined there): test-only Python packages and files of the real-model tests (tests/torch, tests/model).
# Owner: core/model. Keep each line's reason beside it.
