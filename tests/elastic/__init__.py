"""Tests of elastic jobs: model, simulator, policies, independent check."""
