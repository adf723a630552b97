"""The error for an optional extra that is not installed (``purr-edit[milvus]``, ``[ray]``)."""


class MissingExtraError(ImportError):
    """An optional dependency is missing; the message names the pip command that adds it."""
