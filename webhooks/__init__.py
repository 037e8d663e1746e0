"""Signed event webhooks: admins subscribe URLs to patient events, delivered in order per
patient, at least once, each POST signed with the subscription's secret."""
