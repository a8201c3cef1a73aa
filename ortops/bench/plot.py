"""Scaling: each op timed over growing inputs, and the log-log plot of ``scaling.png``."""

from __future__ import annotations

import importlib.util
import pathlib

from .calls import inputs, make_call
from .cases import Config, elements, op_bench
from .report import jsonable
from .timing import time_interleaved

__all__ = ["run_scaling", "plot_scaling"]


def run_scaling(ops, config: Config, rounds: int, adaptive: bool, status) -> dict[str, list[dict]]:
    series: dict[str, list[dict]] = {}
    for op in ops:
        points = []
        for n in config.scaling_sizes:
            p = op_bench(op).scaling_params(n)
            status(f"scaling {op} N={n:,}")
            impls = ["ortops", "built-in"]
            if elements(op, p) <= config.reference_limits[op]:
                impls.append("reference")
            feed = inputs(op, p)
            calls = {impl: make_call(op, impl, p, feed) for impl in impls}
            timings = time_interleaved(calls, config, rounds, adaptive=adaptive, called=False)
            points.append({
                "elements": elements(op, p), "params": jsonable(p),
                **{impl: {"median_s": t.median, "samples_s": t.samples} for impl, t in timings.items()},
            })
            del calls, feed
        series[op] = points
    return series


def plot_scaling(series: dict[str, list[dict]], path: pathlib.Path, title: str) -> str | None:
    """Write the log-log plot; return a note instead when matplotlib is missing."""
    if importlib.util.find_spec("matplotlib") is None:
        return "matplotlib is not installed (pip install 'ortops[bench]'): scaling.png not written"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    fig, axes = plt.subplots(2, len(series), figsize=(5 * len(series), 7.5), squeeze=False,
                             gridspec_kw={"height_ratios": [2, 1]})
    styles = {"ortops": ("C0", "o", "-"), "built-in": ("C1", "s", "-"), "reference": ("C2", "^", "--")}
    for col, (op, points) in enumerate(series.items()):
        top, bottom = axes[0][col], axes[1][col]
        for impl, (color, marker, line) in styles.items():
            xs = [pt["elements"] for pt in points if impl in pt]
            ys = [pt[impl]["median_s"] * 1e3 for pt in points if impl in pt]
            if xs:
                label = {"reference": "NumPy reference"}.get(impl, impl)
                top.plot(xs, ys, color=color, marker=marker, linestyle=line, label=label)
        top.set(xscale="log", yscale="log", ylabel="median time per call (ms)", title=op_bench(op).SCALING)
        top.title.set_fontsize(9)
        top.grid(True, which="both", alpha=0.3)
        top.legend(fontsize=8)
        xs = [pt["elements"] for pt in points]
        ratios = [pt["ortops"]["median_s"] / pt["built-in"]["median_s"] for pt in points]
        bottom.plot(xs, ratios, color="C0", marker="o")
        bottom.axhline(1.0, color="C1", linewidth=1)
        bottom.set(xscale="log", yscale="log", xlabel="elements N", ylabel="ortops / built-in")
        bottom.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}×"))
        bottom.yaxis.set_minor_formatter(ticker.NullFormatter())
        bottom.grid(True, which="both", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None
