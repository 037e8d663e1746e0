"""Stored records (the camelCase views of ``patients.persistence.queries``) → FHIR R4B models.

Every function builds its resource with the ``fhir.resources.R4B`` model, so a resource that
does not validate fails here, on the server, instead of reaching a client. Pure apart from
the reference names passed in (:class:`.common.Names`).
"""
