"""Test helpers shared by unit and end-to-end tests: a loopback SSE replay server,
builders of exact provider wire shapes, MCP test servers, a turn-event factory and
migrated test databases."""
