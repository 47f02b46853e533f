// Starts the chat-template render worker (core/model/chat-worker.ts) from the TypeScript sources through tsx, as
// core/host/render-worker-boot.mjs does for prompt templates. core/model/chat-bounded.ts finds this file beside the
// sources (also from the dist-cli build, which runs inside the checkout).
import { register } from 'tsx/esm/api';
register();
await import('./chat-worker.ts');
