"""Reference for tests/model/embedding-parity.test.ts: sentence-transformers' own encode of sentence pairs.

Usage: python3 embedding-reference.py MODEL_DIR < pairs.json > result.json
pairs.json: [[a, b], ...]; result.json: {"version", "cosines": [...], "embeddings": [[...] first sentence of each pair], "ids": [token ids of each a]}.
sentence-transformers 2.7.0 imports scikit-learn for its evaluators at import time; encode() does not use it, so when sklearn is
absent (CI installs sentence-transformers with --no-deps, .ci/install-envs.sh) stubs stand in for those imports only
(sklearn.metrics, scipy.stats).
"""
import json
import sys
import types

import transformers  # noqa: F401  (first: it records that sklearn is absent before the stub below exists)

def stub(name, names):
    """An empty stand-in module whose listed attributes are None (only imported, never called by encode())."""
    module = types.ModuleType(name)
    for attr in names:
        setattr(module, attr, None)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


try:
    import sklearn  # noqa: F401
except ImportError:
    stub("sklearn", [])
    stub("sklearn.metrics", ["average_precision_score", "ndcg_score", "f1_score", "accuracy_score", "precision_recall_curve",
                             "roc_auc_score", "matthews_corrcoef"])
    stub("sklearn.metrics.pairwise", ["paired_cosine_distances", "paired_euclidean_distances", "paired_manhattan_distances"])
try:
    import scipy  # noqa: F401
except ImportError:
    stub("scipy", [])
    stub("scipy.stats", ["pearsonr", "spearmanr"])

import sentence_transformers
import torch
from sentence_transformers import SentenceTransformer

torch.set_num_threads(1)
model = SentenceTransformer(sys.argv[1], device="cpu")
pairs = json.load(sys.stdin)
a = model.encode([p[0] for p in pairs], normalize_embeddings=False, convert_to_tensor=True)
b = model.encode([p[1] for p in pairs], normalize_embeddings=False, convert_to_tensor=True)
cos = torch.nn.functional.cosine_similarity(a.double(), b.double()).tolist()
ids = [model.tokenize([p[0]])["input_ids"][0].tolist() for p in pairs]
json.dump({"version": sentence_transformers.__version__, "cosines": cos, "embeddings": a.tolist(), "ids": ids}, sys.stdout)
