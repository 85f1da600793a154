"""Altair chart builders, one module per chapter; render offline with iscsi_report.analyses.report.chart."""
