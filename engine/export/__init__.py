"""Release bundles and the audit log."""
