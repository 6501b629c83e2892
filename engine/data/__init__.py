"""Column roles, readers, validation, schema inference and the demo datasets."""
