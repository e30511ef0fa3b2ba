#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm run build`; `npm pack` and
// `npm publish` build it afresh through `prepack`, so a release carries it).
import '../dist/cli/main.js';
