"""Galaxy's datatype rule for a data input, in one place: the tool preflight and the workflow checks use it.

Pure: it asks the datatypes registry it is given (Galaxy's ``datatypes_registry``) and imports nothing
of Galaxy's, so a unit test runs it on a registry loaded from Galaxy's sample configuration.
"""

from collections.abc import Sequence


def datatype_fits(registry, extension: str, accepted: Sequence[str]) -> bool:
    """The dataset is of an accepted type (or a subtype), Galaxy converts it implicitly, or its type is a more
    general type of an accepted one (a ``txt`` dataset for a ``tabular`` input: Galaxy's own tool tests do that,
    and Galaxy runs it). Formats this Galaxy does not know are left out, as Galaxy's own parameter does; an
    input that accepts ``data`` takes every dataset."""
    if "data" in accepted:
        return True
    wanted = [datatype for name in accepted if (datatype := registry.get_datatype_by_extension(name)) is not None]
    if not wanted:
        # Galaxy drops the formats it does not know; an input left with none accepts every dataset.
        return True
    direct, converted, _ = registry.find_conversion_destination_for_dataset_by_extensions(extension, list(accepted))
    if direct or converted is not None:
        return True
    datatype = registry.get_datatype_by_extension(extension)
    return datatype is not None and any(w.matches_any([datatype]) for w in wanted)
