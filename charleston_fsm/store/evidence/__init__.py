"""Evidence: tamper marks, integrity anchors and quarantine, the audit and bulk verification."""
