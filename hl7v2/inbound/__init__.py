"""Lab results in: ORU^R01 over MLLP, recorded through the results use case, answered ACK."""
