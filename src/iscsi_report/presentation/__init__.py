"""What a chapter page shows: tables for people, charts, glue, MyST text, and the page's context.

It turns what :mod:`iscsi_report.analyses` returns (DataFrames, dicts, dataclasses) into the page;
the analyses never import it, so each chapter's numbers can be computed and tested without a page.
"""
