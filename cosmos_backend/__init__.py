"""Document store layer modelled on Azure Cosmos DB.

It knows documents, partition keys, etags, transactional batches and the change feed, never
the clinical domain. Two implementations share one contract: :mod:`.embedded` (SQLite, the
default) and :mod:`.azure` (the ``azure-cosmos`` SDK).
"""
