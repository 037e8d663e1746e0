"""Store errors, mirroring Cosmos DB status codes so both backends raise the same thing."""

from __future__ import annotations


class StoreError(Exception):
    """Base for every error the store raises. ``status_code`` is the Cosmos HTTP status."""

    status_code: int = 500


class NotFound(StoreError):
    status_code = 404


class Conflict(StoreError):
    """The id already exists in the partition (create of an existing document)."""

    status_code = 409


class PreconditionFailed(StoreError):
    """The If-Match etag is stale: someone else changed the document meanwhile."""

    status_code = 412


class Throttled(StoreError):
    status_code = 429


class Unavailable(StoreError):
    status_code = 503


class InvalidRequest(StoreError, ValueError):
    """Bad input detected before anything was sent or written (HTTP 400 family)."""

    status_code = 400


class InvalidId(InvalidRequest):
    pass


class MissingPartitionKey(InvalidRequest):
    pass


class DocumentTooLarge(InvalidRequest):
    status_code = 413


class BatchTooLarge(InvalidRequest):
    pass


class CrossPartitionBatch(InvalidRequest):
    pass


class BatchFailed(StoreError):
    """A transactional batch was rolled back because operation ``index`` failed with ``cause``.

    Nothing in the batch was applied (the other operations report 424 on Cosmos).
    """

    def __init__(self, index: int, cause: StoreError) -> None:
        super().__init__(f"batch operation {index} failed: {type(cause).__name__}: {cause}")
        self.index = index
        self.cause = cause
        self.status_code = cause.status_code
