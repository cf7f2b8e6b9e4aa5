"""The power curve of a plan as a PNG (matplotlib, Agg). Rendering only: every number
plotted comes from :class:`glotbench.analysis.planning.plan.Plan`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glotbench.analysis.planning.plan import Plan
from glotbench.errors import InputError


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend, imported on first use: importing it costs
    about 0.4 s of CPU, which every command paid when api.py imported this module."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def power_curve_figure(plan: Plan) -> Any:
    """Power against the true difference δ: closed form, and simulated ± 2 MC SE if simulated."""
    plt = _pyplot()
    curve = plan.curve
    figure, axis = plt.subplots(figsize=(6.0, 4.0))
    axis.plot(curve["delta"], curve["power"], color="C0", label="closed form (normal)")
    if "simulated_power" in curve.columns:
        runs = plan.answers["simulation"]["simulations"]
        axis.errorbar(
            curve["delta"],
            curve["simulated_power"],
            yerr=2 * curve["monte_carlo_error"],
            fmt="o",
            markersize=3,
            color="C1",
            label=f"simulation ({runs} evaluations, ± 2 MC SE)",
        )
    settings = plan.settings
    mdd = plan.answers[plan.method]["minimum_detectable_difference"]
    axis.axhline(settings.power, color="grey", linestyle=":", linewidth=1)
    if mdd is not None:
        axis.axvline(mdd, color="grey", linestyle="--", linewidth=1, label=f"MDD = {mdd:.4g}")
    if settings.delta is not None:
        axis.axvline(settings.delta, color="C2", linewidth=1, label=f"δ = {settings.delta:g}")
    design = plan.design
    axis.set_xlabel("true difference δ (A − B, aggregate over languages)")
    axis.set_ylabel(f"power (two-sided α = {settings.alpha:g})")
    axis.set_ylim(0, 1.02)
    axis.set_title(
        f"n = {design.examples_scalar() or 'n₀'}, seeds = {design.seeds}, "
        f"languages = {design.languages} ({'resampled' if design.resample_languages else 'fixed'})",
        fontsize=10,
    )
    axis.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    return figure


def write_power_curve(plan: Plan, path: str | Path) -> Path:
    """Write the power curve of ``plan`` to ``path`` (PNG).

    Parameters
    ----------
    plan : Plan
        A plan (:func:`plan_design`, :func:`glotbench.api.plan`).
    path : str or Path
        The PNG file.

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> from glotbench import api
    >>> components = api.Components(sigma_seed_a=0.01, sigma_seed_b=0.01,
    ...                             sigma_boot_a=0.02, sigma_boot_b=0.02)
    >>> plan = api.plan_design(components, api.Design(examples=None, seeds=3, languages=1),
    ...                        api.PlanSettings(delta=0.02))
    >>> api.write_power_curve(plan, "power.png").stat().st_size > 0
    True
    """
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise InputError(
            f"{path}: the power curve is written as PNG; name a .png file", field="plot"
        )
    figure = power_curve_figure(plan)
    try:
        figure.savefig(path, format="png", dpi=120, metadata={"Software": None})
    except OSError as exc:
        raise InputError(f"{path}: cannot write the plot ({exc.strerror})", field="plot") from exc
    finally:
        _pyplot().close(figure)
    return path
