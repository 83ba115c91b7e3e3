"""Tests of elastic jobs (issue 26): model, simulator, policies, independent check."""
