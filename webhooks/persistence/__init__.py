"""Webhooks' documents: subscriptions, per-patient delivery trackers, dead letters."""
