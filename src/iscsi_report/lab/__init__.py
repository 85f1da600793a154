"""The real iSCSI lab: tgt and libiscsi-enabled fio in two network namespaces joined by a delay line."""
