"""The record of a release (`engine.record.manifest.ReleaseRecord`): what a bundle says about it, the steward's
decision note (`engine.record.decision`) and the command that makes it again (`engine.record.replay`); read and
written by the reports, the export, `textsdc verify` and the dashboard's Export page."""
