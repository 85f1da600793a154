"""Altair chart builders, one module per chapter; shown offline by iscsi_report.presentation.report.chart."""
