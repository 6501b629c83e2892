"""The release ledger: every export of a dataset recorded with what it disclosed, and the checks a new export
passes against the earlier ones of the same records before it is written (`engine.export.ledgered`)."""
