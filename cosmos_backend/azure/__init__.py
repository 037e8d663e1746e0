"""The Azure Cosmos DB backend over the ``azure-cosmos`` SDK.

:func:`connect` opens a store on an existing container, :func:`provision` creates or aligns
the database and container of a spec (``manage.py cosmos_init``).
"""

from __future__ import annotations

from cosmos_backend.azure.provision import provision
from cosmos_backend.azure.store import AzureCosmosStore, connect

__all__ = ["AzureCosmosStore", "connect", "provision"]
