"""The shell's leaf documents (held-stream markers): the only modules of ``hisadmin.core``
that read or write the store's envelope."""
