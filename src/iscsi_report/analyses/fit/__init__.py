"""Fit the latency model's term coefficients on remote fio runs, check identifiability, validate.

Each remote run gives an observed operation time ``op_ms`` and the model's own term values
computed from *measured* inputs (ping one-way latency, iperf3 link rate, local device time at the
device's request size, target CPU time per op). The model says ``op_ms = Σ terms``; the fit asks
how much of each term group the runs actually pay::

    op_ms ≈ β_one_way·one_way_ms + β_transmit·transmit_ms + β_device·device_ms + β_cpu·cpu_ms

so β = 1 is the model as written, β < 1 a term partly overlapped (asynchronous). Within one
network the transmission time and any per-byte device or CPU cost all grow with the block size,
so they are nearly collinear; only runs across networks and devices separate them. A singular
design is refused (:class:`~iscsi_report.core.errors.DesignError`); a near-collinear one is flagged;
constrained variants fix the unidentifiable coefficients at their physical value, 1.

On a *reconstructed* dataset (manifest ``reconstructed: true``) only quantities the source
published may drive a coefficient: :func:`runs_from_dataset` replaces the target CPU time per
operation (invented for most runs) by the published figure, and a fit refuses any row whose
``invented_inputs`` column names an input (:func:`check_published_only`).

One module per section: :mod:`.terms` (term groups, input checks, the term matrix),
:mod:`.variants` (fit specifications and the OLS fit), :mod:`.inputs` (measured inputs from a
dataset), :mod:`.loo` (leave-one-configuration-out validation) and :mod:`.nested` (nested
selection and the blog's formula as baselines on the same folds). Everything public is importable
from this package too.
"""

from __future__ import annotations

from iscsi_report.analyses.fit.inputs import (
    CPU_CORES_COUNTED,
    INVENTED_INSTEAD,
    MODEL_PING_INTERVAL_S,
    PUBLISHED_BLOCK_ID,
    PUBLISHED_CPU_ID,
    PUBLISHED_INPUTS,
    PUBLISHED_REQUEST_BLOCK_ID,
    PUBLISHED_REQUEST_ID,
    cpu_sensitivity,
    input_provenance,
    published_cpu_ms,
    published_cpu_rule,
    published_request_fraction,
    rtt_samples_by_network,
    runs_from_dataset,
    with_guessed_cpu,
)
from iscsi_report.analyses.fit.loo import (
    blog_errors,
    leave_one_out,
    loo_by_variant,
    mean_abs_error_pct,
    measured_mib_per_s,
    same_configuration,
    validation_table,
)
from iscsi_report.analyses.fit.nested import (
    BLOG_FORMULA,
    BLOG_FORMULA_SCALED,
    NESTED,
    FoldLog,
    blog_formula_ms,
    method_summary,
    nested_leave_one_out,
    per_configuration,
    r2t_saving_per_message,
    scale_factor,
)
from iscsi_report.analyses.fit.terms import (
    CONFIG_KEYS,
    INPUT_COLUMNS,
    INTERCEPT,
    INVENTED_COLUMN,
    ISCSI_COLUMNS,
    PHYSICAL_COEFFICIENT,
    REGRESSOR_INPUTS,
    REGRESSORS,
    RUN_COLUMNS,
    TERM_GROUPS,
    check_inputs,
    check_published_only,
    check_runs,
    invented_in,
    iscsi_params,
    run_legs_units,
    term_matrix,
    unit_counts,
)
from iscsi_report.analyses.fit.variants import (
    CONDITION_NUMBER_THRESHOLD,
    CONFIDENCE,
    COV_TYPE,
    PRIMARY_VARIANT,
    RANK_TOLERANCE,
    VIF_THRESHOLD,
    TermFit,
    Variant,
    VariantOutcome,
    coefficient_table,
    default_variants,
    design_diagnostics,
    fit_variant,
    fit_variants,
    predict,
    r_squared,
    variant_by_name,
    variant_table,
)

__all__ = [
    "BLOG_FORMULA",
    "BLOG_FORMULA_SCALED",
    "CONDITION_NUMBER_THRESHOLD",
    "CONFIDENCE",
    "CONFIG_KEYS",
    "COV_TYPE",
    "CPU_CORES_COUNTED",
    "INPUT_COLUMNS",
    "INTERCEPT",
    "INVENTED_COLUMN",
    "INVENTED_INSTEAD",
    "ISCSI_COLUMNS",
    "MODEL_PING_INTERVAL_S",
    "NESTED",
    "PHYSICAL_COEFFICIENT",
    "PRIMARY_VARIANT",
    "PUBLISHED_BLOCK_ID",
    "PUBLISHED_CPU_ID",
    "PUBLISHED_INPUTS",
    "PUBLISHED_REQUEST_BLOCK_ID",
    "PUBLISHED_REQUEST_ID",
    "RANK_TOLERANCE",
    "REGRESSORS",
    "REGRESSOR_INPUTS",
    "RUN_COLUMNS",
    "TERM_GROUPS",
    "VIF_THRESHOLD",
    "FoldLog",
    "TermFit",
    "Variant",
    "VariantOutcome",
    "blog_errors",
    "blog_formula_ms",
    "check_inputs",
    "check_published_only",
    "check_runs",
    "coefficient_table",
    "cpu_sensitivity",
    "default_variants",
    "design_diagnostics",
    "fit_variant",
    "fit_variants",
    "input_provenance",
    "invented_in",
    "iscsi_params",
    "leave_one_out",
    "loo_by_variant",
    "mean_abs_error_pct",
    "measured_mib_per_s",
    "method_summary",
    "nested_leave_one_out",
    "per_configuration",
    "predict",
    "published_cpu_ms",
    "published_cpu_rule",
    "published_request_fraction",
    "r2t_saving_per_message",
    "r_squared",
    "rtt_samples_by_network",
    "run_legs_units",
    "runs_from_dataset",
    "same_configuration",
    "scale_factor",
    "term_matrix",
    "unit_counts",
    "validation_table",
    "variant_by_name",
    "variant_table",
    "with_guessed_cpu",
]
