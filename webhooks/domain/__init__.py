"""Webhooks' plain rules: subscriptions, the delivery body, its signature, the backoff."""
