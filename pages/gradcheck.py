"""Grad check: a finite-difference gradient check on a real tensor, explained.

Controls -> one frozen CheckSettings (the engine validates it) -> one cached engine
call (run_check; the eps sweep's tab: check_sweep) -> render(result). Layout only:
no numerics, limit checks or engine choices here.
"""

import streamlit as st

from gradlab.ui.page_chrome import ensure_router

ensure_router()

from gradlab.check.validation import GRAD_OUTPUTS, MODES, REDUCTIONS  # noqa: E402
from gradlab.check.reduction_sweep import check_sweep, sweep_settings_for  # noqa: E402
from gradlab.server.deadline import paced_progress  # noqa: E402
from gradlab.errors import GradLabError  # noqa: E402
from gradlab.limits import LIMITS  # noqa: E402
from gradlab.literal_text import markdown_literal  # noqa: E402
from gradlab.check.states import STATES  # noqa: E402
from gradlab.check.settings import LOSSES, MODELS, CheckSettings, parse_shape, run_check  # noqa: E402
from gradlab.figures.check import error_heatmap, eps_sweep_figure, taylor_figure  # noqa: E402
from gradlab.ui.presets import preset_buttons  # noqa: E402
from gradlab.ui.figures import PreparedFigure, prepare_figure, show_figure  # noqa: E402
from gradlab.ui.runtime import CHECK_WORKERS  # noqa: E402
from gradlab.ui.bound_widgets import bound_number, bound_radio, bound_selectbox, bound_tabs, bound_text, bound_toggle
from gradlab.ui.messages import show_error
from gradlab.ui.controls import SCHEME_OPTIONS, dtype_selectbox, eps_options, format_eps, scheme_label  # noqa: E402

DEFAULT_STEP = "default"
STEP_OPTIONS = (DEFAULT_STEP, *(format_eps(v) for v in eps_options(1e-12, 1.0)))
SWEEP_TAB, TAYLOR_TAB, HEATMAP_TAB = "Error vs eps (sum, mean, none)", "Taylor test", "Heatmap"
PROGRESS_STEPS = 50  # redraws of the progress bar per full check


@st.cache_data(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds, show_spinner=False)
def cached_check(settings: CheckSettings, _progress=None):
    return run_check(settings, progress=_progress, workers=CHECK_WORKERS)


@st.cache_resource(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds,
                   show_spinner="Sweeping eps for sum, mean and none…")
def sweep_figure(sweep_settings: CheckSettings) -> PreparedFigure:
    # The figure, not the table, is cached: it is what every rerun of this tab needs. Keyed on
    # the sweep's own settings (sweep_settings_for), so checks differing only in mode or step share it.
    sweep = check_sweep(sweep_settings)
    return prepare_figure(eps_sweep_figure, sweep.table, rtol=sweep.rtol)



st.title("Grad check")
st.markdown(
    "**The question:** a hand-written finite-difference check of `(x+1)/2` with "
    "`MSELoss(reduction=\"sum\")` on a 140×120 input fails in float32 and passes in float64. "
    "Is the gradient wrong? Check any built-in model here, see every checked element, and read "
    "why the check passes or fails."
)

preset_buttons("gradcheck", primary="float32_check_fails")


