"""Test helpers shared by unit and end-to-end tests: a loopback SSE replay server and
builders of exact provider wire shapes."""
