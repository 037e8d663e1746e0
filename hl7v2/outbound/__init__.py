"""ADT out: patient events as HL7 v2.5.1 messages to the interface engine's destinations,
over MLLP, through the webhooks' ordered drain (docs/hl7.md)."""