def _controls() -> dict:
    """The control panel; returns the raw widget values."""
    v = {}
    with st.container(border=True):
        c = st.columns(5)
        with c[0]:
            v["model"] = bound_selectbox("model", "model", MODELS,
                                         help="affine: (x+1)/2, as in the question; expression: any f(x) "
                                              "elementwise; mlp: a small tanh MLP, seeded weights.")
        with c[1]:
            v["shape"] = bound_text("input shape", "shape", value="140x120", max_chars=40,
                                    help=f"e.g. 140x120; at most {LIMITS.tensor_elements:,} elements.")
        with c[2]:
            v["loss"] = bound_selectbox("loss against randn targets", "loss", LOSSES)
        with c[3]:
            v["reduction"] = bound_selectbox("reduction", "reduction", REDUCTIONS,
                                             help="none: check the vector–Jacobian product with "
                                                  "grad_outputs, one output element at a time.")
        with c[4]:
            v["dtype"] = dtype_selectbox("dtype", "dtype", default="float32")
        c = st.columns(5)
        with c[0]:
            v["scheme"] = bound_selectbox("scheme", "scheme", SCHEME_OPTIONS, format_func=scheme_label,
                                          index=SCHEME_OPTIONS.index("central"))
        with c[1]:
            v["eps"] = bound_selectbox("step eps", "eps", STEP_OPTIONS,
                                       help="'default' takes the scheme's best step for the dtype.")
        with c[2]:
            v["mode"] = bound_selectbox("mode", "mode", MODES,
                                        help="sampled: k random elements; full: every element "
                                             f"(up to {LIMITS.full_check_elements:,}); directional: "
                                             "k random directions.")
        with c[3]:
            v["samples"] = bound_number("samples / directions", "samples", value=5, min_value=1,
                                        max_value=LIMITS.sampled_elements, step=1)
        with c[4]:
            v["seed"] = bound_number("seed", "seed", value=0, min_value=0, max_value=2**31 - 1,
                                     step=1)
        c = st.columns(3, vertical_alignment="center")
        with c[0]:
            v["numeric64"] = bound_toggle("finite differences in float64", "numeric64",
                                          help="autograd stays in the chosen dtype.")
        with c[1]:
            if v["reduction"] == "none":
                v["grad_outputs"] = bound_radio("grad_outputs", "grad_outputs", GRAD_OUTPUTS,
                                                horizontal=True)
            if v["model"] == "expression":
                v["expression"] = bound_text("f(x) =", "expression", value="sin(x)",
                                             max_chars=LIMITS.expression_chars)
    return v


def _settings(v: dict) -> CheckSettings:
    """The one frozen settings object; the engine validates it (a GradLabError says what to fix)."""
    return CheckSettings(
        model=v["model"], shape=parse_shape(v["shape"]), loss=v["loss"], reduction=v["reduction"],
        dtype=v["dtype"], scheme=v["scheme"],
        eps=None if v["eps"] == DEFAULT_STEP else float(v["eps"]),
        mode=v["mode"], samples=int(v["samples"]), seed=int(v["seed"]),
        numeric_float64=bool(v["numeric64"]), expression=v.get("expression", "sin(x)"),
        grad_outputs=v.get("grad_outputs", "ones"),
    )


def _run(settings: CheckSettings):
    if settings.mode != "full":
        return cached_check(settings)
    bar = st.progress(0.0, text="Full check: perturbing every element…")
    last = {"shown": -1}

    def progress(done: int, total: int) -> None:
        step = int(PROGRESS_STEPS * done / max(total, 1))
        if step != last["shown"]:
            last["shown"] = step
            bar.progress(done / max(total, 1), text=f"Full check: {done:,} of {total:,} elements")

    paced = paced_progress(
        LIMITS.full_check_seconds, "this full check", progress,
        bound_name="LIMITS.full_check_seconds",
        advice="Pick mode 'sampled' or 'directional', or a smaller shape; on your own machine "
               "gradlab.gradcheck and python -m gradlab check have no time bound.")
    try:
        return cached_check(settings, _progress=paced)
    finally:
        bar.empty()  # also when the check was stopped: the message replaces the bar


def _verdict(result) -> None:
    s, d = result.summary, result.summary.diagnosis
    box = {"success": st.success, "warning": st.warning, "error": st.error}[d.level]
    icon = {"success": ":material/check_circle:", "warning": ":material/warning:",
            "error": ":material/error:"}[d.level]
    fixes = "".join(f"\n- {markdown_literal(f)}" for f in d.fixes)
    box(f"**{markdown_literal(d.headline)}**\n\n{markdown_literal(d.details)}"
        + (f"\n\n**What helps:**{fixes}" if fixes else ""), icon=icon)
    c = st.columns(4)
    counts = ", ".join(f"{n} {STATES[k].label}" for k, n in s.counts if n)
    c[0].metric(f"verdict ({counts})", STATES[s.verdict].label.upper(),
                help="Each value is " + "; ".join(f"{r.label}: {r.meaning}" for r in STATES.values()) + ".")
    c[1].metric("h·|dL/dxᵢ| / |L|", f"{s.relative_perturbation:.2e}",
                help="How much of the loss one step changes (median over the checked elements).")
    c[2].metric(f"machine eps ({s.numeric_dtype})", f"{s.machine_eps:.2e}")
    c[3].metric(f"step h ({s.scheme})", f"{s.step:.3g}",
                help=f"Tolerances: rtol {s.rtol:g}, atol {s.atol:g} (the {s.dtype} defaults).")
    _fixed_step_comparison(s)
    if not s.passed or s.message != d.headline:
        st.caption(markdown_literal(s.message))  # the hint is the diagnosis box above
    for note in s.notes:
        st.caption(markdown_literal(note))


