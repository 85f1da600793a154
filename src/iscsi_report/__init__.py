"""iSCSI throughput report: ingest raw tool outputs, model and fit iSCSI latency, build the book."""

__version__ = "0.1.0"
