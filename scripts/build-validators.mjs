// Precompiles JSON Schema validators to CommonJS standalone code (filled in by the orgs.yaml work).
