"""Linear mixed-effects models for repeated-measures evaluation designs.

Matches R's lme4 (REML/ML fits by profiled deviance), lmerTest (Satterthwaite
df, Type III ANOVA), emmeans (estimated marginal means and contrasts),
effectsize (partial η² with noncentral-F CIs) and performance (Nakagawa R²);
plus DHARMa-style simulated residuals, a missing-data robustness study next to
repeated-measures ANOVA, and the score helpers of Benito-Santos, Ghajari and
Fresno. See docs/mixed-models.md.
"""

from glotbench.analysis.mixed.dharma import SimulatedResiduals, simulate_residuals
from glotbench.analysis.mixed.dharma_tests import (
    CategoricalTest,
    QuantileTest,
    categorical_test,
    quantile_test,
)
from glotbench.analysis.mixed.formula import Formula, parse_formula
from glotbench.analysis.mixed.helpers import headroom_fraction, normalize_by_gold
from glotbench.analysis.mixed.model import LmmResult, MixedModel, analyze_lmm, lmm
from glotbench.analysis.mixed.robustness import RobustnessStudy, missing_data_study

__all__ = [
    "CategoricalTest",
    "Formula",
    "LmmResult",
    "MixedModel",
    "QuantileTest",
    "RobustnessStudy",
    "SimulatedResiduals",
    "analyze_lmm",
    "categorical_test",
    "headroom_fraction",
    "lmm",
    "missing_data_study",
    "normalize_by_gold",
    "parse_formula",
    "quantile_test",
    "simulate_residuals",
]
