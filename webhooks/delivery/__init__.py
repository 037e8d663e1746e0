"""Delivering events to subscribers: the HTTP sender, the ordered per-patient drain, tasks."""