def _fixed_step_comparison(s) -> None:
    """What a hand-written check concludes at this step, next to GradLab's verdict, when they differ."""
    if s.fixed_step_verdict == s.verdict:
        return
    st.markdown(
        f"**A hand-written check** (this step h = {s.step:.3g}, a fixed tolerance, no error bound) says "
        f"**{s.fixed_step_verdict.upper()}**: {s.fixed_step_failed} of {s.checked} values are over the "
        f"tolerance. **GradLab says {STATES[s.verdict].label.upper()}**: every value was re-estimated at "
        "steps (and in a dtype) where the finite difference's own error is below the tolerance"
        + (" and agrees with autograd: the gradient is right; the step could not show it." if s.passed
           else "."))


def _state_colour(state: str) -> str:
    return f"color: {STATES[state].colour}; font-weight: bold"


def _table(result) -> None:
    """The values at the check's step, their best estimate, its bound and the state (in its colour)."""
    cols = ["element", "state", "autograd", "numeric", "abs_error", "tolerance", "best_numeric",
            "error_bound", "best_step", "relative_perturbation"]
    table = result.table[cols]
    st.dataframe(table.style.map(_state_colour, subset=["state"]), hide_index=True, width="stretch",
                 height=240,
                 column_config={c: st.column_config.NumberColumn(format="%.6g") for c in cols[2:7]}
                 | {c: st.column_config.NumberColumn(format="%.2e")
                    for c in ("error_bound", "best_step", "relative_perturbation")})


@st.fragment
def _views(settings: CheckSettings) -> None:
    """One cached engine call, then render its result; any failure becomes a message."""
    try:
        result = _run(settings)
    except Exception as err:  # noqa: BLE001 - every failure becomes a message
        show_error(err)
        return
    _render(settings, result)


def _render(settings: CheckSettings, result) -> None:
    _verdict(result)
    _table(result)
    # Lazy tabs: only the open one is computed (the eps sweep is most of a rerun's work); the open
    # tab is in the URL, so a shared link opens the same view.
    shown = bound_tabs([SWEEP_TAB, TAYLOR_TAB] + ([HEATMAP_TAB] if result.error_map is not None else []), "view")
    if shown[0].open:
        with shown[0]:
            _sweep_view(settings)
    if shown[1].open and result.taylor is not None:
        with shown[1]:
            show_figure(prepare_figure(taylor_figure, result.taylor), "gradlab-gradcheck-taylor")
            st.markdown(markdown_literal(result.taylor.text) + " This test needs no step and no tolerance.")
    if result.error_map is not None and shown[2].open:
        with shown[2]:
            show_figure(prepare_figure(error_heatmap, result.error_map, result.state_map),
                        "gradlab-gradcheck-heatmap")


def _sweep_view(settings: CheckSettings) -> None:
    try:
        figure = sweep_figure(sweep_settings_for(settings))
    except GradLabError as err:
        show_error(err)
        return
    show_figure(figure, "gradlab-gradcheck-eps-sweep")
    st.caption("Each line is one sampled element. With sum and mean the difference is of the "
               "summed loss, so round-off is relative to |L|; with none it is per output element. "
               "Mean has the same curve as sum: it scales L and dL/dxᵢ alike.")


# controls -> one frozen settings object -> one cached engine call -> render(result)
values = _controls()
try:
    settings = _settings(values)
except GradLabError as err:
    show_error(err)
    st.stop()
_views(settings)
st.caption("Every control is kept in the URL: copy the address bar to share this exact check. "
           "The same check from a terminal: `python -m gradlab check --help`.")
