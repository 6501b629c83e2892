"""The data: column roles (`schema`), the `dataset` itself, and loading one (`load.load_dataset`) from its parts
— `readers` (CSV / TSV / Parquet / JSON Lines files), `validate` (a frame conformed to a Schema), `infer` (a
schema guessed from the columns), `external` (the intruder's records), `demos` (the demo registry) and
`values` (how a column's values read, shared by validation and inference)."""
