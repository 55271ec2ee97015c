"""Whether a dataset's datatype fits a data input's format list, on Galaxy's own datatypes registry."""

from pathlib import Path

import galaxy.config
import pytest
from galaxy.datatypes.registry import Registry
from galaxy.util.bunch import Bunch

from galaxy_mcp_analysis.core.datatypes import datatype_fits


@pytest.fixture(scope="module")
def registry():
    # Galaxy's sample datatypes configuration, as the installed package ships it (what the served Galaxy loads).
    sample = Path(galaxy.config.__file__).parent / "sample" / "datatypes_conf.xml.sample"
    loaded = Registry(Bunch(sniff_compressed_dynamic_datatypes_default=True))
    loaded.load_datatypes(root_dir=str(sample.parent), config=str(sample))
    return loaded


def test_an_accepted_type_its_subtypes_and_its_more_general_types_fit(registry):
    assert datatype_fits(registry, "tabular", ["tabular"])
    assert datatype_fits(registry, "bed", ["tabular"])  # a subtype
    assert datatype_fits(registry, "txt", ["tabular"])  # more general: Galaxy runs it
    assert not datatype_fits(registry, "png", ["tabular"])


def test_formats_galaxy_does_not_know_are_left_out_as_galaxy_does(registry):
    assert registry.get_datatype_by_extension("no_such_datatype") is None
    assert datatype_fits(registry, "tabular", ["no_such_datatype", "tabular"])
    assert not datatype_fits(registry, "png", ["no_such_datatype", "tabular"])
    # Left with no format it knows, Galaxy's input accepts every dataset; so does one that accepts data.
    assert datatype_fits(registry, "png", ["no_such_datatype"])
    assert datatype_fits(registry, "png", ["data"]) and datatype_fits(registry, "png", ["tabular", "data"])
