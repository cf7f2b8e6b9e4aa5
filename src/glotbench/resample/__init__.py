"""The sufficient-statistics resampling engine.

Everything is ``score(W @ S)``: bootstrap replicates, subsamples and buckets
are rows of a weight matrix W applied to the per-example statistics S.
"""

from glotbench.resample.bootstrap import bootstrap, bootstrap_metric
from glotbench.resample.engine import jackknife_scores, mask_scores, point_scores, replicate_scores
from glotbench.resample.result import BootstrapResult, ConfidenceInterval
from glotbench.resample.streaming import StreamingBootstrap
from glotbench.resample.weights import BLOCK, subsample_masks

__all__ = [
    "BLOCK",
    "BootstrapResult",
    "ConfidenceInterval",
    "StreamingBootstrap",
    "bootstrap",
    "bootstrap_metric",
    "jackknife_scores",
    "mask_scores",
    "point_scores",
    "replicate_scores",
    "subsample_masks",
]
