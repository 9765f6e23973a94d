"""config/README.md describes every key of the schema, and is what the generator writes today."""

import yaml

from subtask_induction.config_doc import SCHEMA, document, undescribed

from harness import REPO


def test_every_schema_key_has_a_description():
    assert undescribed(yaml.safe_load(SCHEMA.read_text())) == []


def test_config_readme_is_in_step_with_the_schema_and_the_config_files():
    assert (REPO / "config/README.md").read_text() == document(), "run `make config-doc`"
