"""The HL7 interfaces' documents: the inbound receipts and ADT out's destinations and
message log. The only modules of ``hl7v2`` that read or write the store's envelope."""
