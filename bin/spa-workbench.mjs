#!/usr/bin/env node
// CLI entry: registers the TypeScript loader (tsx) and runs core/cli/main.ts, so the bin works
// straight after `npm ci` with no build step.
import { register } from 'tsx/esm/api';
register();
await import('../core/cli/main.ts');
