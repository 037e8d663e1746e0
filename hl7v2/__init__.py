"""HL7 v2 for the hospital's interface engine: ADT out and lab results in, over MLLP."""
