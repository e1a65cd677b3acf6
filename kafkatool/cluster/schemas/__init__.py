"""Message schemas kafka-python does not ship (read by `kafkatool.cluster.kip848`)."""
