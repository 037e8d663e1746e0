"""The FHIR R4 facade (``/fhir/R4``): read and search over the clinical record, as FHIR JSON.

Adapters only: HTTP views (:mod:`.views`), search parameters (:mod:`.params`), reads of the
record and the worklists' Names view (:mod:`.reads`), and the mapping of stored records to
``fhir.resources`` R4B models (:mod:`.mapping`). Nothing imports this package but the shell's
URL configuration, which mounts it. docs/fhir.md documents the mapping.
"""
