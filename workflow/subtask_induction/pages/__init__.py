"""The project's pages, rendered, never hand-written where they state a setting or a number: docs/results.md and
the README's claims table from the stored run records (docs/data/), the README's settings table from the config
files, the results figures from the same records. `make docs` writes them; a test renders them again and compares."""
